// @ts-check
// A workflow's graph drawn as SVG: dagre (web/vendor/dagre.esm.js) lays the nodes and edges out, Preact
// draws a box per node (its key, its job, in a run its state) and a curve per edge with an arrowhead, the
// edge's condition written on it when it is not SUCCESS. Every text is a text node; the colours come from
// app.css by class (the Content-Security-Policy allows no inline styles).
import { html, useMemo } from '../lib.js';
import { graphlib, layout } from '../../vendor/dagre.esm.js';
import { EDGE_CONDITIONS } from '../util.js';
import { t } from '../i18n.js';

const NODE_W = 184;
const NODE_H = 50; // key and job
const RUN_NODE_H = 68; // key, job and state
const LABEL_H = 18;
const ARROW = 'M0,0 L10,5 L0,10 z';
const ORIENT = 'auto-start-reverse';
let instances = 0; // each drawing's markers get ids of their own

/**
 * A node as the graph is given it: a workflow's (or its form's: the job not chosen yet is '') or a run's.
 * @typedef {{ key: string, job_id: number | '' }} GraphNode
 */
/**
 * An edge as the graph is given it; a condition the console does not know is drawn as SUCCESS.
 * @typedef {{ from: string, to: string, condition?: string }} GraphEdge
 */
/**
 * An edge that is drawn: its condition, and the label written on it ('' for SUCCESS).
 * @template {GraphEdge} E
 * @typedef {E & { condition: import('../types.js').EdgeCondition, label: string }} DrawnEdge
 */
/**
 * A node laid out: its box's centre and size.
 * @template {GraphNode} N
 * @typedef {N & import('../../vendor/dagre.esm.js').Node} LaidNode
 */
/**
 * An edge laid out: the points of its line, and (read only when it has a label) its label's centre and width.
 * @template {GraphEdge} E
 * @typedef {DrawnEdge<E> & { points: import('../../vendor/dagre.esm.js').Point[], x: number, y: number, width: number }} LaidEdge
 */

/** @type {(s: unknown, n: number) => string} */
const short = (s, n) => {
  const text = String(s == null ? '' : s);
  return text.length > n ? `${text.slice(0, n - 1)}…` : text;
};
// The width of a label's text, roughly: wide (CJK) characters count double.
/** @type {(s: string) => number} */
const textWidth = (s) => [...String(s)].reduce((w, c) => w + (c.charCodeAt(0) > 0x2e80 ? 12 : 6.6), 0);

// A smooth curve through dagre's points: straight to the first bend, then quadratic segments through the
// midpoints, straight into the target (where the arrowhead sits).
/** @param {import('../../vendor/dagre.esm.js').Point[] | undefined} points */
function pathOf(points) {
  if (!points || points.length < 2) return '';
  const [first, ...rest] = points;
  let d = `M${first.x},${first.y}`;
  for (let i = 0; i < rest.length - 1; i += 1) {
    const a = rest[i];
    const b = rest[i + 1];
    d += ` Q${a.x},${a.y} ${(a.x + b.x) / 2},${(a.y + b.y) / 2}`;
  }
  const last = rest[rest.length - 1];
  return `${d} L${last.x},${last.y}`;
}

// What dagre is given: the nodes with a usable key (the first of a repeated key), each a box NODE_W wide and
// `nodeHeight` high, and the edges between two of them (a repeated pair once, no loop), an edge whose
// condition is not SUCCESS with a label's box (its text in the console's language) for dagre to place.
// { graph: dagre's graph, not laid out yet, nodes, edges: those drawn, in the order given }.
/**
 * @template {GraphNode} N
 * @template {GraphEdge} E
 * @param {N[]} nodes
 * @param {E[]} edges
 * @param {number} nodeHeight
 */
export function graphInput(nodes, edges, nodeHeight) {
  const g = new graphlib.Graph();
  g.setGraph({ rankdir: 'TB', nodesep: 36, ranksep: 46, edgesep: 18 });
  g.setDefaultEdgeLabel(() => ({}));
  /** @type {N[]} */
  const drawnNodes = [];
  for (const n of nodes) {
    if (!n.key || g.hasNode(n.key)) continue;
    g.setNode(n.key, { width: NODE_W, height: nodeHeight });
    drawnNodes.push(n);
  }
  /** @type {DrawnEdge<E>[]} */
  const drawnEdges = [];
  for (const e of edges) {
    if (!g.hasNode(e.from) || !g.hasNode(e.to) || e.from === e.to || g.hasEdge(e.from, e.to)) continue;
    const condition = EDGE_CONDITIONS.find((c) => c === e.condition) || 'SUCCESS';
    const label = condition === 'SUCCESS' ? '' : t(`enum.edgeCondition.${condition}`);
    g.setEdge(e.from, e.to, label ? { width: textWidth(label) + 14, height: LABEL_H, labelpos: 'c' } : {});
    drawnEdges.push({ ...e, condition, label });
  }
  return { graph: g, nodes: drawnNodes, edges: drawnEdges };
}

// dagre's layout of graphInput's nodes and edges: { left, top, width, height: the box of everything drawn,
// nodes: [{key, job_id, x, y, width, height}] (x, y: the centre), edges: [{from, to, condition, label,
// points, and x, y, width: the label's}] }.
/**
 * @template {GraphNode} N
 * @template {GraphEdge} E
 * @param {N[]} nodes
 * @param {E[]} edges
 * @param {number} nodeHeight
 */
export function computeLayout(nodes, edges, nodeHeight) {
  const { graph: g, nodes: drawnNodes, edges: drawnEdges } = graphInput(nodes, edges, nodeHeight);
  layout(g);
  const laid = {
    /** @type {LaidNode<N>[]} */
    nodes: drawnNodes.map((n) => ({ ...n, ...g.node(n.key) })),
    // Cast: dagre gives every edge its points, and an edge with a label (one with a size) its label's centre;
    // x, y and width are read only for an edge with a label.
    edges: drawnEdges.map((e) => /** @type {LaidEdge<E>} */ ({ ...e, ...g.edge(e.from, e.to) })),
  };
  // The box of everything drawn: an edge dagre turned round (a cycle) may bend outside the nodes' box.
  const xs = [];
  const ys = [];
  for (const n of laid.nodes) {
    xs.push(n.x - n.width / 2, n.x + n.width / 2);
    ys.push(n.y - n.height / 2, n.y + n.height / 2);
  }
  for (const e of laid.edges) {
    for (const p of e.points || []) {
      xs.push(p.x);
      ys.push(p.y);
    }
    if (e.label) {
      xs.push(e.x - e.width / 2, e.x + e.width / 2);
      ys.push(e.y - LABEL_H / 2, e.y + LABEL_H / 2);
    }
  }
  const margin = 10;
  const left = Math.floor(Math.min(...xs) - margin);
  const top = Math.floor(Math.min(...ys) - margin);
  return {
    ...laid,
    left,
    top,
    width: Math.ceil(Math.max(...xs) + margin) - left,
    height: Math.ceil(Math.max(...ys) + margin) - top,
  };
}

// nodes [{key, job_id}], edges [{from, to, condition}]; jobName(id) names a node's job; in a run, states
// {key: state} and hrefs {key: link} (a node's latest fire); marked: edges "from>to" drawn as wrong (a cycle).
/**
 * @param {{
 *   nodes: GraphNode[] | undefined, edges: GraphEdge[] | undefined, jobName: (jobId: number | '') => string,
 *   states?: Record<string, string>, hrefs?: Record<string, string>, marked?: string[],
 * }} props
 */
export function WorkflowGraph({ nodes, edges, jobName, states, hrefs, marked = [] }) {
  const uid = useMemo(() => {
    instances += 1;
    return `wf-graph-${instances}`;
  }, []);
  const withState = Boolean(states);
  let drawn;
  try {
    drawn = computeLayout(nodes || [], edges || [], withState ? RUN_NODE_H : NODE_H);
  } catch (e) {
    console.warn(`workflow graph: ${e.message}`);
    drawn = null;
  }
  if (!drawn || drawn.nodes.length === 0) {
    return html`<div class="wf-graph-empty muted" data-testid="workflow-graph">${t('workflow.graph.empty')}</div>`;
  }
  const marker = (/** @type {string} */ condition) => `url(#${uid}-${condition})`;
  return html`<div class="wf-graph-wrap">
    <svg class="wf-graph" data-testid="workflow-graph" role="img" aria-label=${t('workflow.graph.label')}
      width=${drawn.width} height=${drawn.height} viewBox=${`${drawn.left} ${drawn.top} ${drawn.width} ${drawn.height}`}>
      <defs>
        ${EDGE_CONDITIONS.map((c) => html`<marker id=${`${uid}-${c}`} class=${`wf-arrow cond-${c.toLowerCase()}`}
          viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" markerHeight="7" orient=${ORIENT}>
          <path d=${ARROW} />
        </marker>`)}
      </defs>
      ${drawn.edges.map((e) => html`<g key=${`${e.from}>${e.to}`} class=${`wf-edge cond-${e.condition.toLowerCase()}${marked.includes(`${e.from}>${e.to}`) ? ' marked' : ''}`}
          data-testid="wf-edge" data-from=${e.from} data-to=${e.to} data-condition=${e.condition}>
        <path d=${pathOf(e.points)} marker-end=${marker(e.condition)} />
        ${e.label && html`<g class="wf-edge-label">
          <rect x=${e.x - e.width / 2} y=${e.y - LABEL_H / 2} width=${e.width} height=${LABEL_H} rx="9" />
          <text x=${e.x} y=${e.y + 4}>${e.label}</text>
        </g>`}
      </g>`)}
      ${drawn.nodes.map((n) => {
        const state = states ? states[n.key] || 'WAITING' : '';
        const job = jobName(n.job_id);
        const stateText = state ? t(`enum.workflowNode.${state}`) : '';
        const box = html`<g class=${`wf-node${state ? ` state-${state.toLowerCase()}` : ''}`}
            transform=${`translate(${n.x - n.width / 2},${n.y - n.height / 2})`}
            data-testid="wf-node" data-key=${n.key} data-state=${state}>
          <title>${[n.key, job, stateText].filter(Boolean).join('\n')}</title>
          <rect width=${n.width} height=${n.height} rx="7" />
          <text class="wf-key" x=${n.width / 2} y="20">${short(n.key, 24)}</text>
          <text class="wf-job" x=${n.width / 2} y="38">${short(job, 28)}</text>
          ${state && html`<text class="wf-state" x=${n.width / 2} y="58" data-testid="wf-node-state">${stateText}</text>`}
        </g>`;
        const href = hrefs && hrefs[n.key];
        return href ? html`<a key=${n.key} href=${href} class="wf-node-link">${box}</a>` : html`<g key=${n.key}>${box}</g>`;
      })}
    </svg>
  </div>`;
}

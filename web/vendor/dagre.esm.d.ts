// Types of the parts of dagre.esm.js (@dagrejs/dagre 3.1.3, with graphlib) that the workflow graph
// (web/js/pages/workflow_graph.js) uses, for the console's type check (tests/web/tsconfig.json). Ours, not the
// package's: written after its index.d.ts and kept to what the console calls. Not loaded by the browser.

export interface GraphLabel {
  rankdir?: 'TB' | 'BT' | 'LR' | 'RL';
  nodesep?: number;
  ranksep?: number;
  edgesep?: number;
  marginx?: number;
  marginy?: number;
  width?: number;
  height?: number;
}

export interface Point {
  x: number;
  y: number;
}

// A node as given (its box) and, after layout(), with its centre.
export interface NodeConfig {
  width: number;
  height: number;
}
export interface Node extends NodeConfig, Point {}

// An edge as given (its label's box, if it has a label) and, after layout(), with the points of its line and
// the centre of its label (x, y: only for an edge whose label has a size).
export interface EdgeConfig {
  width?: number;
  height?: number;
  labelpos?: 'l' | 'c' | 'r';
}
export interface Edge extends EdgeConfig {
  points: Point[];
  x?: number;
  y?: number;
}

export class Graph {
  constructor(options?: { directed?: boolean; multigraph?: boolean; compound?: boolean });
  setGraph(label: GraphLabel): this;
  setDefaultEdgeLabel(label: () => EdgeConfig): this;
  setNode(name: string, label: NodeConfig): this;
  hasNode(name: string): boolean;
  node(name: string): Node;
  setEdge(from: string, to: string, label?: EdgeConfig): this;
  hasEdge(from: string, to: string): boolean;
  edge(from: string, to: string): Edge;
}

export const graphlib: { Graph: typeof Graph };

// Lays `graph` out in place: each node gets x and y, each edge its points.
export function layout(graph: Graph): void;

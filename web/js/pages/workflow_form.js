// @ts-check
// A workflow's editor: its name, group, schedule (with the next fires previewed as in the job form) and
// parameter; its nodes (a key, a job, an optional parameter) and edges (from, to, a condition) as rows, drawn
// live beside them. The server checks the graph (keys, jobs, edges between known nodes, no cycle): its field
// errors are shown on the matching row.
import { html, useEffect, useState } from '../lib.js';
import { api } from '../api.js';
import { ErrorBanner, Field, Loading, Notice, PageHeader, Select, navigate, useLoad } from '../components.js';
import {
  EDGE_CONDITIONS, MISFIRE, WORKFLOW_SCHEDULE_TYPES, browserZone, can, enumOptions,
} from '../util.js';
import { fieldErrorText, t } from '../i18n.js';
import { ScheduleFields, SchedulePreview } from '../schedule.js';
import { WorkflowGraph } from './workflow_graph.js';

/** @typedef {import('../types.js').Workflow} Workflow */
/** @typedef {import('../types.js').WorkflowScheduleType} WorkflowScheduleType */
/**
 * A node's row: its key, its job ('' until one is chosen) and its parameter (null or '': the job's own).
 * @typedef {{ key: string, job_id: number | '', param?: string | null }} NodeDraft
 */
/** @typedef {{ from: string, to: string, condition: import('../types.js').EdgeCondition }} EdgeDraft */
/**
 * The workflow form's fields: a workflow's editable fields as the inputs leave them (the group '' when the user
 * may write in none), and a saved workflow's stop_reason.
 * @typedef {Object} WorkflowDraft
 * @property {number | ''} group_id
 * @property {string} name
 * @property {string} param
 * @property {WorkflowScheduleType} schedule_type
 * @property {string} schedule_conf
 * @property {string} time_zone
 * @property {import('../types.js').MisfireStrategy} misfire_strategy
 * @property {boolean} enabled
 * @property {NodeDraft[]} nodes
 * @property {EdgeDraft[]} edges
 * @property {string} [stop_reason]
 */

/** @type {(keyof WorkflowDraft)[]} */
const EDITABLE = ['group_id', 'name', 'param', 'schedule_type', 'schedule_conf', 'time_zone', 'misfire_strategy', 'enabled'];
/** @type {string[]} */
const SHOWN = [...EDITABLE, 'nodes', 'edges'];
const ROW_FIELD = /^(nodes|edges)\[\d+\](\.\w+)?$/;
/** @type {Record<WorkflowScheduleType, string>} */
const DEFAULT_CONF = { CRON: '0 0 * * * ?', FIX_RATE: '60', NONE: '' };

/**
 * @param {import('../types.js').Group[]} groups those the user may write in
 * @returns {WorkflowDraft}
 */
function blankWorkflow(groups) {
  return {
    group_id: groups.length > 0 ? groups[0].id : '',
    name: '',
    param: '',
    schedule_type: 'NONE',
    schedule_conf: '',
    time_zone: browserZone(),
    misfire_strategy: 'DO_NOTHING',
    enabled: false,
    nodes: [],
    edges: [],
  };
}

// The first free key "node1", "node2", ...
/** @param {NodeDraft[]} nodes */
function nextKey(nodes) {
  const used = nodes.map((n) => n.key);
  let i = nodes.length + 1;
  while (used.includes(`node${i}`)) i += 1;
  return `node${i}`;
}

// A field error of the graph in the console's language: the workflow's own codes (a cycle, an edge to a
// key no node has, a key used twice) and a missing job read better than the generic texts.
/** @param {import('../types.js').FieldError} e */
function graphErrorText(e) {
  const p = e.params || {};
  const field = e.field || '';
  if (e.code === 'cycle') return p.cycle ? t('workflow.error.cycle', { cycle: p.cycle }) : t('workflow.error.selfLoop');
  if (e.code === 'not_found' && /^edges\[\d+\]\.(from|to)$/.test(field)) return t('workflow.error.noSuchNode');
  if (e.code === 'exists' && /\.key$/.test(field)) return t('workflow.error.keyTaken');
  if (e.code === 'exists' && /^edges\[\d+\]$/.test(field)) return t('workflow.error.edgeTwice');
  if (e.code === 'format' && /\.key$/.test(field)) return t('workflow.error.keyFormat');
  if ((e.code === 'type' || e.code === 'range') && /\.job_id$/.test(field)) return t('error.required');
  return fieldErrorText(e);
}

/** @param {import('../components.js').PageProps & { id: string }} props the id, or 'new' */
export function WorkflowFormPage({ id, user }) {
  const isNew = id === 'new';
  /** @type {import('../components.js').Load<import('../types.js').List<import('../types.js').Group>>} */
  const groups = useLoad(() => api.get('/api/v1/groups'), []);
  /** @type {import('../components.js').Load<import('../types.js').List<import('../types.js').Job>>} */
  const jobs = useLoad(() => api.get('/api/v1/jobs?limit=1000'), []);
  /** @type {import('../components.js').Load<Workflow | null>} */
  const loaded = useLoad(() => (isNew ? Promise.resolve(null) : api.get(`/api/v1/workflows/${id}`)), [id]);
  const [wf, setWf] = useState(/** @type {WorkflowDraft | null} */ (null));
  const [error, setError] = useState(/** @type {import('../api.js').ApiError | null} */ (null));
  const [notice, setNotice] = useState('');
  const [saving, setSaving] = useState(false);

  // A workflow is created in, and moved to, only a group where the user is a DEVELOPER (or more).
  const writable = (/** @type {number | string} */ groupId) => can(user, groupId, 'write');
  useEffect(() => {
    if (isNew && groups.data) setWf(blankWorkflow(groups.data.items.filter((g) => writable(g.id))));
    if (!isNew && loaded.data) setWf(loaded.data);
  }, [isNew, groups.data, loaded.data]);

  if (groups.error || loaded.error) return html`<${ErrorBanner} error=${groups.error || loaded.error} />`;
  if (!wf || !groups.data) return html`<${Loading} />`;

  const groupList = groups.data.items.filter((g) => writable(g.id) || String(g.id) === String(wf.group_id));
  const readOnly = !!loaded.data && !writable(loaded.data.group_id); // shown, not offered for change
  const jobList = (jobs.data && jobs.data.items) || [];
  const jobById = Object.fromEntries(jobList.map((j) => [j.id, j]));
  const jobName = (/** @type {number | ''} */ jobId) => (jobById[jobId]
    ? t('workflow.jobOption', { id: jobId, description: jobById[jobId].description })
    : jobId ? t('workflow.jobMissing', { id: jobId }) : t('workflow.node.noJob'));
  /**
   * @template {keyof WorkflowDraft} K
   * @param {K} k
   */
  const set = (k) => (/** @type {WorkflowDraft[K]} */ v) => setWf({ ...wf, [k]: v });
  const input = (/** @type {keyof WorkflowDraft} */ k) => (/** @type {{ target: HTMLInputElement }} */ e) => set(k)(e.target.value);
  const errorOf = (/** @type {string} */ name) => {
    const e = error && error.errors.find((x) => x.field === name);
    return e ? graphErrorText(e) : '';
  };
  const err = (/** @type {string} */ k) => (error ? error.field(k) : '');
  // The edges of a cycle the server found ("a -> b -> a"), marked in their rows and in the drawing.
  const cycle = error && error.errors.find((e) => e.field === 'edges' && e.code === 'cycle' && e.params && e.params.cycle);
  const cycleKeys = cycle ? String(cycle.params?.cycle).split(' -> ') : [];
  const marked = cycleKeys.slice(1).map((k, i) => `${cycleKeys[i]}>${k}`);
  const inCycle = (/** @type {EdgeDraft} */ x) => marked.includes(`${x.from}>${x.to}`);
  const shownFields = error ? error.errors.map((e) => e.field).filter((f) => SHOWN.includes(f) || ROW_FIELD.test(f)) : [];

  // Rows: a change of a node's key follows into the edges that named it (when no other node has that key).
  const setNode = (/** @type {number} */ i, /** @type {Partial<NodeDraft>} */ changes) => {
    const old = wf.nodes[i];
    const nodes = wf.nodes.map((n, j) => (j === i ? { ...n, ...changes } : n));
    let edges = wf.edges;
    const key = changes.key;
    if (key !== undefined && old.key && wf.nodes.filter((n) => n.key === old.key).length === 1) {
      edges = edges.map((e) => ({ ...e, from: e.from === old.key ? key : e.from, to: e.to === old.key ? key : e.to }));
    }
    setWf({ ...wf, nodes, edges });
  };
  const addNode = () => {
    setError(null);
    setWf({ ...wf, nodes: [...wf.nodes, { key: nextKey(wf.nodes), job_id: jobList.length > 0 ? jobList[0].id : '', param: null }] });
  };
  const removeNode = (/** @type {number} */ i) => {
    setError(null);
    const key = wf.nodes[i].key;
    const nodes = wf.nodes.filter((_, j) => j !== i);
    const still = nodes.some((n) => n.key === key);
    setWf({ ...wf, nodes, edges: still ? wf.edges : wf.edges.filter((e) => e.from !== key && e.to !== key) });
  };
  const setEdge = (/** @type {number} */ i, /** @type {Partial<EdgeDraft>} */ changes) => setWf({ ...wf, edges: wf.edges.map((e, j) => (j === i ? { ...e, ...changes } : e)) });
  const addEdge = () => {
    setError(null);
    const keys = wf.nodes.map((n) => n.key);
    setWf({ ...wf, edges: [...wf.edges, { from: keys[0] || '', to: keys[1] || keys[0] || '', condition: 'SUCCESS' }] });
  };
  const removeEdge = (/** @type {number} */ i) => {
    setError(null);
    setWf({ ...wf, edges: wf.edges.filter((_, j) => j !== i) });
  };
  const setScheduleType = (/** @type {WorkflowScheduleType} */ type) => {
    const conf = wf.schedule_conf === '' || wf.schedule_conf === DEFAULT_CONF[wf.schedule_type] ? DEFAULT_CONF[type] : wf.schedule_conf;
    setWf({ ...wf, schedule_type: type, schedule_conf: conf, enabled: type === 'NONE' ? false : wf.enabled });
  };

  const save = async (/** @type {Event} */ e) => {
    e.preventDefault();
    setSaving(true);
    setError(null);
    /** @type {Record<string, unknown>} */
    const body = {};
    for (const k of EDITABLE) body[k] = wf[k];
    body.group_id = Number(wf.group_id) || 0;
    body.nodes = wf.nodes.map((n) => ({
      key: n.key, job_id: Number(n.job_id) || 0, param: n.param === '' || n.param == null ? null : n.param,
    }));
    body.edges = wf.edges.map((x) => ({ from: x.from, to: x.to, condition: x.condition }));
    try {
      if (isNew) {
        /** @type {Workflow} */
        const created = await api.post('/api/v1/workflows', body);
        navigate(`/workflows/${created.id}`);
        setNotice(t('workflow.created', { id: created.id }));
      } else {
        /** @type {Workflow} */
        const saved = await api.put(`/api/v1/workflows/${id}`, body);
        setWf(saved);
        setNotice(t('common.saved'));
      }
    } catch (ex) {
      setError(ex);
    } finally {
      setSaving(false);
    }
  };

  const keyOptions = [...new Set(wf.nodes.map((n) => n.key))].map((k) => [k, k]);
  const edgeKeyOptions = (/** @type {string} */ value) => (value && !keyOptions.some(([k]) => k === value) ? [...keyOptions, [value, value]] : keyOptions);
  const jobOptions = (/** @type {number | ''} */ value) => {
    const options = jobList.map((j) => [j.id, t('workflow.jobOption', { id: j.id, description: j.description })]);
    if (value && !jobById[value]) options.push([value, t('workflow.jobMissing', { id: value })]);
    return [['', t('workflow.node.pickJob')], ...options];
  };
  const cellError = (/** @type {string} */ name) => {
    const text = errorOf(name);
    return text ? html`<span class="field-error" data-field=${name}>${text}</span>` : null;
  };

  return html`<section>
    <${PageHeader} title=${isNew ? t('workflow.new') : t('workflow.title', { id })}>
      ${!isNew && html`<a class="button" href=${`#/workflows/${id}/runs`}>${t('workflows.runs')}</a>`}
      <a class="button" href="#/workflows">${t('workflow.back')}</a>
    </${PageHeader}>
    ${!isNew && wf.stop_reason && html`<div class="banner warn">${t('workflow.stoppedBy', { reason: wf.stop_reason })}</div>`}
    <${Notice} text=${notice} onClose=${() => setNotice('')} />
    <${ErrorBanner} error=${error || jobs.error} shownFields=${shownFields} />
    ${groupList.length === 0 && html`<div class="banner warn">${groups.data.items.length === 0 ? t('job.noGroups') : t('job.noWritableGroups')}</div>`}
    ${readOnly && html`<div class="banner warn" data-testid="read-only">${t('workflow.readOnly')}</div>`}
    <form class="card form" onSubmit=${save} data-testid="workflow-form">
      <fieldset disabled=${readOnly}><legend>${t('workflow.section.basic')}</legend>
        <div class="grid">
          <${Field} label=${t('field.name')} error=${err('name')}>
            <input name="name" required maxlength="255" value=${wf.name} onInput=${input('name')} />
          </${Field}>
          <${Field} label=${t('field.group_id')} error=${err('group_id')}>
            <${Select} name="group_id" value=${wf.group_id} onChange=${set('group_id')}
              options=${groupList.map((g) => [g.id, t('common.groupOption', { title: g.title, app: g.app_name })])} />
          </${Field}>
          <${Field} label=${t('workflow.enabled')} error=${err('enabled')} hint=${wf.schedule_type === 'NONE' ? t('workflow.hint.enabledNone') : t('workflow.hint.enabled')}>
            <input type="checkbox" name="enabled" checked=${wf.enabled} disabled=${wf.schedule_type === 'NONE'} onChange=${(e) => set('enabled')(e.target.checked)} />
          </${Field}>
          <${Field} label=${t('field.param')} error=${err('param')} hint=${t('workflow.hint.param')} wide>
            <textarea name="param" rows="2" class="mono" value=${wf.param} onInput=${input('param')}></textarea>
          </${Field}>
        </div>
      </fieldset>
      <fieldset disabled=${readOnly}><legend>${t('job.section.schedule')}</legend>
        <div class="grid">
          <${ScheduleFields} types=${WORKFLOW_SCHEDULE_TYPES} value=${wf} err=${err} list="wf-tz-list"
            onChange=${(k, v) => (k === 'schedule_type' ? setScheduleType(v) : set(k)(v))} />
          <${Field} label=${t('field.misfire_strategy')} error=${err('misfire_strategy')} hint=${t('job.hint.misfire')}>
            <${Select} name="misfire_strategy" value=${wf.misfire_strategy} onChange=${set('misfire_strategy')} options=${enumOptions(MISFIRE, 'enum.misfire')} />
          </${Field}>
        </div>
        <${SchedulePreview} type=${wf.schedule_type} conf=${wf.schedule_conf} zone=${wf.time_zone} />
      </fieldset>
      <fieldset disabled=${readOnly}><legend>${t('workflow.section.graph')}</legend>
        <div class="wf-editor">
          <div class="wf-lists">
            <h3>${t('workflow.nodes')}</h3>
            ${errorOf('nodes') && html`<div class="field-error" data-testid="nodes-error">${errorOf('nodes')}</div>`}
            <div class="table-wrap"><table class="list compact wf-rows" data-testid="workflow-nodes">
              <thead><tr><th>${t('workflow.node.key')}</th><th>${t('workflow.node.job')}</th><th>${t('workflow.node.param')}</th><th></th></tr></thead>
              <tbody>
                ${wf.nodes.length === 0 && html`<tr><td colspan="4" class="muted">${t('workflow.nodes.empty')}</td></tr>`}
                ${wf.nodes.map((n, i) => html`<tr key=${i} data-node-row=${i}>
                  <td class=${errorOf(`nodes[${i}].key`) ? 'invalid' : ''}>
                    <input name=${`node-key-${i}`} class="mono" aria-label=${t('workflow.node.key')} value=${n.key} maxlength="64" autocomplete="off"
                      onInput=${(e) => setNode(i, { key: e.target.value })} />
                    ${cellError(`nodes[${i}].key`)}${cellError(`nodes[${i}]`)}
                  </td>
                  <td class=${errorOf(`nodes[${i}].job_id`) ? 'invalid' : ''}>
                    <${Select} name=${`node-job-${i}`} value=${n.job_id} onChange=${(v) => setNode(i, { job_id: v === '' ? '' : Number(v) })} options=${jobOptions(n.job_id)} />
                    ${cellError(`nodes[${i}].job_id`)}
                  </td>
                  <td class=${errorOf(`nodes[${i}].param`) ? 'invalid' : ''}>
                    <input name=${`node-param-${i}`} class="mono" aria-label=${t('workflow.node.param')} placeholder=${t('workflow.node.paramPlaceholder')}
                      value=${n.param == null ? '' : n.param} onInput=${(e) => setNode(i, { param: e.target.value })} />
                    ${cellError(`nodes[${i}].param`)}
                  </td>
                  <td><button type="button" name=${`node-remove-${i}`} onClick=${() => removeNode(i)}>${t('workflow.remove')}</button></td>
                </tr>`)}
              </tbody>
            </table></div>
            <button type="button" data-testid="add-node" onClick=${addNode}>${t('workflow.node.add')}</button>

            <h3>${t('workflow.edges')}</h3>
            ${errorOf('edges') && html`<div class="field-error" data-testid="edges-error" role="alert">${errorOf('edges')}</div>`}
            <div class="table-wrap"><table class="list compact wf-rows" data-testid="workflow-edges">
              <thead><tr><th>${t('workflow.edge.from')}</th><th>${t('workflow.edge.to')}</th><th>${t('workflow.edge.condition')}</th><th></th></tr></thead>
              <tbody>
                ${wf.edges.length === 0 && html`<tr><td colspan="4" class="muted">${t('workflow.edges.empty')}</td></tr>`}
                ${wf.edges.map((x, i) => html`<tr key=${i} data-edge-row=${i} class=${inCycle(x) ? 'invalid' : ''}>
                  <td class=${errorOf(`edges[${i}].from`) ? 'invalid' : ''}>
                    <${Select} name=${`edge-from-${i}`} value=${x.from} onChange=${(v) => setEdge(i, { from: v })} options=${edgeKeyOptions(x.from)} />
                    ${cellError(`edges[${i}].from`)}${cellError(`edges[${i}]`)}
                  </td>
                  <td class=${errorOf(`edges[${i}].to`) ? 'invalid' : ''}>
                    <${Select} name=${`edge-to-${i}`} value=${x.to} onChange=${(v) => setEdge(i, { to: v })} options=${edgeKeyOptions(x.to)} />
                    ${cellError(`edges[${i}].to`)}
                  </td>
                  <td class=${errorOf(`edges[${i}].condition`) ? 'invalid' : ''}>
                    <${Select} name=${`edge-condition-${i}`} value=${x.condition} onChange=${(v) => setEdge(i, { condition: v })} options=${enumOptions(EDGE_CONDITIONS, 'enum.edgeCondition')} />
                    ${cellError(`edges[${i}].condition`)}
                  </td>
                  <td><button type="button" name=${`edge-remove-${i}`} onClick=${() => removeEdge(i)}>${t('workflow.remove')}</button></td>
                </tr>`)}
              </tbody>
            </table></div>
            <button type="button" data-testid="add-edge" disabled=${wf.nodes.length === 0} onClick=${addEdge}>${t('workflow.edge.add')}</button>
            <p class="muted small">${t('workflow.hint.edges')}</p>
          </div>
          <div class="wf-preview">
            <h3>${t('workflow.drawing')}</h3>
            <${WorkflowGraph} nodes=${wf.nodes} edges=${wf.edges} jobName=${jobName} marked=${marked} />
          </div>
        </div>
      </fieldset>
      <div class="form-actions">
        <a class="button" href="#/workflows">${t('common.cancel')}</a>
        ${!readOnly && html`<button type="submit" class="primary" disabled=${saving} data-testid="save-workflow">${saving ? t('common.saving') : isNew ? t('workflow.create') : t('common.save')}</button>`}
      </div>
    </form>
  </section>`;
}

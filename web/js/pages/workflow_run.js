// @ts-check
// One run of a workflow: its graph drawn with each node's state, followed live (every second while the run
// is RUNNING); a node links to its latest fire's log. Kill while it runs; once it has ended, re-run a node
// that FAILED or was KILLED (the run goes on from there).
import { html, useEffect, useState } from '../lib.js';
import { api } from '../api.js';
import { ConfirmButton, ErrorBanner, Loading, Notice, PageHeader, useLoad } from '../components.js';
import { can, formatMs } from '../util.js';
import { errorText, formatDuration, t, tOr } from '../i18n.js';
import { WorkflowGraph } from './workflow_graph.js';
import { RunStateBadge } from './workflows.js';

/** @typedef {import('../types.js').WorkflowRun} WorkflowRun */

const POLL_MS = 1000;
const RERUNNABLE = ['FAILED', 'KILLED'];

// GET /api/v1/workflow-runs/{id} now, and again every second while the run is RUNNING; `restart` after an
// action that may set it running again.
/** @param {string} id */
function useRun(id) {
  const [state, setState] = useState(
    /** @type {{ run: WorkflowRun | null, error: import('../i18n.js').ShownError | null }} */ ({ run: null, error: null }),
  );
  const [attempt, setAttempt] = useState(0);
  useEffect(() => {
    let live = true;
    /** @type {ReturnType<typeof setTimeout> | undefined} */
    let timer;
    const poll = async () => {
      try {
        /** @type {WorkflowRun} */
        const run = await api.get(`/api/v1/workflow-runs/${id}`);
        if (!live) return;
        setState({ run, error: null });
        if (run.state === 'RUNNING') timer = setTimeout(poll, POLL_MS);
      } catch (error) {
        if (!live) return;
        setState((s) => ({ ...s, error }));
        if (error.status === 0 || error.status >= 500) timer = setTimeout(poll, POLL_MS * 3); // passing trouble
      }
    };
    poll();
    return () => {
      live = false;
      clearTimeout(timer);
    };
  }, [id, attempt]);
  return { ...state, setRun: (/** @type {WorkflowRun} */ run) => setState({ run, error: null }), restart: () => setAttempt((a) => a + 1) };
}

/** @param {{ label: string, children?: import('../components.js').Children }} props */
function Row({ label, children }) {
  return html`<div class="kv"><dt>${label}</dt><dd>${children}</dd></div>`;
}

/** @type {(list: number[] | undefined) => number | null} */
const lastOf = (list) => (list && list.length > 0 ? list[list.length - 1] : null);

/** @param {import('../components.js').PageProps & { id: string }} props */
export function WorkflowRunPage({ id, user }) {
  const { run, error: loadError, setRun, restart } = useRun(id);
  /** @type {import('../components.js').Load<import('../types.js').List<import('../types.js').Job>>} */
  const jobs = useLoad(() => api.get('/api/v1/jobs?limit=1000'), []);
  const workflowId = run ? run.workflow_id : null;
  /** @type {import('../components.js').Load<import('../types.js').Workflow | null>} */
  const workflow = useLoad(() => (workflowId ? api.get(`/api/v1/workflows/${workflowId}`) : Promise.resolve(null)), [workflowId]);
  const [notice, setNotice] = useState('');
  const [error, setError] = useState(/** @type {import('../api.js').ApiError | null} */ (null));

  if (!run) return loadError ? html`<${ErrorBanner} error=${loadError} />` : html`<${Loading} />`;
  const jobById = Object.fromEntries(((jobs.data && jobs.data.items) || []).map((j) => [j.id, j]));
  const jobName = (/** @type {number} */ jobId) => (jobById[jobId]
    ? t('workflow.jobOption', { id: jobId, description: jobById[jobId].description })
    : t('workflow.jobMissing', { id: jobId }));
  const nodes = run.nodes || [];
  const states = Object.fromEntries(nodes.map((n) => [n.key, n.state]));
  const hrefs = Object.fromEntries(nodes.filter((n) => lastOf(n.log_ids)).map((n) => [n.key, `#/logs/${lastOf(n.log_ids)}`]));
  const running = run.state === 'RUNNING';
  const operate = can(user, run.group_id, 'operate'); // kill and re-run
  const name = workflow.data ? workflow.data.name : '';

  // An action answering the run after it (a kill's answer also has kill_notes, not shown).
  const act = async (/** @type {() => Promise<WorkflowRun>} */ fn, /** @type {string} */ message) => {
    setError(null);
    setNotice('');
    try {
      const after = await fn();
      setRun(after);
      setNotice(message);
      restart();
    } catch (ex) {
      setError(ex);
    }
  };
  const kill = () => act(() => api.post(`/api/v1/workflow-runs/${run.id}/kill`), t('workflowRun.killed', { id: run.id }));
  const rerun = (/** @type {string} */ key) => act(() => api.post(`/api/v1/workflow-runs/${run.id}/nodes/${encodeURIComponent(key)}/rerun`), t('workflowRun.rerunStarted', { key }));

  return html`<section>
    <${PageHeader} title=${name ? t('workflowRun.titleNamed', { id: run.id, name }) : t('workflowRun.title', { id: run.id })}>
      ${running && operate && html`<${ConfirmButton} label=${t('workflowRun.kill')} confirmLabel=${t('logs.killConfirm')} onConfirm=${kill} />`}
      <a class="button" href=${`#/workflows/${run.workflow_id}/runs`}>${t('workflowRun.allRuns')}</a>
      <a class="button" href=${`#/workflows/${run.workflow_id}`}>${t('workflowRun.workflow')}</a>
    </${PageHeader}>
    <${Notice} text=${notice} onClose=${() => setNotice('')} />
    <${ErrorBanner} error=${error} />
    ${loadError && html`<div class="banner error">${errorText(loadError)} <button type="button" onClick=${restart}>${t('common.retry')}</button></div>`}
    <div class="card">
      <dl class="kvs" data-testid="run-fields">
        <${Row} label=${t('field.status')}><${RunStateBadge} state=${run.state} testid="run-state" /></${Row}>
        <${Row} label=${t('logs.col.triggerType')}><span title=${run.trigger_type}>${tOr(`enum.trigger.${run.trigger_type}`, run.trigger_type)}</span></${Row}>
        <${Row} label=${t('logs.col.scheduled')}>${formatMs(run.scheduled_ms)}</${Row}>
        <${Row} label=${t('workflowRun.start')}>${formatMs(run.start_ms)}</${Row}>
        <${Row} label=${t('workflowRun.end')}>${formatMs(run.end_ms)}</${Row}>
        <${Row} label=${t('log.duration')}>${run.start_ms ? formatDuration((run.end_ms || Date.now()) - run.start_ms) : ''}</${Row}>
        <${Row} label=${t('workflowRun.col.by')}>${run.created_by}</${Row}>
        <${Row} label=${t('field.param')}><span class="mono">${run.param}</span></${Row}>
      </dl>
      ${run.note && html`<h3>${t('workflowRun.note')}</h3><pre class="msg-block">${run.note}</pre>`}
    </div>
    <div class="card">
      <div class="output-head">
        <h2>${t('workflow.section.graph')}</h2>
        <span class=${`badge ${running ? 'status-running' : 'status-stopped'}`} data-testid="run-live" data-state=${running ? 'live' : 'ended'}>${running ? t('log.live') : t('log.ended')}</span>
      </div>
      <${WorkflowGraph} nodes=${nodes} edges=${run.edges || []} jobName=${jobName} states=${states} hrefs=${hrefs} />
      <p class="muted small">${t('workflowRun.hint.graph')}</p>
    </div>
    <div class="table-wrap"><table class="list cards" data-testid="run-nodes">
      <thead><tr><th>${t('workflow.node.key')}</th><th>${t('workflow.node.job')}</th><th>${t('field.status')}</th><th>${t('workflowRun.fires')}</th><th>${t('workflowRun.start')}</th><th>${t('workflowRun.end')}</th><th>${t('log.duration')}</th><th></th></tr></thead>
      <tbody>
        ${nodes.map((n) => html`<tr key=${n.key} data-node-key=${n.key} data-state=${n.state}>
          <td class="mono" data-label=${t('workflow.node.key')}>${n.key}</td>
          <td class="desc" data-label=${t('workflow.node.job')}><a href=${`#/jobs/${n.job_id}`}>${jobName(n.job_id)}</a></td>
          <td data-label=${t('field.status')}><span class=${`badge wf-state-${String(n.state).toLowerCase()}`} title=${n.state}>${tOr(`enum.workflowNode.${n.state}`, n.state)}</span></td>
          <td data-label=${t('workflowRun.fires')}>${(n.log_ids || []).map((l, i) => html`${i > 0 ? ' ' : ''}<a href=${`#/logs/${l}`}>${l}</a>`)}</td>
          <td class="nowrap" data-label=${t('workflowRun.start')}>${formatMs(n.start_ms)}</td>
          <td class="nowrap" data-label=${t('workflowRun.end')}>${formatMs(n.end_ms)}</td>
          <td class="nowrap" data-label=${t('log.duration')}>${n.start_ms && n.end_ms ? formatDuration(n.end_ms - n.start_ms) : ''}</td>
          <td class="row-actions" data-label="">
            ${!running && operate && RERUNNABLE.includes(n.state) && html`<button type="button" data-testid="rerun-node" onClick=${() => rerun(n.key)}>${t('workflowRun.rerun')}</button>`}
          </td>
        </tr>`)}
      </tbody>
    </table></div>
  </section>`;
}

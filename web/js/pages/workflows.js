// @ts-check
// Workflows (a DAG of jobs, docs/operations.md "Workflows"): the list, a trigger with a parameter, and one
// workflow's runs. The editor is workflow_form.js, a run's view workflow_run.js.
import { html, useEffect, useState } from '../lib.js';
import { api } from '../api.js';
import { ConfirmButton, ErrorBanner, Field, Loading, Notice, PageHeader, navigate, useLoad } from '../components.js';
import { can, canSomewhere, formatMs, relativeMs } from '../util.js';
import { formatDuration, formatNumber, t, tOr } from '../i18n.js';
import { scheduleText } from '../schedule.js';

/** @typedef {import('../types.js').Workflow} Workflow */
/** @typedef {import('../api.js').ApiError} ApiError */

const RUNS_LIMIT = 50;

// A run's state (RUNNING, SUCCESS, FAILED, KILLED, SKIPPED) in the console's language.
/** @param {{ state: import('../types.js').WorkflowRunState, testid?: string }} props */
export function RunStateBadge({ state, testid }) {
  return html`<span class=${`badge wf-state-${String(state).toLowerCase()}`} title=${state} data-testid=${testid} data-state=${state}>${tOr(`enum.workflowRun.${state}`, state)}</span>`;
}

// Trigger a run now, with the workflow's parameter or another one; answers the run's id.
/** @param {{ workflow: Workflow, onClose: () => void, onDone: (runId: number) => void }} props */
function TriggerDialog({ workflow, onClose, onDone }) {
  const [param, setParam] = useState(workflow.param || '');
  const [error, setError] = useState(/** @type {ApiError | null} */ (null));
  const submit = async (/** @type {Event} */ e) => {
    e.preventDefault();
    setError(null);
    try {
      /** @type {{ run_id: number }} */
      const r = await api.post(`/api/v1/workflows/${workflow.id}/trigger`, { param });
      onDone(r.run_id);
    } catch (err) {
      setError(err);
    }
  };
  return html`<div class="overlay" role="dialog" aria-modal="true" aria-label=${t('workflows.trigger.dialog')}>
    <form class="card dialog" onSubmit=${submit} data-testid="workflow-trigger">
      <h2>${t('workflows.trigger.title', { name: workflow.name })}</h2>
      <${ErrorBanner} error=${error} shownFields=${['param']} />
      <${Field} label=${t('field.param')} error=${error && error.field('param')} hint=${t('workflows.trigger.paramHint')} wide>
        <textarea name="param" rows="3" class="mono" value=${param} onInput=${(e) => setParam(e.target.value)}></textarea>
      </${Field}>
      <div class="form-actions">
        <button type="button" onClick=${onClose}>${t('common.cancel')}</button>
        <button type="submit" class="primary" data-testid="workflow-trigger-submit">${t('workflows.trigger.submit')}</button>
      </div>
    </form>
  </div>`;
}

/** @param {import('../components.js').PageProps} props */
export function WorkflowsPage({ user }) {
  const [notice, setNotice] = useState('');
  const [triggered, setTriggered] = useState(/** @type {{ workflow: Workflow, run: number } | null} */ (null));
  const [actionError, setActionError] = useState(/** @type {ApiError | null} */ (null));
  const [triggering, setTriggering] = useState(/** @type {Workflow | null} */ (null));
  /** @type {import('../components.js').Load<import('../types.js').List<import('../types.js').Group>>} */
  const groups = useLoad(() => api.get('/api/v1/groups'), []);
  /** @type {import('../components.js').Load<import('../types.js').Page<Workflow>>} */
  const list = useLoad(() => api.get('/api/v1/workflows'), []);
  const groupById = Object.fromEntries(((groups.data && groups.data.items) || []).map((g) => [g.id, g]));

  const remove = async (/** @type {Workflow} */ w) => {
    setActionError(null);
    setTriggered(null);
    try {
      await api.del(`/api/v1/workflows/${w.id}`);
      setNotice(t('workflows.deleted', { name: w.name }));
      list.reload();
    } catch (err) {
      setActionError(err);
    }
  };

  return html`<section>
    <${PageHeader} title=${t('workflows.title')}>
      ${canSomewhere(user, 'write') && html`<a class="button primary" href="#/workflows/new" data-testid="new-workflow">${t('workflows.new')}</a>`}
    </${PageHeader}>
    <${Notice} text=${notice} onClose=${() => setNotice('')} />
    ${triggered && html`<div class="banner ok" role="status" data-testid="workflow-triggered">
      <span>${t('workflows.triggered', { name: triggered.workflow.name, run: triggered.run })}</span>
      <a class="button" href=${`#/workflow-runs/${triggered.run}`} data-testid="open-run">${t('workflows.openRun')}</a>
      <button class="link" onClick=${() => setTriggered(null)}>${t('common.dismiss')}</button>
    </div>`}
    <${ErrorBanner} error=${actionError || list.error || groups.error} />
    ${!list.data ? html`<${Loading} />` : html`<div class="table-wrap"><table class="list cards" data-testid="workflows-table">
      <thead><tr><th>${t('common.id')}</th><th>${t('field.name')}</th><th>${t('field.group_id')}</th><th>${t('jobs.col.schedule')}</th><th>${t('workflows.col.nodes')}</th><th>${t('jobs.state')}</th><th>${t('jobs.col.nextFire')}</th><th>${t('common.actions')}</th></tr></thead>
      <tbody>
        ${list.data.items.length === 0 && html`<tr><td colspan="8" class="muted">${t('workflows.empty')}</td></tr>`}
        ${list.data.items.map((w) => {
          const g = groupById[w.group_id];
          return html`<tr key=${w.id} data-workflow-id=${w.id}>
            <td data-label=${t('common.id')}>${w.id}</td>
            <td class="desc" data-label=${t('field.name')}><a href=${`#/workflows/${w.id}`}>${w.name}</a></td>
            <td data-label=${t('field.group_id')}>${g ? g.title : w.group_id}</td>
            <td class="mono" data-label=${t('jobs.col.schedule')}>${scheduleText(w)}</td>
            <td data-label=${t('workflows.col.nodes')}>${(w.nodes || []).length}</td>
            <td data-label=${t('jobs.state')}>
              <span class=${`badge ${w.enabled ? 'status-running' : 'status-stopped'}`}>${w.enabled ? t('jobs.state.running') : t('jobs.state.stopped')}</span>
              ${w.stop_reason && html`<div class="muted small">${w.stop_reason}</div>`}
            </td>
            <td class="nowrap" data-label=${t('jobs.col.nextFire')}>${w.enabled && w.next_fire_ms ? html`<span title=${formatMs(w.next_fire_ms)}>${relativeMs(w.next_fire_ms)}</span>` : ''}</td>
            <td class="row-actions" data-label="">
              ${can(user, w.group_id, 'write') && html`<a class="button" href=${`#/workflows/${w.id}`}>${t('common.edit')}</a>`}
              ${can(user, w.group_id, 'operate') && html`<button type="button" onClick=${() => setTriggering(w)}>${t('workflows.trigger')}</button>`}
              <a class="button" href=${`#/workflows/${w.id}/runs`}>${t('workflows.runs')}</a>
              ${can(user, w.group_id, 'write') && html`<${ConfirmButton} label=${t('common.delete')} confirmLabel=${t('common.deleteConfirm')} onConfirm=${() => remove(w)} />`}
            </td>
          </tr>`;
        })}
      </tbody>
    </table></div>`}
    ${triggering && html`<${TriggerDialog} workflow=${triggering}
      onClose=${() => setTriggering(null)}
      onDone=${(run) => { setNotice(''); setTriggered({ workflow: triggering, run }); setTriggering(null); }} />`}
  </section>`;
}

// The runs of one workflow, newest first; refreshed every 2 s while one runs.
/** @param {import('../components.js').PageProps & { id: string }} props */
export function WorkflowRunsPage({ id, user }) {
  /** @type {import('../components.js').Load<Workflow>} */
  const workflow = useLoad(() => api.get(`/api/v1/workflows/${id}`), [id]);
  /** @type {import('../components.js').Load<import('../types.js').Page<import('../types.js').WorkflowRun>>} */
  const runs = useLoad(() => api.get(`/api/v1/workflows/${id}/runs?limit=${RUNS_LIMIT}`), [id]);
  const [triggering, setTriggering] = useState(false);
  const running = Boolean(runs.data && runs.data.items.some((r) => r.state === 'RUNNING'));
  useEffect(() => {
    if (!running) return undefined;
    const timer = setInterval(() => runs.reload(), 2000);
    return () => clearInterval(timer);
  }, [running, id]);

  if (workflow.error) return html`<${ErrorBanner} error=${workflow.error} />`;
  if (!workflow.data) return html`<${Loading} />`;
  const w = workflow.data;
  return html`<section>
    <${PageHeader} title=${t('workflows.runsOf', { name: w.name })}>
      ${can(user, w.group_id, 'operate') && html`<button type="button" onClick=${() => setTriggering(true)}>${t('workflows.trigger')}</button>`}
      ${can(user, w.group_id, 'write') && html`<a class="button" href=${`#/workflows/${w.id}`}>${t('common.edit')}</a>`}
      <a class="button" href="#/workflows">${t('workflow.back')}</a>
    </${PageHeader}>
    <${ErrorBanner} error=${runs.error} />
    ${!runs.data ? html`<${Loading} />` : html`<div class="table-wrap"><table class="list cards" data-testid="workflow-runs-table">
      <thead><tr><th>${t('workflowRun.col.run')}</th><th>${t('field.status')}</th><th>${t('logs.col.triggerType')}</th><th>${t('workflowRun.start')}</th><th>${t('workflowRun.end')}</th><th>${t('log.duration')}</th><th>${t('workflowRun.col.by')}</th></tr></thead>
      <tbody>
        ${runs.data.items.length === 0 && html`<tr><td colspan="7" class="muted">${t('workflowRun.empty')}</td></tr>`}
        ${runs.data.items.map((r) => html`<tr key=${r.id} data-run-id=${r.id} data-state=${r.state}>
          <td data-label=${t('workflowRun.col.run')}><a href=${`#/workflow-runs/${r.id}`}>${r.id}</a></td>
          <td data-label=${t('field.status')}><${RunStateBadge} state=${r.state} /></td>
          <td data-label=${t('logs.col.triggerType')} title=${r.trigger_type}>${tOr(`enum.trigger.${r.trigger_type}`, r.trigger_type)}</td>
          <td class="nowrap" data-label=${t('workflowRun.start')}>${formatMs(r.start_ms)}</td>
          <td class="nowrap" data-label=${t('workflowRun.end')}>${formatMs(r.end_ms)}</td>
          <td class="nowrap" data-label=${t('log.duration')}>${r.start_ms && r.end_ms ? formatDuration(r.end_ms - r.start_ms) : ''}</td>
          <td class="small" data-label=${t('workflowRun.col.by')}>${r.created_by}</td>
        </tr>`)}
      </tbody>
    </table></div>
    <div class="pager muted">${t('pager.total', { count: runs.data.total, total: formatNumber(runs.data.total) })}</div>`}
    ${triggering && html`<${TriggerDialog} workflow=${w} onClose=${() => setTriggering(false)}
      onDone=${(run) => navigate(`/workflow-runs/${run}`)} />`}
  </section>`;
}

// @ts-check
import { html, useEffect, useState } from '../lib.js';
import { api, query } from '../api.js';
import {
  ConfirmButton, ErrorBanner, Field, Loading, Notice, PageHeader, Pager, Select, StatusBadge, navigate, useLoad,
} from '../components.js';
import { LOG_STATUSES, can, canSomewhere, formatMs, localInputToMs, msToLocalInput } from '../util.js';
import { formatNumber, t, tOr } from '../i18n.js';

/** @typedef {import('../types.js').Log} Log */
/** @typedef {import('../api.js').ApiError} ApiError */

const LIMIT = 50;
/** @type {(s: string | null | undefined, n?: number) => string} */
const short = (s, n = 120) => (s && s.length > n ? `${s.slice(0, n)}…` : s || '');

// `group` and `job`: the ids the list is filtered on (a route's strings), if any.
/**
 * @param {{
 *   group: string | undefined, job: string | undefined, onDone: (deleted: number) => void, onCancel: () => void,
 * }} props
 */
function ClearPanel({ group, job, onDone, onCancel }) {
  const [mode, setMode] = useState('older_than_days');
  const [value, setValue] = useState('30');
  const [error, setError] = useState(/** @type {ApiError | null} */ (null));
  const submit = async (/** @type {Event} */ e) => {
    e.preventDefault();
    /** @type {Record<string, number>} */
    const body = { [mode]: Number(value) };
    if (group) body.group_id = Number(group);
    if (job) body.job_id = Number(job);
    try {
      /** @type {{ deleted: number }} */
      const r = await api.post('/api/v1/logs/clear', body);
      onDone(r.deleted);
    } catch (ex) {
      setError(ex);
    }
  };
  return html`<form class="card form" onSubmit=${submit}>
    <h2>${job ? t('logs.clear.titleJob', { id: job }) : group ? t('logs.clear.titleGroup', { id: group }) : t('logs.clear.titleAll')}</h2>
    <${ErrorBanner} error=${error} />
    <div class="grid">
      <${Field} label=${t('logs.clear.which')}>
        <${Select} value=${mode} onChange=${setMode}
          options=${[['older_than_days', t('logs.clear.olderThan')], ['keep_last', t('logs.clear.keepLast')]]} />
      </${Field}>
      <${Field} label=${t('logs.clear.n')}><input type="number" min="0" value=${value} onInput=${(e) => setValue(e.target.value)} /></${Field}>
    </div>
    <p class="muted">${t('logs.clear.note')}</p>
    <div class="form-actions">
      <button type="button" onClick=${onCancel}>${t('common.cancel')}</button>
      <button type="submit" class="danger">${t('common.delete')}</button>
    </div>
  </form>`;
}

/** @param {import('../components.js').PageProps} props */
export function LogsPage({ route, user }) {
  const p = route.params;
  const offset = Number(p.offset || 0);
  const [auto, setAuto] = useState(true);
  const [clearing, setClearing] = useState(false);
  const [notice, setNotice] = useState('');
  const [actionError, setActionError] = useState(/** @type {ApiError | null} */ (null));
  /** @type {import('../components.js').Load<import('../types.js').List<import('../types.js').Group>>} */
  const groups = useLoad(() => api.get('/api/v1/groups'), []);
  /** @type {import('../components.js').Load<import('../types.js').List<import('../types.js').Job>>} */
  const jobs = useLoad(() => api.get(`/api/v1/jobs${query({ group_id: p.group, limit: 1000 })}`), [p.group]);
  /** @type {import('../components.js').Load<import('../types.js').Page<Log>>} */
  const logs = useLoad(
    () => api.get(`/api/v1/logs${query({
      group_id: p.group, job_id: p.job, status: p.status, from_ms: p.from, to_ms: p.to, offset, limit: LIMIT,
    })}`),
    [p.group, p.job, p.status, p.from, p.to, offset],
  );
  useEffect(() => {
    if (!auto) return undefined;
    const t = setInterval(() => logs.reload(), 3000);
    return () => clearInterval(t);
  }, [auto, p.group, p.job, p.status, p.from, p.to, offset]);

  const setFilter = (/** @type {Record<string, string | number | undefined>} */ changes) =>
    navigate('/logs', { group: p.group, job: p.job, status: p.status, from: p.from, to: p.to, ...changes, offset: '' });
  const jobList = (jobs.data && jobs.data.items) || [];
  const jobName = Object.fromEntries(jobList.map((j) => [j.id, j.description]));
  // Clearing needs DEVELOPER in the group (or the job's group) filtered on, or somewhere when none is.
  const clearGroup = p.group || (p.job && jobList.find((j) => String(j.id) === String(p.job))?.group_id);
  const mayClear = clearGroup ? can(user, clearGroup, 'write') : canSomewhere(user, 'write');
  const kill = async (/** @type {Log} */ l) => {
    setActionError(null);
    try {
      await api.post(`/api/v1/logs/${l.id}/kill`);
      setNotice(t('logs.killed', { id: l.id }));
      logs.reload();
    } catch (ex) {
      setActionError(ex);
    }
  };

  return html`<section>
    <${PageHeader} title=${t('logs.title')}>
      <label class="inline"><input type="checkbox" checked=${auto} onChange=${(e) => setAuto(e.target.checked)} /> ${t('logs.autoRefresh')}</label>
      <button type="button" onClick=${() => logs.reload()} data-testid="refresh-logs">${t('logs.refresh')}</button>
      ${mayClear && html`<button type="button" onClick=${() => setClearing(!clearing)}>${t('logs.clearButton')}</button>`}
    </${PageHeader}>
    <form class="filters" onSubmit=${(e) => e.preventDefault()}>
      <${Field} label=${t('field.group_id')}>
        <${Select} name="group" value=${p.group || ''} onChange=${(v) => setFilter({ group: v, job: '' })}
          options=${[['', t('common.allGroups')], ...((groups.data && groups.data.items) || []).map((g) => [g.id, g.title])]} />
      </${Field}>
      <${Field} label=${t('field.job_id')}>
        <${Select} name="job" value=${p.job || ''} onChange=${(v) => setFilter({ job: v })}
          options=${[['', t('logs.allJobs')], ...jobList.map((j) => [j.id, `${j.id}: ${j.description}`])]} />
      </${Field}>
      <${Field} label=${t('field.status')}>
        <${Select} name="status" value=${p.status || ''} onChange=${(v) => setFilter({ status: v })}
          options=${[['', t('common.any')], ...LOG_STATUSES.map((st) => [st, t(`enum.logStatus.${st}`)])]} />
      </${Field}>
      <${Field} label=${t('field.from_ms')}>
        <input type="datetime-local" name="from" value=${msToLocalInput(p.from)} onChange=${(e) => setFilter({ from: localInputToMs(e.target.value) })} />
      </${Field}>
      <${Field} label=${t('field.to_ms')}>
        <input type="datetime-local" name="to" value=${msToLocalInput(p.to)} onChange=${(e) => setFilter({ to: localInputToMs(e.target.value) })} />
      </${Field}>
    </form>
    ${clearing && mayClear && html`<${ClearPanel} group=${p.group} job=${p.job} onCancel=${() => setClearing(false)}
      onDone=${(n) => { setClearing(false); setNotice(t('logs.cleared', { count: n, n: formatNumber(n) })); logs.reload(); }} />`}
    <${Notice} text=${notice} onClose=${() => setNotice('')} />
    <${ErrorBanner} error=${actionError || logs.error} />
    ${!logs.data ? html`<${Loading} />` : html`<div class="table-wrap"><table class="list cards" data-testid="logs-table">
      <thead><tr><th>${t('logs.col.fire')}</th><th>${t('field.job_id')}</th><th>${t('logs.col.scheduled')}</th><th>${t('logs.col.triggerType')}</th><th>${t('field.status')}</th><th>${t('field.address')}</th><th>${t('logs.col.result')}</th><th></th></tr></thead>
      <tbody>
        ${logs.data.items.length === 0 && html`<tr><td colspan="8" class="muted">${t('logs.empty')}</td></tr>`}
        ${logs.data.items.map((l) => html`<tr key=${l.id} data-log-id=${l.id} data-status=${l.status}>
          <td data-label=${t('logs.col.fire')}><a href=${`#/logs/${l.id}`}>${l.id}</a></td>
          <td class="desc" data-label=${t('field.job_id')}>${l.job_id}${jobName[l.job_id] ? `: ${jobName[l.job_id]}` : ''}</td>
          <td data-label=${t('logs.col.scheduled')}>${formatMs(l.scheduled_ms)}</td>
          <td data-label=${t('logs.col.triggerType')} title=${l.trigger_type}>${tOr(`enum.trigger.${l.trigger_type}`, l.trigger_type)}</td>
          <td data-label=${t('field.status')}><${StatusBadge} status=${l.status} /></td>
          <td class="mono small" data-label=${t('field.address')}>${l.executor_address}</td>
          <td class="small msg" data-label=${t('logs.col.result')}>${short(l.handle_msg || (l.trigger_code !== 200 ? l.trigger_msg : ''))}</td>
          <td class="row-actions" data-label="">
            <a class="button" href=${`#/logs/${l.id}`}>${t('logs.output')}</a>
            ${l.status === 'RUNNING' && can(user, l.group_id, 'operate') && html`<${ConfirmButton} label=${t('logs.kill')} confirmLabel=${t('logs.killConfirm')} onConfirm=${() => kill(l)} />`}
          </td>
        </tr>`)}
      </tbody>
    </table></div>
    <${Pager} total=${logs.data.total} offset=${offset} limit=${LIMIT} onChange=${(o) => navigate('/logs', { ...p, offset: o || '' })} />`}
  </section>`;
}

// @ts-check
import { html, useState } from '../lib.js';
import { api, query } from '../api.js';
import {
  ConfirmButton, ErrorBanner, Field, Loading, Notice, PageHeader, Pager, Select, navigate, useLoad,
} from '../components.js';
import { can, canSomewhere, formatMs, localInputToMs, relativeMs } from '../util.js';
import { t } from '../i18n.js';
import { scheduleText } from '../schedule.js';

/** @typedef {import('../types.js').Job} Job */
/** @typedef {import('../types.js').Group} Group */
/** @typedef {import('../api.js').ApiError} ApiError */

const LIMIT = 50;

// Trigger once, with a parameter and optionally one of the group's online or configured addresses.
/**
 * @param {{
 *   job: Job, group: Group | undefined, onClose: () => void, onDone: (logId: number) => void,
 * }} props
 */
function TriggerDialog({ job, group, onClose, onDone }) {
  const [param, setParam] = useState(job.param || '');
  const [address, setAddress] = useState('');
  const [error, setError] = useState(/** @type {ApiError | null} */ (null));
  const addresses = group ? group.online_addresses || [] : [];
  const submit = async (/** @type {Event} */ e) => {
    e.preventDefault();
    try {
      /** @type {{ param: string, address?: string }} */
      const body = { param };
      if (address) body.address = address;
      /** @type {{ log_id: number }} */
      const r = await api.post(`/api/v1/jobs/${job.id}/trigger`, body);
      onDone(r.log_id);
    } catch (err) {
      setError(err);
    }
  };
  return html`<div class="overlay" role="dialog" aria-modal="true" aria-label=${t('trigger.dialog')}>
    <form class="card dialog" onSubmit=${submit}>
      <h2>${t('trigger.title', { description: job.description })}</h2>
      <${ErrorBanner} error=${error} shownFields=${['param', 'address']} />
      <${Field} label=${t('field.param')} error=${error && error.field('param')} wide>
        <textarea name="param" rows="3" value=${param} onInput=${(e) => setParam(e.target.value)}></textarea>
      </${Field}>
      <${Field} label=${t('field.address')} error=${error && error.field('address')} hint=${t('trigger.addressHint')} wide>
        <${Select} name="address" value=${address} onChange=${setAddress}
          options=${[['', t('trigger.byRoute')], ...addresses.map((a) => [a, a])]} />
      </${Field}>
      <div class="form-actions">
        <button type="button" onClick=${onClose}>${t('common.cancel')}</button>
        <button type="submit" class="primary">${t('trigger.submit')}</button>
      </div>
    </form>
  </div>`;
}

// Run once later: at an instant (the browser's zone) or after some minutes, with a parameter; the job's
// requests below, each cancellable until an admin claims its fire for sending (docs/operations.md, "Run once").
/** @param {{ job: Job, onClose: () => void }} props */
function RunOnceDialog({ job, onClose }) {
  const [at, setAt] = useState('');
  const [minutes, setMinutes] = useState('');
  const [param, setParam] = useState('');
  const [useOwn, setUseOwn] = useState(true);
  const [error, setError] = useState(/** @type {ApiError | null} */ (null));
  const [done, setDone] = useState('');
  /** @type {import('../components.js').Load<import('../types.js').List<import('../types.js').RunOnce>>} */
  const list = useLoad(() => api.get(`/api/v1/jobs/${job.id}/run-once?limit=20`), [job.id]);
  const submit = async (/** @type {Event} */ e) => {
    e.preventDefault();
    setError(null);
    /** @type {{ at_ms?: number, delay_ms?: number, param?: string }} */
    const body = {};
    if (at) body.at_ms = localInputToMs(at);
    if (minutes !== '') body.delay_ms = Math.round(Number(minutes) * 60000);
    if (!useOwn) body.param = param;
    try {
      /** @type {import('../types.js').RunOnce} */
      const r = await api.post(`/api/v1/jobs/${job.id}/run-once`, body);
      setDone(t('runOnce.created', { id: r.id, at: formatMs(r.fire_at_ms) }));
      list.reload();
    } catch (err) {
      setError(err);
    }
  };
  const cancel = async (/** @type {import('../types.js').RunOnce} */ r) => {
    setError(null);
    try {
      await api.del(`/api/v1/jobs/${job.id}/run-once/${r.id}`);
      setDone(t('runOnce.cancelled', { id: r.id }));
      list.reload();
    } catch (err) {
      setError(err);
    }
  };
  const items = (list.data && list.data.items) || [];
  return html`<div class="overlay" role="dialog" aria-modal="true" aria-label=${t('runOnce.dialog')}>
    <form class="card dialog" onSubmit=${submit}>
      <h2>${t('runOnce.title', { description: job.description })}</h2>
      <${ErrorBanner} error=${error || list.error} shownFields=${['at_ms', 'delay_ms', 'param']} />
      <${Notice} text=${done} onClose=${() => setDone('')} />
      <${Field} label=${t('runOnce.at')} error=${error && error.field('at_ms')} hint=${t('runOnce.atHint')}>
        <input name="at" type="datetime-local" value=${at} onInput=${(e) => setAt(e.target.value)} />
      </${Field}>
      <${Field} label=${t('runOnce.in')} error=${error && error.field('delay_ms')} hint=${t('runOnce.inHint')}>
        <input name="minutes" type="number" min="0" step="any" value=${minutes} onInput=${(e) => setMinutes(e.target.value)} />
      </${Field}>
      <${Field} label=${t('field.param')} error=${error && error.field('param')} wide>
        <label class="inline"><input type="checkbox" name="use-own" checked=${useOwn} onChange=${(e) => setUseOwn(e.target.checked)} /> ${t('runOnce.ownParam')}</label>
        ${!useOwn && html`<textarea name="param" rows="2" value=${param} onInput=${(e) => setParam(e.target.value)}></textarea>`}
      </${Field}>
      <div class="form-actions">
        <button type="button" onClick=${onClose}>${t('runOnce.done')}</button>
        <button type="submit" class="primary">${t('runOnce.submit')}</button>
      </div>
      <h3>${t('runOnce.requests')}</h3>
      ${!list.data ? html`<${Loading} />` : html`<div class="table-wrap"><table class="list" data-testid="run-once-table">
        <thead><tr><th>${t('common.id')}</th><th>${t('runOnce.col.at')}</th><th>${t('field.status')}</th><th>${t('logs.col.fire')}</th><th>${t('field.param')}</th><th>${t('runOnce.col.by')}</th><th></th></tr></thead>
        <tbody>
          ${items.length === 0 && html`<tr><td colspan="7" class="muted">${t('runOnce.empty')}</td></tr>`}
          ${items.map((r) => html`<tr key=${r.id} data-run-id=${r.id} data-state=${r.state}>
            <td>${r.id}</td>
            <td class="nowrap"><span title=${relativeMs(r.fire_at_ms)}>${formatMs(r.fire_at_ms)}</span></td>
            <td class="nowrap">${t(`enum.runOnce.${r.state}`)}</td>
            <td>${r.log_id ? html`<a href=${`#/logs/${r.log_id}`}>${r.log_id}</a>` : ''}</td>
            <td class="mono small">${r.param === null ? html`<span class="muted">${t('runOnce.ownParam')}</span>` : r.param}</td>
            <td class="small">${r.state === 'CANCELLED' ? r.cancelled_by : r.created_by}</td>
            <td>${r.state !== 'CANCELLED' && (r.state === 'WAITING' || r.fire_at_ms > Date.now())
              ? html`<button type="button" onClick=${() => cancel(r)}>${t('runOnce.cancel')}</button>` : ''}</td>
          </tr>`)}
        </tbody>
      </table></div>`}
    </form>
  </div>`;
}

/** @param {import('../components.js').PageProps} props */
export function JobsPage({ route, user }) {
  const p = route.params;
  const offset = Number(p.offset || 0);
  const [text, setText] = useState(p.q || '');
  const [notice, setNotice] = useState('');
  const [actionError, setActionError] = useState(/** @type {ApiError | null} */ (null));
  const [triggering, setTriggering] = useState(/** @type {Job | null} */ (null));
  const [runningOnce, setRunningOnce] = useState(/** @type {Job | null} */ (null));
  const [selected, setSelected] = useState(/** @type {Record<number, number>} */ ({})); // job id -> its group's id
  const [bulkTags, setBulkTags] = useState('');
  /** @type {import('../components.js').Load<import('../types.js').List<Group>>} */
  const groups = useLoad(() => api.get('/api/v1/groups'), []);
  /** @type {import('../components.js').Load<import('../types.js').List<import('../types.js').Tag>>} */
  const tags = useLoad(() => api.get('/api/v1/tags'), []);
  /** @type {import('../components.js').Load<import('../types.js').Page<Job>>} */
  const jobs = useLoad(
    () => api.get(`/api/v1/jobs${query({ group_id: p.group, enabled: p.enabled, q: p.q, tag: p.tag, offset, limit: LIMIT })}`),
    [p.group, p.enabled, p.q, p.tag, offset],
  );
  const groupList = (groups.data && groups.data.items) || [];
  const groupById = Object.fromEntries(groupList.map((g) => [g.id, g]));
  const setFilter = (/** @type {Record<string, string>} */ changes) => navigate('/jobs', { group: p.group, enabled: p.enabled, q: p.q, tag: p.tag, ...changes, offset: '' });
  const tagList = (tags.data && tags.data.items) || [];

  const act = async (/** @type {() => Promise<unknown>} */ fn, /** @type {string} */ message) => {
    setActionError(null);
    try {
      await fn();
      setNotice(message);
      jobs.reload();
    } catch (err) {
      setActionError(err);
    }
  };

  // What the user's role in each job's group allows: only jobs they may operate are selectable, and the
  // bulk actions offered are those allowed on every selected job.
  const operable = (/** @type {Job} */ j) => can(user, j.group_id, 'operate');
  const writable = (/** @type {Job} */ j) => can(user, j.group_id, 'write');
  // A script job is copied by a global ADMIN, or a DEVELOPER of a group that allows script jobs.
  const copyable = (/** @type {Job} */ j) => writable(j) && (j.glue_type === 'BEAN' || user.role === 'ADMIN'
    || Boolean(groupById[j.group_id] && groupById[j.group_id].allow_scripts));
  const selectedIds = Object.keys(selected).map(Number);
  const bulkWrite = selectedIds.every((id) => can(user, selected[id], 'write'));
  const pageJobs = jobs.data ? jobs.data.items.filter(operable) : [];
  const allSelected = pageJobs.length > 0 && pageJobs.every((j) => j.id in selected);
  const toggle = (/** @type {Job[]} */ list, /** @type {boolean} */ on) => {
    const next = { ...selected };
    for (const j of list) {
      if (on) next[j.id] = j.group_id;
      else delete next[j.id];
    }
    setSelected(next);
  };

  // Many jobs at once: each answered on its own; the notice counts them and names each failure.
  const bulk = async (/** @type {'start' | 'stop' | 'trigger' | 'delete' | 'tag' | 'untag'} */ action) => {
    setActionError(null);
    try {
      /** @type {{ action: string, job_ids: number[], tags?: string[] }} */
      const body = { action: action.toUpperCase(), job_ids: selectedIds };
      if (action === 'tag' || action === 'untag') body.tags = bulkTags.split(',').map((s) => s.trim()).filter((s) => s !== '');
      /** @type {import('../types.js').BulkResult} */
      const r = await api.post('/api/v1/jobs/bulk', body);
      const failures = r.results.filter((x) => x.status >= 400)
        .map((x) => t('jobs.bulk.failure', { id: x.job_id, error: x.error }));
      setNotice([t(`jobs.bulk.done.${action}`, { done: r.succeeded, total: selectedIds.length }), ...failures].join(' '));
      setSelected({});
      jobs.reload();
      if (body.tags) tags.reload();
    } catch (err) {
      setActionError(err);
    }
  };

  return html`<section>
    <${PageHeader} title=${t('jobs.title')}>
      ${canSomewhere(user, 'write') && html`<a class="button primary" href="#/jobs/new" data-testid="new-job">${t('jobs.new')}</a>`}
    </${PageHeader}>
    <form class="filters" onSubmit=${(e) => { e.preventDefault(); setFilter({ q: text }); }}>
      <${Field} label=${t('field.group_id')}>
        <${Select} name="group" value=${p.group || ''} onChange=${(v) => setFilter({ group: v })}
          options=${[['', t('common.allGroups')], ...groupList.map((g) => [g.id, t('common.groupOption', { title: g.title, app: g.app_name })])]} />
      </${Field}>
      <${Field} label=${t('jobs.state')}>
        <${Select} name="enabled" value=${p.enabled || ''} onChange=${(v) => setFilter({ enabled: v })}
          options=${[['', t('common.any')], ['true', t('jobs.filter.running')], ['false', t('jobs.filter.stopped')]]} />
      </${Field}>
      <${Field} label=${t('field.tags')}>
        <${Select} name="tag" value=${p.tag || ''} onChange=${(v) => setFilter({ tag: v })}
          options=${[['', t('common.any')], ...tagList.map((x) => [x.tag, t('jobs.tagOption', { tag: x.tag, n: x.jobs })])]} />
      </${Field}>
      <${Field} label=${t('common.search')}>
        <input name="q" type="search" placeholder=${t('jobs.searchPlaceholder')} value=${text} onInput=${(e) => setText(e.target.value)} />
      </${Field}>
      <button type="submit">${t('common.filter')}</button>
    </form>
    <${Notice} text=${notice} onClose=${() => setNotice('')} />
    <${ErrorBanner} error=${actionError || jobs.error || groups.error} />
    ${selectedIds.length > 0 && html`<div class="bulk-bar" data-testid="bulk-bar">
      <span>${t('jobs.bulk.selected', { count: selectedIds.length, n: selectedIds.length })}</span>
      <button type="button" onClick=${() => bulk('start')}>${t('jobs.start')}</button>
      <button type="button" onClick=${() => bulk('stop')}>${t('jobs.stop')}</button>
      <button type="button" onClick=${() => bulk('trigger')}>${t('jobs.trigger')}</button>
      ${bulkWrite && html`<${ConfirmButton} label=${t('common.delete')} confirmLabel=${t('common.deleteConfirm')} onConfirm=${() => bulk('delete')} />
      <input name="bulk-tags" aria-label=${t('jobs.bulk.tagsLabel')} placeholder=${t('jobs.bulk.tagsPlaceholder')} value=${bulkTags} onInput=${(e) => setBulkTags(e.target.value)} />
      <button type="button" disabled=${bulkTags.trim() === ''} onClick=${() => bulk('tag')}>${t('jobs.bulk.tag')}</button>
      <button type="button" disabled=${bulkTags.trim() === ''} onClick=${() => bulk('untag')}>${t('jobs.bulk.untag')}</button>`}
      <button type="button" onClick=${() => setSelected({})}>${t('jobs.bulk.clear')}</button>
    </div>`}
    ${!jobs.data ? html`<${Loading} />` : html`<div class="table-wrap"><table class="list cards" data-testid="jobs-table">
      <thead><tr><th>${pageJobs.length > 0 && html`<input type="checkbox" name="select-all" aria-label=${t('jobs.bulk.selectAll')} checked=${allSelected}
        onChange=${(e) => toggle(pageJobs, e.target.checked)} />`}</th><th>${t('common.id')}</th><th>${t('field.description')}</th><th>${t('field.group_id')}</th><th>${t('jobs.col.schedule')}</th><th>${t('field.handler')}</th><th>${t('jobs.state')}</th><th>${t('jobs.col.nextFire')}</th><th>${t('common.actions')}</th></tr></thead>
      <tbody>
        ${jobs.data.items.length === 0 && html`<tr><td colspan="9" class="muted">${t('jobs.empty')}</td></tr>`}
        ${jobs.data.items.map((j) => {
          const g = groupById[j.group_id];
          return html`<tr key=${j.id} data-job-id=${j.id}>
            <td data-label="">${operable(j) && html`<input type="checkbox" name="select" aria-label=${t('jobs.bulk.select', { id: j.id })} checked=${j.id in selected}
              onChange=${(e) => toggle([j], e.target.checked)} />`}</td>
            <td data-label=${t('common.id')}>${j.id}</td>
            <td class="desc" data-label=${t('jobs.col.job')}><a href=${`#/jobs/${j.id}`}>${j.description}</a>${j.author && html`<div class="muted small">${j.author}</div>`}
              ${(j.tags || []).length > 0 && html`<div class="tags">${j.tags.map((x) => html`<button type="button" class="tag" key=${x} title=${t('jobs.tagFilter', { tag: x })} onClick=${() => setFilter({ tag: x })}>${x}</button>`)}</div>`}</td>
            <td data-label=${t('field.group_id')}>${g ? g.title : j.group_id}</td>
            <td class="mono" data-label=${t('jobs.col.schedule')}>${scheduleText(j)}</td>
            <td class="mono" data-label=${t('field.handler')}>${j.glue_type === 'BEAN' ? j.handler : j.glue_type}</td>
            <td data-label=${t('jobs.state')}>
              <span class=${`badge ${j.enabled ? 'status-running' : 'status-stopped'}`}>${j.enabled ? t('jobs.state.running') : t('jobs.state.stopped')}</span>
              ${j.stop_reason && html`<div class="muted small">${j.stop_reason}</div>`}
            </td>
            <td class="nowrap" data-label=${t('jobs.col.nextFire')}>${j.enabled && j.next_fire_ms ? html`<span title=${formatMs(j.next_fire_ms)}>${relativeMs(j.next_fire_ms)}</span>` : ''}</td>
            <td class="row-actions" data-label="">
              ${operable(j) && (j.enabled
                ? html`<button type="button" onClick=${() => act(() => api.post(`/api/v1/jobs/${j.id}/stop`), t('jobs.stopped', { id: j.id }))}>${t('jobs.stop')}</button>`
                : html`<button type="button" disabled=${j.schedule_type === 'NONE'} onClick=${() => act(() => api.post(`/api/v1/jobs/${j.id}/start`), t('jobs.started', { id: j.id }))}>${t('jobs.start')}</button>`)}
              ${operable(j) && html`<button type="button" onClick=${() => setTriggering(j)}>${t('jobs.trigger')}</button>
              <button type="button" onClick=${() => setRunningOnce(j)}>${t('jobs.runOnce')}</button>`}
              <a class="button" href=${`#/logs?job=${j.id}&group=${j.group_id}`}>${t('jobs.logs')}</a>
              ${copyable(j) && html`<button type="button" onClick=${() => act(() => api.post(`/api/v1/jobs/${j.id}/copy`), t('jobs.copied', { id: j.id }))}>${t('jobs.copy')}</button>`}
              ${writable(j) && html`<${ConfirmButton} label=${t('common.delete')} confirmLabel=${t('common.deleteConfirm')} onConfirm=${() => act(() => api.del(`/api/v1/jobs/${j.id}`), t('jobs.deleted', { id: j.id }))} />`}
            </td>
          </tr>`;
        })}
      </tbody>
    </table></div>
    <${Pager} total=${jobs.data.total} offset=${offset} limit=${LIMIT}
      onChange=${(o) => navigate('/jobs', { ...p, offset: o || '' })} />`}
    ${triggering && html`<${TriggerDialog} job=${triggering} group=${groupById[triggering.group_id]}
      onClose=${() => setTriggering(null)}
      onDone=${(logId) => { setTriggering(null); setNotice(t('jobs.triggered', { id: triggering.id, log: logId })); }} />`}
    ${runningOnce && html`<${RunOnceDialog} job=${runningOnce} onClose=${() => setRunningOnce(null)} />`}
  </section>`;
}

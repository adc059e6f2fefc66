import { html, useState } from '../lib.js';
import { api, query } from '../api.js';
import {
  ConfirmButton, ErrorBanner, Field, Loading, Notice, PageHeader, Pager, Select, navigate, useLoad,
} from '../components.js';
import { formatMs, relativeMs } from '../util.js';

const LIMIT = 50;

function scheduleText(j) {
  if (j.schedule_type === 'NONE') return 'manual only';
  if (j.schedule_type === 'CRON') return `${j.schedule_conf} (${j.time_zone})`;
  return `${j.schedule_type === 'FIX_RATE' ? 'every' : 'after each run +'} ${j.schedule_conf} s`;
}

// Trigger once, with a parameter and optionally one of the group's online or configured addresses.
function TriggerDialog({ job, group, onClose, onDone }) {
  const [param, setParam] = useState(job.param || '');
  const [address, setAddress] = useState('');
  const [error, setError] = useState(null);
  const addresses = group ? group.online_addresses || [] : [];
  const submit = async (e) => {
    e.preventDefault();
    try {
      const body = { param };
      if (address) body.address = address;
      const r = await api.post(`/api/v1/jobs/${job.id}/trigger`, body);
      onDone(r.log_id);
    } catch (err) {
      setError(err);
    }
  };
  return html`<div class="overlay" role="dialog" aria-modal="true" aria-label="Trigger once">
    <form class="card dialog" onSubmit=${submit}>
      <h2>Trigger “${job.description}” once</h2>
      <${ErrorBanner} error=${error} shownFields=${['param', 'address']} />
      <${Field} label="Parameter" error=${error && error.field('param')} wide>
        <textarea name="param" rows="3" value=${param} onInput=${(e) => setParam(e.target.value)}></textarea>
      </${Field}>
      <${Field} label="Executor" error=${error && error.field('address')} hint="Empty: chosen by the job's route strategy" wide>
        <${Select} name="address" value=${address} onChange=${setAddress}
          options=${[['', '(route strategy)'], ...addresses.map((a) => [a, a])]} />
      </${Field}>
      <div class="form-actions">
        <button type="button" onClick=${onClose}>Cancel</button>
        <button type="submit" class="primary">Trigger</button>
      </div>
    </form>
  </div>`;
}

export function JobsPage({ route }) {
  const p = route.params;
  const offset = Number(p.offset || 0);
  const [text, setText] = useState(p.q || '');
  const [notice, setNotice] = useState('');
  const [actionError, setActionError] = useState(null);
  const [triggering, setTriggering] = useState(null);
  const groups = useLoad(() => api.get('/api/v1/groups'), []);
  const jobs = useLoad(
    () => api.get(`/api/v1/jobs${query({ group_id: p.group, enabled: p.enabled, q: p.q, offset, limit: LIMIT })}`),
    [p.group, p.enabled, p.q, offset],
  );
  const groupList = (groups.data && groups.data.items) || [];
  const groupById = Object.fromEntries(groupList.map((g) => [g.id, g]));
  const setFilter = (changes) => navigate('/jobs', { group: p.group, enabled: p.enabled, q: p.q, ...changes, offset: '' });

  const act = async (fn, message) => {
    setActionError(null);
    try {
      await fn();
      setNotice(message);
      jobs.reload();
    } catch (err) {
      setActionError(err);
    }
  };

  return html`<section>
    <${PageHeader} title="Jobs">
      <a class="button primary" href="#/jobs/new" data-testid="new-job">New job</a>
    </${PageHeader}>
    <form class="filters" onSubmit=${(e) => { e.preventDefault(); setFilter({ q: text }); }}>
      <${Field} label="Group">
        <${Select} name="group" value=${p.group || ''} onChange=${(v) => setFilter({ group: v })}
          options=${[['', 'All groups'], ...groupList.map((g) => [g.id, `${g.title} (${g.app_name})`])]} />
      </${Field}>
      <${Field} label="State">
        <${Select} name="enabled" value=${p.enabled || ''} onChange=${(v) => setFilter({ enabled: v })}
          options=${[['', 'Any'], ['true', 'Running'], ['false', 'Stopped']]} />
      </${Field}>
      <${Field} label="Search">
        <input name="q" type="search" placeholder="description or handler" value=${text} onInput=${(e) => setText(e.target.value)} />
      </${Field}>
      <button type="submit">Filter</button>
    </form>
    <${Notice} text=${notice} onClose=${() => setNotice('')} />
    <${ErrorBanner} error=${actionError || jobs.error || groups.error} />
    ${!jobs.data ? html`<${Loading} />` : html`<div class="table-wrap"><table class="list cards" data-testid="jobs-table">
      <thead><tr><th>ID</th><th>Description</th><th>Group</th><th>Schedule</th><th>Handler</th><th>State</th><th>Next fire</th><th>Actions</th></tr></thead>
      <tbody>
        ${jobs.data.items.length === 0 && html`<tr><td colspan="8" class="muted">No jobs.</td></tr>`}
        ${jobs.data.items.map((j) => {
          const g = groupById[j.group_id];
          return html`<tr key=${j.id} data-job-id=${j.id}>
            <td data-label="ID">${j.id}</td>
            <td class="desc" data-label="Job"><a href=${`#/jobs/${j.id}`}>${j.description}</a>${j.author && html`<div class="muted small">${j.author}</div>`}</td>
            <td data-label="Group">${g ? g.title : j.group_id}</td>
            <td class="mono" data-label="Schedule">${scheduleText(j)}</td>
            <td class="mono" data-label="Handler">${j.glue_type === 'BEAN' ? j.handler : j.glue_type}</td>
            <td data-label="State">
              <span class=${`badge ${j.enabled ? 'status-running' : 'status-stopped'}`}>${j.enabled ? 'RUNNING' : 'STOPPED'}</span>
              ${j.stop_reason && html`<div class="muted small">${j.stop_reason}</div>`}
            </td>
            <td data-label="Next fire">${j.enabled && j.next_fire_ms ? html`<span title=${formatMs(j.next_fire_ms)}>${relativeMs(j.next_fire_ms)}</span>` : ''}</td>
            <td class="row-actions" data-label="">
              ${j.enabled
                ? html`<button type="button" onClick=${() => act(() => api.post(`/api/v1/jobs/${j.id}/stop`), `Stopped job ${j.id}.`)}>Stop</button>`
                : html`<button type="button" disabled=${j.schedule_type === 'NONE'} onClick=${() => act(() => api.post(`/api/v1/jobs/${j.id}/start`), `Started job ${j.id}.`)}>Start</button>`}
              <button type="button" onClick=${() => setTriggering(j)}>Trigger</button>
              <a class="button" href=${`#/logs?job=${j.id}&group=${j.group_id}`}>Logs</a>
              <button type="button" onClick=${() => act(() => api.post(`/api/v1/jobs/${j.id}/copy`), `Copied job ${j.id}.`)}>Copy</button>
              <${ConfirmButton} label="Delete" onConfirm=${() => act(() => api.del(`/api/v1/jobs/${j.id}`), `Deleted job ${j.id}.`)} />
            </td>
          </tr>`;
        })}
      </tbody>
    </table></div>
    <${Pager} total=${jobs.data.total} offset=${offset} limit=${LIMIT}
      onChange=${(o) => navigate('/jobs', { ...p, offset: o || '' })} />`}
    ${triggering && html`<${TriggerDialog} job=${triggering} group=${groupById[triggering.group_id]}
      onClose=${() => setTriggering(null)}
      onDone=${(logId) => { setTriggering(null); setNotice(`Triggered job ${triggering.id}: fire ${logId}.`); }} />`}
  </section>`;
}

import { html, useState } from '../lib.js';
import { api, query } from '../api.js';
import { ErrorBanner, Field, Loading, PageHeader, Pager, navigate, useLoad } from '../components.js';
import { formatMs } from '../util.js';

const LIMIT = 50;

// The top-level keys whose values differ between before and after.
function changedKeys(before, after) {
  if (!before || !after || typeof before !== 'object' || typeof after !== 'object') return [];
  const keys = new Set([...Object.keys(before), ...Object.keys(after)]);
  return [...keys].filter((k) => k !== 'updated_ms' && JSON.stringify(before[k]) !== JSON.stringify(after[k]));
}

function Entry({ e }) {
  const [open, setOpen] = useState(false);
  const changed = changedKeys(e.before, e.after);
  return html`<tr>
      <td>${formatMs(e.at_ms)}</td><td>${e.username}</td><td class="mono">${e.action}</td>
      <td>${e.entity} ${e.entity_id}</td>
      <td class="small">${changed.length > 0 ? `changed: ${changed.join(', ')}` : ''}</td>
      <td>${(e.before || e.after) && html`<button type="button" class="link" onClick=${() => setOpen(!open)}>${open ? 'hide' : 'details'}</button>`}</td>
    </tr>
    ${open && html`<tr class="details"><td colspan="6"><div class="diff">
      <div><h3>Before</h3><pre class="msg-block">${e.before ? JSON.stringify(e.before, null, 2) : '(none)'}</pre></div>
      <div><h3>After</h3><pre class="msg-block">${e.after ? JSON.stringify(e.after, null, 2) : '(none)'}</pre></div>
    </div></td></tr>`}`;
}

export function AuditPage({ route, user }) {
  const p = route.params;
  const offset = Number(p.offset || 0);
  const [f, setF] = useState({ entity: p.entity || '', entity_id: p.entity_id || '', action: p.action || '', username: p.username || '' });
  const entries = useLoad(
    () => api.get(`/api/v1/audit${query({ entity: p.entity, entity_id: p.entity_id, action: p.action, username: p.username, offset, limit: LIMIT })}`),
    [p.entity, p.entity_id, p.action, p.username, offset],
  );
  if (user.role !== 'ADMIN') return html`<div class="banner error">Only admins read the audit log.</div>`;
  return html`<section>
    <${PageHeader} title="Audit log" />
    <form class="filters" onSubmit=${(e) => { e.preventDefault(); navigate('/audit', f); }}>
      <${Field} label="Entity"><input name="entity" placeholder="job, group, user, token, log" value=${f.entity} onInput=${(e) => setF({ ...f, entity: e.target.value })} /></${Field}>
      <${Field} label="ID"><input name="entity_id" value=${f.entity_id} onInput=${(e) => setF({ ...f, entity_id: e.target.value })} /></${Field}>
      <${Field} label="Action"><input name="action" placeholder="job.update" value=${f.action} onInput=${(e) => setF({ ...f, action: e.target.value })} /></${Field}>
      <${Field} label="User"><input name="username" value=${f.username} onInput=${(e) => setF({ ...f, username: e.target.value })} /></${Field}>
      <button type="submit">Filter</button>
    </form>
    <${ErrorBanner} error=${entries.error} />
    ${!entries.data ? html`<${Loading} />` : html`<div class="table-wrap"><table class="list" data-testid="audit-table">
      <thead><tr><th>When</th><th>Who</th><th>Action</th><th>What</th><th>Change</th><th></th></tr></thead>
      <tbody>${entries.data.items.map((e) => html`<${Entry} key=${e.id} e=${e} />`)}</tbody>
    </table></div>
    <${Pager} total=${entries.data.total} offset=${offset} limit=${LIMIT} onChange=${(o) => navigate('/audit', { ...p, offset: o || '' })} />`}
  </section>`;
}

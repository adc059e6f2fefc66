// @ts-check
import { html, useState } from '../lib.js';
import { api, query } from '../api.js';
import { ErrorBanner, Field, Loading, PageHeader, Pager, navigate, useLoad } from '../components.js';
import { formatMs } from '../util.js';
import { t } from '../i18n.js';

const LIMIT = 50;
// Examples of what the filters take: the server's own words (entity names, action names), not translated.
const ENTITY_EXAMPLES = 'job, group, user, token, log';
const ACTION_EXAMPLE = 'job.update';

/** @typedef {import('../types.js').AuditEntry} AuditEntry */

// The top-level keys whose values differ between before and after.
/**
 * @param {AuditEntry['before']} before
 * @param {AuditEntry['after']} after
 */
function changedKeys(before, after) {
  if (!before || !after || typeof before !== 'object' || typeof after !== 'object') return [];
  const keys = new Set([...Object.keys(before), ...Object.keys(after)]);
  return [...keys].filter((k) => k !== 'updated_ms' && JSON.stringify(before[k]) !== JSON.stringify(after[k]));
}

// How the caller signed in (the server's "session", "password", "token <id> (<name>)", "cli login" (the token
// `cronwheel login` received); "" before it recorded it).
/** @param {{ via: string }} props */
function Via({ via }) {
  const token = /^token (\d+) \((.*)\)$/.exec(via || '');
  if (token) return html`<div class="small muted" data-testid="audit-via">${t('audit.via.token', { id: token[1], name: token[2] })}</div>`;
  if (via === 'session' || via === 'password') return html`<div class="small muted" data-testid="audit-via">${t(`audit.via.${via}`)}</div>`;
  if (via === 'cli login') return html`<div class="small muted" data-testid="audit-via">${t('audit.via.cliLogin')}</div>`;
  return null;
}

/** @param {{ e: AuditEntry }} props */
function Entry({ e }) {
  const [open, setOpen] = useState(false);
  const changed = changedKeys(e.before, e.after);
  return html`<tr>
      <td>${formatMs(e.at_ms)}</td><td>${e.username}<${Via} via=${e.via} /></td><td class="mono">${e.action}</td>
      <td>${e.entity} ${e.entity_id}</td>
      <td class="small">${changed.length > 0 ? t('audit.changed', { fields: changed.join(', ') }) : ''}</td>
      <td>${(e.before || e.after) && html`<button type="button" class="link" onClick=${() => setOpen(!open)}>${open ? t('audit.hide') : t('audit.details')}</button>`}</td>
    </tr>
    ${open && html`<tr class="details"><td colspan="6"><div class="diff">
      <div><h3>${t('audit.before')}</h3><pre class="msg-block">${e.before ? JSON.stringify(e.before, null, 2) : t('audit.none')}</pre></div>
      <div><h3>${t('audit.after')}</h3><pre class="msg-block">${e.after ? JSON.stringify(e.after, null, 2) : t('audit.none')}</pre></div>
    </div></td></tr>`}`;
}

/** @param {import('../components.js').PageProps} props */
export function AuditPage({ route, user }) {
  const p = route.params;
  const offset = Number(p.offset || 0);
  const [f, setF] = useState({ entity: p.entity || '', entity_id: p.entity_id || '', action: p.action || '', username: p.username || '' });
  /** @type {import('../components.js').Load<import('../types.js').Page<AuditEntry>>} */
  const entries = useLoad(
    () => api.get(`/api/v1/audit${query({ entity: p.entity, entity_id: p.entity_id, action: p.action, username: p.username, offset, limit: LIMIT })}`),
    [p.entity, p.entity_id, p.action, p.username, offset],
  );
  if (user.role !== 'ADMIN') return html`<div class="banner error">${t('audit.adminsOnly')}</div>`;
  return html`<section>
    <${PageHeader} title=${t('audit.title')} />
    <form class="filters" onSubmit=${(e) => { e.preventDefault(); navigate('/audit', f); }}>
      <${Field} label=${t('audit.entity')}><input name="entity" placeholder=${ENTITY_EXAMPLES} value=${f.entity} onInput=${(e) => setF({ ...f, entity: e.target.value })} /></${Field}>
      <${Field} label=${t('common.id')}><input name="entity_id" value=${f.entity_id} onInput=${(e) => setF({ ...f, entity_id: e.target.value })} /></${Field}>
      <${Field} label=${t('audit.action')}><input name="action" placeholder=${ACTION_EXAMPLE} value=${f.action} onInput=${(e) => setF({ ...f, action: e.target.value })} /></${Field}>
      <${Field} label=${t('field.username')}><input name="username" value=${f.username} onInput=${(e) => setF({ ...f, username: e.target.value })} /></${Field}>
      <button type="submit">${t('common.filter')}</button>
    </form>
    <${ErrorBanner} error=${entries.error} />
    ${!entries.data ? html`<${Loading} />` : html`<div class="table-wrap"><table class="list" data-testid="audit-table">
      <thead><tr><th>${t('audit.when')}</th><th>${t('audit.who')}</th><th>${t('audit.action')}</th><th>${t('audit.what')}</th><th>${t('audit.change')}</th><th></th></tr></thead>
      <tbody>${entries.data.items.map((e) => html`<${Entry} key=${e.id} e=${e} />`)}</tbody>
    </table></div>
    <${Pager} total=${entries.data.total} offset=${offset} limit=${LIMIT} onChange=${(o) => navigate('/audit', { ...p, offset: o || '' })} />`}
  </section>`;
}

// @ts-check
import { html, useState } from '../lib.js';
import { api } from '../api.js';
import { ConfirmButton, ErrorBanner, Field, Loading, Notice, PageHeader, useLoad } from '../components.js';
import { formatMs } from '../util.js';
import { t } from '../i18n.js';

const EXAMPLE_HEADER = 'Authorization: Bearer cwt_…';
// The server's default and longest lifetime of a token (admin/include/admin/model/accounts.hpp).
const DEFAULT_DAYS = 90;
const MAX_DAYS = 365;
// A token's scopes, least first (TokenScope in the same header); the server's default is the least.
const SCOPES = ['read', 'operate', 'write', 'admin'];
const DEFAULT_SCOPE = 'read';

// A token's state as the server reported it: active, expired, or revoked (and why).
/** @typedef {import('../types.js').Token} Token */

/** @param {{ tok: Token }} props */
function TokenState({ tok }) {
  if (tok.state === 'revoked') {
    return html`<span class="badge status-failed" title=${t(`tokens.revoked.${tok.revoked_reason || 'other'}`)}>${t('tokens.state.revoked')}</span>`;
  }
  if (tok.state === 'expired') return html`<span class="badge status-stopped">${t('tokens.state.expired')}</span>`;
  return html`<span class="badge status-running">${t('tokens.state.active')}</span>`;
}

/** @param {import('../components.js').PageProps} props */
export function TokensPage({ user }) {
  const admin = user.role === 'ADMIN';
  const [all, setAll] = useState(false);
  /** @type {import('../components.js').Load<import('../types.js').List<Token>>} */
  const tokens = useLoad(() => api.get(`/api/v1/tokens${all ? '?all=true' : ''}`), [all]);
  const [name, setName] = useState('');
  const [days, setDays] = useState(DEFAULT_DAYS);
  const [scope, setScope] = useState(DEFAULT_SCOPE);
  const [created, setCreated] = useState(/** @type {import('../types.js').TokenCreated | null} */ (null));
  const [notice, setNotice] = useState('');
  const [error, setError] = useState(/** @type {import('../api.js').ApiError | null} */ (null));
  const create = async (/** @type {Event} */ e) => {
    e.preventDefault();
    setError(null);
    try {
      setCreated(await api.post('/api/v1/tokens', { name, expires_in_days: Number(days), scope }));
      setName('');
      setDays(DEFAULT_DAYS);
      setScope(DEFAULT_SCOPE);
      tokens.reload();
    } catch (ex) {
      setError(ex);
    }
  };
  const remove = async (/** @type {Token} */ tok) => {
    setError(null);
    try {
      await api.del(`/api/v1/tokens/${tok.id}`);
      setNotice(t('tokens.deleted', { name: tok.name }));
      tokens.reload();
    } catch (ex) {
      setError(ex);
    }
  };
  return html`<section>
    <${PageHeader} title=${t('tokens.title')}>
      ${admin && html`<label class="inline"><input type="checkbox" checked=${all} onChange=${(e) => setAll(e.target.checked)} /> ${t('tokens.everyUser')}</label>`}
    </${PageHeader}>
    <p class="muted">${t('tokens.intro')} <code>${EXAMPLE_HEADER}</code></p>
    <form class="card form inline-form" onSubmit=${create}>
      <${Field} label=${t('field.name')} error=${error && error.field('name')}>
        <input name="token_name" required maxlength="100" value=${name} onInput=${(e) => setName(e.target.value)} />
      </${Field}>
      <${Field} label=${t('field.expires_in_days')} error=${error && error.field('expires_in_days')} hint=${t('tokens.hint.days', { max: MAX_DAYS })}>
        <input name="expires_in_days" type="number" required min="1" max=${MAX_DAYS} value=${days} onInput=${(e) => setDays(e.target.value)} />
      </${Field}>
      <${Field} label=${t('field.scope')} error=${error && error.field('scope')} hint=${t(`tokens.scope.${scope}.hint`)}>
        <select name="scope" value=${scope} onChange=${(e) => setScope(e.target.value)}>
          ${SCOPES.map((s) => html`<option value=${s} key=${s}>${t(`tokens.scope.${s}`)}</option>`)}
        </select>
      </${Field}>
      <button type="submit" class="primary">${t('tokens.create')}</button>
    </form>
    ${created && html`<div class="banner ok" data-testid="new-token">
      <div>${t('tokens.created', { name: created.name })} ${t('tokens.expiresAt', { when: formatMs(created.expires_ms) })}</div>
      <code class="secret">${created.token}</code>
      <button type="button" onClick=${() => navigator.clipboard && navigator.clipboard.writeText(created.token)}>${t('tokens.copy')}</button>
      <button type="button" class="link" onClick=${() => setCreated(null)}>${t('tokens.done')}</button>
    </div>`}
    <${Notice} text=${notice} onClose=${() => setNotice('')} />
    <${ErrorBanner} error=${error || tokens.error} shownFields=${['name', 'expires_in_days', 'scope']} />
    ${!tokens.data ? html`<${Loading} />` : html`<div class="table-wrap"><table class="list">
      <thead><tr><th>${t('common.id')}</th><th>${t('field.name')}</th>${all && html`<th>${t('field.username')}</th>`}<th>${t('field.scope')}</th><th>${t('tokens.col.state')}</th><th>${t('tokens.col.created')}</th><th>${t('tokens.col.expires')}</th><th>${t('tokens.col.lastUsed')}</th><th></th></tr></thead>
      <tbody>
        ${tokens.data.items.length === 0 && html`<tr><td colspan="9" class="muted">${t('tokens.empty')}</td></tr>`}
        ${tokens.data.items.map((tok) => html`<tr key=${tok.id} data-testid="token-row" data-state=${tok.state}>
          <td>${tok.id}</td><td>${tok.name}</td>${all && html`<td>${tok.username}</td>`}
          <td data-testid="token-scope" title=${t(`tokens.scope.${tok.scope}.hint`)}>${t(`tokens.scope.${tok.scope}`)}</td>
          <td><${TokenState} tok=${tok} /></td>
          <td>${formatMs(tok.created_ms)}</td>
          <td>${tok.state === 'revoked' ? html`<span class="muted">${t('tokens.revokedAt', { when: formatMs(tok.revoked_ms) })}</span>` : formatMs(tok.expires_ms)}</td>
          <td>${formatMs(tok.last_used_ms) || html`<span class="muted">${t('tokens.never')}</span>`}</td>
          <td class="row-actions"><${ConfirmButton} label=${t('common.delete')} confirmLabel=${t('common.deleteConfirm')} onConfirm=${() => remove(tok)} /></td>
        </tr>`)}
      </tbody>
    </table></div>`}
  </section>`;
}

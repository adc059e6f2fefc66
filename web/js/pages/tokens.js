import { html, useState } from '../lib.js';
import { api } from '../api.js';
import { ConfirmButton, ErrorBanner, Field, Loading, Notice, PageHeader, useLoad } from '../components.js';
import { formatMs } from '../util.js';
import { t } from '../i18n.js';

const EXAMPLE_HEADER = 'Authorization: Bearer cwt_…';

export function TokensPage({ user }) {
  const admin = user.role === 'ADMIN';
  const [all, setAll] = useState(false);
  const tokens = useLoad(() => api.get(`/api/v1/tokens${all ? '?all=true' : ''}`), [all]);
  const [name, setName] = useState('');
  const [created, setCreated] = useState(null);
  const [notice, setNotice] = useState('');
  const [error, setError] = useState(null);
  const create = async (e) => {
    e.preventDefault();
    setError(null);
    try {
      setCreated(await api.post('/api/v1/tokens', { name }));
      setName('');
      tokens.reload();
    } catch (ex) {
      setError(ex);
    }
  };
  const remove = async (tok) => {
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
      <button type="submit" class="primary">${t('tokens.create')}</button>
    </form>
    ${created && html`<div class="banner ok" data-testid="new-token">
      <div>${t('tokens.created', { name: created.name })}</div>
      <code class="secret">${created.token}</code>
      <button type="button" onClick=${() => navigator.clipboard && navigator.clipboard.writeText(created.token)}>${t('tokens.copy')}</button>
      <button type="button" class="link" onClick=${() => setCreated(null)}>${t('tokens.done')}</button>
    </div>`}
    <${Notice} text=${notice} onClose=${() => setNotice('')} />
    <${ErrorBanner} error=${error || tokens.error} shownFields=${['name']} />
    ${!tokens.data ? html`<${Loading} />` : html`<div class="table-wrap"><table class="list">
      <thead><tr><th>${t('common.id')}</th><th>${t('field.name')}</th>${all && html`<th>${t('field.username')}</th>`}<th>${t('tokens.col.created')}</th><th>${t('tokens.col.lastUsed')}</th><th></th></tr></thead>
      <tbody>
        ${tokens.data.items.length === 0 && html`<tr><td colspan="6" class="muted">${t('tokens.empty')}</td></tr>`}
        ${tokens.data.items.map((tok) => html`<tr key=${tok.id}>
          <td>${tok.id}</td><td>${tok.name}</td>${all && html`<td>${tok.username}</td>`}
          <td>${formatMs(tok.created_ms)}</td><td>${formatMs(tok.last_used_ms) || html`<span class="muted">${t('tokens.never')}</span>`}</td>
          <td class="row-actions"><${ConfirmButton} label=${t('common.delete')} confirmLabel=${t('common.deleteConfirm')} onConfirm=${() => remove(tok)} /></td>
        </tr>`)}
      </tbody>
    </table></div>`}
  </section>`;
}

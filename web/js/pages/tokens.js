import { html, useState } from '../lib.js';
import { api } from '../api.js';
import { ConfirmButton, ErrorBanner, Field, Loading, Notice, PageHeader, useLoad } from '../components.js';
import { formatMs } from '../util.js';

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
  const remove = async (t) => {
    setError(null);
    try {
      await api.del(`/api/v1/tokens/${t.id}`);
      setNotice(`Deleted token “${t.name}”.`);
      tokens.reload();
    } catch (ex) {
      setError(ex);
    }
  };
  return html`<section>
    <${PageHeader} title="API tokens">
      ${admin && html`<label class="inline"><input type="checkbox" checked=${all} onChange=${(e) => setAll(e.target.checked)} /> every user's</label>`}
    </${PageHeader}>
    <p class="muted">A token acts with your role and groups: <code>Authorization: Bearer cwt_…</code>. It is shown once.</p>
    <form class="card form inline-form" onSubmit=${create}>
      <${Field} label="Name" error=${error && error.field('name')}>
        <input name="token_name" required maxlength="100" value=${name} onInput=${(e) => setName(e.target.value)} />
      </${Field}>
      <button type="submit" class="primary">Create token</button>
    </form>
    ${created && html`<div class="banner ok" data-testid="new-token">
      <div>Token “${created.name}” (copy it now, it is not shown again):</div>
      <code class="secret">${created.token}</code>
      <button type="button" onClick=${() => navigator.clipboard && navigator.clipboard.writeText(created.token)}>Copy</button>
      <button type="button" class="link" onClick=${() => setCreated(null)}>done</button>
    </div>`}
    <${Notice} text=${notice} onClose=${() => setNotice('')} />
    <${ErrorBanner} error=${error || tokens.error} shownFields=${['name']} />
    ${!tokens.data ? html`<${Loading} />` : html`<div class="table-wrap"><table class="list">
      <thead><tr><th>ID</th><th>Name</th>${all && html`<th>User</th>`}<th>Created</th><th>Last used</th><th></th></tr></thead>
      <tbody>
        ${tokens.data.items.length === 0 && html`<tr><td colspan="6" class="muted">No tokens.</td></tr>`}
        ${tokens.data.items.map((t) => html`<tr key=${t.id}>
          <td>${t.id}</td><td>${t.name}</td>${all && html`<td>${t.username}</td>`}
          <td>${formatMs(t.created_ms)}</td><td>${formatMs(t.last_used_ms) || html`<span class="muted">never</span>`}</td>
          <td class="row-actions"><${ConfirmButton} label="Delete" onConfirm=${() => remove(t)} /></td>
        </tr>`)}
      </tbody>
    </table></div>`}
  </section>`;
}

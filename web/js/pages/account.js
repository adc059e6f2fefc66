import { html, useState } from '../lib.js';
import { api } from '../api.js';
import { ErrorBanner, Field, Notice, PageHeader } from '../components.js';

export function AccountPage({ user }) {
  const [f, setF] = useState({ old_password: '', new_password: '', again: '' });
  const [error, setError] = useState(null);
  const [notice, setNotice] = useState('');
  const err = (k) => (error && error.field ? error.field(k) : '');
  const submit = async (e) => {
    e.preventDefault();
    setError(null);
    if (f.new_password !== f.again) {
      setError({ message: 'The new passwords differ.', errors: [], field: (k) => (k === 'again' ? 'does not match' : '') });
      return;
    }
    try {
      await api.post('/api/v1/users/me/password', { old_password: f.old_password, new_password: f.new_password });
      setF({ old_password: '', new_password: '', again: '' });
      setNotice('Password changed. Your other sessions have ended.');
    } catch (ex) {
      setError(ex);
    }
  };
  return html`<section>
    <${PageHeader} title="Your account" />
    <p>${user.username} · <span class="badge role">${user.role}</span></p>
    <${Notice} text=${notice} onClose=${() => setNotice('')} />
    <${ErrorBanner} error=${error} shownFields=${['old_password', 'new_password']} />
    <form class="card form narrow" onSubmit=${submit}>
      <h2>Change password</h2>
      <${Field} label="Current password" error=${err('old_password')}>
        <input name="old_password" type="password" autocomplete="current-password" required value=${f.old_password} onInput=${(e) => setF({ ...f, old_password: e.target.value })} />
      </${Field}>
      <${Field} label="New password" error=${err('new_password')} hint="at least 10 characters">
        <input name="new_password" type="password" autocomplete="new-password" required value=${f.new_password} onInput=${(e) => setF({ ...f, new_password: e.target.value })} />
      </${Field}>
      <${Field} label="New password again" error=${err('again')}>
        <input name="again" type="password" autocomplete="new-password" required value=${f.again} onInput=${(e) => setF({ ...f, again: e.target.value })} />
      </${Field}>
      <div class="form-actions"><button type="submit" class="primary">Change password</button></div>
    </form>
  </section>`;
}

import { html, useState } from '../lib.js';
import { api } from '../api.js';

export function LoginPage({ onLogin }) {
  const [username, setUsername] = useState('');
  const [password, setPassword] = useState('');
  const [error, setError] = useState('');
  const [busy, setBusy] = useState(false);

  const submit = async (e) => {
    e.preventDefault();
    setBusy(true);
    setError('');
    try {
      onLogin(await api.post('/api/v1/auth/login', { username, password }));
    } catch (err) {
      setError(err.message);
    } finally {
      setBusy(false);
    }
  };
  return html`<main class="login">
    <form class="card login-card" onSubmit=${submit}>
      <h1>cronwheel</h1>
      <p class="muted">Log in to the scheduling console.</p>
      ${error && html`<div class="banner error" role="alert">${error}</div>`}
      <label class="field"><span class="label">Username</span>
        <input name="username" autocomplete="username" required value=${username} onInput=${(e) => setUsername(e.target.value)} />
      </label>
      <label class="field"><span class="label">Password</span>
        <input name="password" type="password" autocomplete="current-password" required value=${password}
          onInput=${(e) => setPassword(e.target.value)} />
      </label>
      <button class="primary" type="submit" disabled=${busy}>${busy ? 'Logging in…' : 'Log in'}</button>
    </form>
  </main>`;
}

import { html, useState } from '../lib.js';
import { api } from '../api.js';
import { LanguageSwitch } from '../components.js';
import { errorText, t } from '../i18n.js';

export function LoginPage({ onLogin }) {
  const [username, setUsername] = useState('');
  const [password, setPassword] = useState('');
  const [error, setError] = useState(null);
  const [busy, setBusy] = useState(false);

  const submit = async (e) => {
    e.preventDefault();
    setBusy(true);
    setError(null);
    try {
      onLogin(await api.post('/api/v1/auth/login', { username, password }));
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  };
  // 401 is the wrong username or password; anything else (throttled, unavailable) says what it is.
  const message = error && (error.status === 401 ? t('login.failed') : errorText(error));
  return html`<main class="login">
    <form class="card login-card" onSubmit=${submit}>
      <div class="login-head"><h1>cronwheel</h1><${LanguageSwitch} id="login-language" /></div>
      <p class="muted">${t('login.intro')}</p>
      ${message && html`<div class="banner error" role="alert">${message}</div>`}
      <label class="field"><span class="label">${t('login.username')}</span>
        <input name="username" autocomplete="username" required value=${username} onInput=${(e) => setUsername(e.target.value)} />
      </label>
      <label class="field"><span class="label">${t('login.password')}</span>
        <input name="password" type="password" autocomplete="current-password" required value=${password}
          onInput=${(e) => setPassword(e.target.value)} />
      </label>
      <button class="primary" type="submit" disabled=${busy}>${busy ? t('login.busy') : t('login.submit')}</button>
    </form>
  </main>`;
}

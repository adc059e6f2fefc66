// @ts-check
import { html, useEffect, useState } from '../lib.js';
import { api } from '../api.js';
import { LanguageSwitch, useRoute } from '../components.js';
import { errorText, t } from '../i18n.js';
import { loginSource, providerTitle } from '../util.js';

// The console route to come back to after a provider's login: the page asked for ("#/jobs?group=3"), not the
// login page itself (the admin keeps a console route only, else "#/").
/** @param {import('../components.js').Route} route */
function returnTo(route) {
  if (route.parts[0] === 'login') return '#/';
  const hash = window.location.hash || '#/';
  return hash.startsWith('#/') ? hash : '#/';
}

// A provider's logout address from the server, as a link only when it is a web address.
/** @type {(url: unknown) => string} */
const webUrl = (url) => (typeof url === 'string' && /^https?:\/\//i.test(url) ? url : '');

// The login page: a button per OpenID provider (a full page load to the admin's start URL, which sends the
// browser to the provider and back), and the password form (local users, the LDAP directory's, and the
// break-glass admin when single sign-on is required). `signedOut`: {source, url} after a logout whose answer
// named the provider's own logout (provider_logout_url).
/**
 * After a logout: the user's login_source, and the provider's logout address from the answer.
 * @typedef {{ source: string | undefined, url: string }} SignedOut
 */
/**
 * @param {{
 *   onLogin: (answer: import('../types.js').LoginResponse) => void, signedOut: SignedOut | null,
 * }} props
 */
export function LoginPage({ onLogin, signedOut }) {
  const route = useRoute();
  const [username, setUsername] = useState('');
  const [password, setPassword] = useState('');
  const [error, setError] = useState(/** @type {import('../api.js').ApiError | null} */ (null));
  const [busy, setBusy] = useState(false);
  const [providers, setProviders] = useState(
    /** @type {Required<import('../types.js').Providers>} */ ({ oidc: [], ldap: false, require_sso: false }),
  );
  useEffect(() => {
    // Public; an admin without single sign-on (or an older one) offers the password form only.
    /** @type {Promise<Partial<import('../types.js').Providers> | null>} */
    const asked = api.get('/api/v1/auth/providers');
    asked
      .then((p) => setProviders({ oidc: (p && p.oidc) || [], ldap: Boolean(p && p.ldap), require_sso: Boolean(p && p.require_sso) }))
      .catch(() => {});
  }, []);

  const submit = async (/** @type {Event} */ e) => {
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
  // 401 is the wrong username or password; anything else (throttled, unavailable, refused by the sign-in
  // policy or the directory's groups: 403) says what it is, with the server's words. A provider's login that
  // failed comes back as #/login?error=<message>: shown as text.
  const routeError = route.parts[0] === 'login' && route.params.error ? t('login.ssoFailed', { message: route.params.error }) : '';
  const message = error ? (error.status === 401 ? t('login.failed') : errorText(error)) : routeError;
  const back = encodeURIComponent(returnTo(route));
  const logoutUrl = signedOut && webUrl(signedOut.url);
  // The provider logged out of: the user's (its login_source), else the only one offered.
  const logoutTitle = () => {
    if (!signedOut) return '';
    const { kind, name } = loginSource(signedOut.source);
    if (kind === 'oidc') return providerTitle(providers, name);
    return providers.oidc.length === 1 ? providers.oidc[0].title || providers.oidc[0].name : '';
  };
  const buttons = providers.oidc.length > 0 && html`<div class="login-providers" data-testid="login-providers">
    ${providers.oidc.map((p) => html`<a class=${`button${providers.require_sso ? ' primary' : ''}`} key=${p.name}
      href=${`${p.start}?return_to=${back}`} data-testid="login-provider" data-provider=${p.name}>${t('login.withProvider', { title: p.title || p.name })}</a>`)}
  </div>`;
  const form = html`<form class="login-form" onSubmit=${submit} data-testid="login-form">
    ${providers.ldap && html`<p class="muted" data-testid="login-ldap-hint">${t('login.ldapHint')}</p>`}
    <label class="field"><span class="label">${t('login.username')}</span>
      <input name="username" autocomplete="username" required value=${username} onInput=${(e) => setUsername(e.target.value)} />
    </label>
    <label class="field"><span class="label">${t('login.password')}</span>
      <input name="password" type="password" autocomplete="current-password" required value=${password}
        onInput=${(e) => setPassword(e.target.value)} />
    </label>
    <button class=${providers.require_sso ? '' : 'primary'} type="submit" disabled=${busy}>${busy ? t('login.busy') : t('login.submit')}</button>
  </form>`;
  const or = buttons && html`<p class="login-or muted">${t('login.or')}</p>`;
  return html`<main class="login">
    <div class="card login-card">
      <div class="login-head"><h1>cronwheel</h1><${LanguageSwitch} id="login-language" /></div>
      <p class="muted">${t('login.intro')}</p>
      ${signedOut && html`<div class="banner ok" role="status" data-testid="signed-out">
        <span>${t('login.signedOut')}</span>
        ${logoutUrl && html`<a href=${logoutUrl} rel="noreferrer" data-testid="provider-logout">${logoutTitle()
          ? t('login.providerLogout', { title: logoutTitle() })
          : t('login.providerLogoutAny')}</a>`}
      </div>`}
      ${message && html`<div class="banner error" role="alert" data-testid="login-error">${message}</div>`}
      ${providers.require_sso
        ? html`${buttons}<p class="banner warn" role="note" data-testid="login-require-sso">${providers.ldap ? t('login.requireSsoLdap') : t('login.requireSso')}</p>${form}`
        : html`${form}${or}${buttons}`}
    </div>
  </main>`;
}

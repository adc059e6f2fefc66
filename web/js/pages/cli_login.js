// @ts-check
// `cronwheel login` (RFC 8252's loopback redirect with PKCE, docs/cli.md): the command-line client listens on
// 127.0.0.1:PORT and has the user open #/cli-login?port=&state=&code_challenge=&name=&scope=&expires_in_days=.
// The signed-in user approves (POST /api/v1/auth/cli/authorize; the browser then goes to the redirect the
// answer names, the client's own listener, which trades the code for the token) or denies (the browser goes
// to the listener with error=access_denied). Not in the menu: only reached through the client's link.
import { html, useState } from '../lib.js';
import { api } from '../api.js';
import { ErrorBanner, PageHeader } from '../components.js';
import { formatNumber, t } from '../i18n.js';
import { formatMs } from '../util.js';

// The server's limits (admin/include/admin/api/request_bodies.hpp, ReadCliLoginBody and ReadTokenBody).
const SCOPES = ['read', 'operate', 'write', 'admin'];
const MAX_DAYS = 365;
const MAX_NAME = 100;
const STATE = /^[A-Za-z0-9._~-]{1,128}$/;
const CHALLENGE = /^[A-Za-z0-9._~-]{43}$/;
const INTEGER = /^[0-9]{1,6}$/;

/** @type {(v: string | undefined, min: number, max: number) => number | null} */
const intIn = (v, min, max) => (INTEGER.test(v || '') && Number(v) >= min && Number(v) <= max ? Number(v) : null);

// The client's loopback listener: only for a port 1..65535 and a state of unreserved characters (else '').
/**
 * @param {number | string | null | undefined} port
 * @param {string | undefined} state
 * @param {string} query
 */
export function callbackUrl(port, state, query) {
  const p = intIn(String(port), 1, 65535);
  if (p === null || state === undefined || !STATE.test(String(state || ''))) return '';
  return `http://127.0.0.1:${p}/callback?${query}&state=${encodeURIComponent(state)}`;
}

// The request the link holds, checked as the server will: { request, invalid: [names of bad parameters] }.
/**
 * POST /api/v1/auth/cli/authorize's body from the link's parameters: a bad port or expires_in_days is null.
 * @typedef {{
 *   port: number | null, state: string, code_challenge: string, name: string, scope: string,
 *   expires_in_days: number | null, code_challenge_method?: string,
 * }} CliLoginRequest
 */
/**
 * @param {Record<string, string> | null | undefined} params
 * @returns {{ request: CliLoginRequest, invalid: string[] }}
 */
export function readCliLogin(params) {
  /** @type {Record<string, string>} */
  const p = params || {};
  const invalid = [];
  const port = intIn(p.port, 1, 65535);
  if (port === null) invalid.push('port');
  if (!STATE.test(p.state || '')) invalid.push('state');
  if (!CHALLENGE.test(p.code_challenge || '')) invalid.push('code_challenge');
  if (p.code_challenge_method !== undefined && p.code_challenge_method !== 'S256') invalid.push('code_challenge_method');
  const name = (p.name || '').trim();
  if (!name || name.length > MAX_NAME) invalid.push('name');
  if (!SCOPES.includes(p.scope)) invalid.push('scope');
  const days = intIn(p.expires_in_days, 1, MAX_DAYS);
  if (days === null) invalid.push('expires_in_days');
  /** @type {CliLoginRequest} */
  const request = { port, state: p.state, code_challenge: p.code_challenge, name, scope: p.scope, expires_in_days: days };
  if (p.code_challenge_method !== undefined) request.code_challenge_method = p.code_challenge_method;
  return { request, invalid };
}

/** @param {{ label: string, children?: import('../components.js').Children, testid: string }} props */
function Row({ label, children, testid }) {
  return html`<div class="kv"><dt>${label}</dt><dd data-testid=${testid}>${children}</dd></div>`;
}

/** @param {import('../components.js').PageProps} props */
export function CliLoginPage({ route, user }) {
  const { request, invalid } = readCliLogin(route.params);
  const [error, setError] = useState(/** @type {import('../i18n.js').ShownError | null} */ (null));
  const [busy, setBusy] = useState(false);
  const [done, setDone] = useState(''); // 'approved' | 'denied': the browser is on its way to the client

  const approve = async () => {
    setError(null);
    setBusy(true);
    try {
      /** @type {{ redirect?: string } | null} */
      const answer = await api.post('/api/v1/auth/cli/authorize', request);
      const redirect = (answer && answer.redirect) || '';
      // Only ever to the client's own listener on this computer.
      if (!redirect.startsWith(`http://127.0.0.1:${request.port}/`)) throw new Error(t('cliLogin.badRedirect'));
      setDone('approved');
      window.location.href = redirect;
    } catch (ex) {
      setError(ex);
      setBusy(false);
    }
  };
  const deny = () => {
    setError(null);
    const url = callbackUrl(request.port, request.state, 'error=access_denied');
    if (!url) {
      setError(new Error(t('cliLogin.badCallback')));
      return;
    }
    setBusy(true);
    setDone('denied');
    window.location.href = url;
  };

  if (invalid.length > 0) {
    return html`<section class="cli-login" data-testid="cli-login">
      <${PageHeader} title=${t('cliLogin.title')} />
      <div class="banner error" role="alert" data-testid="cli-login-invalid">
        <strong>${t('cliLogin.invalid')}</strong>
        <span class="detail">${t('cliLogin.invalidParams', { params: invalid.join(t('common.listSeparator')) })}</span>
      </div>
      <p class="muted">${t('cliLogin.runAgain')}</p>
    </section>`;
  }

  // Cast: no parameter is invalid here, so expires_in_days is a number.
  const days = /** @type {number} */ (request.expires_in_days);
  const expires = Date.now() + days * 86_400_000;
  return html`<section class="cli-login" data-testid="cli-login">
    <${PageHeader} title=${t('cliLogin.title')} />
    <div class="card">
      <p>${t('cliLogin.intro', { user: user.username })}</p>
      <dl class="kvs" data-testid="cli-login-request">
        <${Row} label=${t('field.name')} testid="cli-login-name">${request.name}</${Row}>
        <${Row} label=${t('field.scope')} testid="cli-login-scope">
          <strong>${t(`tokens.scope.${request.scope}`)}</strong> <span class="muted">${t(`tokens.scope.${request.scope}.hint`)}</span>
        </${Row}>
        <${Row} label=${t('field.expires_in_days')} testid="cli-login-days">
          ${formatNumber(days)} <span class="muted">${t('tokens.expiresAt', { when: formatMs(expires) })}</span>
        </${Row}>
        <${Row} label=${t('cliLogin.port')} testid="cli-login-port"><span class="mono">127.0.0.1:${request.port}</span></${Row}>
      </dl>
    </div>
    <div class="banner warn" role="note" data-testid="cli-login-warning">
      <strong>${t('cliLogin.warning')}</strong>
      <span>${t('cliLogin.warningDetail')}</span>
    </div>
    <${ErrorBanner} error=${error} />
    ${done
      ? html`<div class="banner ok" role="status" data-testid="cli-login-done">${t(done === 'approved' ? 'cliLogin.approved' : 'cliLogin.denied')}</div>`
      : html`<div class="form-actions">
          <button type="button" data-testid="cli-login-deny" disabled=${busy} onClick=${deny}>${t('cliLogin.deny')}</button>
          <button type="button" class="primary" data-testid="cli-login-approve" disabled=${busy} onClick=${approve}>
            ${busy ? t('cliLogin.approving') : t('cliLogin.approve')}
          </button>
        </div>`}
    <p class="muted">${t('cliLogin.revokeLater')} <a href="#/tokens">${t('nav.tokens')}</a></p>
  </section>`;
}

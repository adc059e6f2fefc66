// @ts-check
// The console's shell: who is logged in, the navigation, and which page the URL fragment names.
import { html, render, useEffect, useState } from './lib.js';
import { api, setCsrf, setUnauthorizedHandler } from './api.js';
import { LanguageSwitch, Loading, navigate, useRoute } from './components.js';
import { initialLanguage, onLanguageChange, setLanguage, t, tOr } from './i18n.js';
import { LoginPage } from './pages/login.js';
import { DashboardPage } from './pages/dashboard.js';
import { JobsPage } from './pages/jobs.js';
import { JobFormPage } from './pages/job_form.js';
import { GroupsPage } from './pages/groups.js';
import { LogsPage } from './pages/logs.js';
import { LogDetailPage } from './pages/log_detail.js';
import { UsersPage } from './pages/users.js';
import { TokensPage } from './pages/tokens.js';
import { AuditPage } from './pages/audit.js';
import { AccountPage } from './pages/account.js';
import { AlertsPage } from './pages/alerts.js';
import { CalendarsPage } from './pages/calendars.js';
import { WorkflowRunsPage, WorkflowsPage } from './pages/workflows.js';
import { WorkflowFormPage } from './pages/workflow_form.js';
import { WorkflowRunPage } from './pages/workflow_run.js';
import { CliLoginPage } from './pages/cli_login.js';

/** @typedef {import('./types.js').User} User */

// [path, message key, admins only]
/** @type {Array<[path: string, key: string, adminOnly: boolean]>} */
const NAV = [
  ['/', 'nav.dashboard', false],
  ['/jobs', 'nav.jobs', false],
  ['/workflows', 'nav.workflows', false],
  ['/logs', 'nav.logs', false],
  ['/groups', 'nav.groups', false],
  ['/alerts', 'nav.alerts', true],
  ['/calendars', 'nav.calendars', false],
  ['/tokens', 'nav.tokens', false],
  ['/users', 'nav.users', true],
  ['/audit', 'nav.audit', true],
];

/** @param {import('./components.js').PageProps} props */
function Page({ route, user }) {
  const [first, second, third] = route.parts;
  const props = { route, user };
  switch (first) {
    case undefined:
      return html`<${DashboardPage} ...${props} />`;
    case 'jobs':
      return second ? html`<${JobFormPage} ...${props} id=${second} />` : html`<${JobsPage} ...${props} />`;
    case 'workflows':
      if (second && third === 'runs') return html`<${WorkflowRunsPage} ...${props} id=${second} />`;
      return second ? html`<${WorkflowFormPage} ...${props} id=${second} />` : html`<${WorkflowsPage} ...${props} />`;
    case 'workflow-runs':
      return second ? html`<${WorkflowRunPage} ...${props} id=${second} />` : html`<${WorkflowsPage} ...${props} />`;
    case 'logs':
      return second ? html`<${LogDetailPage} ...${props} id=${second} />` : html`<${LogsPage} ...${props} />`;
    case 'groups':
      return html`<${GroupsPage} ...${props} />`;
    case 'alerts':
      return html`<${AlertsPage} ...${props} />`;
    case 'calendars':
      return html`<${CalendarsPage} ...${props} />`;
    case 'users':
      return html`<${UsersPage} ...${props} />`;
    case 'tokens':
      return html`<${TokensPage} ...${props} />`;
    case 'audit':
      return html`<${AuditPage} ...${props} />`;
    case 'account':
      return html`<${AccountPage} ...${props} />`;
    case 'login': // a provider's failed login seen by a logged-in browser: App goes on to the dashboard
      return html`<${Loading} />`;
    case 'cli-login': // `cronwheel login`'s link; not in the menu
      return html`<${CliLoginPage} ...${props} />`;
    default:
      return html`<div class="banner error">${t('app.noPage', { path: route.path })}</div>`;
  }
}

function App() {
  const route = useRoute();
  const [user, setUser] = useState(/** @type {User | null | undefined} */ (undefined)); // undefined = asking, null = logged out
  const [menuOpen, setMenuOpen] = useState(false);
  // After a logout: {source, url} of the user's OpenID provider when its answer offers the provider's logout.
  const [signedOut, setSignedOut] = useState(/** @type {import('./pages/login.js').SignedOut | null} */ (null));
  const [, setLang] = useState(''); // a change of language re-renders the whole page in place
  useEffect(() => onLanguageChange(setLang), []);

  useEffect(() => {
    setUnauthorizedHandler(() => setUser(null));
    /** @type {Promise<import('./types.js').Me>} */
    const asked = api.get('/api/v1/auth/me');
    asked
      .then((me) => {
        setCsrf(me.csrf_token);
        setUser(me.user);
      })
      .catch(() => setUser(null));
  }, []);
  useEffect(() => setMenuOpen(false), [route.path]);
  // Logged in (a password login from #/login?error=..., or a session still alive), the login page's address
  // goes to the dashboard.
  useEffect(() => {
    if (user && route.parts[0] === 'login') navigate('/');
  }, [user, route.path]);

  if (user === undefined) return html`<main class="center"><${Loading} /></main>`;
  if (user === null) {
    return html`<${LoginPage}
      signedOut=${signedOut}
      onLogin=${(/** @type {import('./types.js').LoginResponse} */ data) => {
        setCsrf(data.csrf_token);
        setSignedOut(null);
        setUser(data.user);
      }}
    />`;
  }

  const logout = async () => {
    /** @type {{ logged_out?: boolean, provider_logout_url?: string } | null} */
    let answer = null;
    try {
      answer = await api.post('/api/v1/auth/logout');
    } catch (_) {
      // the session is gone either way
    }
    setCsrf('');
    // A user of an OpenID provider is offered its logout too (a link on the login page: the provider's own
    // session outlives cronwheel's).
    const url = answer && answer.provider_logout_url;
    setSignedOut(url ? { source: user.login_source, url } : null);
    setUser(null);
    navigate('/');
  };
  const admin = user.role === 'ADMIN';
  // A workflow's run belongs to the workflows' entry of the menu.
  const current = route.parts[0] === 'workflow-runs' ? '/workflows' : `/${route.parts[0] || ''}`;
  return html`<div class="shell">
    <header class="topbar">
      <button class="menu-toggle" type="button" aria-label=${t('app.menu')} aria-expanded=${menuOpen} onClick=${() => setMenuOpen(!menuOpen)}>☰</button>
      <a class="brand" href="#/">cronwheel</a>
      <div class="whoami">
        <${LanguageSwitch} />
        <a href="#/account" title=${t('app.yourAccount')} data-testid="whoami">${user.username}</a>
        <span class="badge role">${tOr(`enum.role.${user.role}`, user.role)}</span>
        <button type="button" class="link" onClick=${logout} data-testid="logout">${t('app.logout')}</button>
      </div>
    </header>
    <nav class=${`sidebar${menuOpen ? ' open' : ''}`} aria-label=${t('app.mainNav')}>
      ${NAV.filter(([, , adminOnly]) => admin || !adminOnly).map(
        ([path, key]) => html`<a href=${`#${path}`} class=${current === path ? 'active' : ''}>${t(key)}</a>`,
      )}
      <div class="menu-language"><${LanguageSwitch} id="menu-language" testid="menu-language" /></div>
    </nav>
    <main class="content"><${Page} route=${route} user=${user} /></main>
  </div>`;
}

// The messages first (the saved or the browser's language; English if that file cannot be loaded), then
// the page.
setLanguage(initialLanguage())
  .catch(() => setLanguage('en'))
  .catch((e) => console.error(`cronwheel: no messages could be loaded: ${e.message}`))
  // Cast: index.html has the <div id="app"> the console is drawn in.
  .finally(() => render(html`<${App} />`, /** @type {HTMLElement} */ (document.getElementById('app'))));

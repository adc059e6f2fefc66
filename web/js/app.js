// The console's shell: who is logged in, the navigation, and which page the URL fragment names.
import { html, render, useEffect, useState } from './lib.js';
import { api, setCsrf, setUnauthorizedHandler } from './api.js';
import { Loading, navigate, useRoute } from './components.js';
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

const NAV = [
  ['/', 'Dashboard', false],
  ['/jobs', 'Jobs', false],
  ['/logs', 'Logs', false],
  ['/groups', 'Executors', false],
  ['/tokens', 'API tokens', false],
  ['/users', 'Users', true],
  ['/audit', 'Audit', true],
];

function Page({ route, user }) {
  const [first, second] = route.parts;
  const props = { route, user };
  switch (first) {
    case undefined:
      return html`<${DashboardPage} ...${props} />`;
    case 'jobs':
      return second ? html`<${JobFormPage} ...${props} id=${second} />` : html`<${JobsPage} ...${props} />`;
    case 'logs':
      return second ? html`<${LogDetailPage} ...${props} id=${second} />` : html`<${LogsPage} ...${props} />`;
    case 'groups':
      return html`<${GroupsPage} ...${props} />`;
    case 'users':
      return html`<${UsersPage} ...${props} />`;
    case 'tokens':
      return html`<${TokensPage} ...${props} />`;
    case 'audit':
      return html`<${AuditPage} ...${props} />`;
    case 'account':
      return html`<${AccountPage} ...${props} />`;
    default:
      return html`<div class="banner error">There is no page <code>${route.path}</code>.</div>`;
  }
}

function App() {
  const route = useRoute();
  const [user, setUser] = useState(undefined); // undefined = asking, null = logged out
  const [menuOpen, setMenuOpen] = useState(false);

  useEffect(() => {
    setUnauthorizedHandler(() => setUser(null));
    api
      .get('/api/v1/auth/me')
      .then((me) => {
        setCsrf(me.csrf_token);
        setUser(me.user);
      })
      .catch(() => setUser(null));
  }, []);
  useEffect(() => setMenuOpen(false), [route.path]);

  if (user === undefined) return html`<main class="center"><${Loading} /></main>`;
  if (user === null) {
    return html`<${LoginPage}
      onLogin=${(data) => {
        setCsrf(data.csrf_token);
        setUser(data.user);
      }}
    />`;
  }

  const logout = async () => {
    try {
      await api.post('/api/v1/auth/logout');
    } catch (_) {
      // the session is gone either way
    }
    setCsrf('');
    setUser(null);
    navigate('/');
  };
  const admin = user.role === 'ADMIN';
  const current = `/${route.parts[0] || ''}`;
  return html`<div class="shell">
    <header class="topbar">
      <button class="menu-toggle" type="button" aria-label="Menu" aria-expanded=${menuOpen} onClick=${() => setMenuOpen(!menuOpen)}>☰</button>
      <a class="brand" href="#/">cronwheel</a>
      <div class="whoami">
        <a href="#/account" title="Your account" data-testid="whoami">${user.username}</a>
        <span class="badge role">${user.role}</span>
        <button type="button" class="link" onClick=${logout} data-testid="logout">Log out</button>
      </div>
    </header>
    <nav class=${`sidebar${menuOpen ? ' open' : ''}`} aria-label="Main">
      ${NAV.filter(([, , adminOnly]) => admin || !adminOnly).map(
        ([path, label]) => html`<a href=${`#${path}`} class=${current === path ? 'active' : ''}>${label}</a>`,
      )}
    </nav>
    <main class="content"><${Page} route=${route} user=${user} /></main>
  </div>`;
}

render(html`<${App} />`, document.getElementById('app'));

// Browser test of the console (ctest label `web`): Debian's Chromium, headless, driven by playwright-core,
// against real processes on loopback — a fresh database on the test PostgreSQL, cronwheel-admin in
// production mode, and one cronwheel-executor with scripts enabled.
//
// Scenario: log in; create a group and a shell job firing every 2 s (live cron preview, an invalid
// expression named); start it; see it fire in the logs; open a fire and see the executor's output tailed
// to its end; stop the job; a description and output holding <script> and <img onerror> render as text
// (no dialog, the literal text visible, no such element); a normal user created in the UI sees none of
// another group's jobs; log out. A screenshot of each page goes to tests/web/screenshots/ (1280x800, and
// the jobs page at 390x844).
//
// Environment: CRONWHEEL_ADMIN_BIN, CRONWHEEL_EXECUTOR_BIN (set by ctest), CRONWHEEL_TEST_DSN (a server
// DSN whose role may CREATE DATABASE). Bounded: a global deadline, every wait has its own; everything it
// started is stopped in `finally`. Prints "N passed, N failed".
import { spawn, execFileSync } from 'node:child_process';
import { createRequire } from 'node:module';
import crypto from 'node:crypto';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const require = createRequire(import.meta.url);
let chromium;
try {
  ({ chromium } = require('playwright-core'));
} catch (e) {
  console.error(`tests/web: playwright-core is not installed (${e.code}): run scripts/setup --web`);
  console.log('0 passed, 1 failed');
  process.exit(1);
}

const DEADLINE_MS = 240_000;
const started = Date.now();
const shots = process.env.CRONWHEEL_WEB_SCREENSHOTS || path.join(here, 'screenshots');
const work = fs.mkdtempSync(path.join(os.tmpdir(), 'cronwheel-web-'));
const children = [];
const checks = { passed: 0, failed: 0 };
let dbName = '';
let browser = null; // the Chromium context, closed in finish() too
let serverDsn = '';

function log(msg) {
  console.log(`[${((Date.now() - started) / 1000).toFixed(1).padStart(6)}s] ${msg}`);
}

function check(ok, what) {
  if (ok) {
    checks.passed += 1;
    log(`ok   ${what}`);
  } else {
    checks.failed += 1;
    log(`FAIL ${what}`);
  }
  return ok;
}

function need(value, what) {
  if (!value) throw new Error(`${what} is not set`);
  return value;
}

function freePort() {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.on('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

async function until(what, fn, timeoutMs = 30_000, everyMs = 250) {
  const end = Date.now() + timeoutMs;
  let last;
  while (Date.now() < end) {
    try {
      last = await fn();
      if (last) return last;
    } catch (e) {
      last = e;
    }
    await sleep(everyMs);
  }
  throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}${last instanceof Error ? `: ${last.message}` : ''}`);
}

// psql against the server of CRONWHEEL_TEST_DSN (its own database), for CREATE/DROP DATABASE.
function psql(sql) {
  execFileSync('psql', [serverDsn, '-v', 'ON_ERROR_STOP=1', '-qAt', '-c', sql], { stdio: ['ignore', 'pipe', 'pipe'], timeout: 30_000 });
}

function dsnFor(db) {
  const u = new URL(serverDsn);
  u.pathname = `/${db}`;
  return u.toString();
}

function startProcess(name, bin, args, env) {
  const out = fs.openSync(path.join(work, `${name}.log`), 'w');
  const child = spawn(bin, args, { env: { PATH: process.env.PATH, ...env }, stdio: ['ignore', out, out] });
  child.on('exit', (code, signal) => log(`${name} exited (${code ?? signal})`));
  children.push({ name, child });
  return child;
}

async function stopAll() {
  for (const { name, child } of children.reverse()) {
    if (child.exitCode !== null || child.signalCode !== null) continue;
    child.kill('SIGTERM');
    const done = await Promise.race([new Promise((r) => child.once('exit', () => r(true))), sleep(8000).then(() => false)]);
    if (!done) {
      log(`${name} did not stop on SIGTERM; SIGKILL`);
      child.kill('SIGKILL');
    }
  }
}

async function shot(page, name) {
  await page.mouse.move(0, page.viewportSize().height - 1); // no hover effects in the picture
  await page.waitForTimeout(300);
  await page.screenshot({ path: path.join(shots, `${name}.png`), fullPage: true });
  const width = await page.evaluate(() => document.documentElement.scrollWidth);
  const viewport = page.viewportSize().width;
  check(width <= viewport, `${name}: no horizontal scrolling of the page (${width} <= ${viewport})`);
}

// API calls from inside the page (same origin, the page's session and CSRF token).
async function pageApi(page, method, url, body) {
  return page.evaluate(
    async ({ method, url, body }) => {
      const me = await (await fetch('/api/v1/auth/me')).json();
      const res = await fetch(url, {
        method,
        headers: { 'Content-Type': 'application/json', 'X-CSRF-Token': me.csrf_token || '' },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      return { status: res.status, body: await res.json() };
    },
    { method, url, body },
  );
}

async function login(page, base, username, password) {
  await page.goto(`${base}/#/`);
  await page.locator('input[name=username]').fill(username);
  await page.locator('input[name=password]').fill(password);
  await page.getByRole('button', { name: 'Log in' }).click();
  await page.locator('[data-testid=whoami]').waitFor({ timeout: 15_000 });
}

async function logout(page) {
  await page.locator('[data-testid=logout]').click();
  await page.locator('input[name=username]').waitFor({ timeout: 15_000 });
}

const XSS_DESC = `Job <script>alert('desc')</script><img src=x onerror="alert('desc-img')">`;
const XSS_OUT = `<script>alert('out')</script><img src=x onerror="alert('out-img')">`;
const SCRIPT = `echo "hello from cronwheel"\ncat <<'EOF'\n${XSS_OUT}\nEOF\n`;

async function scenario() {
  const adminBin = need(process.env.CRONWHEEL_ADMIN_BIN, 'CRONWHEEL_ADMIN_BIN');
  const executorBin = need(process.env.CRONWHEEL_EXECUTOR_BIN, 'CRONWHEEL_EXECUTOR_BIN');
  serverDsn = need(process.env.CRONWHEEL_TEST_DSN, 'CRONWHEEL_TEST_DSN (scripts/pg up --name test --fast)');
  fs.mkdirSync(shots, { recursive: true });

  dbName = `cw_web_${crypto.randomBytes(6).toString('hex')}`;
  psql(`CREATE DATABASE ${dbName}`);
  const token = crypto.randomBytes(24).toString('hex');
  const adminPassword = crypto.randomBytes(12).toString('base64url');
  const adminPort = await freePort();
  const executorPort = await freePort();
  const base = `http://127.0.0.1:${adminPort}`;

  startProcess('admin', adminBin, ['--mode', 'production', '--listen', `127.0.0.1:${adminPort}`], {
    CRONWHEEL_DSN: dsnFor(dbName),
    CRONWHEEL_ACCESS_TOKEN: token,
    CRONWHEEL_ADMIN_PASSWORD: adminPassword,
    CRONWHEEL_DB_POOL_SIZE: '8',
    CRONWHEEL_FAST_POOL_THREADS: '8',
    CRONWHEEL_SLOW_POOL_THREADS: '4',
  });
  await until('the admin to answer /api/v1/health', async () => (await fetch(`${base}/api/v1/health`)).ok, 30_000);
  startProcess('executor', executorBin, ['--listen', `127.0.0.1:${executorPort}`], {
    CRONWHEEL_APP_NAME: 'web-test-app',
    CRONWHEEL_ADMIN_ADDRESSES: base,
    CRONWHEEL_ACCESS_TOKEN: token,
    CRONWHEEL_LOG_DIR: path.join(work, 'executor-logs'),
    CRONWHEEL_ENABLE_SCRIPTS: 'true',
    CRONWHEEL_HEARTBEAT_INTERVAL_S: '2',
    CRONWHEEL_MODE: 'production',
  });
  log(`admin ${base}, executor 127.0.0.1:${executorPort}, database ${dbName}`);

  const context = await chromium.launchPersistentContext(path.join(work, 'chromium-profile'), {
    executablePath: '/usr/bin/chromium',
    headless: true,
    viewport: { width: 1280, height: 800 },
    args: [
      '--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
      '--disable-background-networking', '--disable-component-update', '--disable-sync',
    ],
  });
  browser = context;
  try {
    context.setDefaultTimeout(15_000);
    const page = context.pages()[0] || (await context.newPage());
    const dialogs = [];
    const pageErrors = [];
    page.on('dialog', async (d) => {
      dialogs.push(d.message());
      await d.dismiss().catch(() => {});
    });
    page.on('pageerror', (e) => pageErrors.push(e.message));

    // --- log in ----------------------------------------------------------------------------------------
    await page.goto(`${base}/`);
    await page.locator('input[name=username]').waitFor();
    await shot(page, 'login');
    await page.locator('input[name=username]').fill('admin');
    await page.locator('input[name=password]').fill('not-the-password');
    await page.getByRole('button', { name: 'Log in' }).click();
    await page.getByText('wrong username or password').waitFor();
    check(true, 'a wrong password is refused with a message');
    await login(page, base, 'admin', adminPassword);
    check(await page.locator('[data-testid=whoami]').innerText() === 'admin', 'logged in as admin');
    await page.locator('[data-testid=stat-jobs]').waitFor();

    // --- an executor group, and the executor online in it --------------------------------------------------
    await page.goto(`${base}/#/groups`);
    await page.locator('[data-testid=new-group]').click();
    await page.locator('input[name=app_name]').fill('web-test-app');
    await page.locator('input[name=title]').fill('Web test');
    await page.locator('[data-testid=save-group]').click();
    await page.getByText('Saved group web-test-app.').waitFor();
    await until('the executor to be online in the group', async () => {
      await page.goto(`${base}/#/groups?t=${Date.now()}`);
      return (await page.locator('[data-testid=groups-table]').innerText()).includes(`127.0.0.1:${executorPort}`);
    }, 40_000, 1000);
    check(true, 'the executor shows as online in its group');
    // A second group, for the normal user.
    await page.locator('[data-testid=new-group]').click();
    await page.locator('input[name=app_name]').fill('other-team-app');
    await page.locator('input[name=title]').fill('Other team');
    await page.locator('[data-testid=save-group]').click();
    await page.getByText('Saved group other-team-app.').waitFor();
    await shot(page, 'groups');

    // --- a job firing every 2 s, with live cron validation -------------------------------------------------
    await page.goto(`${base}/#/jobs/new`);
    const form = page.locator('[data-testid=job-form]');
    await form.waitFor();
    await form.locator('select[name=group_id]').selectOption({ label: 'Web test (web-test-app)' });
    await form.locator('input[name=description]').fill(XSS_DESC);
    const preview = page.locator('[data-testid=schedule-preview]');
    await form.locator('input[name=schedule_conf]').fill('0/2 * * * 13 ?');
    await until('the preview to reject month 13', async () => (await preview.innerText()).includes('schedule_conf'), 10_000);
    check((await preview.innerText()).includes('13'), 'an invalid cron expression is named in the live preview');
    await form.locator('input[name=time_zone]').fill('Asia/Shanghai');
    await form.locator('input[name=schedule_conf]').fill('0/2 * * * * ?');
    await until('five next fires', async () => (await preview.locator('li').count()) === 5, 10_000);
    const firstFire = await preview.locator('li').first().innerText();
    check(/\+08:00$/.test(firstFire.trim()), `the next fires are shown in the job's zone (${firstFire.trim()})`);
    await form.locator('select[name=glue_type]').selectOption('GLUE_SHELL');
    await form.locator('textarea[name=glue_source]').fill(SCRIPT);
    await form.locator('input[name=glue_remark]').fill('first version');
    await shot(page, 'job-form');
    await page.locator('[data-testid=save-job]').click();
    await page.waitForURL(/#\/jobs\/\d+$/);
    const jobId = Number(page.url().match(/#\/jobs\/(\d+)$/)[1]);
    check(jobId > 0, `the job was created (id ${jobId})`);
    await page.getByTestId('glue-history').waitFor();
    check((await page.getByTestId('glue-history').innerText()).includes('first version'), 'the script version history lists the saved version');

    // Start it from the list.
    await page.goto(`${base}/#/jobs`);
    const row = page.locator(`tr[data-job-id="${jobId}"]`);
    await row.getByRole('button', { name: 'Start' }).click();
    await row.getByText('RUNNING').waitFor();
    check(true, 'the job runs');
    check(await row.getByText(XSS_DESC, { exact: false }).isVisible(), 'the description with <script> and <img onerror> is shown as text');
    await shot(page, 'jobs');

    // --- it fires: the logs, then one fire's output tailed to the end ----------------------------------------
    await page.goto(`${base}/#/logs?job=${jobId}`);
    const table = page.locator('[data-testid=logs-table]');
    await until('a successful fire in the logs', async () => (await table.locator('tr[data-status=SUCCESS]').count()) > 0, 40_000, 500);
    check(true, 'the job fired and succeeded (seen in the logs page)');
    await shot(page, 'logs');
    const logId = await table.locator('tr[data-status=SUCCESS]').first().getAttribute('data-log-id');
    await page.goto(`${base}/#/logs/${logId}`);
    const output = page.locator('[data-testid=log-output]');
    await until('the output of the fire', async () => (await output.innerText()).includes('hello from cronwheel'), 20_000);
    await until('the tail to end', async () => (await page.getByTestId('tail-state').innerText()) === 'ended', 20_000);
    const text = await output.innerText();
    check(text.includes('hello from cronwheel'), "the executor's output is shown");
    check(text.includes(XSS_OUT), 'output holding <script> and <img onerror> is shown as literal text');
    check((await page.locator('img[src="x"]').count()) === 0, 'no <img> element was created from job data');
    check((await page.locator('script:not([src])').count()) === 0, 'no inline <script> element exists');
    await shot(page, 'log-detail');

    // --- stop the job ---------------------------------------------------------------------------------------
    await page.goto(`${base}/#/jobs`);
    await row.getByRole('button', { name: 'Stop' }).click();
    await row.getByText('STOPPED').waitFor();
    const stopped = await pageApi(page, 'GET', `/api/v1/jobs/${jobId}`);
    check(stopped.status === 200 && stopped.body.enabled === false && stopped.body.next_fire_ms === 0, 'the job is stopped');
    const fires = (await pageApi(page, 'GET', `/api/v1/logs?job_id=${jobId}`)).body.total;
    await sleep(4500);
    const later = (await pageApi(page, 'GET', `/api/v1/logs?job_id=${jobId}`)).body.total;
    check(later <= fires + 1, `no new fires after the stop (${fires} then ${later})`);

    await page.goto(`${base}/#/`);
    await page.locator('[data-testid=stat-jobs]').waitFor();
    await page.waitForFunction(() => window.Chart !== undefined && document.querySelector('canvas') !== null);
    check((await page.getByTestId('stat-jobs').innerText()).startsWith('1'), 'the dashboard counts the job');
    await shot(page, 'dashboard');

    // --- a normal user, created in the UI, sees only their group -----------------------------------------------
    await page.goto(`${base}/#/users`);
    await page.locator('[data-testid=new-user]').click();
    const userForm = page.locator('[data-testid=user-form]');
    await userForm.locator('input[name=username]').fill('viewer');
    const viewerPassword = crypto.randomBytes(12).toString('base64url');
    await userForm.locator('input[name=password]').fill(viewerPassword);
    await userForm.locator('input[name="group-other-team-app"]').check();
    await page.locator('[data-testid=save-user]').click();
    await page.getByText('Saved viewer.').waitFor();
    await shot(page, 'users');
    await page.goto(`${base}/#/tokens`);
    await page.locator('input[name=token_name]').fill('ci pipeline');
    await page.getByRole('button', { name: 'Create token' }).click();
    await page.getByTestId('new-token').waitFor();
    check((await page.getByTestId('new-token').innerText()).includes('cwt_'), 'an API token is shown once after creation');
    await shot(page, 'tokens');
    await page.goto(`${base}/#/audit`);
    await page.getByTestId('audit-table').waitFor();
    check((await page.getByTestId('audit-table').innerText()).includes('job.stop'), 'the audit log shows the stop');
    await shot(page, 'audit');
    await logout(page);

    await login(page, base, 'viewer', viewerPassword);
    await page.goto(`${base}/#/jobs`);
    await page.getByTestId('jobs-table').waitFor();
    check((await page.getByTestId('jobs-table').innerText()).includes('No jobs.'), "the normal user's job list is empty");
    check((await page.getByText('Job <script>', { exact: false }).count()) === 0, "the other group's job is not shown");
    await page.goto(`${base}/#/jobs/${jobId}`);
    await page.getByText(`job '${jobId}' not found`).waitFor();
    check(true, "opening the other group's job by id answers not found");
    const denied = await pageApi(page, 'GET', `/api/v1/logs?job_id=${jobId}`);
    check(denied.status === 200 && denied.body.total === 0, "the other group's fires are not listed");
    check((await page.locator('nav a', { hasText: 'Users' }).count()) === 0, 'the normal user has no Users page in the menu');
    await shot(page, 'viewer-jobs');
    await logout(page);
    check(await page.locator('input[name=username]').isVisible(), 'logged out: the login page shows');
    check((await pageApi(page, 'GET', '/api/v1/jobs')).status === 401, 'after logout the API refuses the browser');

    // --- phone width ----------------------------------------------------------------------------------------------
    await page.setViewportSize({ width: 390, height: 844 });
    await login(page, base, 'admin', adminPassword);
    await page.goto(`${base}/#/jobs`);
    await page.getByTestId('jobs-table').waitFor();
    await shot(page, 'jobs-phone');
    await page.goto(`${base}/#/logs/${logId}`);
    await page.getByTestId('log-output').waitFor();
    await until('the output at phone width', async () => (await page.getByTestId('log-output').innerText()).includes('hello'), 10_000);
    await shot(page, 'log-detail-phone');
    await page.locator('.menu-toggle').click();
    await page.locator('nav.sidebar.open').waitFor();
    await shot(page, 'menu-phone');
    for (const [route, name, ready] of [
      ['/', 'dashboard-phone', 'stat-jobs'],
      ['/logs', 'logs-phone', 'logs-table'],
      ['/jobs/new', 'job-form-phone', 'job-form'],
      ['/groups', 'groups-phone', 'groups-table'],
      ['/users', 'users-phone', 'users-table'],
      ['/audit', 'audit-phone', 'audit-table'],
    ]) {
      await page.goto(`${base}/#${route}`);
      await page.getByTestId(ready).waitFor();
      await shot(page, name);
    }

    // --- the jobs page with a few ordinary jobs (the README's screenshot) --------------------------------------
    await page.setViewportSize({ width: 1280, height: 800 });
    check((await pageApi(page, 'DELETE', `/api/v1/jobs/${jobId}`)).status === 200, 'the test job is deleted');
    const groups = (await pageApi(page, 'GET', '/api/v1/groups')).body.items;
    const web = groups.find((g) => g.app_name === 'web-test-app').id;
    const other = groups.find((g) => g.app_name === 'other-team-app').id;
    for (const job of [
      { group_id: web, description: 'Nightly sales report', author: 'finance', schedule_type: 'CRON', schedule_conf: '0 30 2 * * ?', time_zone: 'Europe/Berlin', handler: 'reportJobHandler' },
      { group_id: web, description: 'Warm the product cache', author: 'shop', schedule_type: 'FIX_RATE', schedule_conf: '300', handler: 'cacheJobHandler', route_strategy: 'ROUND' },
      { group_id: other, description: 'Rotate partner API keys', author: 'security', schedule_type: 'CRON', schedule_conf: '0 0 9 ? * MON', time_zone: 'America/New_York', glue_type: 'GLUE_PYTHON', glue_source: 'print("rotated")' },
    ]) {
      const created = await pageApi(page, 'POST', '/api/v1/jobs', job);
      check(created.status === 201, `created "${job.description}"`);
      if (job.schedule_type !== 'FIX_RATE') await pageApi(page, 'POST', `/api/v1/jobs/${created.body.id}/start`);
    }
    await page.goto(`${base}/#/jobs`);
    await page.getByText('Warm the product cache').waitFor();
    await shot(page, 'jobs-overview');

    check(dialogs.length === 0, `no dialog was opened (${JSON.stringify(dialogs)})`);
    check(pageErrors.length === 0, `no script error on the pages (${JSON.stringify(pageErrors)})`);
  } finally {
    await context.close().catch(() => {});
  }
}

const deadline = setTimeout(() => {
  log(`FAIL global deadline of ${DEADLINE_MS / 1000} s passed`);
  checks.failed += 1;
  finish(1);
}, DEADLINE_MS);

let finishing = false;
async function finish(code) {
  if (finishing) return;
  finishing = true;
  clearTimeout(deadline);
  if (browser) await Promise.race([browser.close().catch(() => {}), sleep(10_000)]);
  await stopAll().catch((e) => log(`stopping: ${e.message}`));
  if (dbName) {
    try {
      psql(`DROP DATABASE IF EXISTS ${dbName} WITH (FORCE)`);
    } catch (e) {
      log(`cannot drop ${dbName}: ${e.message}`);
    }
  }
  if (code !== 0 || checks.failed > 0) {
    for (const name of ['admin', 'executor']) {
      const file = path.join(work, `${name}.log`);
      if (fs.existsSync(file)) console.log(`--- ${name}.log (last 40 lines)\n${fs.readFileSync(file, 'utf8').split('\n').slice(-40).join('\n')}`);
    }
  }
  if (!process.env.CRONWHEEL_WEB_KEEP) fs.rmSync(work, { recursive: true, force: true });
  log(`done in ${((Date.now() - started) / 1000).toFixed(1)} s; screenshots in ${shots}`);
  console.log(`${checks.passed} passed, ${checks.failed} failed`);
  process.exit(code !== 0 || checks.failed > 0 ? 1 : 0);
}

scenario()
  .then(() => finish(0))
  .catch((e) => {
    log(`FAIL ${e.stack || e.message}`);
    checks.failed += 1;
    finish(1);
  });

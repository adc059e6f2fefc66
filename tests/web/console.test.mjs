// Browser test of the console (ctest label `web`): Debian's Chromium, headless, driven by playwright-core,
// against real processes on loopback — a fresh database on the test PostgreSQL, cronwheel-admin in
// production mode, and one cronwheel-executor with scripts enabled.
//
// Scenario, in a browser whose language is en-US: log in; create a group and a shell job firing every 2 s
// (live cron preview, an invalid expression named, the server's "required" error on the handler); start
// it; see it fire in the logs; open a fire and see the executor's output tailed to its end; stop the job;
// a description and output holding <script> and <img onerror> render as text (no dialog, the literal text
// visible, no such element); a normal user created in the UI with the VIEWER role in one group sees that
// group's job but none of another group's, and is offered no trigger, edit or delete (as OPERATOR: trigger,
// still no edit or delete); log out; a workflow (a diamond of four shell jobs) built in the editor (its
// schedule previewed live as the job's, an invalid expression named), a cycle refused on its edges,
// triggered, and its run followed in its drawing until every node is green. The
// command-line client's login through the console (#/cli-login, RFC 8252's loopback redirect with PKCE): a
// link that is not valid; Approve and Deny against a stand-in loopback listener (the request posted, the code
// traded once for a token; signed out, the login page first); then the real `cronwheel login --no-browser`
// approved (its token saved and used by `cronwheel groups list`) and denied (exit 1). Single sign-on through a
// real OpenID provider (tests/e2e/oidc_provider, the npm oidc-provider, started before the admin, whose
// --sso-config names it): the login page's provider button after the password form, an error of
// #/login?error= shown as text; a provider's user whose groups give no role refused with the admin's reason;
// vera logged in on the provider's own login page, a VIEWER of one group by her groups there (offered nothing
// more, no users page, no password on her account page), logged out with a link to the provider's logout,
// followed; the admin's users page listing her as an SSO user without a password field; the sign-in policy
// turned on (a local user's session ended, the login page putting the provider first, that user refused with
// the server's words, the admin let in) and off again. Script jobs where a global admin allows them: the admin
// ticks "Allow script jobs" in a group's form; a user who is DEVELOPER there and ADMIN of the other group is
// offered the script run modes in a new job of the first only, and sees the box read-only in the other's form.
// Then the main flow again in a browser whose language is zh-CN (time zone Asia/Shanghai): the login,
// dashboard, a group, a job with both validation errors, start, trigger once, the fire and its output, all
// in Chinese (the texts taken from web/i18n/*.json), dates in the browser's zone and locale; the workflow
// again, in Chinese; then the header's language switch (in place, remembered after a reload). On every
// page: no message key shows, none is missing, and in zh-CN no English in the menu, headings, labels and
// buttons. A screenshot of each page goes to tests/web/screenshots/ (1280x800, some at 390x844; *-zh-CN in
// Chinese).
//
// Environment: CRONWHEEL_ADMIN_BIN, CRONWHEEL_EXECUTOR_BIN (set by ctest), CRONWHEEL_TEST_DSN (a server
// DSN whose role may CREATE DATABASE), CRONWHEEL_WEB_DIR (optional: the admin serves the console from this
// folder, its web_dir, instead of the copy in the binary; CI leaves it unset). Bounded: a global deadline,
// every wait has its own; everything it started is stopped in `finally`. Prints "N passed, N failed".
// CRONWHEEL_CLI_BIN: the cronwheel CLI (else build/dev/cli/cronwheel; its steps are skipped, logged, when it
// is missing or has no `login`). CRONWHEEL_WEB_API_CALLS (optional): a file to write the API calls checked
// against web/openapi.json to (JSON), to read them again after a failure. The OpenID provider needs
// tests/e2e/oidc_provider/node_modules (scripts/setup --web).
import { spawn, spawnSync, execFileSync } from 'node:child_process';
import { createRequire } from 'node:module';
import crypto from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadDocument, openApiValidator } from './openapi.mjs';

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

// The trimmed text of the element with data-testid `testId` once it reads `wanted`, or whatever it reads after
// `timeoutMs` (the caller checks it): for text the page fills in from a later answer than its first render.
async function settledText(page, testId, wanted, timeoutMs = 10_000) {
  await page.waitForFunction(([id, text]) => document.querySelector(`[data-testid=${id}]`)?.innerText.trim() === text,
    [testId, wanted], { timeout: timeoutMs }).catch(() => {});
  return (await page.getByTestId(testId).innerText()).trim();
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

async function login(page, base, lang, username, password) {
  await page.goto(`${base}/#/`);
  await page.locator('input[name=username]').fill(username);
  await page.locator('input[name=password]').fill(password);
  await page.getByRole('button', { name: msg(lang, 'login.submit') }).click();
  await page.locator('[data-testid=whoami]').waitFor({ timeout: 15_000 });
}

async function logout(page) {
  await page.locator('[data-testid=logout]').click();
  await page.locator('input[name=username]').waitFor({ timeout: 15_000 });
}

const XSS_DESC = `Job <script>alert('desc')</script><img src=x onerror="alert('desc-img')">`;
const XSS_OUT = `<script>alert('out')</script><img src=x onerror="alert('out-img')">`;
const SCRIPT = `echo "hello from cronwheel"\ncat <<'EOF'\n${XSS_OUT}\nEOF\n`;

// --- the console's messages (web/i18n), to know what each language must show -------------------------------
const MESSAGES = Object.fromEntries(
  ['en', 'zh-CN'].map((lang) => [lang, JSON.parse(fs.readFileSync(path.join(here, '../../web/i18n', `${lang}.json`), 'utf8'))]),
);
const KEYS = Object.keys(MESSAGES.en);

// The message `key` of `lang` with its {placeholders} filled (the .other form of a plural message).
function msg(lang, key, params = {}) {
  const m = MESSAGES[lang];
  const text = m[key] ?? m[`${key}.other`];
  if (typeof text !== 'string') throw new Error(`no message ${key} in ${lang}`);
  return text.replace(/\{(\w+)\}/g, (whole, name) => (params[name] === undefined ? whole : String(params[name])));
}

// Message keys visible on the page (an untranslated key), and the keys the page asked for that do not
// exist (the console logs "i18n: no message ..."). `skipSelector` leaves out data that may look like a
// key (the audit log's action names).
async function keyLeaks(page, missingLogged, skipSelector) {
  const text = await page.evaluate((skip) => {
    const body = document.body.cloneNode(true);
    if (skip) body.querySelectorAll(skip).forEach((e) => e.remove());
    const attrs = [...document.querySelectorAll('[title],[placeholder],[aria-label],[data-label]')].map((e) =>
      ['title', 'placeholder', 'aria-label', 'data-label'].map((a) => e.getAttribute(a) || '').join(' '),
    );
    return `${body.innerText}\n${attrs.join('\n')}`;
  }, skipSelector || '');
  const visible = KEYS.filter((k) => new RegExp(`(^|[^\\w.])${k.replace(/\./g, '\\.')}($|[^\\w.])`).test(text));
  return [...visible, ...missingLogged.splice(0)];
}

// English words in the console's own chrome (menu, headings, table headers, labels, hints, buttons) of a
// zh-CN page: there should be none but names that are the same in Chinese.
const SAME_IN_CHINESE = /\b(cronwheel|alarm_webhook_allow|access_token|JobHandler|AppName|Cron|Quartz|IANA|URL|JSON|POST|Webhook|HASH|API|UTC|ID|N|Shell|Python|PowerShell|PHP|Node\.js|Groovy|GLUE|Bean|iCalendar|[\w.-]+\.ics|[A-Z][A-Z0-9_]+)\b/g;
async function englishChrome(page) {
  const texts = await page.evaluate(() =>
    [...document.querySelectorAll('nav a, h1, th, dt, legend, .field .label, .field .hint, button, .stat-label, .pager, .badge')]
      .filter((e) => e.offsetParent !== null && !e.closest('.tags')) // a job's tags are its users' words
      .map((e) => e.innerText.trim()),
  );
  // {{job_id}} and the like are template fields, the same in every language.
  return texts.filter((t) => /[A-Za-z]{2,}/.test(t.replace(/\{\{[\w.]+\}\}/g, '').replace(SAME_IN_CHINESE, '')));
}

async function checkTranslated(page, lang, where, missingLogged, skipSelector) {
  const leaks = await keyLeaks(page, missingLogged, skipSelector);
  check(leaks.length === 0, `${lang} ${where}: no message key leaks (${JSON.stringify(leaks)})`);
  if (lang === 'zh-CN') {
    const english = await englishChrome(page);
    check(english.length === 0, `${lang} ${where}: no English in the menu, headings, labels and buttons (${JSON.stringify(english)})`);
  }
}

// A browser whose language (navigator.languages, Accept-Language) is `locale`, in time zone `zone`.
async function launch(locale, zone) {
  return chromium.launchPersistentContext(path.join(work, `chromium-${locale}`), {
    executablePath: '/usr/bin/chromium',
    headless: true,
    locale,
    timezoneId: zone,
    viewport: { width: 1280, height: 800 },
    args: [
      '--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
      '--disable-background-networking', '--disable-component-update', '--disable-sync',
    ],
  });
}

// The watchers every page of a run gets: dialogs, script errors, and missing messages.
function watch(page) {
  const seen = { dialogs: [], errors: [], missing: [] };
  page.on('dialog', async (d) => {
    seen.dialogs.push(d.message());
    await d.dismiss().catch(() => {});
  });
  page.on('pageerror', (e) => seen.errors.push(e.message));
  page.on('console', (m) => {
    if (m.text().startsWith('i18n: no message')) seen.missing.push(m.text());
  });
  // The requests not answered yet, for showFailure.
  const pending = new Map();
  inFlight.set(page, pending);
  page.on('request', (r) => pending.set(r, Date.now()));
  page.on('requestfinished', (r) => pending.delete(r));
  page.on('requestfailed', (r) => {
    pending.delete(r);
    failedRequests.push(`${r.method()} ${r.url()}: ${r.failure() ? r.failure().errorText : '?'}`);
  });
  return seen;
}
const inFlight = new Map(); // page -> Map(request -> when it was sent)
const failedRequests = [];

// --- the API's calls against web/openapi.json ---------------------------------------------------------------
// Every /api/v1 call the browser makes (the console's, and pageApi's) is kept with its answer: at the end, a
// request body the server took (2xx) must be one its operation's schema takes, the status one the operation
// lists, and a JSON answer one its schema takes with no field the document does not name (tests/web/openapi.mjs,
// `closed`).
const apiCalls = []; // promises of { method, pathname, status, sent, answer }
function recordApiCalls(context) {
  context.on('response', (res) => {
    const url = new URL(res.url());
    if (!url.pathname.startsWith('/api/v1/')) return;
    const req = res.request();
    apiCalls.push((async () => {
      let sent;
      try {
        sent = req.postDataJSON() ?? undefined;
      } catch (_) {
        sent = undefined; // no body, or not JSON
      }
      const answer = await Promise.race([res.json().catch(() => undefined), sleep(5000).then(() => undefined)]);
      return { method: req.method(), pathname: url.pathname, status: res.status(), sent, answer };
    })());
  });
}

async function checkApiCalls() {
  const calls = (await Promise.allSettled(apiCalls)).filter((r) => r.status === 'fulfilled').map((r) => r.value);
  if (process.env.CRONWHEEL_WEB_API_CALLS) fs.writeFileSync(process.env.CRONWHEEL_WEB_API_CALLS, JSON.stringify(calls, null, 1));
  const v = openApiValidator(loadDocument(), { closed: true });
  const found = { request: new Set(), status: new Set(), answer: new Set() };
  const operations = new Set();
  for (const c of calls) {
    const op = v.operation(c.method, c.pathname);
    const name = op ? `${c.method} ${op.template}` : `${c.method} ${c.pathname}`;
    if (op) operations.add(name);
    if (c.status >= 200 && c.status < 300 && c.sent !== undefined) {
      for (const e of v.request(c.method, c.pathname, c.sent) || []) found.request.add(`${name}: ${e} in ${JSON.stringify(c.sent).slice(0, 300)}`);
    }
    for (const e of v.response(c.method, c.pathname, c.status, c.answer)) {
      if (e.startsWith('status ') || !op) found.status.add(`${name} ${c.status}: ${e}`);
      else if (c.answer !== undefined) found.answer.add(`${name} ${c.status}: ${e}`); // undefined: no JSON body read
    }
  }
  const list = (set) => [...set].slice(0, 30).join('\n    ');
  log(`${calls.length} API calls of ${operations.size} documented operations checked against web/openapi.json`);
  check(found.request.size === 0, `openapi: every request body the server took is valid by its schema\n    ${list(found.request)}`);
  check(found.status.size === 0, `openapi: every answer's status is one its operation lists\n    ${list(found.status)}`);
  check(found.answer.size === 0, `openapi: every JSON answer is valid by its schema and names no undocumented field\n    ${list(found.answer)}`);
}

// A job's form: the live cron preview names an invalid expression, and saving a BEAN job without its
// handler shows the server's field error, translated, next to the field. Returns the form locator.
async function jobFormValidation(page, base, lang) {
  await page.goto(`${base}/#/jobs/new`);
  const form = page.locator('[data-testid=job-form]');
  await form.waitFor();
  await form.locator('select[name=group_id]').selectOption({ label: msg(lang, 'common.groupOption', { title: 'Web test', app: 'web-test-app' }) });
  const preview = page.locator('[data-testid=schedule-preview]');
  await form.locator('input[name=schedule_conf]').fill('0/2 * * * 13 ?');
  const lead = msg(lang, 'error.fieldLine', { field: msg(lang, 'field.schedule_conf'), message: msg(lang, 'error.schedule') });
  await until('the preview to reject month 13', async () => (await preview.innerText()).includes(lead), 10_000);
  check((await preview.innerText()).includes('13'), `${lang}: an invalid cron expression is named in the live preview, after a translated lead (${lead})`);
  const round = msg(lang, 'common.enumOption', { value: 'ROUND', label: msg(lang, 'enum.route.ROUND') });
  check((await form.locator('select[name=route_strategy] option[value=ROUND]').innerText()) === round, `${lang}: the route strategy ROUND is shown as "${round}"`);
  // The server's validation error: a BEAN job needs its handler.
  await form.locator('input[name=description]').fill(`${lang} validation`);
  await form.locator('input[name=schedule_conf]').fill('0 0 3 * * ?');
  await form.locator('input[name=handler]').fill('');
  await page.locator('[data-testid=save-job]').click();
  const handlerField = form.locator('label.field', { has: page.locator('input[name=handler]') });
  await handlerField.locator('.field-error').waitFor();
  check((await handlerField.locator('.field-error').innerText()) === msg(lang, 'error.required'),
    `${lang}: the server's "required" error on the handler is shown next to it as "${msg(lang, 'error.required')}"`);
  check((await page.getByTestId('error-banner').innerText()).includes(msg(lang, 'error.fields')), `${lang}: the error banner leads with "${msg(lang, 'error.fields')}"`);
  return form;
}

// Dates in the chosen language and the browser's zone: Asia/Shanghai (UTC+8, no daylight saving) for zh-CN.
function shanghaiTime(ms) {
  const d = new Date(ms + 8 * 3600_000);
  const p = (n) => String(n).padStart(2, '0');
  return `${d.getUTCFullYear()}/${p(d.getUTCMonth() + 1)}/${p(d.getUTCDate())} ${p(d.getUTCHours())}:${p(d.getUTCMinutes())}:${p(d.getUTCSeconds())}`;
}

// A workflow's schedule previewed live as in the job form: none for NONE, the five next fires of a cron
// expression in the workflow's zone, an invalid expression named. Left at NONE with no expression, as a new
// workflow starts (the flow triggers it by hand).
async function workflowSchedulePreview(page, form, lang, seen) {
  const none = form.locator('.preview');
  check((await none.innerText()).trim() === msg(lang, 'job.preview.none') && (await form.locator('[data-testid=schedule-preview]').count()) === 0,
    `${lang}: a new workflow (NONE) shows "${msg(lang, 'job.preview.none')}" instead of fires`);
  await form.locator('select[name=schedule_type]').selectOption('CRON');
  const zone = await form.locator('input[name=time_zone]').inputValue();
  const preview = form.locator('[data-testid=schedule-preview]');
  await form.locator('input[name=schedule_conf]').fill('0 0 12 * * ?');
  const fires = preview.locator('li');
  await until('five noon fires in the workflow preview', async () => (await fires.count()) === 5
    && (await fires.allInnerTexts()).every((f) => f.includes(' 12:00:00')), 10_000);
  const next = msg(lang, 'job.preview.next', { n: 5, zone });
  check((await preview.innerText()).includes(next), `${lang}: the workflow editor previews the 5 next fires of 0 0 12 * * ? ("${next}" ${(await fires.first().innerText()).trim()}, ...)`);
  await checkTranslated(page, lang, 'workflow schedule preview', seen.missing);
  await form.locator('input[name=schedule_conf]').fill('0 0 12 * 13 ?');
  const lead = msg(lang, 'error.fieldLine', { field: msg(lang, 'field.schedule_conf'), message: msg(lang, 'error.schedule') });
  await until('the workflow preview to reject month 13', async () => (await preview.innerText()).includes(lead), 10_000);
  check((await preview.getAttribute('class')).includes('invalid') && (await preview.innerText()).includes('13'),
    `${lang}: an invalid cron expression is named in the workflow's preview, after a translated lead (${lead})`);
  await form.locator('input[name=schedule_conf]').fill('');
  await form.locator('select[name=schedule_type]').selectOption('NONE');
  await until('the workflow preview to say it has no schedule', async () => (await none.innerText()).trim() === msg(lang, 'job.preview.none'), 10_000);
  check((await form.locator('input[name=schedule_conf]').count()) === 0 && (await preview.count()) === 0,
    `${lang}: the workflow's schedule is back to NONE, with no expression and no fires`);
}

// --- workflows: a diamond of shell jobs (a -> b, a -> c, b -> d, c -> d) built in the editor, a cycle refused
// with the error on the edges, a run triggered from the list and followed in its drawing until every node
// and the run show SUCCESS. The workflow and its jobs are deleted at the end (the later steps count jobs).
async function workflowFlow(page, base, lang, seen, name, suffix) {
  const groups = (await pageApi(page, 'GET', '/api/v1/groups')).body.items;
  const web = groups.find((g) => g.app_name === 'web-test-app').id;
  const jobs = {};
  for (const key of ['a', 'b', 'c', 'd']) {
    const created = await pageApi(page, 'POST', '/api/v1/jobs', {
      group_id: web, description: `${lang} node ${key}`, schedule_type: 'NONE', glue_type: 'GLUE_SHELL',
      glue_source: `echo "workflow node ${key}"\n`,
    });
    if (created.status !== 201) throw new Error(`cannot create the job of node ${key}: ${JSON.stringify(created.body)}`);
    jobs[key] = created.body.id;
  }

  await page.goto(`${base}/#/workflows`);
  await page.getByTestId('workflows-table').waitFor();
  check((await page.locator('nav').innerText()).includes(msg(lang, 'nav.workflows')), `${lang}: the menu shows "${msg(lang, 'nav.workflows')}"`);
  await checkTranslated(page, lang, 'workflows', seen.missing);
  await page.getByTestId('new-workflow').click();
  const form = page.getByTestId('workflow-form');
  await form.waitFor();
  await form.locator('input[name=name]').fill(name);
  await form.locator('select[name=group_id]').selectOption({ label: msg(lang, 'common.groupOption', { title: 'Web test', app: 'web-test-app' }) });
  await workflowSchedulePreview(page, form, lang, seen);
  for (const [i, key] of ['a', 'b', 'c', 'd'].entries()) {
    await page.getByTestId('add-node').click();
    await form.locator(`input[name=node-key-${i}]`).fill(key);
    await form.locator(`select[name=node-job-${i}] option[value="${jobs[key]}"]`).waitFor({ state: 'attached' });
    await form.locator(`select[name=node-job-${i}]`).selectOption(String(jobs[key]));
  }
  await form.locator('input[name=node-param-3]').fill('<script>alert("param")</script>');
  const edges = [['a', 'b', 'SUCCESS'], ['a', 'c', 'SUCCESS'], ['b', 'd', 'ALWAYS'], ['c', 'd', 'SUCCESS'], ['d', 'a', 'SUCCESS']];
  for (const [i, [from, to, condition]] of edges.entries()) {
    await page.getByTestId('add-edge').click();
    await form.locator(`select[name=edge-from-${i}]`).selectOption(from);
    await form.locator(`select[name=edge-to-${i}]`).selectOption(to);
    await form.locator(`select[name=edge-condition-${i}]`).selectOption(condition);
  }
  const graph = form.getByTestId('workflow-graph');
  await until('the drawing of 4 nodes and 5 edges', async () =>
    (await graph.locator('[data-testid=wf-node]').count()) === 4 && (await graph.locator('[data-testid=wf-edge]').count()) === 5, 10_000);
  check(true, `${lang}: the editor draws the graph as it is typed (4 nodes, 5 edges)`);
  // d -> a closes a cycle: refused, the error shown on the edges, nothing saved.
  await page.getByTestId('save-workflow').click();
  const edgesError = form.getByTestId('edges-error');
  await edgesError.waitFor();
  const cyclePattern = new RegExp(`^${msg(lang, 'workflow.error.cycle', { cycle: '\u0000' }).replace(/[.*+?^${}()|[\]\\]/g, '\\$&').replace('\u0000', '(.+)')}$`);
  const cycleText = (await edgesError.innerText()).trim();
  check(cyclePattern.test(cycleText) && /a -> .*a$/.test(cycleText.match(cyclePattern)[1]), `${lang}: the cycle d -> a is refused, shown on the edges (${cycleText})`);
  check((await page.getByTestId('error-banner').innerText()).includes(msg(lang, 'error.fields')), `${lang}: the error banner leads with "${msg(lang, 'error.fields')}"`);
  check((await pageApi(page, 'GET', '/api/v1/workflows')).body.items.every((w) => w.name !== name), `${lang}: the workflow with a cycle is not saved`);
  await checkTranslated(page, lang, 'workflow form', seen.missing);
  await shot(page, `workflow-cycle${suffix}`);
  await form.locator('button[name=edge-remove-4]').click();
  await shot(page, `workflow-form${suffix}`);
  await page.getByTestId('save-workflow').click();
  await page.waitForURL(/#\/workflows\/\d+$/);
  const workflowId = Number(page.url().match(/#\/workflows\/(\d+)$/)[1]);
  await page.getByText(msg(lang, 'workflow.created', { id: workflowId })).waitFor();
  const saved = (await pageApi(page, 'GET', `/api/v1/workflows/${workflowId}`)).body;
  check(saved.name === name && saved.nodes.length === 4 && saved.edges.length === 4 && saved.nodes[3].param === '<script>alert("param")</script>'
    && JSON.stringify(saved.edges.map((e) => `${e.from}${e.to}${e.condition[0]}`)) === '["abS","acS","bdA","cdS"]',
  `${lang}: workflow ${workflowId} is saved as drawn (${saved.nodes.length} nodes, ${saved.edges.length} edges)`);
  // Edited: a node's parameter changed and saved in place.
  await form.locator('input[name=node-param-2]').fill('from the editor');
  await page.getByTestId('save-workflow').click();
  await page.getByText(msg(lang, 'common.saved')).waitFor();
  check((await pageApi(page, 'GET', `/api/v1/workflows/${workflowId}`)).body.nodes[2].param === 'from the editor', `${lang}: an edit of the workflow is saved`);

  // Trigger it from the list; open the run; follow it to the end.
  await page.goto(`${base}/#/workflows`);
  const row = page.locator(`tr[data-workflow-id="${workflowId}"]`);
  await row.waitFor();
  check(await row.getByText(name, { exact: true }).isVisible(), `${lang}: the workflow's name is shown as text in the list`);
  await shot(page, `workflows${suffix}`);
  await row.getByRole('button', { name: msg(lang, 'workflows.trigger'), exact: true }).click();
  const dialog = page.getByTestId('workflow-trigger');
  await dialog.waitFor();
  await checkTranslated(page, lang, 'workflow trigger dialog', seen.missing);
  await page.getByTestId('workflow-trigger-submit').click();
  await page.getByTestId('open-run').click();
  await page.waitForURL(/#\/workflow-runs\/\d+$/);
  const runId = Number(page.url().match(/#\/workflow-runs\/(\d+)$/)[1]);
  const nodes = page.locator('[data-testid=workflow-graph] [data-testid=wf-node]');
  await until(`every node of run ${runId} to succeed`, async () => {
    const states = await nodes.evaluateAll((els) => els.map((e) => e.getAttribute('data-state')));
    return states.length === 4 && states.every((s) => s === 'SUCCESS')
      && (await page.getByTestId('run-state').getAttribute('data-state')) === 'SUCCESS';
  }, 60_000, 300);
  const drawn = await nodes.evaluateAll((els) => els.map((e) => ({
    key: e.getAttribute('data-key'),
    state: e.querySelector('[data-testid=wf-node-state]').textContent,
    fill: getComputedStyle(e.querySelector('rect')).fill,
    box: (({ x, y, width, height }) => ({ x, y, width, height }))(e.getBoundingClientRect()),
  })));
  check(drawn.every((n) => n.state === msg(lang, 'enum.workflowNode.SUCCESS') && n.fill === 'rgb(220, 252, 231)'),
    `${lang}: run ${runId}: every node is drawn green, "${msg(lang, 'enum.workflowNode.SUCCESS')}" (${JSON.stringify(drawn.map((n) => [n.key, n.state, n.fill]))})`);
  const overlap = (p, q) => p.x < q.x + q.width && q.x < p.x + p.width && p.y < q.y + q.height && q.y < p.y + p.height;
  check(drawn.every((p, i) => drawn.every((q, j) => i === j || !overlap(p.box, q.box))), `${lang}: no two nodes overlap in the drawing`);
  const top = Object.fromEntries(drawn.map((n) => [n.key, n.box.y]));
  check(top.a < top.b && top.a < top.c && top.b < top.d && top.c < top.d, `${lang}: the drawing goes down the edges (a above b and c, above d)`);
  check((await page.locator('[data-testid=wf-edge][data-condition=ALWAYS] text').textContent()) === msg(lang, 'enum.edgeCondition.ALWAYS'),
    `${lang}: the ALWAYS edge is labelled "${msg(lang, 'enum.edgeCondition.ALWAYS')}"`);
  check((await page.getByTestId('run-state').innerText()) === msg(lang, 'enum.workflowRun.SUCCESS'), `${lang}: the run shows "${msg(lang, 'enum.workflowRun.SUCCESS')}"`);
  check((await page.getByRole('button', { name: msg(lang, 'workflowRun.kill') }).count()) === 0 && (await page.getByTestId('rerun-node').count()) === 0,
    `${lang}: an ended, successful run offers neither kill nor re-run`);
  await checkTranslated(page, lang, 'workflow run', seen.missing);
  await shot(page, `workflow-run${suffix}`);
  // A node links to its fire's log.
  const run = (await pageApi(page, 'GET', `/api/v1/workflow-runs/${runId}`)).body;
  const d = run.nodes.find((n) => n.key === 'd');
  const link = page.locator('[data-testid=workflow-graph] a', { has: page.locator('[data-key=d]') });
  check((await link.getAttribute('href')) === `#/logs/${d.log_ids[d.log_ids.length - 1]}`, `${lang}: node d links to its fire's log (${await link.getAttribute('href')})`);
  await link.click();
  await until("node d's output", async () => (await page.getByTestId('log-output').innerText()).includes('workflow node d'), 20_000);
  check(true, `${lang}: a click on node d opens its fire, with its output`);
  // The workflow's runs.
  await page.goto(`${base}/#/workflows/${workflowId}/runs`);
  const runRow = page.locator(`[data-testid=workflow-runs-table] tr[data-run-id="${runId}"]`);
  await runRow.waitFor();
  check((await runRow.getAttribute('data-state')) === 'SUCCESS' && (await runRow.innerText()).includes(msg(lang, 'enum.trigger.MANUAL')),
    `${lang}: the runs list shows run ${runId}, ${msg(lang, 'enum.workflowRun.SUCCESS')}, ${msg(lang, 'enum.trigger.MANUAL')}`);
  await checkTranslated(page, lang, 'workflow runs', seen.missing);
  await shot(page, `workflow-runs${suffix}`);

  check((await pageApi(page, 'DELETE', `/api/v1/workflows/${workflowId}`)).status === 200, `${lang}: workflow ${workflowId} is deleted`);
  for (const id of Object.values(jobs)) await pageApi(page, 'DELETE', `/api/v1/jobs/${id}`);
  if (lang === 'en') await workflowKillRerun(page, base, lang, web);
}

// A run with a node that fails (red) beside one that sleeps (blue): killed from its page, then the failed
// node re-run once the run has ended.
async function workflowKillRerun(page, base, lang, group) {
  const job = async (description, source) =>
    (await pageApi(page, 'POST', '/api/v1/jobs', { group_id: group, description, schedule_type: 'NONE', glue_type: 'GLUE_SHELL', glue_source: source })).body.id;
  const failing = await job('fails', 'echo "about to fail"\nexit 3\n');
  const sleeping = await job('sleeps', 'sleep 30\n');
  const created = await pageApi(page, 'POST', '/api/v1/workflows', {
    group_id: group, name: 'Kill and re-run', nodes: [{ key: 'fails', job_id: failing }, { key: 'sleeps', job_id: sleeping }],
  });
  check(created.status === 201, `${lang}: a workflow of a failing and a sleeping job (${created.status})`);
  const runId = (await pageApi(page, 'POST', `/api/v1/workflows/${created.body.id}/trigger`, {})).body.run_id;
  await page.goto(`${base}/#/workflow-runs/${runId}`);
  const node = (key) => page.locator(`[data-testid=workflow-graph] [data-testid=wf-node][data-key=${key}]`);
  await until('node fails to fail while node sleeps runs', async () =>
    (await node('fails').getAttribute('data-state')) === 'FAILED' && (await node('sleeps').getAttribute('data-state')) === 'RUNNING', 30_000, 300);
  const fill = (key) => node(key).locator('rect').evaluate((e) => getComputedStyle(e).fill);
  check((await fill('fails')) === 'rgb(254, 226, 226)' && (await fill('sleeps')) === 'rgb(219, 234, 254)',
    `${lang}: a failed node is drawn red, a running one blue (${await fill('fails')}, ${await fill('sleeps')})`);
  check((await page.getByTestId('rerun-node').count()) === 0, `${lang}: no re-run while the run is running`);
  await shot(page, 'workflow-run-failed');
  const kill = page.getByRole('button', { name: msg(lang, 'workflowRun.kill') });
  await kill.click();
  await page.getByRole('button', { name: msg(lang, 'logs.killConfirm') }).click();
  await until('the run to be killed', async () => (await page.getByTestId('run-state').getAttribute('data-state')) === 'KILLED', 30_000, 300);
  check((await node('sleeps').getAttribute('data-state')) === 'KILLED' && (await page.getByText(msg(lang, 'workflowRun.killed', { id: runId })).count()) === 1,
    `${lang}: Kill ends the run and its running node (${await node('sleeps').getAttribute('data-state')})`);
  const rerun = page.locator('[data-testid=run-nodes] tr[data-node-key=fails] [data-testid=rerun-node]');
  await rerun.click();
  await page.getByText(msg(lang, 'workflowRun.rerunStarted', { key: 'fails' })).waitFor();
  await until('the re-run node to fail again', async () => {
    const r = (await pageApi(page, 'GET', `/api/v1/workflow-runs/${runId}`)).body;
    const n = r.nodes.find((x) => x.key === 'fails');
    return r.state !== 'RUNNING' && n.state === 'FAILED' && n.log_ids.length === 2;
  }, 30_000, 300);
  await until('the page to show the second fire', async () =>
    (await page.locator('[data-testid=run-nodes] tr[data-node-key=fails] a[href^="#/logs/"]').count()) === 2, 10_000);
  check(true, `${lang}: re-running the failed node fires its job again (two fires listed)`);
  await pageApi(page, 'DELETE', `/api/v1/workflows/${created.body.id}`);
  for (const id of [failing, sleeping]) await pageApi(page, 'DELETE', `/api/v1/jobs/${id}`);
}

// --- `cronwheel login` through the console (RFC 8252's loopback redirect with PKCE) -------------------------
// The client's CLI binary: CRONWHEEL_CLI_BIN (set by ctest), else the dev build's; '' when it is missing or
// cannot `login` yet (the browser-only checks still run).
function cliBinary() {
  const bin = process.env.CRONWHEEL_CLI_BIN || path.join(here, '../../build/dev/cli/cronwheel');
  if (!fs.existsSync(bin)) {
    log(`SKIP the CLI login steps: no CLI binary at ${bin} (set CRONWHEEL_CLI_BIN)`);
    return '';
  }
  const help = spawnSync(bin, ['login', '--help'], { env: { PATH: process.env.PATH }, timeout: 10_000, encoding: 'utf8' });
  if (help.status !== 0 || !`${help.stdout}${help.stderr}`.includes('--no-browser')) {
    log(`SKIP the CLI login steps: ${bin} has no "login --no-browser" (exit ${help.status ?? help.signal})`);
    return '';
  }
  return bin;
}

// A stand-in for the client's loopback listener: records the queries of /callback.
async function loopbackListener() {
  const hits = [];
  const server = http.createServer((req, res) => {
    const u = new URL(req.url, 'http://127.0.0.1');
    if (u.pathname === '/callback') hits.push(Object.fromEntries(u.searchParams));
    res.writeHead(200, { 'Content-Type': 'text/plain; charset=utf-8' });
    res.end('test listener: you may close this window');
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const close = () => {
    server.closeAllConnections();
    return new Promise((resolve) => server.close(() => resolve()));
  };
  return { port: server.address().port, hits, close };
}

// `cronwheel <args>` with its own configuration folder (XDG_CONFIG_HOME) and no token in the environment; its
// output collected, `closed` resolving to its exit code once its output is read to the end.
function startCli(bin, args, xdg) {
  const child = spawn(bin, args, { env: { PATH: process.env.PATH, XDG_CONFIG_HOME: xdg }, stdio: ['ignore', 'pipe', 'pipe'] });
  const run = { child, out: '', err: '' };
  child.stdout.on('data', (d) => {
    run.out += d;
  });
  child.stderr.on('data', (d) => {
    run.err += d;
  });
  run.closed = new Promise((resolve) => child.once('close', (code, signal) => resolve(code ?? signal)));
  children.push({ name: `cronwheel ${args[0]}`, child });
  return run;
}

// The console URL `cronwheel login` prints on stderr.
async function consoleUrlOf(run, base) {
  return until('the CLI to print the console URL', async () => {
    const m = run.err.match(/(\S*#\/cli-login\?\S+)/);
    if (m && m[1].startsWith(base)) return m[1];
    if (run.child.exitCode !== null) throw new Error(`the CLI exited (${run.child.exitCode}): ${run.err.trim()}`);
    return null;
  }, 15_000, 100);
}

const exitWithin = (run, ms) => Promise.race([run.closed, sleep(ms).then(() => 'still running')]);

async function cliLoginFlow(page, base, lang, seen, adminPassword) {
  // A link that is not valid: said so, which parameters, and nothing to approve.
  await page.goto(`${base}/#/cli-login?port=99999&state=ok&name=x`);
  await page.getByTestId('cli-login-invalid').waitFor();
  const invalidText = await page.getByTestId('cli-login-invalid').innerText();
  check(['port', 'code_challenge', 'scope', 'expires_in_days'].every((p) => invalidText.includes(p)) && !invalidText.includes('state'),
    `cli-login: a link that is not valid names its bad parameters (${invalidText.replace(/\s+/g, ' ')})`);
  check((await page.getByTestId('cli-login-approve').count()) === 0 && (await page.getByTestId('cli-login-deny').count()) === 0,
    'cli-login: no Approve or Deny for a link that is not valid');
  check((await page.locator('nav a[href*="cli-login"]').count()) === 0, 'cli-login: not in the menu');

  // The page against a stand-in listener: what it sends, where the browser goes, and the code traded with the
  // verifier for a token (the server's half of the protocol, whatever the CLI does).
  const listener = await loopbackListener();
  try {
    const verifier = crypto.randomBytes(32).toString('base64url');
    const challenge = crypto.createHash('sha256').update(verifier).digest('base64url');
    const state = crypto.randomBytes(16).toString('base64url');
    const link = (s) => `${base}/#/cli-login?${new URLSearchParams({
      port: String(listener.port), state: s, code_challenge: challenge, name: 'cli@browser-host', scope: 'operate', expires_in_days: '7',
    })}`;
    await page.goto(link(state));
    await page.getByTestId('cli-login-name').waitFor();
    check((await page.getByTestId('cli-login-name').innerText()).trim() === 'cli@browser-host', 'cli-login: the token name of the link is shown');
    check((await page.getByTestId('cli-login-scope').innerText()).includes(msg(lang, 'tokens.scope.operate.hint')),
      'cli-login: the scope is shown with what it allows');
    check((await page.getByTestId('cli-login-port').innerText()).trim() === `127.0.0.1:${listener.port}`, 'cli-login: the loopback port is shown');
    check((await page.getByTestId('cli-login-warning').innerText()).includes(msg(lang, 'cliLogin.warning')), 'cli-login: the warning is shown');
    await checkTranslated(page, lang, 'cli-login', seen.missing);
    await shot(page, 'cli-login');
    const sent = page.waitForRequest((r) => r.url().endsWith('/api/v1/auth/cli/authorize') && r.method() === 'POST', { timeout: 10_000 });
    await page.getByTestId('cli-login-approve').click();
    const body = (await sent).postDataJSON();
    check(JSON.stringify(body) === JSON.stringify({
      port: listener.port, state, code_challenge: challenge, name: 'cli@browser-host', scope: 'operate', expires_in_days: 7,
    }), `cli-login: Approve posts the request with numbers as numbers (${JSON.stringify(body)})`);
    await page.waitForURL(new RegExp(`^http://127\\.0\\.0\\.1:${listener.port}/callback\\?`), { timeout: 10_000 });
    const hit = listener.hits[0] || {};
    check(hit.state === state && /^\S+$/.test(hit.code || ''), 'cli-login: the browser goes on to the listener with a code and the state');
    const traded = await fetch(`${base}/api/v1/auth/cli/token`, {
      method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ code: hit.code, code_verifier: verifier }),
    });
    const token = await traded.json();
    check(traded.status === 201 && String(token.token).startsWith('cwt_') && token.name === 'cli@browser-host' && token.scope === 'operate',
      `cli-login: the code and the verifier are traded for the token (${traded.status} ${token.name} ${token.scope})`);
    const again = await fetch(`${base}/api/v1/auth/cli/token`, {
      method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ code: hit.code, code_verifier: verifier }),
    });
    check(again.status >= 400 && again.status < 500, `cli-login: a code is traded once only (${again.status})`);

    // Signed out, the link shows the login page first and the request after it; Deny goes to the listener.
    await page.goto(`${base}/#/`);
    await logout(page);
    const denyState = crypto.randomBytes(16).toString('base64url');
    await page.goto(link(denyState));
    await page.locator('input[name=username]').fill('admin');
    await page.locator('input[name=password]').fill(adminPassword);
    await page.getByRole('button', { name: msg(lang, 'login.submit') }).click();
    await page.getByTestId('cli-login-deny').waitFor();
    check(page.url().includes('#/cli-login?'), 'cli-login: signed out, the link shows the request after the login page');
    await page.getByTestId('cli-login-deny').click();
    await page.waitForURL(new RegExp(`^http://127\\.0\\.0\\.1:${listener.port}/callback\\?`), { timeout: 10_000 });
    const denied = listener.hits[1] || {};
    check(denied.error === 'access_denied' && denied.state === denyState && !('code' in denied),
      `cli-login: Deny sends the browser to the listener with error=access_denied and the state (${JSON.stringify(denied)})`);
  } finally {
    await listener.close();
  }

  // The real client: `cronwheel login` approved, then used; another one denied.
  const bin = cliBinary();
  if (!bin) return;
  const xdg = fs.mkdtempSync(path.join(work, 'xdg-'));
  const loginArgs = ['login', '--no-browser', '--admin', base, '--name', 'browser-test', '--scope', 'read'];
  const runs = [];
  try {
    const approved = startCli(bin, loginArgs, xdg);
    runs.push(approved);
    await page.goto(await consoleUrlOf(approved, base));
    await page.getByTestId('cli-login-name').waitFor();
    check((await page.getByTestId('cli-login-name').innerText()).trim() === 'browser-test'
      && (await page.getByTestId('cli-login-scope').innerText()).includes(msg(lang, 'tokens.scope.read')),
    'cronwheel login: the console shows the name and scope the CLI asked for');
    await page.getByTestId('cli-login-approve').click();
    await page.waitForURL(/^http:\/\/127\.0\.0\.1:\d+\/callback\?/, { timeout: 15_000 });
    const code = await exitWithin(approved, 15_000);
    const said = `${approved.out}${approved.err}`;
    const saidLine = said.split('\n').find((l) => l.includes('Logged in')) || said.trim().split('\n').pop();
    check(code === 0 && said.includes('Logged in'), `cronwheel login: approved, it exits 0 saying "Logged in" (${code}: ${saidLine.trim()})`);
    log(`the CLI's loopback page says: ${(await page.locator('body').innerText().catch(() => '?')).replace(/\s+/g, ' ').slice(0, 120)}`);
    const tokenFile = path.join(xdg, 'cronwheel', 'token');
    const firstLine = fs.existsSync(tokenFile) ? fs.readFileSync(tokenFile, 'utf8').split('\n')[0] : '';
    check(firstLine.startsWith('cwt_'), `cronwheel login: the token is saved in ${path.relative(work, tokenFile)} (first line cwt_…)`);
    const groups = spawnSync(bin, ['groups', 'list', '--admin', base], {
      env: { PATH: process.env.PATH, XDG_CONFIG_HOME: xdg }, timeout: 15_000, encoding: 'utf8',
    });
    check(groups.status === 0 && groups.stdout.includes('web-test-app'),
      `cronwheel groups list uses the saved login (exit ${groups.status ?? groups.signal}${groups.status ? `: ${groups.stderr.trim()}` : ''})`);

    const refused = startCli(bin, loginArgs, xdg);
    runs.push(refused);
    await page.goto(await consoleUrlOf(refused, base));
    await page.getByTestId('cli-login-deny').click();
    await page.waitForURL(/^http:\/\/127\.0\.0\.1:\d+\/callback\?/, { timeout: 15_000 });
    const refusedCode = await exitWithin(refused, 15_000);
    check(refusedCode === 1 && /denied/i.test(refused.err), `cronwheel login: denied, it exits 1 saying so (${refusedCode}: ${refused.err.trim().split('\n').pop()})`);
  } finally {
    for (const run of runs) {
      if (run.child.exitCode === null && run.child.signalCode === null) run.child.kill('SIGTERM');
    }
  }
}

// --- single sign-on through a real OpenID provider (tests/e2e/oidc_provider: the npm oidc-provider) ----------
const OIDC_PROVIDER_DIR = path.join(here, '../e2e/oidc_provider');
const PROVIDER_TITLE = 'Test provider';

// The provider, started before the admin (its issuer goes in the admin's SSO file, and the admin's port, chosen
// first, in the provider's redirect URIs). Its accounts: vera, in the provider's group cw-viewers (VIEWER of
// other-team-app by the admin's rule, a group the test creates later: rules are applied at each login), and
// nobody, whose group no rule names (refused). Returns { issuer, config: the admin's SSO file }.
async function startOidcProvider(adminPort) {
  if (!fs.existsSync(path.join(OIDC_PROVIDER_DIR, 'node_modules/oidc-provider/package.json'))) {
    throw new Error('tests/e2e/oidc_provider has no node_modules: run scripts/setup --web (npm ci there)');
  }
  const secret = crypto.randomBytes(24).toString('base64url'); // A-Z a-z 0-9 - _: no encoding matters
  const redirect = `http://127.0.0.1:${adminPort}/api/v1/auth/oidc/test/callback`;
  const providerConfig = path.join(work, 'oidc-provider.json');
  fs.writeFileSync(providerConfig, JSON.stringify({
    clients: [{ client_id: 'cronwheel', client_secret: secret, redirect_uris: [redirect], post_logout_redirect_uris: [`http://127.0.0.1:${adminPort}/`] }],
    accounts: {
      vera: { email: 'vera@example.org', name: 'Vera', groups: ['cw-viewers'] },
      nobody: { email: 'nobody@example.org', name: 'Nobody', groups: ['cw-contractors'] },
    },
    max_seconds: 600,
    parent_pid: process.pid,
  }));
  const err = fs.openSync(path.join(work, 'oidc-provider.log'), 'w');
  const child = spawn(process.execPath, [path.join(OIDC_PROVIDER_DIR, 'server.mjs'), providerConfig], {
    env: { PATH: process.env.PATH }, stdio: ['ignore', 'pipe', err],
  });
  child.on('exit', (code, signal) => log(`oidc-provider exited (${code ?? signal})`));
  children.push({ name: 'oidc-provider', child });
  let out = '';
  child.stdout.on('data', (d) => {
    out += d;
  });
  // Its one line on stdout: {"issuer": "http://127.0.0.1:PORT"}.
  const issuer = await until('the OpenID provider to print its issuer', async () => {
    if (out.includes('\n')) return JSON.parse(out.split('\n')[0]).issuer;
    if (child.exitCode !== null) throw new Error(`it exited (${child.exitCode}): see oidc-provider.log`);
    return null;
  }, 20_000, 100);
  const config = path.join(work, 'sso.toml');
  fs.writeFileSync(config, [
    '[[oidc]]',
    'name = "test"',
    `title = "${PROVIDER_TITLE}"`,
    `issuer = "${issuer}"`,
    'client_id = "cronwheel"',
    `client_secret = "${secret}"`,
    `redirect_url = "${redirect}"`,
    'scopes = ["openid", "profile", "email", "groups"]',
    '[[oidc.roles]]',
    'value = "cw-viewers"',
    'group = "other-team-app"',
    'role = "VIEWER"',
    '',
  ].join('\n'));
  log(`OpenID provider ${issuer}`);
  return { issuer, config };
}

// The console's button for the test provider, the provider's own login page (a form of login and password; any
// password), and back. Starts logged out at console route `route`; ends where the admin's callback sends the
// browser.
async function loginThroughProvider(page, base, lang, sso, route, account) {
  await page.goto(`${base}/#${route}`);
  const button = page.getByRole('link', { name: msg(lang, 'login.withProvider', { title: PROVIDER_TITLE }), exact: true });
  await button.waitFor();
  const href = await button.getAttribute('href');
  await button.click();
  await page.waitForURL((u) => u.href.startsWith(`${sso.issuer}/interaction/`), { timeout: 15_000 });
  const form = page.locator('form', { has: page.locator('input[name=login]') });
  await form.locator('input[name=login]').fill(account);
  await form.locator('input[name=password]').fill('any password at all');
  await form.locator('button[type=submit]').click();
  return href;
}

// A provider's user: a login refused for want of a role (the admin's message as text on the login page),
// then vera's, a VIEWER of the other team's group by her groups there: offered nothing a VIEWER may not do, no
// users page, no password on her account page; logged out, with a link to the provider's own logout.
async function ssoUserFlow(page, base, lang, seen, sso, offered, otherJobId) {
  const refusedHref = await loginThroughProvider(page, base, lang, sso, '/jobs', 'nobody');
  check(refusedHref === '/api/v1/auth/oidc/test/start?return_to=%23%2Fjobs', `sso: the button starts the provider's login, back to the page asked for (${refusedHref})`);
  await page.waitForURL((u) => u.href.startsWith(`${base}/#/login?error=`), { timeout: 15_000 });
  const refused = page.getByTestId('login-error');
  await refused.waitFor();
  const refusedText = await refused.textContent();
  check(refusedText.includes(`'nobody' signed in through ${PROVIDER_TITLE}, but its groups there (cw-contractors) give it no role in cronwheel`)
    && (await page.getByTestId('whoami').count()) === 0,
  `sso: a provider's user whose groups give no role is not logged in, the admin's reason shown ("${refusedText.slice(0, 90)}…")`);
  await shot(page, 'sso-refused');
  // The provider keeps nobody's session in its own cookies (same host, 127.0.0.1): forgotten, so that the next
  // sign-in shows its login page again.
  await page.context().clearCookies({ name: /^_session/ });

  await loginThroughProvider(page, base, lang, sso, '/jobs', 'vera');
  await page.locator('[data-testid=whoami]').waitFor({ timeout: 15_000 });
  check((await page.getByTestId('whoami').innerText()) === 'vera' && page.url() === `${base}/#/jobs`,
    `sso: vera logs in through the provider's own login page and lands on the page she asked for (${page.url()})`);
  const row = page.locator(`[data-testid=jobs-table] tr[data-job-id="${otherJobId}"]`);
  await row.waitFor();
  check((await page.locator('[data-testid=jobs-table] tr[data-job-id]').count()) === 1, "sso: vera (VIEWER of the other team's group from her provider's groups) sees that group's job only");
  const asVera = await offered(row);
  check(Object.values(asVera).every((n) => n === 0) && (await row.locator('input[name=select]').count()) === 0 && (await page.getByTestId('new-job').count()) === 0,
    `sso: vera is offered no trigger, start, run once, copy, delete, selection or new job (${JSON.stringify(asVera)})`);
  await checkTranslated(page, lang, 'jobs of an SSO user', seen.missing);
  await shot(page, 'sso-viewer-jobs');
  check((await page.locator('nav a', { hasText: msg(lang, 'nav.users') }).count()) === 0, 'sso: vera has no Users page in the menu');
  await page.goto(`${base}/#/users`);
  await page.getByText(msg(lang, 'users.adminsOnly')).waitFor();
  const users = await pageApi(page, 'GET', '/api/v1/users');
  check((await page.getByTestId('users-table').count()) === 0 && users.status === 403, `sso: the users page is not hers (the API answers ${users.status})`);
  await page.goto(`${base}/#/account`);
  const account = page.getByTestId('account-external');
  await account.waitFor();
  // The provider's title arrives with /api/v1/auth/providers, after the page's first render (its name until then).
  const wanted = msg(lang, 'account.external', { source: PROVIDER_TITLE });
  const accountText = await settledText(page, 'account-external', wanted);
  check(accountText === wanted && (await page.locator('input[name=old_password]').count()) === 0,
    `sso: her account page says where she logs in, with no change of password ("${accountText}")`);
  await checkTranslated(page, lang, 'account of an SSO user', seen.missing);
  await shot(page, 'sso-account');

  await page.locator('[data-testid=logout]').click();
  const providerLogout = page.getByTestId('provider-logout');
  await providerLogout.waitFor();
  const href = await providerLogout.getAttribute('href');
  // As on the account page, the provider's title arrives with /api/v1/auth/providers after the first render.
  const logoutText = msg(lang, 'login.providerLogout', { title: PROVIDER_TITLE });
  const shown = await settledText(page, 'provider-logout', logoutText);
  check(href.startsWith(`${sso.issuer}/session/end?`) && href.includes('client_id=cronwheel') && shown === logoutText,
    `sso: logged out, the login page offers "${logoutText}" (${href}; shown: "${shown}")`);
  check((await pageApi(page, 'GET', '/api/v1/auth/me')).status === 401, "sso: vera's cronwheel session has ended");
  await shot(page, 'sso-logged-out');
  await providerLogout.click();
  await page.getByRole('button', { name: 'Yes, sign me out' }).click();
  await page.getByText('Sign-out Success').waitFor();
  check(true, "sso: the link ends her session at the provider too (its logout page, then \"Sign-out Success\")");
  await page.goto(`${base}/#/`);
  await page.locator('input[name=username]').waitFor();
}

// The admin's side: vera listed with her source and no password in her form; the sign-in policy turned on (a
// local non-admin's session ended, the login page putting the provider first, a local non-admin refused with
// the server's words, the admin still let in) and off again. Starts and ends logged out.
async function ssoAdminFlow(page, base, lang, seen, adminPassword, viewerPassword) {
  await login(page, base, lang, 'admin', adminPassword);
  await page.goto(`${base}/#/users`);
  const veraRow = page.locator('[data-testid=users-table] tr[data-username=vera]');
  await veraRow.waitFor();
  const veraSource = veraRow.getByTestId('user-source');
  const sourceText = (await veraSource.innerText()).replace(/\s+/g, ' ').trim();
  check((await veraSource.getAttribute('data-source')) === 'oidc:test' && sourceText === `${msg(lang, 'users.source.oidc')} test`,
    `sso: the users page lists vera as "${sourceText}"`);
  const viewerSource = (await page.locator('[data-testid=users-table] tr[data-username=viewer] [data-testid=user-source]').innerText()).trim();
  check(viewerSource === msg(lang, 'users.source.local'), `sso: a local user is listed as "${viewerSource}"`);
  const veraGroups = (await veraRow.getByTestId('user-groups').innerText()).trim();
  check(veraGroups === msg(lang, 'users.groupWithRole', { group: 'Other team', role: msg(lang, 'enum.groupRole.VIEWER') }),
    `sso: vera's role comes from the provider's groups (${veraGroups})`);
  check((await page.locator('[data-testid=users-table] tr[data-username=nobody]').count()) === 0, 'sso: a refused sign-in made no user');
  await veraRow.getByRole('button', { name: msg(lang, 'common.edit'), exact: true }).click();
  const form = page.getByTestId('user-form');
  await form.waitFor();
  const note = (await form.getByTestId('user-external').innerText()).trim();
  check((await form.locator('input[name=password]').count()) === 0 && note === msg(lang, 'users.external', { name: 'vera', source: PROVIDER_TITLE }),
    `sso: her form has no password and says her roles are set at each login ("${note.slice(0, 60)}…")`);
  // Security review 2, N2: the identity she is linked to (an ADMIN may link or unlink one here).
  const identity = (await page.getByTestId('user-identity-state').innerText()).trim();
  check(identity === msg(lang, 'users.identity.current', { source: PROVIDER_TITLE, subject: 'vera' }),
    `sso: her form shows the identity she is linked to ("${identity.slice(0, 60)}…")`);
  await checkTranslated(page, lang, 'users with an SSO user', seen.missing);
  await shot(page, 'users-sso');
  await form.getByRole('button', { name: msg(lang, 'common.cancel'), exact: true }).click();

  // A session of a local user who is not an admin (the viewer's, from outside the browser), which requiring
  // single sign-on ends.
  const viewerLogin = await fetch(`${base}/api/v1/auth/login`, {
    method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ username: 'viewer', password: viewerPassword }),
  });
  const viewerCookie = (viewerLogin.headers.get('set-cookie') || '').split(';')[0];
  check(viewerLogin.status === 200 && viewerCookie.startsWith('cw_session='), `sso: the viewer has a session (${viewerLogin.status})`);
  const policy = page.getByTestId('sso-policy');
  await policy.waitFor();
  check((await policy.getAttribute('data-require-sso')) === 'false' && (await policy.getByTestId('sso-policy-state').innerText()).trim() === msg(lang, 'users.policy.optional'),
    'sso: the sign-in policy lets every user log in with a password');
  await policy.getByRole('button', { name: msg(lang, 'users.policy.require'), exact: true }).click();
  await policy.getByRole('button', { name: msg(lang, 'users.policy.requireConfirm'), exact: true }).click();
  const ended = msg(lang, 'users.policy.enabled.one', { count: 1 });
  await policy.getByText(ended).waitFor();
  await until('the policy card to show the policy saved', async () => (await policy.getAttribute('data-require-sso')) === 'true', 10_000);
  check((await policy.getByTestId('sso-policy-state').innerText()).trim() === msg(lang, 'users.policy.required'),
    `sso: single sign-on is required, after a confirmation ("${ended}")`);
  const viewerMe = await fetch(`${base}/api/v1/auth/me`, { headers: { Cookie: viewerCookie } });
  const saved = (await pageApi(page, 'GET', '/api/v1/auth/policy')).body;
  check(viewerMe.status === 401 && saved.require_sso === true && saved.sso_configured === true && saved.updated_by === 'admin',
    `sso: the viewer's session has ended (${viewerMe.status}) and the policy is saved (${JSON.stringify(saved)})`);
  await checkTranslated(page, lang, 'sign-in policy', seen.missing);
  await shot(page, 'users-policy');

  await logout(page);
  const note2 = page.getByTestId('login-require-sso');
  await note2.waitFor();
  const providerFirst = await page.evaluate(() => {
    const buttons = document.querySelector('[data-testid=login-providers]');
    const form = document.querySelector('[data-testid=login-form]');
    return Boolean(buttons && form && buttons.compareDocumentPosition(form) & Node.DOCUMENT_POSITION_FOLLOWING);
  });
  check(providerFirst && (await note2.innerText()).trim() === msg(lang, 'login.requireSso'),
    'sso: single sign-on required, the login page puts the provider first and keeps the password form for administrators');
  await page.locator('input[name=username]').fill('viewer');
  await page.locator('input[name=password]').fill(viewerPassword);
  await page.getByRole('button', { name: msg(lang, 'login.submit'), exact: true }).click();
  const refusal = page.getByTestId('login-error');
  await refusal.waitFor();
  const refusalText = await refusal.innerText();
  check(refusalText.includes('this cronwheel requires single sign-on') && (await page.getByTestId('whoami').count()) === 0,
    `sso: a local user who is not an admin is refused with the server's words ("${refusalText.slice(0, 80)}…")`);
  await shot(page, 'login-require-sso');
  await login(page, base, lang, 'admin', adminPassword);
  check(true, 'sso: the admin still logs in with a password (break glass)');
  await page.goto(`${base}/#/users`);
  await policy.waitFor();
  await policy.getByRole('button', { name: msg(lang, 'users.policy.allow'), exact: true }).click();
  await policy.getByRole('button', { name: msg(lang, 'common.confirmAgain'), exact: true }).click();
  await policy.getByText(msg(lang, 'users.policy.disabled')).waitFor();
  await until('the policy card to show the policy saved', async () => (await policy.getAttribute('data-require-sso')) === 'false', 10_000);
  check((await pageApi(page, 'GET', '/api/v1/auth/policy')).body.require_sso === false,
    'sso: turned off again, every user may log in with a password');
  await logout(page);
}

// Script jobs where a global ADMIN allows them (allow_scripts): the admin ticks the box in web-test-app's form
// and the list marks the group; a user made through the API, DEVELOPER of web-test-app and ADMIN of
// other-team-app, is offered the script run modes in a new job of web-test-app only (in other-team-app a script
// type kept is named next to the field, and without it only BEAN is offered), and as other-team-app's ADMIN
// sees the box read-only in its form (the API refuses it the change, 403 on allow_scripts). The box stays
// ticked: nothing after depends on it (the admin writes script jobs anywhere).
async function scriptGroupFlow(page, base, lang, seen, adminPassword) {
  await login(page, base, lang, 'admin', adminPassword);
  const groups = (await pageApi(page, 'GET', '/api/v1/groups')).body.items;
  const web = groups.find((g) => g.app_name === 'web-test-app');
  const other = groups.find((g) => g.app_name === 'other-team-app');
  check(web.allow_scripts === false && other.allow_scripts === false, 'scripts: no group allows script jobs by default');
  await page.goto(`${base}/#/groups`);
  const groupRow = (app) => page.locator('[data-testid=groups-table] tbody tr', { hasText: app });
  await groupRow('web-test-app').getByRole('button', { name: msg(lang, 'common.edit'), exact: true }).click();
  const box = page.getByTestId('group-form').locator('input[name=allow_scripts]');
  check(!(await box.isChecked()) && (await box.isEnabled()), "scripts: the global admin's group form has the box, unticked");
  await box.check();
  await shot(page, 'group-form-scripts');
  const putGroup = page.waitForResponse((r) => r.url().endsWith(`/api/v1/groups/${web.id}`) && r.request().method() === 'PUT', { timeout: 15_000 });
  await page.getByTestId('save-group').click();
  const put = await putGroup;
  check(put.status() === 200 && put.request().postDataJSON().allow_scripts === true && (await put.json()).allow_scripts === true,
    `scripts: the admin's form sends allow_scripts: true, saved (${put.status()})`);
  await page.getByText(msg(lang, 'groups.saved', { app: 'web-test-app' })).waitFor();
  await groupRow('web-test-app').getByTestId('scripts-allowed').waitFor();
  check((await groupRow('web-test-app').getByTestId('scripts-allowed').innerText()).trim() === msg(lang, 'groups.scriptsAllowed')
    && (await page.getByTestId('scripts-allowed').count()) === 1, `scripts: the list marks that group only "${msg(lang, 'groups.scriptsAllowed')}"`);
  await checkTranslated(page, lang, 'groups with scripts allowed', seen.missing);
  await shot(page, 'groups-scripts');

  const devPassword = crypto.randomBytes(12).toString('base64url');
  const dev = await pageApi(page, 'POST', '/api/v1/users', {
    username: 'developer', password: devPassword, role: 'USER',
    group_roles: [{ group_id: web.id, role: 'DEVELOPER' }, { group_id: other.id, role: 'ADMIN' }],
  });
  check(dev.status === 201, `scripts: a user, DEVELOPER of web-test-app and ADMIN of other-team-app (${dev.status})`);
  await logout(page);
  await login(page, base, lang, 'developer', devPassword);
  await page.goto(`${base}/#/jobs/new`);
  const form = page.getByTestId('job-form');
  const glue = form.locator('select[name=glue_type]');
  const offeredTypes = () => glue.locator('option').evaluateAll((options) => options.map((o) => o.value));
  await form.locator('select[name=group_id]').selectOption(String(web.id));
  await until('the script run modes offered in web-test-app', async () => (await offeredTypes()).includes('GLUE_SHELL'), 10_000);
  const inWeb = await offeredTypes();
  check(inWeb.includes('BEAN') && inWeb.includes('GLUE_SHELL') && inWeb.includes('GLUE_PYTHON'),
    `scripts: a DEVELOPER is offered the script run modes in the group that allows them (${inWeb.join(', ')})`);
  await glue.selectOption('GLUE_SHELL');
  await form.locator('textarea[name=glue_source]').waitFor();
  const glueField = form.locator('label.field', { has: page.locator('select[name=glue_type]') });
  check((await glueField.innerText()).includes(msg(lang, 'job.hint.scriptsAllowed')), 'scripts: the run mode says the group allows script jobs');
  await checkTranslated(page, lang, 'job form of a DEVELOPER with scripts', seen.missing);
  await shot(page, 'job-form-developer-script');
  await form.locator('select[name=group_id]').selectOption(String(other.id));
  await glueField.locator('.field-error').waitFor();
  check((await glueField.locator('.field-error').innerText()).trim() === msg(lang, 'job.hint.scriptsNotAllowed'),
    'scripts: moved to a group that does not allow them, the script type kept is named next to the field');
  await glue.selectOption('BEAN');
  await until('only BEAN offered in other-team-app', async () => (await offeredTypes()).length === 1, 10_000);
  const inOther = await offeredTypes();
  check(JSON.stringify(inOther) === '["BEAN"]', `scripts: in a group without them (even as its ADMIN) only BEAN is offered (${inOther.join(', ')})`);

  await page.goto(`${base}/#/groups`);
  await groupRow('other-team-app').getByRole('button', { name: msg(lang, 'common.edit'), exact: true }).click();
  const otherBox = page.getByTestId('group-form').locator('input[name=allow_scripts]');
  await otherBox.waitFor();
  check(await otherBox.isDisabled() && !(await otherBox.isChecked()), "scripts: a group's ADMIN sees the box read-only");
  const refused = await pageApi(page, 'PUT', `/api/v1/groups/${other.id}`, { allow_scripts: true });
  check(refused.status === 403 && refused.body.errors?.[0]?.field === 'allow_scripts',
    `scripts: the API refuses a group's ADMIN allow_scripts (${refused.status} ${refused.body.errors?.[0]?.field})`);
  await logout(page);
}

async function englishScenario(context, base, adminPassword, executorPort, sso) {
  const lang = 'en';
  const page = context.pages()[0] || (await context.newPage());
  const seen = watch(page);

  // --- log in ----------------------------------------------------------------------------------------
  await page.goto(`${base}/`);
  await page.locator('input[name=username]').waitFor();
  check((await page.evaluate(() => document.documentElement.lang)) === 'en', 'en-US browser: <html lang="en">');
  // The OpenID provider's button, after the password form (single sign-on is not required); no directory.
  const providerButton = page.getByRole('link', { name: msg(lang, 'login.withProvider', { title: PROVIDER_TITLE }), exact: true });
  await providerButton.waitFor();
  const formFirst = await page.evaluate(() => Boolean(document.querySelector('[data-testid=login-form]')
    .compareDocumentPosition(document.querySelector('[data-testid=login-providers]')) & Node.DOCUMENT_POSITION_FOLLOWING));
  check(formFirst && (await page.getByTestId('login-require-sso').count()) === 0 && (await page.getByTestId('login-ldap-hint').count()) === 0,
    `the login page offers "${msg(lang, 'login.withProvider', { title: PROVIDER_TITLE })}" after the password form (no LDAP hint, no note)`);
  await shot(page, 'login');
  // A provider's failed login comes back as #/login?error=<message>: shown as text, never as markup.
  const hostile = `<b>x</b><img src=x onerror="alert('sso-error')"> & co`;
  await page.goto(`${base}/#/login?error=${encodeURIComponent(hostile)}`);
  const loginError = page.getByTestId('login-error');
  await loginError.waitFor();
  check((await loginError.textContent()) === msg(lang, 'login.ssoFailed', { message: hostile }) && (await loginError.locator('b, img').count()) === 0,
    `the login page shows #/login?error= as text (${await loginError.textContent()})`);
  await shot(page, 'login-error');
  await page.locator('input[name=username]').fill('admin');
  await page.locator('input[name=password]').fill('not-the-password');
  await page.getByRole('button', { name: msg(lang, 'login.submit') }).click();
  await page.getByText(msg(lang, 'login.failed')).waitFor();
  check(true, 'a wrong password is refused with a message');
  await login(page, base, lang, 'admin', adminPassword);
  check(await page.locator('[data-testid=whoami]').innerText() === 'admin', 'logged in as admin');
  await page.locator('[data-testid=stat-jobs]').waitFor();
  check((await page.locator('nav').innerText()).includes(msg(lang, 'nav.jobs')), `en: the menu shows "${msg(lang, 'nav.jobs')}"`);
  await checkTranslated(page, lang, 'dashboard', seen.missing);

  // --- an executor group, and the executor online in it --------------------------------------------------
  await page.goto(`${base}/#/groups`);
  await page.locator('[data-testid=new-group]').click();
  await page.locator('input[name=app_name]').fill('web-test-app');
  await page.locator('input[name=title]').fill('Web test');
  await page.locator('[data-testid=save-group]').click();
  await page.getByText(msg(lang, 'groups.saved', { app: 'web-test-app' })).waitFor();
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
  await page.getByText(msg(lang, 'groups.saved', { app: 'other-team-app' })).waitFor();
  await checkTranslated(page, lang, 'groups', seen.missing);
  await shot(page, 'groups');

  // --- a job firing every 2 s, with live cron validation and a server validation error ----------------------
  const form = await jobFormValidation(page, base, lang);
  await form.locator('input[name=description]').fill(XSS_DESC);
  const preview = page.locator('[data-testid=schedule-preview]');
  await form.locator('input[name=time_zone]').fill('Asia/Shanghai');
  await form.locator('input[name=schedule_conf]').fill('0/2 * * * * ?');
  // The preview already lists the validation step's fires: wait for the ones of the new zone.
  await until('five next fires in Asia/Shanghai', async () =>
    (await preview.locator('li').count()) === 5 && (await preview.locator('li').first().innerText()).includes('+08:00'), 10_000);
  const firstFire = await preview.locator('li').first().innerText();
  check(/\+08:00$/.test(firstFire.trim()), `the next fires are shown in the job's zone (${firstFire.trim()})`);
  await form.locator('select[name=glue_type]').selectOption('GLUE_SHELL');
  await form.locator('textarea[name=glue_source]').fill(SCRIPT);
  await form.locator('input[name=glue_remark]').fill('first version');
  // A tag that is not valid is named next to the field; the corrected one is kept in lower case.
  await form.locator('input[name=tags]').fill('Demo, bad tag');
  await page.locator('[data-testid=save-job]').click();
  const tagsField = form.locator('label.field', { has: page.locator('input[name=tags]') });
  await tagsField.locator('.field-error').waitFor();
  check((await tagsField.locator('.field-error').innerText()).includes('bad tag'), `the invalid tag is named next to the field (${await tagsField.locator('.field-error').innerText()})`);
  await form.locator('input[name=tags]').fill('Demo, shell');
  await checkTranslated(page, lang, 'job form', seen.missing);
  await shot(page, 'job-form');
  await page.locator('[data-testid=save-job]').click();
  await page.waitForURL(/#\/jobs\/\d+$/);
  const jobId = Number(page.url().match(/#\/jobs\/(\d+)$/)[1]);
  check(jobId > 0, `the job was created (id ${jobId})`);
  const createdJob = (await pageApi(page, 'GET', `/api/v1/jobs/${jobId}`)).body;
  check(JSON.stringify(createdJob.tags) === '["demo","shell"]', `the job's tags are saved in lower case (${JSON.stringify(createdJob.tags)})`);
  await page.getByTestId('glue-history').waitFor();
  check((await page.getByTestId('glue-history').innerText()).includes('first version'), 'the script version history lists the saved version');

  // Start it from the list.
  await page.goto(`${base}/#/jobs`);
  const row = page.locator(`tr[data-job-id="${jobId}"]`);
  await row.getByRole('button', { name: msg(lang, 'jobs.start') }).click();
  await row.getByText(msg(lang, 'jobs.state.running')).waitFor();
  check(true, 'the job runs');
  check(await row.getByText(XSS_DESC, { exact: false }).isVisible(), 'the description with <script> and <img onerror> is shown as text');
  await checkTranslated(page, lang, 'jobs', seen.missing);
  await shot(page, 'jobs');

  // --- it fires: the logs, then one fire's output tailed to the end ----------------------------------------
  await page.goto(`${base}/#/logs?job=${jobId}`);
  const table = page.locator('[data-testid=logs-table]');
  await until('a successful fire in the logs', async () => (await table.locator('tr[data-status=SUCCESS]').count()) > 0, 40_000, 500);
  check(true, 'the job fired and succeeded (seen in the logs page)');
  await checkTranslated(page, lang, 'logs', seen.missing);
  await shot(page, 'logs');
  const logId = await table.locator('tr[data-status=SUCCESS]').first().getAttribute('data-log-id');
  await page.goto(`${base}/#/logs/${logId}`);
  const output = page.locator('[data-testid=log-output]');
  await until('the output of the fire', async () => (await output.innerText()).includes('hello from cronwheel'), 20_000);
  await until('the tail to end', async () => (await page.getByTestId('tail-state').getAttribute('data-state')) === 'ended', 20_000);
  const text = await output.innerText();
  check(text.includes('hello from cronwheel'), "the executor's output is shown");
  check(text.includes(XSS_OUT), 'output holding <script> and <img onerror> is shown as literal text');
  check((await page.locator('img[src="x"]').count()) === 0, 'no <img> element was created from job data');
  check((await page.locator('script:not([src])').count()) === 0, 'no inline <script> element exists');
  // The fire has ended: its output comes from the admin's archive (docs/operations.md, "The fire output
  // archive"), and the page says so.
  await until('the output to come from the archive', async () => (await page.getByTestId('output-source').getAttribute('data-source')) === 'archive', 20_000);
  check((await page.getByTestId('output-source').innerText()).trim() === msg(lang, 'log.source.archive'), 'the output says it comes from the archive');
  check((await page.getByTestId('archive-note').getAttribute('data-state')) === 'archived', 'the archive note says the output is archived');
  check((await page.getByTestId('archive-note').innerText()).trim() === msg(lang, 'log.archive.push'), 'the note says the executor sent it with the result');
  const scheduled = await page.locator('[data-testid=log-fields] .kv', { hasText: msg(lang, 'logs.col.scheduled') }).locator('dd').innerText();
  check(/^\d{2}\/\d{2}\/\d{4}, \d{2}:\d{2}:\d{2}\s[AP]M$/.test(scheduled.trim()), `en-US: times in the browser's locale (${scheduled.trim()})`);
  // When the executor started it (cronwheel-executor reports it), and for a CRON fire how long after its instant.
  const shown = (await pageApi(page, 'GET', `/api/v1/logs/${logId}`)).body;
  const started = (await page.getByTestId('started').innerText()).trim();
  check(shown.start_ms > 0 && /^\d{2}\/\d{2}\/\d{4}, \d{2}:\d{2}:\d{2}\s[AP]M/.test(started),
    `the executor's start of the fire is shown (${started})`);
  if (shown.trigger_type === 'CRON') {
    check(started.endsWith('after its instant)'), `a CRON fire's start says how long after its instant (${started})`);
  }
  await checkTranslated(page, lang, 'log detail', seen.missing);
  await shot(page, 'log-detail');

  // --- stop the job ---------------------------------------------------------------------------------------
  await page.goto(`${base}/#/jobs`);
  await row.getByRole('button', { name: msg(lang, 'jobs.stop') }).click();
  await row.getByText(msg(lang, 'jobs.state.stopped')).waitFor();
  const stopped = await pageApi(page, 'GET', `/api/v1/jobs/${jobId}`);
  check(stopped.status === 200 && stopped.body.enabled === false && stopped.body.next_fire_ms === 0, 'the job is stopped');
  const fires = (await pageApi(page, 'GET', `/api/v1/logs?job_id=${jobId}`)).body.total;

  await page.goto(`${base}/#/`);
  await page.locator('[data-testid=stat-jobs]').waitFor();
  await page.waitForFunction(() => window.Chart !== undefined && document.querySelector('canvas') !== null);
  check((await page.getByTestId('stat-jobs').innerText()).startsWith('1'), 'the dashboard counts the job');
  await shot(page, 'dashboard');

  // --- a normal user, created in the UI with a role in one group, sees only that group ------------------------
  const otherGroup = (await pageApi(page, 'GET', '/api/v1/groups')).body.items.find((g) => g.app_name === 'other-team-app').id;
  const otherJob = await pageApi(page, 'POST', '/api/v1/jobs', {
    group_id: otherGroup, description: 'Other team report', schedule_type: 'NONE', handler: 'otherTeamHandler',
  });
  check(otherJob.status === 201, `a job in the other team's group (${otherJob.status})`);
  await page.goto(`${base}/#/users`);
  await page.locator('[data-testid=new-user]').click();
  const userForm = page.locator('[data-testid=user-form]');
  await userForm.locator('input[name=username]').fill('viewer');
  const viewerPassword = crypto.randomBytes(12).toString('base64url');
  await userForm.locator('input[name=password]').fill(viewerPassword);
  await userForm.locator('select[name="group-other-team-app"]').selectOption('VIEWER');
  await shot(page, 'user-form');
  const userSaved = page.waitForResponse((r) => r.url().endsWith('/api/v1/users') && r.request().method() === 'POST', { timeout: 15_000 });
  await page.locator('[data-testid=save-user]').click();
  const userResponse = await userSaved;
  const userSent = userResponse.request().postDataJSON();
  const viewerId = (await userResponse.json()).id;
  check(JSON.stringify(userSent.group_roles) === JSON.stringify([{ group_id: otherGroup, role: 'VIEWER' }]) && !('permitted_group_ids' in userSent),
    `the user form sends the role per group, group_roles (${JSON.stringify({ ...userSent, password: undefined })})`);
  await page.getByText(msg(lang, 'users.saved', { name: 'viewer' })).waitFor();
  const viewerGroups = page.locator('[data-testid=users-table] tr[data-username=viewer] [data-testid=user-groups]');
  const listedRole = msg(lang, 'users.groupWithRole', { group: 'Other team', role: msg(lang, 'enum.groupRole.VIEWER') });
  await until(`the users list to show "${listedRole}"`, async () => (await viewerGroups.innerText()).trim() === listedRole, 10_000);
  check(true, `the users list shows the new user's group with its role: "${listedRole}"`);
  await checkTranslated(page, lang, 'users', seen.missing);
  await shot(page, 'users');
  await page.goto(`${base}/#/tokens`);
  await page.locator('input[name=token_name]').fill('ci pipeline');
  await page.locator('select[name=scope]').selectOption('operate');
  await page.getByRole('button', { name: msg(lang, 'tokens.create') }).click();
  await page.getByTestId('new-token').waitFor();
  const secret = (await page.locator('[data-testid=new-token] code.secret').innerText()).trim();
  check(secret.startsWith('cwt_'), 'an API token is shown once after creation');
  const tokenRow = page.getByTestId('token-row').filter({ hasText: 'ci pipeline' });
  await tokenRow.waitFor();
  check(
    (await tokenRow.getAttribute('data-state')) === 'active' && (await tokenRow.innerText()).includes(msg(lang, 'tokens.state.active')),
    'the new token is listed as active, with its expiry (90 days by default)',
  );
  check(
    (await tokenRow.getByTestId('token-scope').innerText()).trim() === msg(lang, 'tokens.scope.operate'),
    'the new token is listed with the scope chosen (operate)',
  );
  // The token, used from outside the console: it may read, and a write is refused naming the scope.
  const [readStatus, writeStatus, writeCode] = await page.evaluate(async (bearer) => {
    const headers = { Authorization: `Bearer ${bearer}`, 'Content-Type': 'application/json' };
    const read = await fetch('/api/v1/jobs', { headers, credentials: 'omit' });
    const write = await fetch('/api/v1/jobs', { method: 'POST', headers, body: '{}', credentials: 'omit' });
    const body = await write.json();
    return [read.status, write.status, body.errors && body.errors[0] && body.errors[0].code];
  }, secret);
  check(
    readStatus === 200 && writeStatus === 403 && writeCode === 'scope',
    `the operate-scoped token reads jobs (${readStatus}) and is refused a write with 403, code scope (${writeStatus} ${writeCode})`,
  );
  await checkTranslated(page, lang, 'tokens', seen.missing);
  await shot(page, 'tokens');
  await page.goto(`${base}/#/audit`);
  await page.getByTestId('audit-table').waitFor();
  check((await page.getByTestId('audit-table').innerText()).includes('job.stop'), 'the audit log shows the stop');
  check(
    (await page.getByTestId('audit-via').first().innerText()).trim() === msg(lang, 'audit.via.session'),
    'the audit log says through which login (the newest entry: this console session)',
  );
  await checkTranslated(page, lang, 'audit', seen.missing, '[data-testid=audit-table] tbody');
  await shot(page, 'audit');
  const later = (await pageApi(page, 'GET', `/api/v1/logs?job_id=${jobId}`)).body.total;
  check(later <= fires + 1, `no new fires after the stop (${fires} then ${later})`);
  await cliLoginFlow(page, base, lang, seen, adminPassword);
  await page.goto(`${base}/#/`);
  await logout(page);

  await login(page, base, lang, 'viewer', viewerPassword);
  await page.goto(`${base}/#/jobs`);
  const viewerRow = page.locator(`[data-testid=jobs-table] tr[data-job-id="${otherJob.body.id}"]`);
  await viewerRow.waitFor();
  check((await page.locator('[data-testid=jobs-table] tr[data-job-id]').count()) === 1, "the VIEWER's job list shows their group's job only");
  check((await page.getByText('Job <script>', { exact: false }).count()) === 0, "the other group's job is not shown");
  // What a role may not do is not offered (the API would refuse it with 403, code role).
  const offered = async (row) => Object.fromEntries(await Promise.all(
    [['trigger', 'jobs.trigger'], ['start', 'jobs.start'], ['runOnce', 'jobs.runOnce'], ['copy', 'jobs.copy'], ['delete', 'common.delete']]
      .map(async ([name, key]) => [name, await row.getByRole('button', { name: msg(lang, key), exact: true }).count()]),
  ));
  const asViewer = await offered(viewerRow);
  check(Object.values(asViewer).every((n) => n === 0) && (await viewerRow.locator('input[name=select]').count()) === 0,
    `a VIEWER is offered no trigger, start, run once, copy, delete or selection (${JSON.stringify(asViewer)})`);
  check((await viewerRow.getByRole('link', { name: msg(lang, 'jobs.logs') }).count()) === 1, "a VIEWER may open the job's fires");
  check((await page.getByTestId('new-job').count()) === 0, 'a VIEWER is offered no new job');
  await shot(page, 'viewer-jobs');
  await viewerRow.getByRole('link', { name: 'Other team report' }).click();
  await page.getByTestId('read-only').waitFor();
  check((await page.getByTestId('save-job').count()) === 0 && await page.locator('[data-testid=job-form] input[name=description]').isDisabled(),
    "a VIEWER sees the job's form read-only, without Save");
  await page.goto(`${base}/#/jobs/${jobId}`);
  await page.getByText(`job '${jobId}' not found`).waitFor();
  check((await page.getByTestId('error-banner').innerText()).includes(msg(lang, 'error.kind.not_found')), "opening the other group's job by id answers not found");
  const denied = await pageApi(page, 'GET', `/api/v1/logs?job_id=${jobId}`);
  check(denied.status === 200 && denied.body.total === 0, "the other group's fires are not listed");
  check((await page.locator('nav a', { hasText: msg(lang, 'nav.users') }).count()) === 0, 'the normal user has no Users page in the menu');
  // OPERATOR in the group (given by an admin through the API): trigger, start and run once; still no edit.
  await logout(page);
  await login(page, base, lang, 'admin', adminPassword);
  const promoted = await pageApi(page, 'PUT', `/api/v1/users/${viewerId}`, { group_roles: [{ group_id: otherGroup, role: 'OPERATOR' }] });
  check(promoted.status === 200 && JSON.stringify(promoted.body.group_roles) === JSON.stringify([{ group_id: otherGroup, role: 'OPERATOR' }]),
    `the admin makes the user an OPERATOR of the group (${promoted.status} ${JSON.stringify(promoted.body.group_roles)})`);
  await logout(page);
  await login(page, base, lang, 'viewer', viewerPassword);
  await page.goto(`${base}/#/jobs`);
  await viewerRow.getByRole('button', { name: msg(lang, 'jobs.trigger'), exact: true }).waitFor();
  const asOperator = await offered(viewerRow);
  check(asOperator.trigger === 1 && asOperator.start === 1 && asOperator.runOnce === 1 && asOperator.copy === 0 && asOperator.delete === 0,
    `an OPERATOR is offered trigger, start and run once, not copy or delete (${JSON.stringify(asOperator)})`);
  check((await page.getByTestId('new-job').count()) === 0, 'an OPERATOR is offered no new job');
  await page.goto(`${base}/#/jobs/${otherJob.body.id}`);
  await page.getByTestId('read-only').waitFor();
  check((await page.getByTestId('save-job').count()) === 0, "an OPERATOR sees the job's form read-only, without Save");
  await logout(page);
  check(await page.locator('input[name=username]').isVisible(), 'logged out: the login page shows');
  check((await pageApi(page, 'GET', '/api/v1/jobs')).status === 401, 'after logout the API refuses the browser');

  // --- single sign-on: a provider's user, then the admin's side (the policy back off before the next logins) ---
  await ssoUserFlow(page, base, lang, seen, sso, offered, otherJob.body.id);
  await ssoAdminFlow(page, base, lang, seen, adminPassword, viewerPassword);

  // --- script jobs in a group where the global admin allows them ---------------------------------------------------
  await scriptGroupFlow(page, base, lang, seen, adminPassword);

  // --- phone width ----------------------------------------------------------------------------------------------
  await page.setViewportSize({ width: 390, height: 844 });
  await login(page, base, lang, 'admin', adminPassword);
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
  for (const job of (await pageApi(page, 'GET', '/api/v1/jobs')).body.items) {
    check((await pageApi(page, 'DELETE', `/api/v1/jobs/${job.id}`)).status === 200, `the test job ${job.id} is deleted`);
  }
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

  await workflowFlow(page, base, lang, seen, `Diamond <script>alert('wf')</script>`, '');

  check(seen.dialogs.length === 0, `en: no dialog was opened (${JSON.stringify(seen.dialogs)})`);
  check(seen.errors.length === 0, `en: no script error on the pages (${JSON.stringify(seen.errors)})`);
}

// The main flow again in a browser whose language is zh-CN (time zone Asia/Shanghai): everything in
// Chinese, then the header's language switch.
async function chineseScenario(context, base, adminPassword) {
  const lang = 'zh-CN';
  const page = context.pages()[0] || (await context.newPage());
  const seen = watch(page);

  await page.goto(`${base}/`);
  await page.locator('input[name=username]').waitFor();
  check((await page.evaluate(() => document.documentElement.lang)) === 'zh-CN', 'zh-CN browser: <html lang="zh-CN">');
  check(await page.getByRole('button', { name: msg(lang, 'login.submit') }).isVisible(), `zh-CN: the login button reads "${msg(lang, 'login.submit')}"`);
  await shot(page, 'login-zh-CN');
  await page.locator('input[name=username]').fill('admin');
  await page.locator('input[name=password]').fill('not-the-password');
  await page.getByRole('button', { name: msg(lang, 'login.submit') }).click();
  await page.getByText(msg(lang, 'login.failed')).waitFor();
  check(true, `zh-CN: a wrong password is refused with "${msg(lang, 'login.failed')}"`);
  await login(page, base, lang, 'admin', adminPassword);
  await page.locator('[data-testid=stat-jobs]').waitFor();
  const nav = await page.locator('nav').innerText();
  check(nav.includes(msg(lang, 'nav.jobs')) && nav.includes(msg(lang, 'nav.logs')), `zh-CN: the menu shows ${msg(lang, 'nav.jobs')} and ${msg(lang, 'nav.logs')}`);
  await checkTranslated(page, lang, 'dashboard', seen.missing);
  await shot(page, 'dashboard-zh-CN');

  // A group.
  await page.goto(`${base}/#/groups`);
  await page.locator('[data-testid=new-group]').click();
  await page.locator('input[name=app_name]').fill('zh-team-app');
  await page.locator('input[name=title]').fill('中文团队');
  await checkTranslated(page, lang, 'group form', seen.missing);
  await page.locator('[data-testid=save-group]').click();
  await page.getByText(msg(lang, 'groups.saved', { app: 'zh-team-app' })).waitFor();
  check(true, `zh-CN: the group is saved ("${msg(lang, 'groups.saved', { app: 'zh-team-app' })}")`);
  await checkTranslated(page, lang, 'groups', seen.missing);

  // A job, with the validation errors in Chinese; a shell script in the executor's group.
  const form = await jobFormValidation(page, base, lang);
  await form.locator('input[name=description]').fill('每日对账');
  await form.locator('select[name=glue_type]').selectOption('GLUE_SHELL');
  await form.locator('textarea[name=glue_source]').fill(SCRIPT);
  await form.locator('input[name=glue_remark]').fill('第一版');
  await checkTranslated(page, lang, 'job form', seen.missing);
  await shot(page, 'job-form-zh-CN');
  await page.locator('[data-testid=save-job]').click();
  await page.waitForURL(/#\/jobs\/\d+$/);
  const jobId = Number(page.url().match(/#\/jobs\/(\d+)$/)[1]);
  await page.getByText(msg(lang, 'job.created', { id: jobId })).waitFor();
  check(jobId > 0, `zh-CN: the job was created (${msg(lang, 'job.created', { id: jobId })})`);

  // Start it, trigger it once, see the fire and its output.
  await page.goto(`${base}/#/jobs`);
  const row = page.locator(`tr[data-job-id="${jobId}"]`);
  await row.getByRole('button', { name: msg(lang, 'jobs.start') }).click();
  await row.getByText(msg(lang, 'jobs.state.running')).waitFor();
  check(true, `zh-CN: the job runs ("${msg(lang, 'jobs.state.running')}")`);
  await row.getByRole('button', { name: msg(lang, 'jobs.trigger') }).click();
  const dialog = page.getByRole('dialog');
  await dialog.waitFor();
  check((await dialog.locator('h2').innerText()) === msg(lang, 'trigger.title', { description: '每日对账' }), 'zh-CN: the trigger dialog is in Chinese');
  await checkTranslated(page, lang, 'trigger dialog', seen.missing);
  await dialog.getByRole('button', { name: msg(lang, 'trigger.submit'), exact: true }).click();
  const notice = page.getByText(new RegExp(msg(lang, 'jobs.triggered', { id: jobId, log: '(\\d+)' })));
  await notice.waitFor();
  const logId = Number((await notice.innerText()).match(new RegExp(msg(lang, 'jobs.triggered', { id: jobId, log: '(\\d+)' })))[1]);
  check(logId > 0, `zh-CN: triggered once (fire ${logId})`);
  await checkTranslated(page, lang, 'jobs', seen.missing);
  await shot(page, 'jobs-zh-CN');

  // Run it once an hour from now, see the request waiting, cancel it.
  await row.getByRole('button', { name: msg(lang, 'jobs.runOnce') }).click();
  const once = page.getByRole('dialog');
  await once.waitFor();
  check((await once.locator('h2').innerText()) === msg(lang, 'runOnce.title', { description: '每日对账' }), 'zh-CN: the run-once dialog is in Chinese');
  await once.getByRole('button', { name: msg(lang, 'runOnce.submit'), exact: true }).click();
  await once.locator('.field-error').first().waitFor();
  check((await pageApi(page, 'GET', `/api/v1/jobs/${jobId}/run-once`)).body.items.length === 0, 'zh-CN: run once without a time is refused and nothing is written');
  await once.locator('input[name=minutes]').fill('60');
  await once.locator('input[name=use-own]').uncheck();
  await once.locator('textarea[name=param]').fill('一次');
  const asked = Date.now();
  await once.getByRole('button', { name: msg(lang, 'runOnce.submit'), exact: true }).click();
  const waitingRow = once.locator('[data-testid=run-once-table] tr[data-state=WAITING]');
  await waitingRow.waitFor();
  const request = (await pageApi(page, 'GET', `/api/v1/jobs/${jobId}/run-once`)).body.items[0];
  check(request.state === 'WAITING' && request.param === '一次' && Math.abs(request.fire_at_ms - (asked + 3_600_000)) < 60_000,
    `zh-CN: run once ${request.id} waits for ${new Date(request.fire_at_ms).toISOString()} with its parameter`);
  check((await waitingRow.innerText()).includes(msg(lang, 'enum.runOnce.WAITING')), 'zh-CN: the request shows as waiting');
  await checkTranslated(page, lang, 'run-once dialog', seen.missing);
  await shot(page, 'run-once-zh-CN');
  await waitingRow.getByRole('button', { name: msg(lang, 'runOnce.cancel') }).click();
  await once.locator(`[data-testid=run-once-table] tr[data-run-id="${request.id}"][data-state=CANCELLED]`).waitFor();
  check((await pageApi(page, 'GET', `/api/v1/jobs/${jobId}/run-once`)).body.items[0].state === 'CANCELLED', 'zh-CN: the request is cancelled');
  await once.getByRole('button', { name: msg(lang, 'runOnce.done'), exact: true }).click();
  await once.waitFor({ state: 'detached' });

  await page.goto(`${base}/#/logs?job=${jobId}`);
  const table = page.locator('[data-testid=logs-table]');
  const fireRow = table.locator(`tr[data-log-id="${logId}"]`);
  await until('the triggered fire to succeed', async () => (await fireRow.getAttribute('data-status')) === 'SUCCESS', 30_000, 500);
  const rowText = await fireRow.innerText();
  check(rowText.includes(msg(lang, 'enum.logStatus.SUCCESS')) && rowText.includes(msg(lang, 'enum.trigger.MANUAL')),
    `zh-CN: the fire shows as ${msg(lang, 'enum.logStatus.SUCCESS')}, ${msg(lang, 'enum.trigger.MANUAL')}`);
  await checkTranslated(page, lang, 'logs', seen.missing);
  await shot(page, 'logs-zh-CN');
  await page.goto(`${base}/#/logs/${logId}`);
  await until('the output of the fire', async () => (await page.getByTestId('log-output').innerText()).includes('hello from cronwheel'), 20_000);
  await until('the tail to end', async () => (await page.getByTestId('tail-state').getAttribute('data-state')) === 'ended', 20_000);
  check((await page.getByTestId('tail-state').innerText()) === msg(lang, 'log.ended'), `zh-CN: the tail says "${msg(lang, 'log.ended')}"`);
  const fire = (await pageApi(page, 'GET', `/api/v1/logs/${logId}`)).body;
  const scheduled = await page.locator('[data-testid=log-fields] .kv', { hasText: msg(lang, 'logs.col.scheduled') }).locator('dd').innerText();
  check(scheduled.trim() === shanghaiTime(fire.scheduled_ms), `zh-CN: the time is in the browser's zone and locale (${scheduled.trim()} = ${shanghaiTime(fire.scheduled_ms)})`);
  check(/\d/.test(await page.getByTestId('duration').innerText()), `zh-CN: the duration is shown (${await page.getByTestId('duration').innerText()})`);
  await checkTranslated(page, lang, 'log detail', seen.missing);
  await shot(page, 'log-detail-zh-CN');

  await page.goto(`${base}/#/jobs`);
  await row.getByRole('button', { name: msg(lang, 'jobs.stop') }).click();
  await row.getByText(msg(lang, 'jobs.state.stopped')).waitFor();
  check(true, `zh-CN: the job is stopped ("${msg(lang, 'jobs.state.stopped')}")`);

  // The jobs page with a few ordinary jobs described in Chinese (the README's zh-CN screenshot).
  for (const job of (await pageApi(page, 'GET', '/api/v1/jobs')).body.items) await pageApi(page, 'DELETE', `/api/v1/jobs/${job.id}`);
  const groups = (await pageApi(page, 'GET', '/api/v1/groups')).body.items;
  const web = groups.find((g) => g.app_name === 'web-test-app').id;
  const zhTeam = groups.find((g) => g.app_name === 'zh-team-app').id;
  for (const job of [
    { group_id: web, description: '每日销售报表', author: '财务部', schedule_type: 'CRON', schedule_conf: '0 30 2 * * ?', time_zone: 'Asia/Shanghai', handler: 'reportJobHandler' },
    { group_id: web, description: '预热商品缓存', author: '商城', schedule_type: 'FIX_RATE', schedule_conf: '300', handler: 'cacheJobHandler', route_strategy: 'ROUND' },
    { group_id: zhTeam, description: '轮换合作方 API 密钥', author: '安全组', schedule_type: 'CRON', schedule_conf: '0 0 9 ? * MON', time_zone: 'Asia/Shanghai', glue_type: 'GLUE_PYTHON', glue_source: 'print("rotated")' },
  ]) {
    const created = await pageApi(page, 'POST', '/api/v1/jobs', job);
    check(created.status === 201, `created "${job.description}"`);
    if (job.schedule_type !== 'FIX_RATE') await pageApi(page, 'POST', `/api/v1/jobs/${created.body.id}/start`);
  }
  await page.reload();
  await page.getByText('预热商品缓存').waitFor();
  await checkTranslated(page, lang, 'jobs overview', seen.missing);
  await shot(page, 'jobs-overview-zh-CN');

  // Select the two running jobs, stop them at once, start them again.
  const runningIds = (await pageApi(page, 'GET', '/api/v1/jobs')).body.items.filter((j) => j.enabled).map((j) => j.id);
  check(runningIds.length === 2, `zh-CN: two jobs run (${runningIds})`);
  for (const id of runningIds) await page.locator(`tr[data-job-id="${id}"] input[name=select]`).check();
  const bar = page.getByTestId('bulk-bar');
  check((await bar.innerText()).includes(msg(lang, 'jobs.bulk.selected.other', { n: 2 })), 'zh-CN: the bulk bar counts the selection');
  await checkTranslated(page, lang, 'bulk bar', seen.missing);
  await shot(page, 'jobs-bulk-zh-CN');
  await bar.getByRole('button', { name: msg(lang, 'jobs.stop'), exact: true }).click();
  await page.getByText(msg(lang, 'jobs.bulk.done.stop', { done: 2, total: 2 })).waitFor();
  const afterStop = (await pageApi(page, 'GET', '/api/v1/jobs')).body.items;
  check(afterStop.every((j) => !j.enabled), 'zh-CN: both stopped at once');
  check(await bar.count() === 0, 'zh-CN: the selection is cleared');
  await page.locator('input[name=select-all]').check();
  await bar.getByRole('button', { name: msg(lang, 'jobs.start'), exact: true }).click();
  await page.getByText(msg(lang, 'jobs.bulk.done.start', { done: 3, total: 3 })).waitFor();
  const restarted = (await pageApi(page, 'GET', '/api/v1/jobs')).body.items;
  check(restarted.every((j) => j.enabled), 'zh-CN: the whole page, selected with one box, started at once');
  for (const j of restarted.filter((x) => !runningIds.includes(x.id))) await pageApi(page, 'POST', `/api/v1/jobs/${j.id}/stop`);

  // Tag the two jobs from the bulk bar, then find them by the tag: in the filter, and by clicking a tag.
  await page.reload();
  for (const id of runningIds) await page.locator(`tr[data-job-id="${id}"] input[name=select]`).check();
  await bar.locator('input[name=bulk-tags]').fill('Team:Finance, nightly');
  await bar.getByRole('button', { name: msg(lang, 'jobs.bulk.tag'), exact: true }).click();
  await page.getByText(msg(lang, 'jobs.bulk.done.tag', { done: 2, total: 2 })).waitFor();
  const tagged = (await pageApi(page, 'GET', '/api/v1/jobs?tag=team:finance')).body.items.map((j) => j.id).sort();
  check(JSON.stringify(tagged) === JSON.stringify([...runningIds].sort()), `zh-CN: the two selected jobs are tagged team:finance, in lower case (${tagged})`);
  await page.locator(`tr[data-job-id="${runningIds[0]}"] .tags`).getByRole('button', { name: 'team:finance', exact: true }).waitFor();
  await checkTranslated(page, lang, 'tagged jobs', seen.missing);
  await page.locator('select[name=tag]').selectOption('nightly');
  await until('the table to show the tagged jobs only', async () => (await page.locator('tr[data-job-id]').count()) === 2);
  check(page.url().includes('tag=nightly'), `zh-CN: the tag filter is in the address (${page.url()})`);
  const optionText = await page.locator('select[name=tag] option[value=nightly]').innerText();
  check(optionText === msg(lang, 'jobs.tagOption', { tag: 'nightly', n: 2 }), `zh-CN: the tag list counts the jobs (${optionText})`);
  await shot(page, 'jobs-tag-filter-zh-CN');
  await page.locator('select[name=tag]').selectOption('');
  await until('every job to show again', async () => (await page.locator('tr[data-job-id]').count()) === 3);
  await page.locator(`tr[data-job-id="${runningIds[1]}"] .tags`).getByRole('button', { name: 'nightly', exact: true }).click();
  await until('a click on a tag to filter by it', async () => (await page.locator('tr[data-job-id]').count()) === 2 && page.url().includes('tag=nightly'));
  await page.goto(`${base}/#/jobs`);
  await page.reload();
  await page.setViewportSize({ width: 390, height: 844 });
  await shot(page, 'jobs-phone-zh-CN');
  await page.locator('.menu-toggle').click();
  await page.locator('nav.sidebar.open').waitFor();
  check(await page.getByTestId('menu-language').isVisible(), 'zh-CN at phone width: the language switch is in the menu');
  await shot(page, 'menu-phone-zh-CN');
  await page.setViewportSize({ width: 1280, height: 800 });

  // Alert channels: an e-mail channel with its own text, a test alarm that says why it was not sent (no SMTP
  // server here), and a job that names the channel in its form.
  await page.goto(`${base}/#/alerts`);
  await page.getByTestId('new-channel').click();
  const channelForm = page.getByTestId('channel-form');
  await channelForm.locator('input[name=channel_name]').fill('运维邮件');
  await channelForm.locator('select[name=kind]').selectOption('EMAIL');
  await channelForm.locator('input[name=target]').fill('ops@example.com');
  await channelForm.locator('textarea[name=body_template]').fill('任务 {{job_id}} 失败：{{handle_msg}}');
  await channelForm.locator('input[name=event-LOST]').uncheck();
  await channelForm.locator('input[name=threshold]').fill('3');
  await channelForm.locator('input[name=silence_s]').fill('600');
  await checkTranslated(page, lang, 'alert channel form', seen.missing);
  await shot(page, 'alert-channel-zh-CN');
  await page.getByTestId('save-channel').click();
  const channelRow = page.locator('[data-testid=channels-table] tbody tr', { hasText: '运维邮件' });
  await channelRow.waitFor();
  await channelRow.getByRole('button', { name: msg(lang, 'alerts.test'), exact: true }).click();
  await page.getByText('no SMTP server is configured', { exact: false }).waitFor();
  check(true, 'zh-CN: a test alarm through the e-mail channel says why it was not sent');
  await checkTranslated(page, lang, 'alert channels', seen.missing);
  const savedChannel = (await pageApi(page, 'GET', '/api/v1/alert-channels')).body.items.find((c) => c.name === '运维邮件');
  check(JSON.stringify(savedChannel.events) === '["FAILED","TIMEOUT","MISFIRE","RECOVERED"]' && savedChannel.threshold === 3 && savedChannel.silence_s === 600,
    `zh-CN: the channel's rule is saved (${JSON.stringify(savedChannel)})`);
  const channelId = savedChannel.id;
  // A fresh load of the job's page, as elsewhere here after a change of page within the document.
  await page.goto(`${base}/#/jobs/${runningIds[0]}`);
  await page.reload();
  const editForm = page.locator('[data-testid=job-form]');
  await editForm.waitFor();
  await editForm.locator(`select[name=alert_channel_ids] option[value="${channelId}"]`).waitFor({ state: 'attached' });
  await editForm.locator('select[name=alert_channel_ids]').selectOption(String(channelId));
  await page.locator('[data-testid=save-job]').click();
  await until('the job to name the channel', async () =>
    JSON.stringify((await pageApi(page, 'GET', `/api/v1/jobs/${runningIds[0]}`)).body.alert_channel_ids) === JSON.stringify([channelId]));
  check(true, 'zh-CN: the job form names the alert channel');

  // Calendars: England and Wales' bank holidays imported from an .ics file, with a shutdown day typed in (the
  // next weekday in London, so the preview meets it whatever today is); a new job keeps the calendar, and
  // its preview leaves the shutdown day out and lists it as skipped.
  const londonDay = (ms) => new Intl.DateTimeFormat('en-CA', { timeZone: 'Europe/London' }).format(new Date(ms));
  let shutdown = Date.now() + 86_400_000;
  while (['Sat', 'Sun'].includes(new Intl.DateTimeFormat('en-GB', { timeZone: 'Europe/London', weekday: 'short' }).format(new Date(shutdown)))) shutdown += 86_400_000;
  const shutdownDay = londonDay(shutdown);
  await page.goto(`${base}/#/calendars`);
  await page.getByTestId('new-calendar').click();
  const calendarForm = page.getByTestId('calendar-form');
  await calendarForm.locator('input[name=calendar_name]').fill('英国工作日');
  await calendarForm.locator('select[name=calendar_kind]').selectOption('BUSINESS_DAYS');
  await calendarForm.locator('input[name=calendar_zone]').fill('Europe/London');
  await calendarForm.locator('textarea[name=days]').fill(`${shutdownDay} 机房停电`);
  await calendarForm.locator('input[name=ics]').setInputFiles(path.join(here, '..', 'fixtures', 'calendars', 'gb-england-and-wales-2026-2027.ics'));
  await calendarForm.getByText('gb-england-and-wales-2026-2027.ics', { exact: false }).waitFor();
  await checkTranslated(page, lang, 'calendar form', seen.missing);
  await shot(page, 'calendar-zh-CN');
  await page.getByTestId('save-calendar').click();
  const calendarRow = page.locator('[data-testid=calendars-table] tbody tr', { hasText: '英国工作日' });
  await calendarRow.waitFor();
  const savedCalendar = (await pageApi(page, 'GET', '/api/v1/calendars')).body.items.find((c) => c.name === '英国工作日');
  const christmas = savedCalendar.days.find((d) => d.date === '2026-12-25');
  check(savedCalendar.kind === 'BUSINESS_DAYS' && savedCalendar.time_zone === 'Europe/London' && christmas && christmas.name === 'Christmas Day'
    && savedCalendar.days.some((d) => d.date === shutdownDay && d.name.includes('机房停电')),
  `zh-CN: the calendar holds the .ics file's holidays and the typed day (${savedCalendar.days.length} days)`);
  await checkTranslated(page, lang, 'calendars', seen.missing);
  await shot(page, 'calendars-zh-CN');
  await page.goto(`${base}/#/jobs/new`);
  await page.reload();
  const calendarJob = page.locator('[data-testid=job-form]');
  await calendarJob.waitFor();
  await calendarJob.locator('input[name=description]').fill('伦敦工作日报表');
  await calendarJob.locator('input[name=handler]').fill('noopJobHandler');
  await calendarJob.locator('input[name=schedule_conf]').fill('0 0 9 * * ?');
  await calendarJob.locator('input[name=time_zone]').fill('Europe/London');
  await calendarJob.locator(`select[name=calendar_ids] option[value="${savedCalendar.id}"]`).waitFor({ state: 'attached' });
  await calendarJob.locator('select[name=calendar_ids]').selectOption(String(savedCalendar.id));
  const skipped = page.getByTestId('preview-excluded');
  await until('the preview to skip the shutdown day', async () => (await skipped.count()) > 0 && (await skipped.innerText()).includes(`${shutdownDay} 机房停电`), 15_000);
  const previewFires = await page.locator('[data-testid=schedule-preview] ol li').allInnerTexts();
  check(previewFires.length === 5 && !previewFires.some((f) => f.startsWith(shutdownDay)),
    `zh-CN: the preview leaves out ${shutdownDay} (${previewFires.join(', ')})`);
  // No overlap across the cluster: FORBID hides the maximum (it is one).
  check(await calendarJob.locator('input[name=max_concurrent]').isVisible(), 'zh-CN: ALLOW shows the maximum of concurrent fires');
  await calendarJob.locator('select[name=concurrency_policy]').selectOption('FORBID');
  await calendarJob.locator('input[name=max_concurrent]').waitFor({ state: 'detached' });
  check((await calendarJob.locator('select[name=concurrency_policy] option[value=FORBID]').innerText()).includes(msg(lang, 'enum.concurrency.FORBID')),
    `zh-CN: FORBID is shown as "${msg(lang, 'enum.concurrency.FORBID')}"`);
  await checkTranslated(page, lang, 'job form with a calendar', seen.missing);
  await shot(page, 'job-calendar-zh-CN');
  await page.locator('[data-testid=save-job]').click();
  await page.waitForURL(/#\/jobs\/\d+$/);
  const calendarJobId = Number(page.url().match(/#\/jobs\/(\d+)$/)[1]);
  check(JSON.stringify((await pageApi(page, 'GET', `/api/v1/jobs/${calendarJobId}`)).body.calendar_ids) === JSON.stringify([savedCalendar.id]),
    'zh-CN: the job keeps the calendar');
  check((await pageApi(page, 'GET', `/api/v1/jobs/${calendarJobId}`)).body.concurrency_policy === 'FORBID', 'zh-CN: the job forbids overlap');

  // The calendars page changes and deletes (the pages of one kind of object share components.js's
  // ResourcePage): the calendar the job keeps is not deleted, the server's reason shown; its description is
  // changed in its form; a calendar made for the purpose is deleted (Delete asks once more, in place).
  await page.goto(`${base}/#/calendars`);
  await page.reload();
  const keptRow = page.locator('[data-testid=calendars-table] tbody tr', { hasText: '英国工作日' });
  const deleteButton = (row) => row.getByRole('button', { name: msg(lang, 'common.delete'), exact: true });
  await deleteButton(keptRow).click();
  await keptRow.getByRole('button', { name: msg(lang, 'common.deleteConfirm'), exact: true }).click();
  await page.getByTestId('error-banner').waitFor();
  const refusal = await page.getByTestId('error-banner').innerText();
  check(refusal.includes(msg(lang, 'error.kind.conflict')) && refusal.includes('is kept by job(s)') && (await keptRow.count()) === 1,
    `zh-CN: a calendar a job keeps is not deleted, and the banner says why (${refusal.replace(/\s+/g, ' ')})`);
  await keptRow.getByRole('button', { name: msg(lang, 'common.edit'), exact: true }).click();
  const editCalendar = page.getByTestId('calendar-form');
  check((await editCalendar.locator('h2').innerText()) === msg(lang, 'calendars.edit', { name: '英国工作日' })
    && (await editCalendar.locator('input[name=calendar_zone]').inputValue()) === 'Europe/London',
  'zh-CN: Edit opens the calendar\'s form with its values');
  await editCalendar.locator('input[name=calendar_description]').fill('含机房停电日');
  await page.getByTestId('save-calendar').click();
  await keptRow.getByText('含机房停电日').waitFor();
  check((await page.getByRole('status').innerText()).includes(msg(lang, 'calendars.saved', { name: '英国工作日', n: savedCalendar.days.length }))
    && (await editCalendar.count()) === 0 && (await page.getByTestId('error-banner').count()) === 0,
  'zh-CN: the changed calendar is saved: its description in its row, the notice says so, the form and the old error gone');
  await page.getByTestId('new-calendar').click();
  await editCalendar.locator('input[name=calendar_name]').fill('临时日历');
  await editCalendar.locator('textarea[name=days]').fill('2027-01-04');
  await page.getByTestId('save-calendar').click();
  const spareRow = page.locator('[data-testid=calendars-table] tbody tr', { hasText: '临时日历' });
  await spareRow.waitFor();
  await deleteButton(spareRow).click();
  await spareRow.getByRole('button', { name: msg(lang, 'common.deleteConfirm'), exact: true }).click();
  await spareRow.waitFor({ state: 'detached' });
  check((await page.getByRole('status').innerText()).includes(msg(lang, 'calendars.deleted', { name: '临时日历' })),
    'zh-CN: a calendar no job keeps is deleted, and the notice says so');

  // The admin's other pages, and the account page's own check (two different new passwords).
  for (const [route, name, ready, skip] of [
    ['/users', 'users-zh-CN', '[data-testid=users-table]'],
    ['/tokens', 'tokens-zh-CN', 'input[name=token_name]'],
    ['/audit', 'audit-zh-CN', '[data-testid=audit-table]', '[data-testid=audit-table] tbody'],
    // `cronwheel login`'s link (not approved here: no client listens).
    [`/cli-login?port=54321&state=zh-CN.screenshot&code_challenge=${'x'.repeat(43)}&name=cli%40build-host&scope=write&expires_in_days=30`,
      'cli-login-zh-CN', '[data-testid=cli-login-request]'],
    ['/account', 'account-zh-CN', 'input[name=old_password]'],
  ]) {
    await page.goto(`${base}/#${route}`);
    await page.locator(ready).waitFor();
    await checkTranslated(page, lang, name.replace('-zh-CN', ''), seen.missing, skip);
    await shot(page, name);
  }
  await page.locator('input[name=old_password]').fill(adminPassword);
  await page.locator('input[name=new_password]').fill('a-new-password-1');
  await page.locator('input[name=again]').fill('a-new-password-2');
  await page.getByRole('button', { name: msg(lang, 'account.change') }).click();
  await page.getByText(msg(lang, 'account.differ')).waitFor();
  check(true, `zh-CN: two different new passwords are refused with "${msg(lang, 'account.differ')}"`);

  await workflowFlow(page, base, lang, seen, '菱形工作流', '-zh-CN');

  // The language switch: applied without a reload, remembered after one, and back.
  await page.goto(`${base}/#/jobs`);
  await page.getByTestId('jobs-table').waitFor();
  await page.evaluate(() => {
    window.cronwheelTestMarker = 1;
  });
  await page.getByTestId('language').selectOption('en');
  await page.locator('nav a', { hasText: msg('en', 'nav.jobs') }).waitFor();
  check((await page.evaluate(() => [document.documentElement.lang, window.cronwheelTestMarker])).join() === 'en,1',
    'the switch to English changes the page in place (<html lang="en">, no reload)');
  check((await page.locator('h1').innerText()) === msg('en', 'jobs.title'), `the page's heading follows the switch (${msg('en', 'jobs.title')})`);
  await page.reload();
  await page.locator('nav a', { hasText: msg('en', 'nav.jobs') }).waitFor();
  check((await page.evaluate(() => document.documentElement.lang)) === 'en', 'English is remembered after a reload (the browser says zh-CN)');
  await checkTranslated(page, 'en', 'jobs after the switch', seen.missing);
  await page.getByTestId('language').selectOption('zh-CN');
  await page.locator('nav a', { hasText: msg(lang, 'nav.jobs') }).waitFor();
  await page.reload();
  await page.locator('nav a', { hasText: msg(lang, 'nav.jobs') }).waitFor();
  check((await page.evaluate(() => document.documentElement.lang)) === 'zh-CN', 'switched back to 简体中文, remembered after a reload');

  check(seen.dialogs.length === 0, `zh-CN: no dialog was opened (${JSON.stringify(seen.dialogs)})`);
  check(seen.errors.length === 0, `zh-CN: no script error on the pages (${JSON.stringify(seen.errors)})`);
}

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
  const sso = await startOidcProvider(adminPort);

  startProcess('admin', adminBin, ['--mode', 'production', '--listen', `127.0.0.1:${adminPort}`, '--sso-config', sso.config], {
    CRONWHEEL_DSN: dsnFor(dbName),
    CRONWHEEL_ACCESS_TOKEN: token,
    CRONWHEEL_ADMIN_PASSWORD: adminPassword,
    CRONWHEEL_DB_POOL_SIZE: '8',
    CRONWHEEL_FAST_POOL_THREADS: '8',
    CRONWHEEL_SLOW_POOL_THREADS: '4',
    // The console from a folder (web_dir) instead of the copy in the binary: a change to web/ is tested
    // without a build. Unset (CI): the embedded copy.
    ...(process.env.CRONWHEEL_WEB_DIR ? { CRONWHEEL_WEB_DIR: path.resolve(process.env.CRONWHEEL_WEB_DIR) } : {}),
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

  for (const [locale, zone, run] of [
    ['en-US', 'America/New_York', () => englishScenario(browser, base, adminPassword, executorPort, sso)],
    ['zh-CN', 'Asia/Shanghai', () => chineseScenario(browser, base, adminPassword)],
  ]) {
    log(`--- the browser's language: ${locale}, time zone ${zone}`);
    browser = await launch(locale, zone);
    browser.setDefaultTimeout(15_000);
    recordApiCalls(browser);
    try {
      await run();
    } catch (e) {
      await Promise.race([showFailure(browser), sleep(10_000)]);
      throw e;
    } finally {
      await Promise.race([Promise.allSettled(apiCalls), sleep(10_000)]);
      await browser.close().catch(() => {});
      browser = null;
    }
  }
  await checkApiCalls();
}

const deadline = setTimeout(() => {
  log(`FAIL global deadline of ${DEADLINE_MS / 1000} s passed`);
  checks.failed += 1;
  finish(1);
}, DEADLINE_MS);

// What the browser showed when the run failed: its address, the page's text, and a screenshot (FAILURE.png),
// so a CI log says where it stopped.
async function showFailure(context) {
  for (const page of context.pages()) {
    try {
      const text = (await page.locator('body').innerText({ timeout: 2000 })).replace(/\s+/g, ' ').slice(0, 1500);
      log(`the page at the failure: ${page.url()}\n${text}`);
      const pending = [...(inFlight.get(page) || new Map()).entries()].map(([r, at]) => `${r.method()} ${r.url()} (${Date.now() - at} ms)`);
      log(`requests not answered: ${pending.length ? pending.join(', ') : 'none'}`);
      log(`requests failed in the run (last 10): ${failedRequests.slice(-10).join('; ') || 'none'}`);
      const activity = execFileSync('psql', [serverDsn, '-qAt', '-c',
        `SELECT pid, state, coalesce(wait_event_type, '-'), coalesce(wait_event, '-'), now() - xact_start, left(query, 160)
           FROM pg_stat_activity WHERE datname = '${dbName}' AND pid <> pg_backend_pid()`],
      { stdio: ['ignore', 'pipe', 'pipe'], timeout: 10_000 }).toString();
      log(`the admin's database sessions:\n${activity}`);
      // The newest fires and where each stands, with the open fires' owner: a node that stays RUNNING is told
      // apart from a fire never sent, one sent and not called back, and one called back but not applied.
      const fires = execFileSync('psql', [dsnFor(dbName), '-qAt', '-c',
        `SELECT l.id, l.job_id, l.status, l.trigger_code, l.trigger_ms, l.handle_code, l.handle_ms, l.executor_address,
                left(l.trigger_msg, 200), o.owner_node, o.dispatch_ms, o.trigger_ms
           FROM job_log l LEFT JOIN fire_open o ON o.log_id = l.id ORDER BY l.id DESC LIMIT 6`],
      { stdio: ['ignore', 'pipe', 'pipe'], timeout: 10_000 }).toString();
      log(`the newest fires (id|job|status|trigger code|trigger ms|handle code|handle ms|executor|trigger msg|open: owner|dispatch ms|trigger ms):\n${fires}`);
      await page.screenshot({ path: path.join(shots, 'FAILURE.png'), fullPage: true, timeout: 5000 });
    } catch (e) {
      log(`the page at the failure could not be read: ${e.message}`);
    }
  }
}

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
    for (const name of ['admin', 'executor', 'oidc-provider']) {
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

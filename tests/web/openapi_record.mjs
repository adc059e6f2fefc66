// Keeps what the browser scenario sent and got as examples for the unit test of web/openapi.json
// (tests/web/unit/openapi.test.mjs): `node tests/web/openapi_record.mjs CALLS.json` reads the calls that
// console.test.mjs wrote to CRONWHEEL_WEB_API_CALLS and writes tests/web/unit/openapi_recorded.json: per
// operation ("POST /api/v1/calendars"), the request bodies the server took (one per set of fields, at most
// three) and one answer per status. Secrets are replaced by as many x's, long texts cut and lists shortened,
// so that the file stays small and holds nothing that was live; run it again after the API changes.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadDocument, openApiValidator } from './openapi.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const OUT = path.join(here, 'unit', 'openapi_recorded.json');
const SECRET = new Set(['password', 'old_password', 'new_password', 'token', 'csrf_token', 'access_token', 'secret',
  'code_verifier', 'redirect']);
const MAX_TEXT = 600;
const MAX_ITEMS = 2;

function tidy(value, key = '') {
  if (Array.isArray(value)) return value.slice(0, MAX_ITEMS).map((v) => tidy(v));
  if (value && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, tidy(v, k)]));
  if (typeof value !== 'string') return value;
  if (SECRET.has(key) && value !== '') return value.startsWith('cwt_') ? `cwt_${'x'.repeat(value.length - 4)}` : 'x'.repeat(value.length);
  return value.length > MAX_TEXT ? value.slice(0, MAX_TEXT) : value;
}

const file = process.argv[2];
if (!file) {
  console.error('usage: node tests/web/openapi_record.mjs CALLS.json (written by console.test.mjs with CRONWHEEL_WEB_API_CALLS)');
  process.exit(2);
}
const calls = JSON.parse(fs.readFileSync(file, 'utf8'));
const v = openApiValidator(loadDocument());
/** @type {Record<string, { requests: unknown[], answers: Record<string, unknown> }>} */
const out = {};
const shapes = new Map();
for (const c of calls) {
  const op = v.operation(c.method, c.pathname);
  if (!op) continue;
  const name = `${c.method} ${op.template}`;
  const entry = (out[name] ||= { requests: [], answers: {} });
  if (c.status >= 200 && c.status < 300 && c.sent !== undefined && op.op.requestBody) {
    const shape = Object.keys(c.sent).sort().join(',');
    const seen = shapes.get(name) || new Set();
    if (!seen.has(shape) && entry.requests.length < 3) {
      seen.add(shape);
      shapes.set(name, seen);
      entry.requests.push(tidy(c.sent));
    }
  }
  if (c.answer !== undefined && !(String(c.status) in entry.answers)) entry.answers[String(c.status)] = tidy(c.answer);
}
const sorted = Object.fromEntries(Object.entries(out).sort(([a], [b]) => a.localeCompare(b)));
fs.writeFileSync(OUT, `${JSON.stringify(sorted, null, 1)}\n`);
console.log(`${Object.keys(sorted).length} operations written to ${path.relative(process.cwd(), OUT)}`);

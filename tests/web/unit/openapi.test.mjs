// Unit tests of web/openapi.json (node:test, no server, run by ctest web_unit): its schemas compile under
// Ajv (tests/web/openapi.mjs); every operation that takes a JSON body has an example the schema takes; the
// request bodies and answers the browser scenario recorded (openapi_recorded.json, written by
// tests/web/openapi_record.mjs) are valid, the answers naming no field the document does not; and the
// console's types (web/js/types.js) have the fields of the schemas they are written from, a field the
// console takes as always sent being required there. Ajv and TypeScript come from tests/web/node_modules
// (scripts/setup --web): without them these tests are skipped, saying so.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import { loadAjv, loadDocument, openApiValidator } from '../openapi.mjs';

const require = createRequire(import.meta.url);
const { why: noAjv } = loadAjv();
const doc = loadDocument();
const recorded = JSON.parse(fs.readFileSync(new URL('./openapi_recorded.json', import.meta.url), 'utf8'));
const open = noAjv ? null : openApiValidator(doc);
const closed = noAjv ? null : openApiValidator(doc, { closed: true });
const skip = noAjv || false;

test('every schema compiles, as written and closed (no field but those listed)', { skip }, () => {
  for (const v of [open, closed]) {
    for (const [name, schema] of Object.entries(doc.components.schemas)) assert.doesNotThrow(() => v.compile(schema), name);
    for (const { template, method, op } of v.operations()) {
      const media = [op.requestBody && op.requestBody.content, ...Object.values(op.responses).map((r) => r.content)];
      for (const content of media) {
        const schema = content && content['application/json'] && content['application/json'].schema;
        if (schema) assert.doesNotThrow(() => v.compile(schema), `${method} ${template}`);
      }
    }
  }
});

test('every operation that takes a JSON body has an example its schema takes', { skip }, () => {
  const problems = [];
  for (const { template, method, op } of closed.operations()) {
    const media = op.requestBody && op.requestBody.content['application/json'];
    if (!media) continue;
    if (media.example === undefined) {
      problems.push(`${method} ${template}: no example`);
      continue;
    }
    for (const e of closed.against(media.schema, media.example)) problems.push(`${method} ${template}: ${e}`);
  }
  assert.deepEqual(problems, []);
});

test('the request bodies the browser scenario sent, and the server took, are valid', { skip }, () => {
  const problems = [];
  let n = 0;
  for (const [name, { requests }] of Object.entries(recorded)) {
    const [method, template] = name.split(' ');
    for (const body of requests) {
      n += 1;
      for (const e of closed.request(method, template, body) || []) problems.push(`${name}: ${e}`);
    }
  }
  assert.ok(n >= 20, `only ${n} recorded request bodies`);
  assert.deepEqual(problems, []);
});

test('the answers the browser scenario got are valid and name no field the document does not', { skip }, () => {
  const problems = [];
  for (const [name, { answers }] of Object.entries(recorded)) {
    const [method, template] = name.split(' ');
    for (const [status, body] of Object.entries(answers)) {
      for (const e of closed.response(method, template, Number(status), body)) problems.push(`${name} ${status}: ${e}`);
    }
  }
  assert.deepEqual(problems, []);
});

test('the checks refuse what the schemas refuse', { skip }, () => {
  const calendar = { name: 'holidays', days: ['2026-12-25'] };
  assert.deepEqual(closed.request('POST', '/api/v1/calendars', calendar), []);
  assert.match(closed.request('POST', '/api/v1/calendars', { ...calendar, colour: 'red' }).join(), /additional properties 'colour'/);
  assert.match(closed.request('POST', '/api/v1/calendars', { ...calendar, days: ['25.12.2026'] }).join(), /format "date"/);
  assert.match(closed.request('POST', '/api/v1/tokens', { scope: 'read' }).join(), /required property 'name'/);
  assert.match(closed.response('GET', '/api/v1/calendars/7', 200, { id: 7 }).join(), /required property 'name'/);
  assert.match(closed.response('GET', '/api/v1/calendars/7', 418, {}).join(), /status 418 is not documented/);
  assert.match(closed.request('GET', '/api/v1/nowhere', {}).join(), /not in the document/);
  // An error answer: kind and field errors as the admin sends them; a field the document does not name fails.
  const error = { error: 'the job is not valid', code: 'invalid', errors: [{ field: 'handler', message: 'required', code: 'required', params: {} }] };
  assert.deepEqual(closed.response('POST', '/api/v1/jobs', 400, error), []);
  assert.match(closed.response('POST', '/api/v1/jobs', 400, { ...error, hint: 'x' }).join(), /additional properties 'hint'/);
  // The operation of a path: a literal segment before a parameter.
  assert.equal(closed.operation('POST', '/api/v1/jobs/bulk').template, '/api/v1/jobs/bulk');
  assert.equal(closed.operation('POST', '/api/v1/jobs/12/trigger').template, '/api/v1/jobs/{id}/trigger');
});

// --- web/js/types.js against the schemas -----------------------------------------------------------------
let ts = null;
try {
  ts = require('typescript');
} catch (e) {
  ts = null;
}
const TYPES = new URL('../../../web/js/types.js', import.meta.url).pathname;
// The typedefs written from a schema of another name, or from one inside another schema or an operation.
const schemaOf = {
  ErrorBody: ['components', 'schemas', 'Error'],
  OidcProvider: ['paths', '/api/v1/auth/providers', 'get', 'responses', '200', 'content', 'application/json', 'schema', 'properties', 'oidc', 'items'],
  Providers: ['paths', '/api/v1/auth/providers', 'get', 'responses', '200', 'content', 'application/json', 'schema'],
  DashboardDay: ['components', 'schemas', 'Dashboard', 'properties', 'days', 'items'],
  PreviewFire: ['components', 'schemas', 'Preview', 'properties', 'fires', 'items'],
  PreviewExcluded: ['components', 'schemas', 'Preview', 'properties', 'excluded', 'items'],
  Tag: ['paths', '/api/v1/tags', 'get', 'responses', '200', 'content', 'application/json', 'schema', 'properties', 'items', 'items'],
  BulkJobResult: ['components', 'schemas', 'BulkResult', 'properties', 'results', 'items'],
  WorkflowRunNode: ['components', 'schemas', 'WorkflowRun', 'properties', 'nodes', 'items'],
};
// Typedefs with no schema of their own: the generic lists, a bag of params, and a union of shapes.
const NO_SCHEMA = new Set(['List', 'Page', 'FieldErrorParams', 'LogArchive']);

// A schema's fields and those it requires (an allOf's merged).
function fieldsOf(schema) {
  const s = schema.$ref ? doc.components.schemas[schema.$ref.split('/').pop()] : schema;
  if (s.allOf) {
    const parts = s.allOf.map(fieldsOf);
    return { names: new Set(parts.flatMap((p) => [...p.names])), required: new Set(parts.flatMap((p) => [...p.required])) };
  }
  return { names: new Set(Object.keys(s.properties || {})), required: new Set(s.required || []) };
}

// Each object typedef of types.js: its fields, and which are optional.
function typedefs() {
  const program = ts.createProgram([TYPES], {
    allowJs: true, checkJs: true, noEmit: true, strict: true, target: ts.ScriptTarget.ES2022,
    module: ts.ModuleKind.ES2022, moduleResolution: ts.ModuleResolutionKind.Bundler, types: [],
  });
  const checker = program.getTypeChecker();
  const file = program.getSourceFile(TYPES);
  const out = new Map();
  for (const sym of checker.getExportsOfModule(checker.getSymbolAtLocation(file))) {
    const type = checker.getDeclaredTypeOfSymbol(sym);
    if (type.isUnion() || !(type.flags & ts.TypeFlags.Object || type.isIntersection())) continue; // the protocol's words, LogArchive
    const fields = checker.getPropertiesOfType(type);
    if (fields.length === 0) continue;
    out.set(sym.getName(), new Map(fields.map((p) => [p.getName(), (p.flags & ts.SymbolFlags.Optional) !== 0])));
  }
  return out;
}

test('types.js: each type has the fields of the schema it is written from, and what it takes as always sent is required there',
  { skip: noAjv || (ts ? false : 'typescript is not installed in tests/web/node_modules: run scripts/setup --web') }, () => {
    const problems = [];
    const found = typedefs();
    assert.ok(found.size >= 30, `only ${found.size} object types read from types.js`);
    let compared = 0;
    for (const [name, fields] of found) {
      const at = schemaOf[name] || (doc.components.schemas[name] ? ['components', 'schemas', name] : null);
      if (!at) {
        if (!NO_SCHEMA.has(name)) problems.push(`${name}: no schema of that name (name it in schemaOf or NO_SCHEMA)`);
        continue;
      }
      compared += 1;
      const schema = at.reduce((o, k) => o && o[k], doc);
      assert.ok(schema, `${name}: ${at.join('.')} is not in the document`);
      const { names, required } = fieldsOf(schema);
      for (const f of fields.keys()) if (!names.has(f) && f !== '__index') problems.push(`${name}.${f}: not in the schema`);
      for (const f of names) if (!fields.has(f)) problems.push(`${name}.${f}: in the schema, not in types.js`);
      for (const [f, optional] of fields) if (!optional && names.has(f) && !required.has(f)) problems.push(`${name}.${f}: required in types.js, optional in the schema`);
    }
    assert.ok(compared >= 25, `only ${compared} types compared`);
    assert.deepEqual(problems, []);
  });

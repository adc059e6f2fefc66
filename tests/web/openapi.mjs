// web/openapi.json as a validator of requests and answers, for the tests (tests/web/unit/openapi.test.mjs and
// the browser scenario, console.test.mjs). Ajv (tests/web/node_modules, scripts/setup --web) checks JSON
// against the document's schemas: OpenAPI 3.0's dialect of JSON Schema, read as Ajv's draft 7 with
// `nullable` (which Ajv knows), `example` and the x-cronwheel-* keywords taken as notes, and the formats the
// document uses (date, uri; int64 and password are notes).
//
// `closed` (the answers' check): an object schema that lists its properties and says nothing of others takes
// no others, so that a field the server sends and the document does not name fails. An allOf of object
// schemas is merged first (one object with all their properties), so that closing each part does not refuse
// the others' fields.
import fs from 'node:fs';
import path from 'node:path';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const require = createRequire(import.meta.url);
export const DOCUMENT = path.join(here, '../../web/openapi.json');

/** @returns {any} web/openapi.json */
export function loadDocument(file = DOCUMENT) {
  return JSON.parse(fs.readFileSync(file, 'utf8'));
}

// Ajv, or null with the reason when tests/web/node_modules does not have it.
export function loadAjv() {
  try {
    return { Ajv: require('ajv').default, why: '' };
  } catch (e) {
    return { Ajv: null, why: `ajv is not installed in tests/web/node_modules (${e.code}): run scripts/setup --web` };
  }
}

const REF = '#/components/schemas/';
const METHODS = ['get', 'put', 'post', 'delete', 'patch'];

// Every x-* keyword used anywhere in the document.
function extensionKeywords(doc) {
  const found = new Set();
  const walk = (v) => {
    if (Array.isArray(v)) v.forEach(walk);
    else if (v && typeof v === 'object') {
      for (const [k, x] of Object.entries(v)) {
        if (k.startsWith('x-')) found.add(k);
        walk(x);
      }
    }
  };
  walk(doc);
  return [...found];
}

/**
 * A schema of the document as Ajv reads it: references to components.schemas as "<Name>.json" (each component
 * added under that id), `nullable` with an enum also allowing null in the enum, allOf of objects merged and,
 * `closed`, objects closed.
 */
function normalize(schema, doc, closed) {
  const resolve = (s) => (s && s.$ref && s.$ref.startsWith(REF) ? doc.components.schemas[s.$ref.slice(REF.length)] : s);
  const walk = (s) => {
    if (Array.isArray(s)) return s.map(walk);
    if (!s || typeof s !== 'object') return s;
    if (s.$ref && s.$ref.startsWith(REF)) return { ...s, $ref: `${s.$ref.slice(REF.length)}.json` };
    let out = {};
    for (const [k, v] of Object.entries(s)) {
      out[k] = k === 'properties' ? Object.fromEntries(Object.entries(v).map(([p, ps]) => [p, walk(ps)])) : walk(v);
    }
    if (closed && Array.isArray(s.allOf) && s.allOf.map(resolve).every((p) => p && p.type === 'object' && !p.allOf)) {
      const parts = s.allOf.map(resolve).map(walk);
      const { allOf: _, ...rest } = out;
      out = {
        ...rest,
        type: 'object',
        properties: Object.assign({}, ...parts.map((p) => p.properties || {})),
        required: [...new Set(parts.flatMap((p) => p.required || []))],
      };
    }
    if (out.nullable && Array.isArray(out.enum) && !out.enum.includes(null)) out.enum = [...out.enum, null];
    if (closed && out.type === 'object' && out.properties && out.additionalProperties === undefined) {
      out.additionalProperties = false;
    }
    return out;
  };
  return walk(schema);
}

/**
 * A validator of `doc` (web/openapi.json): requests and answers by method and path, and schemas by name.
 * Each check returns a list of errors, [] when the value is valid.
 * @param {any} doc
 * @param {{ closed?: boolean }} [options]
 */
export function openApiValidator(doc, { closed = false } = {}) {
  const { Ajv, why } = loadAjv();
  if (!Ajv) throw new Error(why);
  const ajv = new Ajv({ allErrors: true, strict: true, strictRequired: false, allowUnionTypes: true });
  for (const k of ['example', ...extensionKeywords(doc)]) ajv.addKeyword(k);
  ajv.addFormat('date', /^\d{4}-\d{2}-\d{2}$/);
  ajv.addFormat('uri', (s) => URL.canParse(s));
  ajv.addFormat('int64', { type: 'number', validate: (n) => Number.isInteger(n) });
  ajv.addFormat('password', true);
  for (const [name, schema] of Object.entries(doc.components.schemas)) {
    ajv.addSchema({ ...normalize(schema, doc, closed), $id: `${name}.json` });
  }
  const compiled = new Map();
  const compile = (schema) => {
    if (!compiled.has(schema)) compiled.set(schema, ajv.compile(normalize(schema, doc, closed)));
    return compiled.get(schema);
  };
  const run = (schema, value) => {
    const v = compile(schema);
    if (v(value)) return [];
    return v.errors.map((e) => `${e.instancePath || '(body)'} ${e.message}${e.params && e.params.additionalProperty ? ` '${e.params.additionalProperty}'` : ''}${e.params && e.params.allowedValues ? ` ${JSON.stringify(e.params.allowedValues)}` : ''}`);
  };
  // Templates with fewer parameters first, so that /jobs/bulk is not taken for /jobs/{id}.
  const templates = Object.keys(doc.paths)
    .map((t) => ({ t, params: (t.match(/\{/g) || []).length, re: new RegExp(`^${t.replace(/\{[^}]+\}/g, '[^/]+')}$`) }))
    .sort((a, b) => a.params - b.params);
  /** The operation of `method` on `pathname` (no query), or null. */
  const operation = (method, pathname) => {
    const m = method.toLowerCase();
    for (const { t, re } of templates) {
      if (re.test(pathname) && doc.paths[t][m]) return { template: t, method: m, op: doc.paths[t][m] };
    }
    return null;
  };
  const jsonSchema = (content) => content && content['application/json'] && content['application/json'].schema;
  return {
    ajv,
    operation,
    /** Every operation: [{ template, method, op }]. */
    operations: () => Object.entries(doc.paths).flatMap(([t, ops]) =>
      Object.entries(ops).filter(([m]) => METHODS.includes(m)).map(([m, op]) => ({ template: t, method: m, op }))),
    /** The errors of `value` against components.schemas[name]. */
    schema: (name, value) => run(doc.components.schemas[name], value),
    /** The errors of `value` against a schema of the document (as it is written there). */
    against: (schema, value) => run(schema, value),
    compile,
    /** A request body: errors, or null when the operation is not documented or takes no JSON body. */
    request(method, pathname, body) {
      const found = operation(method, pathname);
      if (!found) return [`${method} ${pathname} is not in the document`];
      const schema = found.op.requestBody && jsonSchema(found.op.requestBody.content);
      if (!schema) return null;
      return run(schema, body);
    },
    /** An answer: errors, [] when valid; a status the operation does not list is an error. */
    response(method, pathname, status, body) {
      const found = operation(method, pathname);
      if (!found) return [`${method} ${pathname} is not in the document`];
      const r = found.op.responses[String(status)] || found.op.responses[`${String(status)[0]}XX`] || found.op.responses.default;
      if (!r) return [`status ${status} is not documented (${Object.keys(found.op.responses).join(', ')})`];
      const schema = jsonSchema(r.content);
      if (!schema) return [];
      return run(schema, body);
    },
  };
}

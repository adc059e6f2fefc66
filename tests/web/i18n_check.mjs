// Unit check of the console's messages (ctest label `unit`, no browser, no server):
//   1. web/i18n/*.json have exactly the same keys, each a non-empty string, the same {placeholders} per key,
//      and every plural key ("<key>.one") its "<key>.other";
//   2. every message key the components name literally (t('...'), tOr, has) exists, and every key built from
//      a template (t(`enum.route.${v}`)) has a known prefix;
//   3. no component holds user-visible English of its own: the static text of html`` templates (text
//      between tags and the values of attributes a person sees: label, hint, placeholder, title, aria-label,
//      data-label, ...) has no letters outside ${...}, and no plain string literal reads like a sentence.
// The scanner checks itself first on a few bad and good snippets (so it cannot pass by seeing nothing).
// Prints "N passed, N failed".
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const webJs = path.join(root, 'web/js');
const i18nDir = path.join(root, 'web/i18n');
const checks = { passed: 0, failed: 0 };

function check(ok, what, details = []) {
  if (ok) {
    checks.passed += 1;
    console.log(`ok   ${what}`);
  } else {
    checks.failed += 1;
    console.log(`FAIL ${what}`);
    for (const d of details.slice(0, 40)) console.log(`       ${d}`);
    if (details.length > 40) console.log(`       … and ${details.length - 40} more`);
  }
}

// --- 1. the message files -------------------------------------------------------------------------------
const placeholders = (text) => [...text.matchAll(/\{(\w+)\}/g)].map((m) => m[1]).sort();
const files = fs.readdirSync(i18nDir).filter((f) => f.endsWith('.json')).sort();
const messages = Object.fromEntries(files.map((f) => [f.replace(/\.json$/, ''), JSON.parse(fs.readFileSync(path.join(i18nDir, f), 'utf8'))]));
check(files.includes('en.json') && files.includes('zh-CN.json'), `the languages are en and zh-CN (${files.join(', ')})`);
const en = messages.en || {};
for (const [lang, m] of Object.entries(messages)) {
  const bad = Object.entries(m).filter(([, v]) => typeof v !== 'string' || v.trim() === '').map(([k]) => k);
  check(bad.length === 0, `${lang}: every message is a non-empty string`, bad);
  if (lang === 'en') continue;
  const missing = Object.keys(en).filter((k) => !(k in m));
  const extra = Object.keys(m).filter((k) => !(k in en));
  check(missing.length === 0 && extra.length === 0, `${lang} has exactly the keys of en (${Object.keys(m).length})`, [
    ...missing.map((k) => `missing: ${k}`),
    ...extra.map((k) => `not in en: ${k}`),
  ]);
  const differ = Object.keys(en)
    .filter((k) => typeof m[k] === 'string' && placeholders(en[k]).join() !== placeholders(m[k]).join())
    .map((k) => `${k}: en {${placeholders(en[k]).join('}{')}} vs ${lang} {${placeholders(m[k]).join('}{')}}`);
  check(differ.length === 0, `${lang} has the same {placeholders} as en in every message`, differ);
}
const orphanPlurals = Object.keys(en).filter((k) => k.endsWith('.one') && !(`${k.slice(0, -4)}.other` in en));
check(orphanPlurals.length === 0, 'every plural message has its .other form', orphanPlurals);

// --- a small JavaScript scanner: string literals, templates (tagged or not) and their ${...} -------------
// Good enough for the console's own modules (no JSX; regex literals recognised by what precedes them).
function scanJs(src) {
  const out = []; // { kind: 'string' | 'template', tag, parts: [static text], line, exprs: [source] }
  let i = 0;
  const lineAt = (pos) => src.slice(0, pos).split('\n').length;
  // Messages for the developer's console (console.warn(...)) are not shown to users.
  const forConsole = (pos) => /console\.\w+\(\s*$/.test(src.slice(Math.max(0, pos - 40), pos));
  const regexCanStart = (pos) => {
    let j = pos - 1;
    while (j >= 0 && /\s/.test(src[j])) j -= 1;
    if (j < 0) return true;
    if ('(,=:[!&|?{};+-*%<>~^'.includes(src[j])) return true;
    const word = src.slice(0, j + 1).match(/[A-Za-z_$][\w$]*$/);
    return Boolean(word && ['return', 'typeof', 'case', 'in', 'of', 'delete', 'void', 'throw', 'new'].includes(word[0]));
  };
  function skipString(q) {
    const start = i;
    let value = '';
    i += 1;
    while (i < src.length && src[i] !== q) {
      if (src[i] === '\\') {
        value += src[i + 1];
        i += 2;
      } else {
        value += src[i];
        i += 1;
      }
    }
    i += 1;
    out.push({ kind: 'string', value, line: lineAt(start), console: forConsole(start) });
  }
  function skipRegex() {
    i += 1;
    let inClass = false;
    while (i < src.length) {
      const c = src[i];
      if (c === '\\') i += 2;
      else {
        if (c === '[') inClass = true;
        else if (c === ']') inClass = false;
        else if (c === '/' && !inClass) break;
        i += 1;
      }
    }
    i += 1;
    while (/[a-z]/.test(src[i] || '')) i += 1;
  }
  // Scans code until an unmatched '}' (inside ${...}) or the end; returns the code's text.
  function code(stopAtBrace) {
    const start = i;
    let depth = 0;
    while (i < src.length) {
      const c = src[i];
      const n = src[i + 1];
      if (c === '/' && n === '/') {
        while (i < src.length && src[i] !== '\n') i += 1;
      } else if (c === '/' && n === '*') {
        i = src.indexOf('*/', i + 2) + 2;
      } else if (c === '"' || c === "'") {
        skipString(c);
      } else if (c === '`') {
        const tag = (src.slice(0, i).match(/([A-Za-z_$][\w$]*)\s*$/) || [])[1] || '';
        template(tag);
      } else if (c === '/' && regexCanStart(i)) {
        skipRegex();
      } else if (c === '{') {
        depth += 1;
        i += 1;
      } else if (c === '}') {
        if (depth === 0 && stopAtBrace) return src.slice(start, i);
        depth -= 1;
        i += 1;
      } else {
        i += 1;
      }
    }
    return src.slice(start, i);
  }
  function template(tag) {
    const start = i;
    const parts = [];
    const exprs = [];
    let text = '';
    i += 1;
    while (i < src.length && src[i] !== '`') {
      if (src[i] === '\\') {
        text += src[i + 1];
        i += 2;
      } else if (src[i] === '$' && src[i + 1] === '{') {
        parts.push(text);
        text = '';
        i += 2;
        exprs.push(code(true));
        i += 1; // the closing '}'
      } else {
        text += src[i];
        i += 1;
      }
    }
    parts.push(text);
    i += 1;
    out.push({ kind: 'template', tag, parts, exprs, line: lineAt(start), console: forConsole(start) });
  }
  code(false);
  return out;
}

// --- the html`` rule ---------------------------------------------------------------------------------------
const HOLE = '\u0000';
// Attributes no person reads (data-label is read: the phone layout shows it before each value).
const INVISIBLE_ATTRS = new Set([
  'class', 'id', 'name', 'type', 'href', 'src', 'rel', 'role', 'key', 'for', 'list', 'ref', 'lang', 'autocomplete',
  'spellcheck', 'size', 'rows', 'cols', 'min', 'max', 'maxlength', 'step', 'colspan', 'rowspan', 'required',
  'disabled', 'multiple', 'checked', 'selected', 'wide', 'cls', 'kind', 'testid', 'saveTestid', 'aria-modal',
  'aria-expanded', 'aria-hidden', 'aria-live', 'inputmode', 'method', 'target',
]);
const invisible = (name) => INVISIBLE_ATTRS.has(name) || (name.startsWith('data-') && name !== 'data-label');
// Words that are the same in every language.
const TEXT_ALLOWED = new Set(['cronwheel']);
const hasLetters = (s) => /\p{L}/u.test(s);

// The problems in one html`` template's static text: [{ what, text }].
function htmlProblems(parts) {
  const s = parts.join(HOLE);
  const problems = [];
  let i = 0;
  let text = '';
  const flushText = () => {
    const visible = text.split(HOLE).join(' ').trim();
    const words = visible.split(/\s+/).filter((w) => hasLetters(w) && !TEXT_ALLOWED.has(w));
    if (words.length > 0) problems.push({ what: 'text', text: visible });
    text = '';
  };
  while (i < s.length) {
    if (s[i] !== '<') {
      text += s[i];
      i += 1;
      continue;
    }
    flushText();
    // A tag: <name attr="v" attr='v' attr=HOLE attr ...> or </...> or <!-- -->
    if (s.startsWith('<!--', i)) {
      i = s.indexOf('-->', i) + 3;
      continue;
    }
    i += 1;
    while (i < s.length && !/[\s>]/.test(s[i])) i += 1; // the tag's name (or a hole)
    while (i < s.length && s[i] !== '>') {
      if (/[\s/]/.test(s[i])) {
        i += 1;
        continue;
      }
      let name = '';
      while (i < s.length && !/[\s=>/]/.test(s[i])) name += s[i++];
      if (s[i] !== '=') continue;
      i += 1;
      let value = '';
      if (s[i] === '"' || s[i] === "'") {
        const q = s[i];
        const end = s.indexOf(q, i + 1);
        value = s.slice(i + 1, end);
        i = end + 1;
      } else {
        while (i < s.length && !/[\s>]/.test(s[i])) value += s[i++];
      }
      const shown = value.split(HOLE).join('');
      if (!name.startsWith('...') && !invisible(name) && hasLetters(shown)) problems.push({ what: `attribute ${name}`, text: value.split(HOLE).join('${…}') });
    }
    i += 1;
  }
  flushText();
  return problems;
}

// A plain string that reads like a sentence: two words or more with a capital letter or end punctuation.
// Lower-case word lists (class names like 'badge status-running') are not sentences.
const PROSE_ALLOWED = new Set([
  'Authorization: Bearer cwt_…', // an HTTP header shown as code on the tokens page
  'job, group, user, token, log', // the audit filter's example: the server's entity names
]);
function looksLikeProse(s) {
  if (PROSE_ALLOWED.has(s)) return false;
  if (!/\p{L}{2,}[\s,;:]+\p{L}{2,}/u.test(s)) return false;
  return /[A-Z]/.test(s) || /[.!?…:]\s*$/.test(s) || /\b(the|a|an|of|to|in|and|or|is|are|not|no|all|every|after|only|was)\b/.test(s);
}

function problemsIn(src) {
  const found = [];
  for (const item of scanJs(src)) {
    if (item.console) continue;
    if (item.kind === 'template' && item.tag === 'html') {
      for (const p of htmlProblems(item.parts)) found.push({ line: item.line, ...p });
    } else if (item.kind === 'template' && item.tag === '') {
      const joined = item.parts.join(' ');
      if (looksLikeProse(joined)) found.push({ line: item.line, what: 'template string', text: joined });
    } else if (item.kind === 'string' && looksLikeProse(item.value)) {
      found.push({ line: item.line, what: 'string', text: item.value });
    }
  }
  return found;
}

// --- the scanner on known snippets ------------------------------------------------------------------------
const selfTests = [
  ['html`<p>Hello</p>`', 1],
  ['html`<${Field} label="Group">${x}</${Field}>`', 1],
  ['html`<td data-label="ID">${id}</td>`', 1],
  ['html`<input placeholder="name or handler" />`', 1],
  ['setNotice(`Stopped job ${id}.`)', 1],
  ["const a = 'There is no group yet.';", 1],
  ['html`<div class="banner error" data-testid="x">${t(\'a.b\')}</div>`', 0],
  ['html`<a class="brand" href="#/">cronwheel</a> <span>✗ ${msg}</span>`', 0],
  ["const c = x ? 'badge status-running' : 'status-stopped'; const r = /['`]/g; const q = `${a}–${b}`;", 0],
  ['html`<p>${cond && html`<b>${v}</b>`}</p><i>Oops</i>`', 1],
];
const selfFailures = selfTests
  .map(([src, want]) => [src, want, problemsIn(src).length])
  .filter(([, want, got]) => want !== got)
  .map(([src, want, got]) => `${src}: expected ${want} problem(s), found ${got}`);
check(selfFailures.length === 0, `the scanner finds English in ${selfTests.length} known snippets`, selfFailures);

// --- 2 and 3 over the console's modules -------------------------------------------------------------------
const sources = [];
(function walk(dir) {
  for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) walk(p);
    else if (e.name.endsWith('.js')) sources.push(p);
  }
})(webJs);
check(sources.length >= 10, `the console's modules are found (${sources.length})`);

const allKeys = Object.keys(en);
const keyExists = (k) => k in en || `${k}.other` in en;
const unknownKeys = [];
const badPrefixes = [];
let literalKeys = 0;
let builtKeys = 0;
const english = [];
for (const file of sources) {
  const rel = path.relative(root, file);
  const src = fs.readFileSync(file, 'utf8');
  // The first argument of t(, tOr(, has(: its quoted strings with a dot are keys (a ternary may hold other
  // strings); a template's static start is a prefix.
  for (const m of src.matchAll(/\b(?:t|tOr|has)\(/g)) {
    let depth = 0;
    let j = m.index + m[0].length;
    const start = j;
    for (; j < src.length; j += 1) {
      const c = src[j];
      if ('([{'.includes(c)) depth += 1;
      else if (')]}'.includes(c)) {
        if (depth === 0) break;
        depth -= 1;
      } else if (c === ',' && depth === 0) break;
    }
    const arg = src.slice(start, j);
    for (const s of arg.matchAll(/'([^']*\.[^']*)'/g)) {
      literalKeys += 1;
      if (!keyExists(s[1])) unknownKeys.push(`${rel}: '${s[1]}'`);
    }
    for (const s of arg.matchAll(/`([^`$]*)\$\{/g)) {
      builtKeys += 1;
      if (!allKeys.some((k) => k.startsWith(s[1]))) badPrefixes.push(`${rel}: \`${s[1]}\${…}\``);
    }
  }
  for (const p of problemsIn(src)) english.push(`${rel}:${p.line}: ${p.what}: ${JSON.stringify(p.text)}`);
}
check(unknownKeys.length === 0 && literalKeys > 100, `every key named in a component exists (${literalKeys} named)`, unknownKeys);
check(badPrefixes.length === 0 && builtKeys > 5, `every key built from a template has a known prefix (${builtKeys} built)`, badPrefixes);
check(english.length === 0, 'no component shows English text of its own (html`` templates and sentence-like strings)', english);

console.log(`${checks.passed} passed, ${checks.failed} failed`);
process.exit(checks.failed > 0 ? 1 : 0);

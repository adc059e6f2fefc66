// @ts-check
// The console's languages (docs/architecture.md, "The console's languages"): the messages of the chosen
// language, t(key, params) to look one up, and the locale-aware formatting of dates, times, durations and
// numbers.
//
// Messages live in web/i18n/<language>.json, one flat object of "area.name": "text" per language, with
// {name} placeholders; a key with plural forms has "<key>.one"/"<key>.other" (Intl.PluralRules names) and
// is looked up as "<key>" with a numeric `count` param. tests/web/i18n_check.mjs checks that the files
// have the same keys and placeholders and that no component holds English text of its own.
//
// The language: the one saved by the header's switch (localStorage), else the browser's
// (navigator.languages: any zh* is zh-CN, else en). Dates and times are shown in the browser's time zone.

/** @type {Array<[code: string, name: string]>} */
export const LANGUAGES = [
  // [code, the language's name in itself] — the names are not translated.
  ['en', 'English'],
  ['zh-CN', '简体中文'],
];
const CODES = LANGUAGES.map(([code]) => code);
const STORAGE_KEY = 'cronwheel.language';

/** @typedef {Record<string, string>} Messages */
/** @typedef {Record<string, unknown>} Params a message's {placeholders} by name; `count` picks a plural form */
/**
 * An error as a banner shows it: an ApiError (api.js), or any other Error.
 * @typedef {Error & {
 *   status?: number, code?: string, serverMessage?: string, errors?: import('./types.js').FieldError[],
 * }} ShownError
 */

let current = 'en';
/** @type {Messages} */
let messages = {};
/** @type {Map<string, Promise<Messages>>} */
const cache = new Map(); // code -> Promise of its messages
/** @type {Set<(code: string) => void>} */
const listeners = new Set();

// The console's language for a browser whose preferred languages are `list` (BCP 47 tags, best first).
/** @param {readonly string[] | undefined} list */
export function browserLanguage(list) {
  for (const tag of list || []) {
    const lower = String(tag).toLowerCase();
    if (lower === 'zh' || lower.startsWith('zh-')) return 'zh-CN';
    if (lower === 'en' || lower.startsWith('en-')) return 'en';
  }
  return 'en';
}

/** @returns {readonly string[]} */
function navigatorLanguages() {
  if (typeof navigator === 'undefined') return [];
  return navigator.languages && navigator.languages.length ? navigator.languages : [navigator.language];
}

function savedLanguage() {
  try {
    const v = window.localStorage.getItem(STORAGE_KEY);
    return v !== null && CODES.includes(v) ? v : null;
  } catch (_) {
    return null; // storage disabled
  }
}

// The language to start with: the saved choice, else the browser's.
export function initialLanguage() {
  return savedLanguage() || browserLanguage(navigatorLanguages());
}

/**
 * @param {string} code
 * @returns {Promise<Messages>}
 */
function load(code) {
  let p = cache.get(code);
  if (!p) {
    const url = new URL(`../i18n/${code}.json`, import.meta.url);
    p = fetch(url, { credentials: 'same-origin' }).then((res) => {
      if (!res.ok) throw new Error(`${url.pathname}: HTTP ${res.status}`);
      return res.json();
    });
    p.catch(() => cache.delete(code)); // a later call may try again
    cache.set(code, p);
  }
  return p;
}

// Loads `code`'s messages and makes it the language: <html lang>, remembered when `remember`, and every
// subscriber told (the shell re-renders the page in place).
/**
 * @param {string} code
 * @param {{ remember?: boolean }} [options]
 */
export async function setLanguage(code, { remember = false } = {}) {
  if (!CODES.includes(code)) code = 'en';
  messages = await load(code);
  current = code;
  document.documentElement.lang = code;
  if (remember) {
    try {
      window.localStorage.setItem(STORAGE_KEY, code);
    } catch (_) {
      // storage disabled: the choice lasts until the page is left
    }
  }
  for (const fn of listeners) fn(code);
}

export const language = () => current;

// Calls fn(code) after each change of language; returns the unsubscribe function.
/** @param {(code: string) => void} fn */
export function onLanguageChange(fn) {
  listeners.add(fn);
  return () => listeners.delete(fn);
}

/** @param {string} key */
export const has = (key) => typeof messages[key] === 'string' || typeof messages[`${key}.other`] === 'string';

/**
 * @param {string} text
 * @param {Params} [params]
 */
function interpolate(text, params) {
  if (!params) return text;
  return text.replace(/\{(\w+)\}/g, (whole, name) => (params[name] === undefined || params[name] === null ? whole : String(params[name])));
}

// The message `key` with its {placeholders} filled from `params`. With a numeric params.count, the plural
// form "<key>.<category>" is used when there is one. An unknown key comes back as itself (the browser test
// looks for such leaks).
/**
 * @param {string} key
 * @param {Params} [params]
 * @returns {string}
 */
export function t(key, params) {
  let text = messages[key];
  if (params && typeof params.count === 'number') {
    const form = messages[`${key}.${pluralRules().select(params.count)}`] ?? messages[`${key}.other`];
    if (typeof form === 'string') text = form;
  }
  if (typeof text !== 'string') {
    if (typeof console !== 'undefined') console.warn(`i18n: no message '${key}' in ${current}`);
    return key;
  }
  return interpolate(text, params);
}

// t(key, params) when the message exists, else `fallback`.
/** @type {(key: string, fallback: string, params?: Params) => string} */
export const tOr = (key, fallback, params) => (has(key) ? t(key, params) : fallback);

// --- formatting ----------------------------------------------------------------------------------------
// The locale for numbers and dates: the browser's own tag when it is of the chosen language (en-GB keeps its
// day-month order), else the language itself.
export function locale() {
  const primary = current.split('-')[0];
  const match = navigatorLanguages().find((tag) => String(tag).toLowerCase().split('-')[0] === primary);
  if (!match || primary === 'zh') return current; // the messages are Simplified Chinese: zh-CN's conventions
  try {
    return Intl.getCanonicalLocales(match)[0];
  } catch (_) {
    return current;
  }
}

/** @type {Map<string, unknown>} */
const formatters = new Map();
/**
 * The Intl formatter of `kind` with `options` in the current locale, made once by `make`.
 * @template O, F
 * @param {string} kind
 * @param {O} options
 * @param {(locale: string, options: O) => F} make
 * @returns {F}
 */
function formatter(kind, options, make) {
  const k = `${locale()}|${kind}|${JSON.stringify(options)}`;
  if (!formatters.has(k)) formatters.set(k, make(locale(), options));
  // Cast: the key starts with the kind, and every call of one kind passes the same `make`.
  return /** @type {F} */ (formatters.get(k));
}
const pluralRules = () => formatter('plural', {}, (l) => new Intl.PluralRules(l));

/**
 * @param {number | string | null | undefined} n
 * @param {Intl.NumberFormatOptions} [options]
 */
export function formatNumber(n, options = {}) {
  if (n === null || n === undefined || n === '') return '';
  return formatter('number', options, (l, o) => new Intl.NumberFormat(l, o)).format(Number(n));
}

// Date and time to the second in the browser's zone; '' for 0 or nothing.
/** @param {number | string | null | undefined} ms epoch ms */
export function formatDateTime(ms) {
  if (!ms) return '';
  /** @type {Intl.DateTimeFormatOptions} */
  const o = { year: 'numeric', month: '2-digit', day: '2-digit', hour: '2-digit', minute: '2-digit', second: '2-digit' };
  return formatter('datetime', o, (l, opt) => new Intl.DateTimeFormat(l, opt)).format(new Date(Number(ms)));
}

// A calendar day "YYYY-MM-DD" (a UTC day from the server) as a short month and day.
/** @param {string} isoDay */
export function formatDay(isoDay) {
  /** @type {Intl.DateTimeFormatOptions} */
  const o = { month: 'short', day: 'numeric', timeZone: 'UTC' };
  return formatter('day', o, (l, opt) => new Intl.DateTimeFormat(l, opt)).format(new Date(`${isoDay}T00:00:00Z`));
}

// "in 5 min", "3 sec. ago" (Intl.RelativeTimeFormat).
/**
 * @param {number | string | null | undefined} ms epoch ms
 * @param {number} [now]
 */
export function formatRelative(ms, now = Date.now()) {
  if (!ms) return '';
  const diff = (Number(ms) - now) / 1000;
  const a = Math.abs(diff);
  /** @type {[number, Intl.RelativeTimeFormatUnit]} */
  const [value, unit] = a < 60 ? [diff, 'second'] : a < 3600 ? [diff / 60, 'minute'] : a < 86400 ? [diff / 3600, 'hour'] : [diff / 86400, 'day'];
  /** @type {Intl.RelativeTimeFormatOptions} */
  const o = { numeric: 'always', style: 'short' };
  return formatter('relative', o, (l, opt) => new Intl.RelativeTimeFormat(l, opt)).format(Math.round(value), unit);
}

// A quantity of one unit: "300 sec", "300秒".
/**
 * @param {number} n
 * @param {string} unit an Intl unit: 'second', 'millisecond', ...
 */
export function formatUnit(n, unit) {
  return formatNumber(n, { style: 'unit', unit, unitDisplay: 'short' });
}

// A duration as its two largest units: "1 hr, 5 min", "1小时5分钟", "850 ms".
/** @param {number | null | undefined} ms */
export function formatDuration(ms) {
  if (ms === null || ms === undefined || ms < 0) return '';
  if (ms < 1000) return formatUnit(Math.round(ms), 'millisecond');
  if (ms < 60_000) return formatNumber(ms / 1000, { style: 'unit', unit: 'second', unitDisplay: 'short', maximumFractionDigits: 1 });
  /** @type {Array<[string, number]>} */
  const units = [['day', 86_400_000], ['hour', 3_600_000], ['minute', 60_000], ['second', 1000]];
  let rest = ms;
  /** @type {Array<[number, string]>} */
  const parts = [];
  for (const [unit, size] of units) {
    const n = Math.floor(rest / size);
    rest -= n * size;
    if (n > 0 || parts.length > 0) parts.push([n, unit]);
    if (parts.length === 2) break;
  }
  const shown = parts.filter(([n]) => n > 0).map(([n, unit]) => formatUnit(n, unit));
  /** @type {Intl.ListFormatOptions} */
  const o = { type: 'unit', style: 'narrow' };
  return formatter('list', o, (l, opt) => new Intl.ListFormat(l, opt)).format(shown);
}

// --- server errors (docs/architecture.md, "Errors") ----------------------------------------------------
// A field's label in the current language; the field's own name when the console has no label for it.
/** @param {string | undefined} field */
export function fieldLabel(field) {
  if (!field) return t('field.body');
  return tOr(`field.${field}`, field);
}

/** @type {(lead: string, detail: string | null | undefined) => string} */
const withDetail = (lead, detail) => (detail ? t('error.withDetail', { lead, detail }) : lead);

// One field error {field, message, code, params} as text in the current language: from code and params
// when the code is known, else the server's English message.
/**
 * @param {import('./types.js').FieldError} e
 * @returns {string}
 */
export function fieldErrorText(e) {
  const p = e.params || {};
  switch (e.code) {
    case 'required':
      return t('error.required');
    case 'type':
      return t('error.type', { expected: tOr(`error.expected.${p.expected}`, String(p.expected)) });
    case 'length':
      return (p.min ?? 0) > 0
        ? t('error.lengthBetween', { min: formatNumber(p.min), max: formatNumber(p.max), actual: formatNumber(p.actual) })
        : t('error.lengthMax', { max: formatNumber(p.max), actual: formatNumber(p.actual) });
    case 'range':
      // An instant (a run once's at_ms, epoch ms) reads as a date and time.
      return e.field === 'at_ms'
        ? t('error.instantRange', { min: formatDateTime(p.min), max: formatDateTime(p.max) })
        : t('error.range', { min: formatNumber(p.min), max: formatNumber(p.max) });
    case 'one_of':
      return t('error.oneOf', { fields: String(p.fields || '').split(', ').map(fieldLabel).join(t('common.listSeparator')) });
    case 'enum':
      return t('error.enum', { allowed: p.allowed });
    case 'unknown_field':
      return t('error.unknownField', { allowed: p.allowed });
    case 'exists':
      return t('error.exists', { value: p.value });
    case 'not_found':
      return t('error.notFound', { id: p.id });
    case 'format':
      // The URL and address checks say what exactly is wrong: shown after the translated lead.
      return has(`error.format.${p.what}`)
        ? withDetail(t(`error.format.${p.what}`, p), p.what === 'url' || p.what === 'address' ? e.message : '')
        : withDetail(t('error.format'), e.message);
    case 'schedule':
      return withDetail(t('error.schedule'), e.message); // the parser's English detail says where
    case 'policy':
      return t('error.policy', { min: formatNumber(p.min), max: formatNumber(p.max) });
    case 'role':
      return t('error.role', { role: tOr(`enum.groupRole.${p.role}`, String(p.role)) });
    case 'limit':
      // What passed the limit (components, rules, occurrences, time) is in the English detail.
      return withDetail(t('error.limit', { max: formatNumber(p.max), actual: formatNumber(p.actual) }), e.message);
    default:
      return e.message || '';
  }
}

// What an error banner says about an error (an ApiError, or any Error): a translated lead, the server's
// English message as detail where it adds something, and the field errors.
/**
 * @param {ShownError | null | undefined} error
 * @returns {{ lead: string, detail: string | null | undefined }}
 */
export function describeError(error) {
  const fields = (error && error.errors) || [];
  const code = error && error.code;
  const detail = error && error.serverMessage !== undefined ? error.serverMessage : error && error.message;
  if (fields.length > 0) return { lead: t('error.fields'), detail: '' };
  if (code && has(`error.kind.${code}`)) return { lead: t(`error.kind.${code}`), detail };
  if (error && error.status === 0) return { lead: t('error.network'), detail };
  if (error && error.status) return { lead: t('error.http', { status: error.status }), detail };
  return { lead: detail || t('error.unknown'), detail: '' };
}

// The whole error as one line of text (for places without room for a banner).
/** @param {ShownError | null | undefined} error */
export function errorText(error) {
  const { lead, detail } = describeError(error);
  const fields = ((error && error.errors) || []).map((e) => t('error.fieldLine', { field: fieldLabel(e.field), message: fieldErrorText(e) }));
  return [withDetail(lead, detail), ...fields].join(' ');
}

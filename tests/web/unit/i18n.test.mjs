// Unit tests of web/js/i18n.js beyond util.test.mjs's language choice and message basics: the lookup's
// placeholders and plural forms (on messages added for the test, next to the real files), the saved language,
// subscribers, the locale rule, the formats, and how a server error becomes text (docs/architecture.md,
// "Errors"). Texts that Intl makes (units, lists, relative times, dates) are compared with Intl's own output:
// what is checked is which numbers and units the module picks. Run by ctest (web_unit).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { fakeBrowser, warnings, withNavigator } from './browser.mjs';

process.env.TZ = 'UTC';
fakeBrowser({
  extra: {
    en: {
      'test.twice': '{name} and {name}, {other}',
      'test.plain': 'no placeholders here',
      'test.apples.other': '{count} apples', // no ".one": every count takes .other
      'test.pears.one': 'one pear',
      'test.pears.other': '{count} pears',
    },
  },
});
const storage = new Map();
globalThis.window = {
  localStorage: { getItem: (k) => (storage.has(k) ? storage.get(k) : null), setItem: (k, v) => storage.set(k, v) },
};
const i18n = await import('../../../web/js/i18n.js');
await i18n.setLanguage('en');

const unit = (n, u, locale = 'en') => new Intl.NumberFormat(locale, { style: 'unit', unit: u, unitDisplay: 'short' }).format(n);
const units = (parts, locale = 'en') => new Intl.ListFormat(locale, { type: 'unit', style: 'narrow' }).format(parts);
const relative = (n, u) => new Intl.RelativeTimeFormat('en', { numeric: 'always', style: 'short' }).format(n, u);

test('placeholders: each {name} filled (twice when named twice), a missing or null one left visible, 0 written', () => {
  assert.equal(i18n.t('test.twice', { name: 'A', other: 'B' }), 'A and A, B');
  assert.equal(i18n.t('test.twice', { name: 'A' }), 'A and A, {other}');
  assert.equal(i18n.t('test.twice', { name: 'A', other: null }), 'A and A, {other}');
  assert.equal(i18n.t('test.twice', { name: 0, other: false }), '0 and 0, false');
  assert.equal(i18n.t('test.plain', { name: 'unused' }), 'no placeholders here');
});

test('plural forms: a numeric count picks "<key>.one" or ".other" by the language\'s rules; .other stands in for a missing form', () => {
  assert.equal(i18n.t('test.pears', { count: 1 }), 'one pear');
  assert.equal(i18n.t('test.pears', { count: 0 }), '0 pears', 'English: zero is "other"');
  assert.equal(i18n.t('test.pears', { count: 2 }), '2 pears');
  assert.equal(i18n.t('test.apples', { count: 1 }), '1 apples', 'no .one message: .other');
  assert.equal(i18n.has('test.apples'), true, 'a key with plural forms only exists');
  assert.equal(i18n.has('test.nothing'), false);
  // A count that is not a number picks no form: the bare key has no message, so it comes back as itself.
  const warned = warnings(() => assert.equal(i18n.t('test.pears', { count: '1' }), 'test.pears'));
  assert.deepEqual(warned, ["i18n: no message 'test.pears' in en"]);
});

test('tOr: the message when it exists (with its params), else the fallback, without a warning', () => {
  const warned = warnings(() => {
    assert.equal(i18n.tOr('test.twice', 'fallback', { name: 'X', other: 'Y' }), 'X and X, Y');
    assert.equal(i18n.tOr('enum.role.NOBODY', 'NOBODY'), 'NOBODY');
  });
  assert.deepEqual(warned, []);
});

test('the saved language comes first, an unknown saved value is ignored, and remember saves the choice', async () => {
  storage.set('cronwheel.language', 'zh-CN');
  assert.equal(i18n.initialLanguage(), 'zh-CN');
  storage.set('cronwheel.language', 'fr');
  assert.equal(i18n.initialLanguage(), 'en', 'not a language of the console: the browser\'s (none in node: en)');
  storage.clear();
  await i18n.setLanguage('zh-CN');
  assert.equal(storage.size, 0, 'not remembered unless asked');
  await i18n.setLanguage('zh-CN', { remember: true });
  assert.equal(storage.get('cronwheel.language'), 'zh-CN');
  assert.equal(i18n.initialLanguage(), 'zh-CN');
  storage.clear();
  await i18n.setLanguage('en');
});

test('a change of language tells each subscriber its code, until it unsubscribes', async () => {
  const heard = [];
  const stop = i18n.onLanguageChange((code) => heard.push(code));
  await i18n.setLanguage('zh-CN');
  await i18n.setLanguage('en');
  stop();
  await i18n.setLanguage('zh-CN');
  await i18n.setLanguage('en');
  assert.deepEqual(heard, ['zh-CN', 'en']);
});

test('the locale: the browser\'s own tag when it is of the chosen language, else the language; Chinese is zh-CN', async () => {
  await withNavigator(['en-GB', 'de'], () => {
    assert.equal(i18n.locale(), 'en-GB');
    // en-GB's day before month: 29/03/2026.
    assert.match(i18n.formatDateTime(Date.UTC(2026, 2, 29, 13, 5, 9)), /^29\/03\/2026/);
  });
  await withNavigator(['fr-FR'], () => assert.equal(i18n.locale(), 'en'));
  await withNavigator(['zh-TW'], async () => {
    await i18n.setLanguage('zh-CN');
    try {
      assert.equal(i18n.locale(), 'zh-CN', 'the messages are Simplified Chinese');
    } finally {
      await i18n.setLanguage('en');
    }
  });
});

test('numbers and units: grouped in the locale, nothing for null, undefined or empty text', () => {
  assert.equal(i18n.formatNumber(1234567), '1,234,567');
  assert.equal(i18n.formatNumber('1234.5'), '1,234.5');
  assert.equal(i18n.formatNumber(0), '0');
  assert.equal(i18n.formatNumber(null), '');
  assert.equal(i18n.formatNumber(undefined), '');
  assert.equal(i18n.formatNumber(''), '');
  assert.equal(i18n.formatUnit(300, 'second'), unit(300, 'second'));
});

test('durations: milliseconds under a second, tenths of a second under a minute, else the two largest units', () => {
  assert.equal(i18n.formatDuration(850), unit(850, 'millisecond'));
  assert.equal(i18n.formatDuration(849.6), unit(850, 'millisecond'), 'rounded');
  assert.equal(i18n.formatDuration(1540), new Intl.NumberFormat('en', { style: 'unit', unit: 'second', unitDisplay: 'short', maximumFractionDigits: 1 }).format(1.54));
  assert.equal(i18n.formatDuration(3_900_000), units([unit(1, 'hour'), unit(5, 'minute')]), '1 h 5 min');
  // 1 d 1 h 1 min 1 s: the day and the hour.
  assert.equal(i18n.formatDuration(90_061_000), units([unit(1, 'day'), unit(1, 'hour')]));
  // 1 d 0 h 5 min: the two largest are the day and a zero hour; the zero is not shown, nor are the minutes.
  assert.equal(i18n.formatDuration(86_700_000), units([unit(1, 'day')]));
  assert.equal(i18n.formatDuration(60_000), units([unit(1, 'minute')]));
  assert.equal(i18n.formatDuration(0), unit(0, 'millisecond'));
  assert.equal(i18n.formatDuration(-1), '');
  assert.equal(i18n.formatDuration(null), '');
});

test('relative times: seconds under a minute, minutes under an hour, hours under a day, then days; rounded', () => {
  const now = Date.UTC(2026, 0, 1);
  assert.equal(i18n.formatRelative(now + 59_000, now), relative(59, 'second'));
  assert.equal(i18n.formatRelative(now + 60_000, now), relative(1, 'minute'));
  assert.equal(i18n.formatRelative(now - 3_600_000, now), relative(-1, 'hour'));
  assert.equal(i18n.formatRelative(now + 90_000, now), relative(2, 'minute'), '1.5 min rounds to 2');
  assert.equal(i18n.formatRelative(now - 3 * 3_600_000, now), relative(-3, 'hour'));
  assert.equal(i18n.formatRelative(now + 86_400_000, now), relative(1, 'day'));
  assert.equal(i18n.formatRelative(0, now), '', 'no instant');
});

test('a server day (UTC) is shown as that day in any time zone; an instant in the browser\'s zone', () => {
  assert.equal(i18n.formatDay('2026-03-29'), 'Mar 29');
  const ms = Date.UTC(2026, 2, 29, 23, 30, 0);
  const o = { year: 'numeric', month: '2-digit', day: '2-digit', hour: '2-digit', minute: '2-digit', second: '2-digit' };
  assert.equal(i18n.formatDateTime(ms), new Intl.DateTimeFormat('en', o).format(new Date(ms)));
  assert.match(i18n.formatDateTime(String(ms)), /^03\/29\/2026/, 'epoch ms as text (a route parameter)');
  assert.equal(i18n.formatDateTime(0), '');
});

test('field labels: the console\'s label, else the field\'s own name; no field is the whole request', () => {
  assert.equal(i18n.fieldLabel('description'), 'Description');
  assert.equal(i18n.fieldLabel('nodes[2].key'), 'nodes[2].key');
  assert.equal(i18n.fieldLabel(''), 'Request');
  assert.equal(i18n.fieldLabel(undefined), 'Request');
});

test('a field error in the console\'s words, from its code and params', async () => {
  const text = (e) => i18n.fieldErrorText({ field: 'x', message: 'the server says', ...e });
  assert.equal(text({ code: 'required' }), 'required');
  assert.equal(text({ code: 'type', params: { expected: 'integer' } }), 'must be a whole number');
  assert.equal(text({ code: 'type', params: { expected: 'date' } }), 'must be date', 'an unknown type: its name');
  assert.equal(text({ code: 'length', params: { min: 1, max: 255, actual: 300 } }), 'must be 1 to 255 bytes long (now 300)');
  assert.equal(text({ code: 'length', params: { min: 0, max: 1000, actual: 1200 } }), 'must be at most 1,000 bytes long (now 1,200)');
  assert.equal(text({ code: 'length', params: { max: 10, actual: 12 } }), 'must be at most 10 bytes long (now 12)', 'no min: at most');
  assert.equal(text({ code: 'range', params: { min: 0, max: 86400 } }), 'must be from 0 to 86,400');
  const min = Date.UTC(2026, 0, 1);
  const max = Date.UTC(2027, 0, 2);
  assert.equal(i18n.fieldErrorText({ field: 'at_ms', message: '', code: 'range', params: { min, max } }),
    `must be from ${i18n.formatDateTime(min)} to ${i18n.formatDateTime(max)}`, 'an instant reads as a date and time');
  assert.equal(text({ code: 'one_of', params: { fields: 'at_ms, delay_ms' } }), 'give exactly one of: At, Delay');
  assert.equal(text({ code: 'exists', params: { value: 'nightly' } }), '“nightly” is already taken');
  assert.equal(text({ code: 'not_found', params: { id: 42 } }), '42 does not exist');
  assert.equal(text({ code: 'format', params: { what: 'email' } }), 'must be e-mail addresses separated by commas');
  assert.equal(text({ code: 'format', params: { what: 'url' } }), 'is not a valid URL (the server says)', 'a URL\'s check says what is wrong');
  assert.equal(text({ code: 'format', params: { what: 'zip' } }), 'is not valid (the server says)', 'an unknown format');
  assert.match(text({ code: 'format', params: { what: 'tag', tag: 'a b' } }), /^“a b” is not a valid tag/);
  assert.equal(text({ code: 'schedule' }), 'does not parse (the server says)');
  assert.equal(text({ code: 'role', params: { role: 'OPERATOR' } }), 'needs the Operator role');
  assert.equal(text({ code: 'limit', params: { max: 1000, actual: 2500 } }), 'over a limit: at most 1,000, found 2,500 (the server says)');
  assert.equal(text({ code: 'teapot' }), 'the server says', 'an unknown code: the server\'s English');
  assert.equal(i18n.fieldErrorText({ field: 'x', message: '', code: 'teapot' }), '');
  await i18n.setLanguage('zh-CN');
  try {
    assert.equal(text({ code: 'one_of', params: { fields: 'at_ms, delay_ms' } }), '请在以下各项中填且只填一项：执行时间、延迟');
    assert.equal(text({ code: 'required' }), '必填');
  } finally {
    await i18n.setLanguage('en');
  }
});

test('an error banner\'s lead and detail: field errors, the error\'s kind, no server, an HTTP status, any Error', () => {
  const fields = [{ field: 'description', message: 'description is required', code: 'required' }];
  assert.deepEqual(i18n.describeError({ status: 400, code: 'invalid', serverMessage: 'invalid job', errors: fields }),
    { lead: 'Some values are not valid', detail: '' });
  assert.deepEqual(i18n.describeError({ status: 403, code: 'forbidden', serverMessage: 'needs OPERATOR', errors: [] }),
    { lead: 'Not allowed', detail: 'needs OPERATOR' });
  assert.deepEqual(i18n.describeError({ status: 0, code: '', serverMessage: 'Failed to fetch', errors: [] }),
    { lead: 'The server cannot be reached', detail: 'Failed to fetch' });
  assert.deepEqual(i18n.describeError({ status: 418, code: 'teapot', serverMessage: '', errors: [] }),
    { lead: 'Request failed (HTTP 418)', detail: '' });
  assert.deepEqual(i18n.describeError(new Error('boom')), { lead: 'boom', detail: '' });
  assert.deepEqual(i18n.describeError(null), { lead: 'Something went wrong', detail: '' });
  assert.equal(i18n.errorText({ status: 400, code: 'invalid', serverMessage: 'invalid job', errors: fields }),
    'Some values are not valid Description: required');
  assert.equal(i18n.errorText({ status: 409, code: 'conflict', serverMessage: 'the job runs', errors: [] }),
    'Not possible now (the job runs)');
});

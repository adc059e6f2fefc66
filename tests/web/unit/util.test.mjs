// Unit tests of the console's pure modules (node:test, no browser): the access rules the pages follow
// (web/js/util.js), where a user signs in from, and the language and message rules of web/js/i18n.js with
// the real message files. Run by ctest (web_unit) as `node --test tests/web/unit/`.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';

// i18n.js loads web/i18n/<code>.json with fetch, which in node does not read file: URLs, and sets
// <html lang>.
globalThis.document = { documentElement: {} };
globalThis.fetch = async (url) => {
  const text = await readFile(fileURLToPath(url), 'utf8');
  return { ok: true, status: 200, json: async () => JSON.parse(text) };
};

const util = await import('../../../web/js/util.js');
const i18n = await import('../../../web/js/i18n.js');

const viewer = { role: 'USER', group_roles: [{ group_id: 1, role: 'VIEWER' }] };
const operator = { role: 'USER', group_roles: [{ group_id: 1, role: 'OPERATOR' }, { group_id: 2, role: 'VIEWER' }] };
const developer = { role: 'USER', group_roles: [{ group_id: 3, role: 'DEVELOPER' }] };
const groupAdmin = { role: 'USER', group_roles: [{ group_id: 4, role: 'ADMIN' }] };
const admin = { role: 'ADMIN', group_roles: [] };

test('each group role allows what the ones before it do, and nothing in other groups', () => {
  const cases = [
    [viewer, 1, { read: true, operate: false, write: false, admin: false }],
    [operator, 1, { read: true, operate: true, write: false, admin: false }],
    [operator, 2, { read: true, operate: false, write: false, admin: false }],
    [developer, 3, { read: true, operate: true, write: true, admin: false }],
    [groupAdmin, 4, { read: true, operate: true, write: true, admin: true }],
    [developer, 1, { read: false, operate: false, write: false, admin: false }],
    [admin, 99, { read: true, operate: true, write: true, admin: true }],
    [null, 1, { read: false, operate: false, write: false, admin: false }],
  ];
  for (const [user, group, allowed] of cases) {
    for (const [what, expected] of Object.entries(allowed)) {
      assert.equal(util.can(user, group, what), expected, `${JSON.stringify(user)} ${what} in group ${group}`);
    }
  }
  assert.equal(util.can(admin, 1, 'fly'), false, 'an unknown action is never allowed');
});

test('a group id from a route (a string) matches the number the API sends', () => {
  assert.equal(util.roleIn(operator, '1'), util.GROUP_ROLES.indexOf('OPERATOR'));
  assert.equal(util.roleIn(operator, '3'), -1);
  assert.equal(util.roleIn(admin, '3'), util.GROUP_ROLES.length - 1);
});

test('canSomewhere: in any group of the user, or anywhere for a global ADMIN', () => {
  assert.equal(util.canSomewhere(operator, 'operate'), true);
  assert.equal(util.canSomewhere(operator, 'write'), false);
  assert.equal(util.canSomewhere(admin, 'admin'), true);
  assert.equal(util.canSomewhere(null, 'read'), false);
  assert.equal(util.canSomewhere({ role: 'USER' }, 'read'), false, 'no group_roles at all');
});

test('where a user signs in from, and the provider title shown for it', () => {
  assert.deepEqual(util.loginSource('oidc:corp'), { kind: 'oidc', name: 'corp' });
  assert.deepEqual(util.loginSource('ldap'), { kind: 'ldap', name: '' });
  assert.deepEqual(util.loginSource(undefined), { kind: 'local', name: '' }, 'an older admin sends none');
  const providers = { oidc: [{ name: 'corp', title: 'Corp SSO' }] };
  assert.equal(util.providerTitle(providers, 'corp'), 'Corp SSO');
  assert.equal(util.providerTitle(providers, 'gone'), 'gone', 'a provider no longer listed: its name');
  assert.equal(util.loginSourceText('oidc:corp', providers), 'Corp SSO');
});

test('a datetime-local value and epoch ms convert both ways in the browser zone, across a DST change', () => {
  process.env.TZ = 'Europe/London';
  // 29 March 2026, 01:00 GMT becomes 02:00 BST: 00:30 and 02:30 local are one hour apart, not two.
  const before = util.localInputToMs('2026-03-29T00:30');
  const after = util.localInputToMs('2026-03-29T02:30');
  assert.equal(after - before, 60 * 60 * 1000);
  assert.equal(util.msToLocalInput(before), '2026-03-29T00:30');
  assert.equal(util.msToLocalInput(after), '2026-03-29T02:30');
  assert.equal(util.localInputToMs(''), undefined);
  assert.equal(util.localInputToMs('not a date'), undefined);
  assert.equal(util.msToLocalInput(0), '');
});

test('the language follows the browser: any Chinese is zh-CN, anything else English', () => {
  assert.equal(i18n.browserLanguage(['zh-TW', 'en']), 'zh-CN');
  assert.equal(i18n.browserLanguage(['fr-FR', 'en-GB']), 'en');
  assert.equal(i18n.browserLanguage(['fr-FR']), 'en');
  assert.equal(i18n.browserLanguage(undefined), 'en');
});

test('messages: placeholders, plural forms, and an unknown key that comes back as itself', async () => {
  await i18n.setLanguage('en');
  const en = JSON.parse(await readFile(new URL('../../../web/i18n/en.json', import.meta.url), 'utf8'));
  // A message with a placeholder, and one with plural forms, taken from the file itself.
  const [withParam] = Object.entries(en).find(([, v]) => /\{\w+\}/.test(v)) || [];
  assert.ok(withParam, 'en.json has a message with a placeholder');
  const name = en[withParam].match(/\{(\w+)\}/)[1];
  assert.ok(i18n.t(withParam, { [name]: 'VALUE' }).includes('VALUE'));
  assert.ok(i18n.t(withParam).includes(`{${name}}`), 'a missing param leaves its placeholder visible');
  const pluralKey = Object.keys(en).find((k) => k.endsWith('.one') && `${k.slice(0, -4)}.other` in en);
  assert.ok(pluralKey, 'en.json has a message with plural forms');
  const base = pluralKey.slice(0, -4);
  assert.equal(i18n.t(base, { count: 1 }), i18n.t(`${base}.one`, { count: 1 }));
  assert.equal(i18n.t(base, { count: 5 }), i18n.t(`${base}.other`, { count: 5 }));
  const warn = console.warn;
  console.warn = () => {};
  try {
    assert.equal(i18n.t('no.such.key'), 'no.such.key');
  } finally {
    console.warn = warn;
  }
  const english = i18n.t(withParam, { [name]: 'V' });
  await i18n.setLanguage('zh-CN');
  assert.equal(i18n.language(), 'zh-CN');
  assert.equal(globalThis.document.documentElement.lang, 'zh-CN');
  const chinese = i18n.t(withParam, { [name]: 'V' });
  assert.notEqual(chinese, english);
  assert.ok(chinese.includes('V'), 'the Chinese message keeps the placeholder');
  await i18n.setLanguage('xx');
  assert.equal(i18n.language(), 'en', 'an unknown language falls back to English');
});

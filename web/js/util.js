// @ts-check
// Formatting and small helpers. Everything returned here is a string or number: the caller renders it
// as text. Dates, times and numbers follow the console's language (i18n.js) in the browser's time zone.
import { formatDateTime, formatRelative, t } from './i18n.js';

/** @type {(n: number, w?: number) => string} */
const pad = (n, w = 2) => String(n).padStart(w, '0');

// Date and time to the second in the browser's zone and the console's locale; '' for 0.
/** @type {(ms: number | string | null | undefined) => string} */
export const formatMs = (ms) => formatDateTime(ms);

// "in 2 min", "3 sec. ago" in the console's language.
/** @type {(ms: number | string | null | undefined, now?: number) => string} */
export const relativeMs = (ms, now = Date.now()) => formatRelative(ms, now);

// <input type="datetime-local"> value <-> epoch ms (browser's zone).
/** @param {string} value */
export function localInputToMs(value) {
  if (!value) return undefined;
  const ms = new Date(value).getTime();
  return Number.isFinite(ms) ? ms : undefined;
}
/** @param {number | string | null | undefined} ms */
export function msToLocalInput(ms) {
  if (!ms) return '';
  const d = new Date(Number(ms));
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}T${pad(d.getHours())}:${pad(d.getMinutes())}`;
}

export function timeZones() {
  try {
    const zones = Intl.supportedValuesOf('timeZone');
    return zones.includes('UTC') ? zones : ['UTC', ...zones];
  } catch (_) {
    return ['UTC', 'Europe/London', 'Europe/Berlin', 'America/New_York', 'Asia/Shanghai', 'Asia/Tokyo'];
  }
}

export const browserZone = () => {
  try {
    return Intl.DateTimeFormat().resolvedOptions().timeZone || 'UTC';
  } catch (_) {
    return 'UTC';
  }
};

// Calls fn at most once per `ms` after the last call.
/**
 * @template {unknown[]} A
 * @param {(...args: A) => void} fn
 * @param {number} ms
 * @returns {((...args: A) => void) & { cancel: () => void }}
 */
export function debounce(fn, ms) {
  /** @type {ReturnType<typeof setTimeout> | undefined} */
  let t;
  const d = (/** @type {A} */ ...args) => {
    clearTimeout(t);
    t = setTimeout(() => fn(...args), ms);
  };
  d.cancel = () => clearTimeout(t);
  return d;
}

/** @type {import('./types.js').ScheduleType[]} */
export const SCHEDULE_TYPES = ['CRON', 'FIX_RATE', 'FIX_DELAY', 'NONE'];
/** @type {import('./types.js').MisfireStrategy[]} */
export const MISFIRE = ['DO_NOTHING', 'FIRE_ONCE_NOW'];
/** @type {import('./types.js').RouteStrategy[]} */
export const ROUTES = [
  'FIRST', 'LAST', 'ROUND', 'RANDOM', 'CONSISTENT_HASH', 'LEAST_FREQUENTLY_USED', 'LEAST_RECENTLY_USED',
  'FAILOVER', 'BUSYOVER', 'SHARDING_BROADCAST',
];
/** @type {import('./types.js').BlockStrategy[]} */
export const BLOCKS = ['SERIAL_EXECUTION', 'DISCARD_LATER', 'COVER_EARLY'];
/** @type {import('./types.js').ConcurrencyPolicy[]} */
export const CONCURRENCY = ['ALLOW', 'FORBID'];
/** @type {import('./types.js').GlueType[]} */
export const GLUE_TYPES = [
  'BEAN', 'GLUE_SHELL', 'GLUE_PYTHON', 'GLUE_PYTHON2', 'GLUE_NODEJS', 'GLUE_PHP', 'GLUE_POWERSHELL', 'GLUE_GROOVY',
];
/** @type {import('./types.js').LogStatus[]} */
export const LOG_STATUSES = ['PENDING', 'RUNNING', 'SUCCESS', 'FAILED', 'SKIPPED'];
/** @type {import('./types.js').AddressType[]} */
export const ADDRESS_TYPES = ['AUTO', 'MANUAL'];
/** @type {import('./types.js').Role[]} */
export const ROLES = ['USER', 'ADMIN'];
// Workflows (a DAG of jobs): the schedules a workflow may have (no FIX_DELAY: its runs may overlap) and its
// edges' conditions.
/** @type {import('./types.js').WorkflowScheduleType[]} */
export const WORKFLOW_SCHEDULE_TYPES = ['CRON', 'FIX_RATE', 'NONE'];
/** @type {import('./types.js').EdgeCondition[]} */
export const EDGE_CONDITIONS = ['SUCCESS', 'FAILURE', 'ALWAYS'];

// <Select> options for protocol words: the value kept as it is, its translated label next to it
// ("ROUND — round robin", "轮询（ROUND）"); `prefix` names the labels ("enum.route").
/** @type {(values: readonly string[], prefix: string) => Array<[string, string]>} */
export const enumOptions = (values, prefix) =>
  values.map((v) => [v, t('common.enumOption', { value: v, label: t(`${prefix}.${v}`) })]);

// A user's role in one executor group (VIEWER < OPERATOR < DEVELOPER < ADMIN, each allowing what the ones
// before it do), from /auth/me's user. The console offers only what the role allows (the API refuses the
// rest anyway): 'operate' (trigger, start, stop, kill) needs OPERATOR, 'write' (create, edit, delete)
// DEVELOPER, 'admin' (the group's title and alert channels) ADMIN.
/** @type {import('./types.js').GroupRoleName[]} */
export const GROUP_ROLES = ['VIEWER', 'OPERATOR', 'DEVELOPER', 'ADMIN'];
/** @typedef {'read' | 'operate' | 'write' | 'admin'} Action */
/** @type {Record<Action, import('./types.js').GroupRoleName>} */
const NEEDED = { read: 'VIEWER', operate: 'OPERATOR', write: 'DEVELOPER', admin: 'ADMIN' };
/**
 * Whom the access rules ask about: /auth/me's user (null: nobody is logged in).
 * @typedef {Pick<import('./types.js').User, 'role' | 'group_roles'> | null | undefined} Someone
 */

// The rank of `user`'s role in group `groupId` (an index of GROUP_ROLES; -1: no access). A global ADMIN is
// ADMIN everywhere.
/**
 * @param {Someone} user
 * @param {number | string} groupId a route's group id is a string
 */
export function roleIn(user, groupId) {
  if (!user) return -1;
  if (user.role === 'ADMIN') return GROUP_ROLES.length - 1;
  const grant = (user.group_roles || []).find((g) => String(g.group_id) === String(groupId));
  return grant ? GROUP_ROLES.indexOf(grant.role) : -1;
}

// Whether `user` may `what` ('read', 'operate', 'write', 'admin') in group `groupId`.
/**
 * @param {Someone} user
 * @param {number | string} groupId
 * @param {Action} what
 */
export function can(user, groupId, what) {
  const needed = GROUP_ROLES.indexOf(NEEDED[what]);
  return needed >= 0 && roleIn(user, groupId) >= needed;
}

// Whether `user` may `what` in some group (a global ADMIN: always).
/** @type {(user: Someone, what: Action) => boolean} */
export const canSomewhere = (user, what) =>
  !!user && (user.role === 'ADMIN' || (user.group_roles || []).some((g) => can(user, g.group_id, what)));

// A user's login_source ('local', 'ldap', 'oidc:<provider name>'; none from an older admin: local) as
// { kind: 'local' | 'ldap' | 'oidc', name: the provider's name or '' }.
/**
 * @param {string | null | undefined} source
 * @returns {{ kind: string, name: string }}
 */
export function loginSource(source) {
  const s = String(source || 'local');
  if (s.startsWith('oidc:')) return { kind: 'oidc', name: s.slice(5) };
  return { kind: s, name: '' };
}

// The title of OpenID provider `name` from /auth/providers' answer (its name when it is not listed).
/**
 * @param {Partial<import('./types.js').Providers> | null | undefined} providers
 * @param {string} name
 */
export function providerTitle(providers, name) {
  const p = ((providers && providers.oidc) || []).find((x) => x.name === name);
  return (p && p.title) || name;
}

// Where a user who is not local logs in, as text: the directory, or the OpenID provider's title.
/**
 * @param {string | null | undefined} source
 * @param {Partial<import('./types.js').Providers> | null | undefined} providers
 */
export function loginSourceText(source, providers) {
  const { kind, name } = loginSource(source);
  if (kind === 'oidc') return providerTitle(providers, name);
  return kind === 'ldap' ? t('users.via.ldap') : String(source);
}


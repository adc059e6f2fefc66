// Formatting and small helpers. Everything returned here is a string or number: the caller renders it
// as text.
const pad = (n, w = 2) => String(n).padStart(w, '0');

// "2026-01-31 14:05:09" in the browser's zone; '' for 0.
export function formatMs(ms) {
  if (!ms) return '';
  const d = new Date(ms);
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())} ${pad(d.getHours())}:${pad(
    d.getMinutes(),
  )}:${pad(d.getSeconds())}`;
}

// "3 s ago", "in 2 min".
export function relativeMs(ms, now = Date.now()) {
  if (!ms) return '';
  const diff = Math.round((ms - now) / 1000);
  const a = Math.abs(diff);
  const text = a < 60 ? `${a} s` : a < 3600 ? `${Math.round(a / 60)} min` : a < 86400 ? `${Math.round(a / 3600)} h` : `${Math.round(a / 86400)} d`;
  return diff >= 0 ? `in ${text}` : `${text} ago`;
}

// <input type="datetime-local"> value <-> epoch ms (browser's zone).
export function localInputToMs(value) {
  if (!value) return undefined;
  const ms = new Date(value).getTime();
  return Number.isFinite(ms) ? ms : undefined;
}
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
export function debounce(fn, ms) {
  let t = null;
  const d = (...args) => {
    clearTimeout(t);
    t = setTimeout(() => fn(...args), ms);
  };
  d.cancel = () => clearTimeout(t);
  return d;
}

export const SCHEDULE_TYPES = ['CRON', 'FIX_RATE', 'FIX_DELAY', 'NONE'];
export const MISFIRE = ['DO_NOTHING', 'FIRE_ONCE_NOW'];
export const ROUTES = [
  'FIRST', 'LAST', 'ROUND', 'RANDOM', 'CONSISTENT_HASH', 'LEAST_FREQUENTLY_USED', 'LEAST_RECENTLY_USED',
  'FAILOVER', 'BUSYOVER', 'SHARDING_BROADCAST',
];
export const BLOCKS = ['SERIAL_EXECUTION', 'DISCARD_LATER', 'COVER_EARLY'];
export const GLUE_TYPES = [
  'BEAN', 'GLUE_SHELL', 'GLUE_PYTHON', 'GLUE_PYTHON2', 'GLUE_NODEJS', 'GLUE_PHP', 'GLUE_POWERSHELL', 'GLUE_GROOVY',
];
export const LOG_STATUSES = ['PENDING', 'RUNNING', 'SUCCESS', 'FAILED', 'SKIPPED'];

// Unit tests of web/js/schedule.js (node:test, no browser): a schedule as the lists show it, what the live
// preview asks of POST /api/v1/schedules/preview and how it says why it has no fires, and the fields the
// job and workflow forms get for each schedule type (ScheduleFields, called as a function: its Preact nodes
// are inspected, nothing is rendered). Run by ctest (web_unit).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { fakeBrowser } from './browser.mjs';

fakeBrowser();
const i18n = await import('../../../web/js/i18n.js');
const schedule = await import('../../../web/js/schedule.js');
const { Field, Select } = await import('../../../web/js/components.js');
await i18n.setLanguage('en');

const seconds = (n, locale = 'en') =>
  new Intl.NumberFormat(locale, { style: 'unit', unit: 'second', unitDisplay: 'short' }).format(n);

// Every node of a Preact tree (htm gives an array for several roots), depth first.
function nodes(tree) {
  const out = [];
  const walk = (n) => {
    if (Array.isArray(n)) n.forEach(walk);
    else if (n && typeof n === 'object' && 'props' in n) {
      out.push(n);
      walk(n.props.children);
    }
  };
  walk(tree);
  return out;
}

function fields(value, err = () => '') {
  const changes = [];
  const tree = schedule.ScheduleFields({
    types: ['CRON', 'FIX_RATE', 'FIX_DELAY', 'NONE'], value, err, list: 'zones-1',
    onChange: (field, v) => changes.push([field, v]),
  });
  const all = nodes(tree);
  return {
    changes,
    labels: all.filter((n) => n.type === Field).map((n) => n.props.label),
    field: (label) => all.find((n) => n.type === Field && n.props.label === label),
    input: (name) => all.find((n) => n.type === 'input' && n.props.name === name),
    select: all.find((n) => n.type === Select),
    datalist: all.find((n) => n.type === 'datalist'),
  };
}

test('a schedule in a list: manual only, the cron expression and its zone, every period or a period after each run', async () => {
  const s = (schedule_type, schedule_conf, time_zone = 'UTC') => schedule.scheduleText({ schedule_type, schedule_conf, time_zone });
  assert.equal(s('NONE', ''), 'manual only');
  assert.equal(s('CRON', '0 0 3 * * ?', 'Asia/Shanghai'), '0 0 3 * * ? (Asia/Shanghai)');
  assert.equal(s('FIX_RATE', '300'), `every ${seconds(300)}`);
  assert.equal(s('FIX_DELAY', '90'), `${seconds(90)} after each run`);
  await i18n.setLanguage('zh-CN');
  try {
    assert.equal(s('NONE', ''), '仅手动触发');
    assert.equal(s('CRON', '0 0 3 * * ?', 'Asia/Shanghai'), '0 0 3 * * ?（Asia/Shanghai）');
    assert.equal(s('FIX_RATE', '300'), `每 ${seconds(300, 'zh-CN')}`);
  } finally {
    await i18n.setLanguage('en');
  }
});

test('the preview asks for the next 5 fires in the schedule\'s zone, with the job\'s calendars and window', () => {
  assert.deepEqual(schedule.previewRequest({
    type: 'CRON', conf: '0 0 * * * ?', zone: 'Europe/Berlin', calendars: [3, 7], start: 1767225600000, end: '1798761600000',
  }), {
    schedule_type: 'CRON', schedule_conf: '0 0 * * * ?', time_zone: 'Europe/Berlin', count: 5,
    calendar_ids: [3, 7], start_ms: 1767225600000, end_ms: 1798761600000,
  });
  // A workflow's: no calendars, no window; a zone not typed yet is UTC; a window that is not a number is none.
  assert.deepEqual(schedule.previewRequest({ type: 'FIX_RATE', conf: '60', zone: '' }), {
    schedule_type: 'FIX_RATE', schedule_conf: '60', time_zone: 'UTC', count: 5, calendar_ids: [], start_ms: 0, end_ms: 0,
  });
  assert.equal(schedule.previewRequest({ type: 'CRON', conf: '* * * * * ?', start: 'soon' }).start_ms, 0);
});

test('why the preview has no fires: the first field error with its label, else the error\'s message', () => {
  const invalid = (errors) => ({ name: 'ApiError', status: 400, code: 'invalid', message: 'invalid schedule', errors });
  assert.equal(schedule.previewProblem(invalid([
    { field: 'schedule_conf', code: 'schedule', message: 'field 3: 61 is out of range' },
    { field: 'time_zone', code: 'required', message: 'time_zone is required' },
  ])), 'Schedule: does not parse (field 3: 61 is out of range)');
  assert.equal(schedule.previewProblem(invalid([
    { field: 'time_zone', code: 'format', params: { what: 'time_zone' }, message: 'unknown zone Mars/Base' },
  ])), 'Time zone: is not valid (unknown zone Mars/Base)');
  assert.equal(schedule.previewProblem(invalid([])), 'invalid schedule');
  assert.equal(schedule.previewProblem(new Error('Failed to fetch')), 'Failed to fetch');
});

test('a cron schedule\'s fields: its type, the expression with the cron hint, the zone with its list', () => {
  const f = fields({ schedule_type: 'CRON', schedule_conf: '0 * * * * ?', time_zone: 'Asia/Tokyo' });
  assert.deepEqual(f.labels, ['Schedule type', 'Cron expression (Quartz)', 'Time zone']);
  assert.equal(f.field('Cron expression (Quartz)').props.hint, 'sec min hour day-of-month month day-of-week [year]');
  assert.equal(f.input('schedule_conf').props.value, '0 * * * * ?');
  assert.equal(f.input('time_zone').props.value, 'Asia/Tokyo');
  assert.equal(f.input('time_zone').props.list, 'zones-1');
  assert.equal(f.datalist.props.id, 'zones-1');
  const zones = nodes(f.datalist.props.children).map((n) => n.props.value);
  assert.ok(zones.includes('UTC') && zones.includes('Asia/Shanghai'), 'the zones offered include UTC');
  assert.equal(f.select.props.value, 'CRON');
  assert.deepEqual(f.select.props.options, [
    ['CRON', 'CRON — cron expression'], ['FIX_RATE', 'FIX_RATE — fixed rate'],
    ['FIX_DELAY', 'FIX_DELAY — fixed delay'], ['NONE', 'NONE — none: triggered only'],
  ]);
});

test('a fixed rate or delay takes whole seconds; a schedule of type NONE has no expression field', () => {
  for (const type of ['FIX_RATE', 'FIX_DELAY']) {
    const f = fields({ schedule_type: type, schedule_conf: '30', time_zone: 'UTC' });
    assert.deepEqual(f.labels, ['Schedule type', 'Seconds', 'Time zone'], type);
    assert.equal(f.field('Seconds').props.hint, 'whole seconds ≥ 1');
  }
  const none = fields({ schedule_type: 'NONE', schedule_conf: '', time_zone: 'UTC' });
  assert.deepEqual(none.labels, ['Schedule type', 'Time zone']);
  assert.equal(none.input('schedule_conf'), undefined);
});

test('the fields report each change as (field, value) and show each field\'s error', () => {
  const f = fields({ schedule_type: 'CRON', schedule_conf: '0 * * * * ?', time_zone: 'UTC' },
    (field) => (field === 'schedule_conf' ? 'Schedule: does not parse' : ''));
  f.select.props.onChange('FIX_RATE');
  f.input('schedule_conf').props.onInput({ target: { value: '0 0 * * * ?' } });
  f.input('time_zone').props.onInput({ target: { value: 'Europe/Paris' } });
  assert.deepEqual(f.changes, [['schedule_type', 'FIX_RATE'], ['schedule_conf', '0 0 * * * ?'], ['time_zone', 'Europe/Paris']]);
  assert.equal(f.field('Cron expression (Quartz)').props.error, 'Schedule: does not parse');
  assert.equal(f.field('Time zone').props.error, '');
});

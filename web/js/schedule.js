// @ts-check
// A schedule's part of the job and workflow forms: its type, expression and time zone fields, and the live
// preview of its next fires. Each form keeps its own state: these only show it and report the changes. And a
// schedule as one line of text, for the lists of jobs and workflows.
import { html, useEffect, useMemo, useState } from './lib.js';
import { api } from './api.js';
import { Field, Select } from './components.js';
import { debounce, enumOptions, formatMs, timeZones } from './util.js';
import { fieldErrorText, fieldLabel, formatNumber, formatUnit, t } from './i18n.js';

/** @typedef {import('./types.js').ScheduleType} ScheduleType */
/**
 * The schedule of a job or a workflow (or of its form, being typed).
 * @typedef {{ schedule_type: ScheduleType, schedule_conf: string, time_zone: string }} Schedule
 */

const ZONES = timeZones();

// A schedule in a list's row: "manual only" (NONE), the cron expression and its zone, "every 5 min"
// (FIX_RATE) or "5 min after each run" (FIX_DELAY, jobs only); a period is whole seconds.
/** @param {Schedule} s */
export function scheduleText(s) {
  if (s.schedule_type === 'NONE') return t('jobs.schedule.none');
  if (s.schedule_type === 'CRON') return t('jobs.schedule.cron', { conf: s.schedule_conf, zone: s.time_zone });
  const period = formatUnit(Number(s.schedule_conf), 'second');
  return t(s.schedule_type === 'FIX_RATE' ? 'jobs.schedule.fixRate' : 'jobs.schedule.fixDelay', { period });
}

// What the preview asks of POST /api/v1/schedules/preview: the next 5 fires of the schedule in its zone (UTC
// when none is typed yet), on the way skipping the days of `calendars` (ids) and keeping to the window
// [start, end] (epoch ms; 0 or nothing: none).
/**
 * @param {{
 *   type: ScheduleType, conf: string, zone?: string, calendars?: number[], start?: number | string,
 *   end?: number | string,
 * }} schedule
 * @returns {import('./types.js').PreviewRequest}
 */
export function previewRequest({ type, conf, zone, calendars, start, end }) {
  return {
    schedule_type: type, schedule_conf: conf, time_zone: zone || 'UTC', count: 5,
    calendar_ids: calendars || [], start_ms: Number(start) || 0, end_ms: Number(end) || 0,
  };
}

// Why the preview has no fires, as one line: the first field error with its label, else the error's message.
/** @param {import('./i18n.js').ShownError} error */
export function previewProblem(error) {
  const e = error.errors && error.errors[0];
  return e ? t('error.fieldLine', { field: fieldLabel(e.field), message: fieldErrorText(e) }) : error.message;
}

// The schedule_type select (of `types`: a workflow has fewer than a job), the expression when there is one
// (a cron expression or whole seconds) and the time zone. `value` holds schedule_type, schedule_conf and
// time_zone; onChange(field, value) reports a change; err(field) is a field's error text. `list` is the id
// of the zones' datalist (unique on the page).
/**
 * @param {{
 *   types: readonly ScheduleType[], value: Schedule, err: (field: string) => string, list: string,
 *   onChange: (field: 'schedule_type' | 'schedule_conf' | 'time_zone', value: string) => void,
 * }} props
 */
export function ScheduleFields({ types, value, onChange, err, list }) {
  const cron = value.schedule_type === 'CRON';
  return html`
    <${Field} label=${t('field.schedule_type')} error=${err('schedule_type')}>
      <${Select} name="schedule_type" value=${value.schedule_type} onChange=${(v) => onChange('schedule_type', v)}
        options=${enumOptions(types, 'enum.scheduleType')} />
    </${Field}>
    ${value.schedule_type !== 'NONE' && html`<${Field}
        label=${cron ? t('job.cron') : t('job.seconds')} error=${err('schedule_conf')}
        hint=${cron ? t('job.hint.cron') : t('job.hint.seconds')}>
      <input name="schedule_conf" class="mono" value=${value.schedule_conf} onInput=${(e) => onChange('schedule_conf', e.target.value)} autocomplete="off" />
    </${Field}>`}
    <${Field} label=${t('field.time_zone')} error=${err('time_zone')} hint=${t('job.hint.timeZone')}>
      <input name="time_zone" list=${list} value=${value.time_zone} onInput=${(e) => onChange('time_zone', e.target.value)} autocomplete="off" />
      <datalist id=${list}>${ZONES.map((z) => html`<option value=${z}></option>`)}</datalist>
    </${Field}>`;
}

// The next fires of the schedule being typed, from POST /api/v1/schedules/preview (debounced): an invalid
// expression named, and the days `calendars` (ids; none for a workflow) skip on the way.
/**
 * What the preview shows: the fires asked for last, the days skipped, the last answer's error, and whether an
 * answer is awaited.
 * @typedef {{
 *   fires: import('./types.js').PreviewFire[], excluded?: import('./types.js').PreviewExcluded[],
 *   error: import('./i18n.js').ShownError | null, busy: boolean,
 * }} PreviewState
 */
/**
 * @param {{
 *   type: ScheduleType, conf: string, zone?: string, calendars?: number[], start?: number | string,
 *   end?: number | string,
 * }} props
 */
export function SchedulePreview({ type, conf, zone, calendars, start, end }) {
  const [state, setState] = useState(/** @type {PreviewState} */ ({ fires: [], error: null, busy: false }));
  const ask = useMemo(
    () =>
      debounce((/** @type {import('./types.js').PreviewRequest} */ body) => {
        /** @type {Promise<import('./types.js').Preview>} */
        const answer = api.post('/api/v1/schedules/preview', body);
        answer
          .then((r) => setState({ fires: r.fires, excluded: r.excluded || [], error: null, busy: false }))
          .catch((error) => setState({ fires: [], excluded: [], error, busy: false }));
      }, 300),
    [],
  );
  useEffect(() => {
    // Nothing to ask of a schedule that never fires by itself; an earlier answer is dropped.
    if (type === 'NONE') {
      setState({ fires: [], excluded: [], error: null, busy: false });
      return undefined;
    }
    setState((s) => ({ ...s, busy: true }));
    ask(previewRequest({ type, conf, zone, calendars, start, end }));
    return () => ask.cancel();
  }, [type, conf, zone, (calendars || []).join(','), start, end]);
  if (type === 'NONE') return html`<div class="preview muted">${t('job.preview.none')}</div>`;
  if (state.error) {
    return html`<div class="preview invalid" data-testid="schedule-preview" role="status">✗ ${previewProblem(state.error)}</div>`;
  }
  const count = state.fires.length;
  const params = { count, n: formatNumber(count), zone: zone || 'UTC' };
  return html`<div class=${`preview${state.busy ? ' busy' : ''}`} data-testid="schedule-preview" role="status">
    <div class="muted">${type === 'FIX_DELAY' ? t('job.preview.nextFixDelay', params) : t('job.preview.next', params)}</div>
    <ol>${state.fires.map((f) => html`<li class="mono" title=${t('job.preview.yourTime', { time: formatMs(f.ms) })}>${f.iso.replace('T', ' ')}</li>`)}</ol>
    ${state.excluded && state.excluded.length > 0 && html`<div class="muted" data-testid="preview-excluded">${t('job.preview.excluded')}
      <ul>${state.excluded.map((x) => html`<li class="mono">${t('job.preview.excludedDay', { date: x.date, name: x.name, calendar: x.calendar })}</li>`)}</ul></div>`}
  </div>`;
}

// A schedule's part of the job and workflow forms: its type, expression and time zone fields, and the live
// preview of its next fires. Each form keeps its own state: these only show it and report the changes.
import { html, useEffect, useMemo, useState } from './lib.js';
import { api } from './api.js';
import { Field, Select } from './components.js';
import { debounce, enumOptions, formatMs, timeZones } from './util.js';
import { fieldErrorText, fieldLabel, formatNumber, t } from './i18n.js';

const ZONES = timeZones();

// The schedule_type select (of `types`: a workflow has fewer than a job), the expression when there is one
// (a cron expression or whole seconds) and the time zone. `value` holds schedule_type, schedule_conf and
// time_zone; onChange(field, value) reports a change; err(field) is a field's error text. `list` is the id
// of the zones' datalist (unique on the page).
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
export function SchedulePreview({ type, conf, zone, calendars, start, end }) {
  const [state, setState] = useState({ fires: [], error: null, busy: false });
  const ask = useMemo(
    () =>
      debounce((body) => {
        api
          .post('/api/v1/schedules/preview', body)
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
    ask({
      schedule_type: type, schedule_conf: conf, time_zone: zone || 'UTC', count: 5,
      calendar_ids: calendars || [], start_ms: Number(start) || 0, end_ms: Number(end) || 0,
    });
    return () => ask.cancel();
  }, [type, conf, zone, (calendars || []).join(','), start, end]);
  if (type === 'NONE') return html`<div class="preview muted">${t('job.preview.none')}</div>`;
  if (state.error) {
    const e = state.error.errors && state.error.errors[0];
    return html`<div class="preview invalid" data-testid="schedule-preview" role="status">✗ ${e
      ? t('error.fieldLine', { field: fieldLabel(e.field), message: fieldErrorText(e) })
      : state.error.message}</div>`;
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

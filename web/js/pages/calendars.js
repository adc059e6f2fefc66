// @ts-check
// Calendars (docs/operations.md, "Calendars and windows"): days on which the jobs that keep a calendar do
// not fire. Everyone lists them (to keep them on jobs); admins create them, from typed dates or an
// iCalendar (.ics) file, change and delete them.
import { html, useState } from '../lib.js';
import { api } from '../api.js';
import { ConfirmButton, ErrorBanner, Field, Loading, Notice, PageHeader, Select, useLoad } from '../components.js';
import { enumOptions, timeZones } from '../util.js';
import { t } from '../i18n.js';

export const CALENDAR_KINDS = ['BUSINESS_DAYS', 'EXCLUDE_DATES'];
const FIELDS = ['name', 'description', 'kind', 'time_zone', 'days', 'ics'];
const ZONES = timeZones();
const ICS_TYPES = '.ics,text/calendar';

/** @typedef {import('../types.js').Calendar} Calendar */
/** @typedef {import('../types.js').CalendarDay} CalendarDay */

// "2026-12-25 Christmas Day" per line <-> [{date, name}].
/** @type {(days: CalendarDay[]) => string} */
const daysText = (days) => days.map((d) => (d.name ? `${d.date} ${d.name}` : d.date)).join('\n');
/**
 * @param {string} text
 * @returns {CalendarDay[]}
 */
function parseDays(text) {
  return text.split('\n').map((l) => l.trim()).filter((l) => l !== '').map((l) => {
    const at = l.indexOf(' ');
    return at < 0 ? { date: l, name: '' } : { date: l.slice(0, at), name: l.slice(at + 1).trim() };
  });
}

/**
 * The calendar form's fields as typed: the days as text, an .ics file's text and name once one is chosen.
 * @typedef {{
 *   name: string, description: string, kind: string, time_zone: string, days: string, ics: string, icsName: string,
 * }} CalendarDraft
 */

/** @param {{ calendar: Calendar | null, onDone: (saved: Calendar) => void, onCancel: () => void }} props */
function CalendarForm({ calendar, onDone, onCancel }) {
  const [c, setC] = useState(/** @type {CalendarDraft} */ ({
    name: calendar ? calendar.name : '',
    description: calendar ? calendar.description : '',
    kind: calendar ? calendar.kind : 'BUSINESS_DAYS',
    time_zone: calendar ? calendar.time_zone : 'UTC',
    days: calendar ? daysText(calendar.days) : '',
    ics: '',
    icsName: '',
  }));
  const [error, setError] = useState(/** @type {import('../api.js').ApiError | null} */ (null));
  const err = (/** @type {string} */ k) => (error ? error.field(k) : '');
  /**
   * @template {keyof CalendarDraft} K
   * @param {K} k
   */
  const set = (k) => (/** @type {CalendarDraft[K]} */ v) => setC({ ...c, [k]: v });
  const readFile = (/** @type {{ target: HTMLInputElement }} */ e) => {
    const file = e.target.files && e.target.files[0];
    if (!file) return;
    file.text().then((text) => setC((now) => ({ ...now, ics: text, icsName: file.name })));
  };
  const save = async (/** @type {Event} */ e) => {
    e.preventDefault();
    /** @type {{ name: string, description: string, kind: string, time_zone: string, days: CalendarDay[], ics?: string }} */
    const body = { name: c.name, description: c.description, kind: c.kind, time_zone: c.time_zone, days: parseDays(c.days) };
    if (c.ics) body.ics = c.ics;
    try {
      /** @type {Calendar} */
      const saved = calendar ? await api.put(`/api/v1/calendars/${calendar.id}`, body) : await api.post('/api/v1/calendars', body);
      onDone(saved);
    } catch (ex) {
      setError(ex);
    }
  };
  return html`<form class="card form" onSubmit=${save} data-testid="calendar-form">
    <h2>${calendar ? t('calendars.edit', { name: calendar.name }) : t('calendars.new')}</h2>
    <${ErrorBanner} error=${error} shownFields=${FIELDS} />
    <div class="grid">
      <${Field} label=${t('field.name')} error=${err('name')}>
        <input name="calendar_name" required maxlength="64" value=${c.name} onInput=${(e) => set('name')(e.target.value)} />
      </${Field}>
      <${Field} label=${t('field.kind')} error=${err('kind')} hint=${t('calendars.hint.kind')}>
        <${Select} name="calendar_kind" value=${c.kind} onChange=${set('kind')} options=${enumOptions(CALENDAR_KINDS, 'enum.calendarKind')} />
      </${Field}>
      <${Field} label=${t('field.time_zone')} error=${err('time_zone')} hint=${t('calendars.hint.zone')}>
        <input name="calendar_zone" list="calendar-tz-list" value=${c.time_zone} onInput=${(e) => set('time_zone')(e.target.value)} autocomplete="off" />
        <datalist id="calendar-tz-list">${ZONES.map((z) => html`<option value=${z}></option>`)}</datalist>
      </${Field}>
      <${Field} label=${t('field.description')} error=${err('description')}>
        <input name="calendar_description" maxlength="255" value=${c.description} onInput=${(e) => set('description')(e.target.value)} />
      </${Field}>
      <${Field} label=${t('calendars.days')} error=${err('days')} hint=${t('calendars.hint.days')} wide>
        <textarea name="days" rows="5" class="mono" value=${c.days} onInput=${(e) => set('days')(e.target.value)}></textarea>
      </${Field}>
      <${Field} label=${t('field.ics')} error=${err('ics')} hint=${c.icsName ? t('calendars.icsChosen', { file: c.icsName }) : t('calendars.hint.ics')} wide>
        <input name="ics" type="file" accept=${ICS_TYPES} onChange=${readFile} />
      </${Field}>
    </div>
    <div class="form-actions">
      <button type="button" onClick=${onCancel}>${t('common.cancel')}</button>
      <button type="submit" class="primary" data-testid="save-calendar">${calendar ? t('common.save') : t('calendars.create')}</button>
    </div>
  </form>`;
}

/** @param {import('../components.js').PageProps} props */
export function CalendarsPage({ user }) {
  const admin = user.role === 'ADMIN';
  /** @type {import('../components.js').Load<import('../types.js').List<Calendar>>} */
  const calendars = useLoad(() => api.get('/api/v1/calendars'), []);
  const [editing, setEditing] = useState(/** @type {Calendar | 'new' | null} */ (null)); // null, 'new' or a calendar
  const [notice, setNotice] = useState('');
  const [error, setError] = useState(/** @type {import('../api.js').ApiError | null} */ (null));
  const remove = async (/** @type {Calendar} */ c) => {
    setError(null);
    try {
      await api.del(`/api/v1/calendars/${c.id}`);
      setNotice(t('calendars.deleted', { name: c.name }));
      calendars.reload();
    } catch (ex) {
      setError(ex);
    }
  };
  return html`<section>
    <${PageHeader} title=${t('calendars.title')}>
      ${admin && !editing && html`<button type="button" class="primary" onClick=${() => setEditing('new')} data-testid="new-calendar">${t('calendars.newButton')}</button>`}
    </${PageHeader}>
    <p class="muted">${t('calendars.intro')}</p>
    <${Notice} text=${notice} onClose=${() => setNotice('')} />
    <${ErrorBanner} error=${error || calendars.error} />
    ${editing && html`<${CalendarForm} key=${editing === 'new' ? 'new' : editing.id} calendar=${editing === 'new' ? null : editing}
      onCancel=${() => setEditing(null)}
      onDone=${(c) => { setEditing(null); setNotice(t('calendars.saved', { name: c.name, count: c.days.length, n: c.days.length })); calendars.reload(); }} />`}
    ${!calendars.data ? html`<${Loading} />` : html`<div class="table-wrap"><table class="list cards" data-testid="calendars-table">
      <thead><tr><th>${t('common.id')}</th><th>${t('field.name')}</th><th>${t('field.kind')}</th><th>${t('field.time_zone')}</th><th>${t('calendars.days')}</th><th>${t('calendars.col.jobs')}</th>${admin && html`<th>${t('common.actions')}</th>`}</tr></thead>
      <tbody>
        ${calendars.data.items.length === 0 && html`<tr><td colspan="7" class="muted">${t('calendars.empty')}</td></tr>`}
        ${calendars.data.items.map((c) => html`<tr key=${c.id} data-calendar-id=${c.id}>
          <td data-label=${t('common.id')}>${c.id}</td>
          <td data-label=${t('field.name')}>${c.name}${c.description && html`<div class="muted small">${c.description}</div>`}</td>
          <td data-label=${t('field.kind')}>${t(`enum.calendarKind.${c.kind}`)}</td>
          <td data-label=${t('field.time_zone')}>${c.time_zone}</td>
          <td data-label=${t('calendars.days')} title=${daysText(c.days)}>${t('calendars.dayCount', { count: c.days.length, n: c.days.length })}</td>
          <td data-label=${t('calendars.col.jobs')}>${c.jobs}</td>
          ${admin && html`<td class="row-actions" data-label="">
            <button type="button" onClick=${() => setEditing(c)}>${t('common.edit')}</button>
            <${ConfirmButton} label=${t('common.delete')} confirmLabel=${t('common.deleteConfirm')} onConfirm=${() => remove(c)} />
          </td>`}
        </tr>`)}
      </tbody>
    </table></div>`}
  </section>`;
}

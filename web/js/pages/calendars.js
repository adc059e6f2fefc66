// @ts-check
// Calendars (docs/operations.md, "Calendars and windows"): days on which the jobs that keep a calendar do
// not fire. Everyone lists them (to keep them on jobs); admins create them, from typed dates or an
// iCalendar (.ics) file, change and delete them.
import { html } from '../lib.js';
import { Field, FormCard, ResourcePage, Select, saveResource, useDraft } from '../components.js';
import { enumOptions, timeZones } from '../util.js';
import { t } from '../i18n.js';

export const CALENDAR_KINDS = ['BUSINESS_DAYS', 'EXCLUDE_DATES'];
const FIELDS = ['name', 'description', 'kind', 'time_zone', 'days', 'ics'];
const ZONES = timeZones();
const ICS_TYPES = '.ics,text/calendar';
const PATH = '/api/v1/calendars';

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

/** @param {import('../components.js').ResourceFormProps<Calendar>} props */
function CalendarForm({ item: calendar, onDone, onCancel }) {
  const { draft: c, setDraft, set, error, err, submit } = useDraft(/** @type {CalendarDraft} */ ({
    name: calendar ? calendar.name : '',
    description: calendar ? calendar.description : '',
    kind: calendar ? calendar.kind : 'BUSINESS_DAYS',
    time_zone: calendar ? calendar.time_zone : 'UTC',
    days: calendar ? daysText(calendar.days) : '',
    ics: '',
    icsName: '',
  }), (d) => {
    /** @type {{ name: string, description: string, kind: string, time_zone: string, days: CalendarDay[], ics?: string }} */
    const body = { name: d.name, description: d.description, kind: d.kind, time_zone: d.time_zone, days: parseDays(d.days) };
    if (d.ics) body.ics = d.ics;
    return saveResource(PATH, calendar, body);
  }, onDone);
  const readFile = (/** @type {{ target: HTMLInputElement }} */ e) => {
    const file = e.target.files && e.target.files[0];
    if (!file) return;
    file.text().then((text) => setDraft((now) => ({ ...now, ics: text, icsName: file.name })));
  };
  return html`<${FormCard} testid="calendar-form" title=${calendar ? t('calendars.edit', { name: calendar.name }) : t('calendars.new')}
    error=${error} shownFields=${FIELDS} onSubmit=${submit} onCancel=${onCancel}
    saveTestid="save-calendar" saveLabel=${calendar ? t('common.save') : t('calendars.create')}>
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
  </${FormCard}>`;
}

/** @param {import('../components.js').PageProps} props */
export function CalendarsPage({ user }) {
  const admin = user.role === 'ADMIN';
  /** @type {import('../components.js').ResourcePageProps<Calendar>} */
  const page = {
    title: t('calendars.title'),
    intro: t('calendars.intro'),
    path: PATH,
    canCreate: admin,
    newButton: { label: t('calendars.newButton'), testid: 'new-calendar' },
    form: CalendarForm,
    savedText: (c) => t('calendars.saved', { name: c.name, count: c.days.length, n: c.days.length }),
    deletedText: (c) => t('calendars.deleted', { name: c.name }),
    tableTestid: 'calendars-table',
    empty: t('calendars.empty'),
    rowAttrs: (c) => ({ 'data-calendar-id': c.id }),
    columns: [
      { label: t('common.id'), cell: (c) => c.id },
      { label: t('field.name'), cell: (c) => html`${c.name}${c.description && html`<div class="muted small">${c.description}</div>`}` },
      { label: t('field.kind'), cell: (c) => t(`enum.calendarKind.${c.kind}`) },
      { label: t('field.time_zone'), cell: (c) => c.time_zone },
      { label: t('calendars.days'), cell: (c) => t('calendars.dayCount', { count: c.days.length, n: c.days.length }), attrs: (c) => ({ title: daysText(c.days) }) },
      { label: t('calendars.col.jobs'), cell: (c) => c.jobs },
      admin && { label: t('common.actions'), cardLabel: '', cls: 'row-actions', cell: (c, a) => [a.editButton(c), a.deleteButton(c)] },
    ],
  };
  return html`<${ResourcePage} ...${page} />`;
}

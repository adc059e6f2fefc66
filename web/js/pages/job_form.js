// @ts-check
import { html, useEffect, useState } from '../lib.js';
import { api } from '../api.js';
import { ErrorBanner, Field, IdPicker, Loading, Notice, PageHeader, Select, navigate, useLoad } from '../components.js';
import {
  BLOCKS, CONCURRENCY, GLUE_TYPES, MISFIRE, ROUTES, SCHEDULE_TYPES, browserZone, can, enumOptions, formatMs,
} from '../util.js';
import { t } from '../i18n.js';
import { ScheduleFields, SchedulePreview } from '../schedule.js';

/** @typedef {import('../types.js').Job} Job */
/** @typedef {import('../types.js').Group} Group */
/**
 * The job form's fields: a job's editable fields as the inputs leave them (a number may be typed text, the
 * tags the text "a, b", the group '' when the user may write in none), and a saved job's stop_reason.
 * @typedef {Object} JobDraft
 * @property {number | ''} group_id
 * @property {string} description
 * @property {string} author
 * @property {string} alarm_email
 * @property {string} alarm_webhook
 * @property {import('../types.js').ScheduleType} schedule_type
 * @property {string} schedule_conf
 * @property {string} time_zone
 * @property {import('../types.js').MisfireStrategy} misfire_strategy
 * @property {import('../types.js').RouteStrategy} route_strategy
 * @property {string} handler
 * @property {string} param
 * @property {import('../types.js').BlockStrategy} block_strategy
 * @property {number | string} timeout_s
 * @property {number | string} retry_count
 * @property {number | string} retry_backoff_s
 * @property {import('../types.js').GlueType} glue_type
 * @property {string} glue_source
 * @property {string} glue_remark
 * @property {number[]} child_job_ids
 * @property {string[] | string} tags
 * @property {number[]} alert_channel_ids
 * @property {number[]} calendar_ids
 * @property {number} start_ms
 * @property {number} end_ms
 * @property {import('../types.js').ConcurrencyPolicy} concurrency_policy
 * @property {number | string} max_concurrent
 * @property {string} [stop_reason]
 */

/** @type {(keyof JobDraft)[]} */
const EDITABLE = [
  'group_id', 'description', 'author', 'alarm_email', 'alarm_webhook', 'schedule_type', 'schedule_conf', 'time_zone',
  'misfire_strategy', 'route_strategy', 'handler', 'param', 'block_strategy', 'timeout_s', 'retry_count',
  'retry_backoff_s', 'glue_type', 'glue_source', 'glue_remark', 'child_job_ids', 'tags',
  'alert_channel_ids', 'calendar_ids', 'start_ms', 'end_ms', 'concurrency_policy', 'max_concurrent',
];
/** @type {(keyof JobDraft)[]} */
const NUMBERS = ['group_id', 'timeout_s', 'retry_count', 'retry_backoff_s', 'max_concurrent'];
const SHOWN_FIELDS = EDITABLE;

/**
 * @param {Group[]} groups those the user may write in
 * @returns {JobDraft}
 */
function blankJob(groups) {
  return {
    group_id: groups.length > 0 ? groups[0].id : '',
    description: '',
    author: '',
    alarm_email: '',
    alarm_webhook: '',
    schedule_type: 'CRON',
    schedule_conf: '0 * * * * ?',
    time_zone: browserZone(),
    misfire_strategy: 'DO_NOTHING',
    route_strategy: 'FIRST',
    handler: '',
    param: '',
    block_strategy: 'SERIAL_EXECUTION',
    timeout_s: 0,
    retry_count: 0,
    retry_backoff_s: 10,
    glue_type: 'BEAN',
    glue_source: '',
    glue_remark: '',
    child_job_ids: [],
    tags: [],
    alert_channel_ids: [],
    calendar_ids: [],
    start_ms: 0,
    end_ms: 0,
    concurrency_policy: 'ALLOW',
    max_concurrent: 0,
  };
}

// An instant (epoch ms; 0 = none) <-> the value of an <input type="datetime-local"> in the browser's zone.
/** @param {number} ms */
function toLocalInput(ms) {
  if (!ms) return '';
  const d = new Date(ms);
  const pad = (/** @type {number} */ n) => String(n).padStart(2, '0');
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}T${pad(d.getHours())}:${pad(d.getMinutes())}`;
}
/** @type {(text: string) => number} */
const fromLocalInput = (text) => (text ? new Date(text).getTime() : 0);

/**
 * @param {{ jobId: string, onLoad: (version: import('../types.js').GlueVersion) => void }} props
 */
function GlueHistory({ jobId, onLoad }) {
  /** @type {import('../components.js').Load<import('../types.js').List<import('../types.js').GlueVersion>>} */
  const { data, error } = useLoad(() => api.get(`/api/v1/jobs/${jobId}/glue`), [jobId]);
  if (error) return html`<${ErrorBanner} error=${error} />`;
  if (!data) return html`<${Loading} />`;
  if (data.items.length === 0) return html`<p class="muted">${t('job.versions.empty')}</p>`;
  return html`<div class="table-wrap"><table class="list compact" data-testid="glue-history">
    <thead><tr><th>${t('job.versions.saved')}</th><th>${t('field.glue_type')}</th><th>${t('field.glue_remark')}</th><th></th></tr></thead>
    <tbody>${data.items.map(
      (v) => html`<tr key=${v.id}><td>${formatMs(v.created_ms)}</td><td>${v.glue_type}</td><td>${v.glue_remark}</td>
        <td><button type="button" onClick=${() => onLoad(v)}>${t('job.versions.load')}</button></td></tr>`,
    )}</tbody>
  </table></div>`;
}

/** @param {import('../components.js').PageProps & { id: string }} props the id, or 'new' */
export function JobFormPage({ id, user }) {
  const isNew = id === 'new';
  /** @type {import('../components.js').Load<import('../types.js').List<Group>>} */
  const groups = useLoad(() => api.get('/api/v1/groups'), []);
  /** @type {import('../components.js').Load<Job | null>} */
  const loaded = useLoad(() => (isNew ? Promise.resolve(null) : api.get(`/api/v1/jobs/${id}`)), [id]);
  /** @type {import('../components.js').Load<import('../types.js').List<Job>>} */
  const others = useLoad(() => api.get('/api/v1/jobs?limit=1000'), []);
  /** @type {import('../components.js').Load<import('../types.js').List<import('../types.js').AlertChannel>>} */
  const channels = useLoad(() => api.get('/api/v1/alert-channels'), []);
  /** @type {import('../components.js').Load<import('../types.js').List<import('../types.js').Calendar>>} */
  const calendars = useLoad(() => api.get('/api/v1/calendars'), []);
  const [job, setJob] = useState(/** @type {JobDraft | null} */ (null));
  const [error, setError] = useState(/** @type {import('../api.js').ApiError | null} */ (null));
  const [notice, setNotice] = useState('');
  const [saving, setSaving] = useState(false);
  const [glueTick, setGlueTick] = useState(0);

  // A job is created in, and moved to, only a group where the user is a DEVELOPER (or more).
  const writable = (/** @type {number | string} */ groupId) => can(user, groupId, 'write');
  useEffect(() => {
    if (isNew && groups.data) setJob(blankJob(groups.data.items.filter((g) => writable(g.id))));
    if (!isNew && loaded.data) setJob(loaded.data);
  }, [isNew, groups.data, loaded.data]);

  if (groups.error || loaded.error) return html`<${ErrorBanner} error=${groups.error || loaded.error} />`;
  // The job may arrive before the groups its form lists: wait for both.
  if (!job || !groups.data) return html`<${Loading} />`;

  /**
   * @template {keyof JobDraft} K
   * @param {K} k
   */
  const set = (k) => (/** @type {JobDraft[K]} */ v) => setJob({ ...job, [k]: v });
  const input = (/** @type {keyof JobDraft} */ k) => (/** @type {{ target: HTMLInputElement }} */ e) => set(k)(e.target.value);
  const err = (/** @type {string} */ k) => (error ? error.field(k) : '');
  const admin = user.role === 'ADMIN';
  const allGroups = groups.data.items;
  const groupList = allGroups.filter((g) => writable(g.id) || String(g.id) === String(job.group_id));
  const script = job.glue_type !== 'BEAN';
  // Script jobs (any glue type but BEAN) are a global ADMIN's to write, and a DEVELOPER's (or the group's
  // ADMIN's) in a group whose allow_scripts a global ADMIN turned on.
  const scriptsIn = (/** @type {number | string} */ groupId) => {
    if (admin) return true;
    const g = allGroups.find((x) => String(x.id) === String(groupId));
    return Boolean(g && g.allow_scripts) && writable(groupId);
  };
  // Changing a job needs DEVELOPER in its group, and a script job also scriptsIn its group: else it is shown,
  // not offered.
  const stored = loaded.data;
  const scriptLocked = !!stored && stored.glue_type !== 'BEAN' && !scriptsIn(stored.group_id);
  const readOnly = !!stored && (!writable(stored.group_id) || scriptLocked);
  const scriptsHere = scriptsIn(job.group_id);
  const glueTypes = scriptsHere ? GLUE_TYPES : [...new Set(['BEAN', job.glue_type])];
  // A script type kept while the job moves to (or is created in) a group where the user may not write one.
  const scriptRefused = script && !scriptsHere && !readOnly;

  const save = async (/** @type {Event} */ e) => {
    e.preventDefault();
    setSaving(true);
    setError(null);
    /** @type {Record<string, unknown>} */
    const body = {};
    for (const k of EDITABLE) {
      let v = job[k];
      if (NUMBERS.includes(k) && v !== '' && Number.isFinite(Number(v))) v = Number(v);
      // Typed as "a, b": the API takes a list (and says which tag is not valid).
      if (k === 'tags' && !Array.isArray(v)) v = String(v).split(',').map((s) => s.trim()).filter((s) => s !== '');
      body[k] = v;
    }
    try {
      if (isNew) {
        /** @type {Job} */
        const created = await api.post('/api/v1/jobs', body);
        navigate(`/jobs/${created.id}`);
        setNotice(t('job.created', { id: created.id }));
      } else {
        /** @type {Job} */
        const saved = await api.put(`/api/v1/jobs/${id}`, body);
        setJob(saved);
        setNotice(t('common.saved'));
        setGlueTick((t) => t + 1);
      }
    } catch (ex) {
      setError(ex);
    } finally {
      setSaving(false);
    }
  };
  const childOptions = ((others.data && others.data.items) || []).filter((j) => String(j.id) !== String(id));

  return html`<section>
    <${PageHeader} title=${isNew ? t('job.new') : t('job.title', { id })}>
      ${!isNew && html`<a class="button" href=${`#/logs?job=${id}&group=${job.group_id}`}>${t('jobs.logs')}</a>`}
      <a class="button" href="#/jobs">${t('job.back')}</a>
    </${PageHeader}>
    ${!isNew && job.stop_reason && html`<div class="banner warn">${t('job.stoppedBy', { reason: job.stop_reason })}</div>`}
    <${Notice} text=${notice} onClose=${() => setNotice('')} />
    <${ErrorBanner} error=${error} shownFields=${SHOWN_FIELDS} />
    ${groupList.length === 0 && html`<div class="banner warn">${groups.data.items.length === 0 ? t('job.noGroups') : t('job.noWritableGroups')}</div>`}
    ${readOnly && html`<div class="banner warn" data-testid="read-only">${scriptLocked && !!stored && writable(stored.group_id) ? t('job.readOnlyScript') : t('job.readOnly')}</div>`}
    <form class="card form" onSubmit=${save} data-testid="job-form">
      <fieldset disabled=${readOnly}><legend>${t('job.section.basic')}</legend>
        <div class="grid">
          <${Field} label=${t('field.group_id')} error=${err('group_id')}>
            <${Select} name="group_id" value=${job.group_id} onChange=${set('group_id')}
              options=${groupList.map((g) => [g.id, t('common.groupOption', { title: g.title, app: g.app_name })])} />
          </${Field}>
          <${Field} label=${t('field.description')} error=${err('description')}>
            <input name="description" required maxlength="255" value=${job.description} onInput=${input('description')} />
          </${Field}>
          <${Field} label=${t('field.author')} error=${err('author')}>
            <input name="author" value=${job.author} onInput=${input('author')} />
          </${Field}>
          <${Field} label=${t('field.alarm_email')} error=${err('alarm_email')} hint=${t('job.hint.alarmEmail')}>
            <input name="alarm_email" value=${job.alarm_email} onInput=${input('alarm_email')} />
          </${Field}>
          <${Field} label=${t('field.tags')} error=${err('tags')} hint=${t('job.hint.tags')}>
            <input name="tags" value=${Array.isArray(job.tags) ? job.tags.join(', ') : job.tags} onInput=${input('tags')} />
          </${Field}>
        </div>
      </fieldset>
      <fieldset disabled=${readOnly}><legend>${t('job.section.schedule')}</legend>
        <div class="grid">
          <${ScheduleFields} types=${SCHEDULE_TYPES} value=${job} onChange=${(k, v) => set(k)(v)} err=${err} list="tz-list" />
          <${Field} label=${t('field.misfire_strategy')} error=${err('misfire_strategy')} hint=${t('job.hint.misfire')}>
            <${Select} name="misfire_strategy" value=${job.misfire_strategy} onChange=${set('misfire_strategy')} options=${enumOptions(MISFIRE, 'enum.misfire')} />
          </${Field}>
          <${Field} label=${t('field.calendar_ids')} error=${err('calendar_ids')} hint=${t('job.hint.calendars')}>
            <${IdPicker} name="calendar_ids" load=${calendars} value=${job.calendar_ids} onChange=${set('calendar_ids')} />
          </${Field}>
          <${Field} label=${t('field.start_ms')} error=${err('start_ms')} hint=${t('job.hint.window')}>
            <input name="start_ms" type="datetime-local" value=${toLocalInput(job.start_ms)} onInput=${(e) => set('start_ms')(fromLocalInput(e.target.value))} />
          </${Field}>
          <${Field} label=${t('field.end_ms')} error=${err('end_ms')} hint=${t('job.hint.window')}>
            <input name="end_ms" type="datetime-local" value=${toLocalInput(job.end_ms)} onInput=${(e) => set('end_ms')(fromLocalInput(e.target.value))} />
          </${Field}>
        </div>
        <${SchedulePreview} type=${job.schedule_type} conf=${job.schedule_conf} zone=${job.time_zone}
          calendars=${job.calendar_ids} start=${job.start_ms} end=${job.end_ms} />
      </fieldset>
      <fieldset disabled=${readOnly}><legend>${t('job.section.execution')}</legend>
        <div class="grid">
          <${Field} label=${t('field.glue_type')} error=${err('glue_type') || (scriptRefused ? t('job.hint.scriptsNotAllowed') : '')}
            hint=${script && scriptsHere && !admin ? t('job.hint.scriptsAllowed') : ''}>
            <${Select} name="glue_type" value=${job.glue_type} onChange=${set('glue_type')} options=${enumOptions(glueTypes, 'enum.glue')} />
          </${Field}>
          ${!script && html`<${Field} label=${t('field.handler')} error=${err('handler')} hint=${t('job.hint.handler')}>
            <input name="handler" class="mono" value=${job.handler} onInput=${input('handler')} />
          </${Field}>`}
          <${Field} label=${t('field.route_strategy')} error=${err('route_strategy')}>
            <${Select} name="route_strategy" value=${job.route_strategy} onChange=${set('route_strategy')} options=${enumOptions(ROUTES, 'enum.route')} />
          </${Field}>
          <${Field} label=${t('field.block_strategy')} error=${err('block_strategy')} hint=${t('job.hint.block')}>
            <${Select} name="block_strategy" value=${job.block_strategy} onChange=${set('block_strategy')} options=${enumOptions(BLOCKS, 'enum.block')} />
          </${Field}>
          <${Field} label=${t('field.concurrency_policy')} error=${err('concurrency_policy')} hint=${t('job.hint.concurrency')}>
            <${Select} name="concurrency_policy" value=${job.concurrency_policy} onChange=${(v) => setJob({ ...job, concurrency_policy: v, max_concurrent: v === 'FORBID' ? 0 : job.max_concurrent })} options=${enumOptions(CONCURRENCY, 'enum.concurrency')} />
          </${Field}>
          ${job.concurrency_policy === 'ALLOW' && html`<${Field} label=${t('field.max_concurrent')} error=${err('max_concurrent')} hint=${t('job.hint.max_concurrent')}>
            <input name="max_concurrent" type="number" min="0" max="1000" value=${job.max_concurrent} onInput=${input('max_concurrent')} />
          </${Field}>`}
          <${Field} label=${t('field.timeout_s')} error=${err('timeout_s')} hint=${t('job.hint.timeout')}>
            <input name="timeout_s" type="number" min="0" value=${job.timeout_s} onInput=${input('timeout_s')} />
          </${Field}>
          <${Field} label=${t('field.retry_count')} error=${err('retry_count')}>
            <input name="retry_count" type="number" min="0" max="100" value=${job.retry_count} onInput=${input('retry_count')} />
          </${Field}>
          <${Field} label=${t('field.retry_backoff_s')} error=${err('retry_backoff_s')}>
            <input name="retry_backoff_s" type="number" min="0" value=${job.retry_backoff_s} onInput=${input('retry_backoff_s')} />
          </${Field}>
          <${Field} label=${t('field.alarm_webhook')} error=${err('alarm_webhook')} hint=${t('job.hint.webhook')}>
            <input name="alarm_webhook" value=${job.alarm_webhook} onInput=${input('alarm_webhook')} />
          </${Field}>
          <${Field} label=${t('field.alert_channel_ids')} error=${err('alert_channel_ids')} hint=${t('job.hint.channels')}>
            <${IdPicker} name="alert_channel_ids" load=${channels} value=${job.alert_channel_ids} onChange=${set('alert_channel_ids')} />
          </${Field}>
          <${Field} label=${t('field.param')} error=${err('param')} wide>
            <textarea name="param" rows="2" class="mono" value=${job.param} onInput=${input('param')}></textarea>
          </${Field}>
          <${Field} label=${t('field.child_job_ids')} error=${err('child_job_ids')} hint=${t('job.hint.children')} wide>
            <select name="child_job_ids" multiple size="4"
              onChange=${(e) => set('child_job_ids')(Array.from(e.target.selectedOptions).map((o) => Number(o.value)))}>
              ${childOptions.map((j) => html`<option value=${j.id} selected=${job.child_job_ids.includes(j.id)}>${j.id}: ${j.description}</option>`)}
            </select>
          </${Field}>
        </div>
      </fieldset>
      ${script && html`<fieldset disabled=${readOnly}><legend>${t('job.section.script', { type: job.glue_type })}</legend>
        <${Field} label=${t('field.glue_source')} error=${err('glue_source')} hint=${t('job.hint.source')} wide>
          <textarea name="glue_source" class="code" rows="12" spellcheck="false" value=${job.glue_source} onInput=${input('glue_source')}></textarea>
        </${Field}>
        <${Field} label=${t('field.glue_remark')} error=${err('glue_remark')} wide>
          <input name="glue_remark" value=${job.glue_remark} onInput=${input('glue_remark')} />
        </${Field}>
        ${!isNew && html`<h3>${t('job.versions')}</h3>
          <${GlueHistory} key=${glueTick} jobId=${id}
            onLoad=${(v) => setJob({ ...job, glue_type: v.glue_type, glue_source: v.glue_source, glue_remark: v.glue_remark })} />`}
      </fieldset>`}
      <div class="form-actions">
        <a class="button" href="#/jobs">${t('common.cancel')}</a>
        ${!readOnly && html`<button type="submit" class="primary" disabled=${saving} data-testid="save-job">${saving ? t('common.saving') : isNew ? t('job.create') : t('common.save')}</button>`}
      </div>
    </form>
  </section>`;
}

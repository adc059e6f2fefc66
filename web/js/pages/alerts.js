// @ts-check
// Alert channels (docs/operations.md, "Alert channels"): where alarms go. Admins create, change, test and
// delete them; jobs and groups name them in their forms.
import { html } from '../lib.js';
import { api } from '../api.js';
import { ErrorBanner, Field, FormCard, Loading, ResourcePage, Select, saveResource, useDraft, useLoad } from '../components.js';
import { enumOptions, formatMs } from '../util.js';
import { t } from '../i18n.js';

export const ALERT_KINDS = ['WEBHOOK', 'EMAIL'];
export const ALERT_PRESETS = ['SLACK', 'DINGTALK', 'WECOM', 'FEISHU', 'JSON', 'CUSTOM'];
const SIGNED = ['DINGTALK', 'FEISHU'];
const FIELDS = ['name', 'kind', 'preset', 'target', 'body_template', 'secret', 'events', 'threshold', 'silence_s'];
export const ALERT_EVENTS = ['FAILED', 'TIMEOUT', 'LOST', 'MISFIRE', 'RECOVERED'];
const TEMPLATE_FIELDS = '{{title}} {{text}} {{job_id}} {{job_description}} {{app_name}} {{log_id}} {{trigger_type}} '
  + '{{scheduled}} {{scheduled_ms}} {{trigger_code}} {{trigger_msg}} {{handle_code}} {{handle_msg}} {{event}}';

const PATH = '/api/v1/alert-channels';

/** @typedef {import('../types.js').AlertChannel} AlertChannel */

/**
 * The channel form's fields as typed (threshold and silence_s as their inputs give them).
 * @typedef {{
 *   name: string, kind: string, preset: string, target: string | undefined, body_template: string | undefined,
 *   secret: string, change_secret: boolean, events: string[], threshold: number | string,
 *   silence_s: number | string,
 * }} ChannelDraft
 */

/** @param {import('../components.js').ResourceFormProps<AlertChannel>} props */
function ChannelForm({ item: channel, onDone, onCancel }) {
  const { draft: c, setDraft, set, error, err, submit } = useDraft(/** @type {ChannelDraft} */ ({
    name: channel ? channel.name : '',
    kind: channel ? channel.kind : 'WEBHOOK',
    preset: channel && channel.preset ? channel.preset : 'SLACK',
    target: channel ? channel.target : '',
    body_template: channel ? channel.body_template : '',
    secret: '',
    change_secret: !channel,
    events: channel ? channel.events : [...ALERT_EVENTS],
    threshold: channel ? channel.threshold : 1,
    silence_s: channel ? channel.silence_s : 0,
  }), (d) => saveResource(PATH, channel, body(d, channel)), onDone);
  const webhook = c.kind === 'WEBHOOK';
  const templated = !webhook || c.preset === 'CUSTOM';
  const signed = webhook && SIGNED.includes(c.preset);
  return html`<${FormCard} testid="channel-form" title=${channel ? t('alerts.edit', { name: channel.name }) : t('alerts.new')}
    error=${error} shownFields=${FIELDS} onSubmit=${submit} onCancel=${onCancel}
    saveTestid="save-channel" saveLabel=${channel ? t('common.save') : t('alerts.create')}>
    <div class="grid">
      <${Field} label=${t('field.name')} error=${err('name')}>
        <input name="channel_name" required maxlength="64" value=${c.name} onInput=${(e) => set('name')(e.target.value)} />
      </${Field}>
      <${Field} label=${t('field.kind')} error=${err('kind')}>
        <${Select} name="kind" value=${c.kind} onChange=${set('kind')} options=${enumOptions(ALERT_KINDS, 'enum.alertKind')} />
      </${Field}>
      ${webhook && html`<${Field} label=${t('field.preset')} error=${err('preset')} hint=${t('alerts.hint.preset')}>
        <${Select} name="preset" value=${c.preset} onChange=${set('preset')} options=${enumOptions(ALERT_PRESETS, 'enum.alertPreset')} />
      </${Field}>`}
      <${Field} label=${t('field.target')} error=${err('target')} hint=${webhook ? t('alerts.hint.url') : t('alerts.hint.email')} wide>
        <input name="target" required class="mono" value=${c.target} onInput=${(e) => set('target')(e.target.value)} />
      </${Field}>
      ${templated && html`<${Field} label=${t('field.body_template')} error=${err('body_template')}
        hint=${t(webhook ? 'alerts.hint.customTemplate' : 'alerts.hint.emailTemplate', { fields: TEMPLATE_FIELDS })} wide>
        <textarea name="body_template" rows="4" class="mono" value=${c.body_template} onInput=${(e) => set('body_template')(e.target.value)}></textarea>
      </${Field}>`}
      ${signed && html`<${Field} label=${t('field.secret')} error=${err('secret')}
        hint=${channel && !c.change_secret ? (channel.has_secret ? t('alerts.hint.secretSet') : t('alerts.hint.secretNone')) : t('alerts.hint.secret')}>
        ${channel && !c.change_secret
          ? html`<button type="button" onClick=${() => setDraft({ ...c, change_secret: true })}>${t('alerts.changeSecret')}</button>`
          : html`<input name="secret" type="password" autocomplete="new-password" value=${c.secret} onInput=${(e) => set('secret')(e.target.value)} />`}
      </${Field}>`}
    </div>
    <fieldset><legend>${t('alerts.rule')}</legend>
      <div class="grid">
        <${Field} label=${t('field.events')} error=${err('events')} hint=${t('alerts.hint.events')}>
          <div class="checks">${ALERT_EVENTS.map((ev) => html`<label class="inline" key=${ev}>
            <input type="checkbox" name=${`event-${ev}`} checked=${c.events.includes(ev)}
              onChange=${(e) => set('events')(e.target.checked ? ALERT_EVENTS.filter((x) => x === ev || c.events.includes(x)) : c.events.filter((x) => x !== ev))} />
            ${t(`enum.alertEvent.${ev}`)}</label>`)}</div>
        </${Field}>
        <${Field} label=${t('field.threshold')} error=${err('threshold')} hint=${t('alerts.hint.threshold')}>
          <input name="threshold" type="number" min="1" max="1000" value=${c.threshold} onInput=${(e) => set('threshold')(e.target.value)} />
        </${Field}>
        <${Field} label=${t('field.silence_s')} error=${err('silence_s')} hint=${t('alerts.hint.silence')}>
          <input name="silence_s" type="number" min="0" max="604800" value=${c.silence_s} onInput=${(e) => set('silence_s')(e.target.value)} />
        </${Field}>
      </div>
    </fieldset>
  </${FormCard}>`;
}

// The request's body of a channel's form: a template only where it is used, a secret only when typed (or
// cleared on a preset that does not sign).
/**
 * @param {ChannelDraft} c
 * @param {AlertChannel | null} channel
 */
function body(c, channel) {
  const webhook = c.kind === 'WEBHOOK';
  const signed = webhook && SIGNED.includes(c.preset);
  /**
   * @type {{
   *   name: string, kind: string, target: string | undefined, body_template: string | undefined, events: string[],
   *   threshold: number, silence_s: number, preset?: string, secret?: string,
   * }}
   */
  const out = {
    name: c.name,
    kind: c.kind,
    target: c.target,
    body_template: !webhook || c.preset === 'CUSTOM' ? c.body_template : '',
    events: c.events,
    threshold: Number(c.threshold),
    silence_s: Number(c.silence_s),
  };
  if (webhook) out.preset = c.preset;
  if (signed && c.change_secret) out.secret = c.secret;
  if (!signed && channel && channel.has_secret) out.secret = '';
  return out;
}

/** @param {import('../components.js').PageProps} props */
export function AlertsPage({ user }) {
  const admin = user.role === 'ADMIN';
  /** @type {import('../components.js').Load<import('../types.js').List<import('../types.js').AlertEntry>>} */
  const alerts = useLoad(() => api.get('/api/v1/alerts?limit=50'), []);
  const test = (/** @type {AlertChannel} */ c, /** @type {import('../components.js').RowActions<AlertChannel>} */ a) => a.act(async () => {
    /** @type {import('../types.js').AlertChannelTestResult} */
    const r = await api.post(`${PATH}/${c.id}/test`);
    a.notify(t(r.ok ? 'alerts.testOk' : 'alerts.testFailed', { name: c.name, message: r.message }), r.ok ? 'ok' : 'error');
  });
  /** @type {import('../components.js').ResourcePageProps<AlertChannel>} */
  const page = {
    title: t('alerts.title'),
    intro: t('alerts.intro'),
    path: PATH,
    canCreate: admin,
    newButton: { label: t('alerts.newButton'), testid: 'new-channel' },
    form: ChannelForm,
    savedText: (c) => t('alerts.saved', { name: c.name }),
    deletedText: (c) => t('alerts.deleted', { name: c.name }),
    tableTestid: 'channels-table',
    empty: t('alerts.empty'),
    rowAttrs: (c) => ({ 'data-channel-id': c.id }),
    columns: [
      { label: t('common.id'), cell: (c) => c.id },
      { label: t('field.name'), cell: (c) => c.name },
      { label: t('field.kind'), cell: (c) => (c.kind === 'EMAIL' ? t('enum.alertKind.EMAIL') : t(`enum.alertPreset.${c.preset}`)) },
      admin && { label: t('field.target'), cls: 'mono', cell: (c) => c.target },
      { label: t('alerts.col.signed'), cell: (c) => (c.has_secret ? t('alerts.signed.yes') : '') },
      admin && {
        label: t('common.actions'),
        cardLabel: '',
        cls: 'row-actions',
        cell: (c, a) => [a.editButton(c), html`<button type="button" onClick=${() => test(c, a)}>${t('alerts.test')}</button>`, a.deleteButton(c)],
      },
    ],
  };
  return html`<${ResourcePage} ...${page}>
    <h2>${t('alerts.history')}</h2>
    <${ErrorBanner} error=${alerts.error} />
    ${!alerts.data ? html`<${Loading} />` : html`<div class="table-wrap"><table class="list cards" data-testid="alerts-table">
      <thead><tr><th>${t('alerts.col.when')}</th><th>${t('field.name')}</th><th>${t('alerts.col.job')}</th><th>${t('alerts.col.fire')}</th><th>${t('alerts.col.event')}</th><th>${t('alerts.col.outcome')}</th><th>${t('alerts.col.detail')}</th></tr></thead>
      <tbody>
        ${alerts.data.items.length === 0 && html`<tr><td colspan="7" class="muted">${t('alerts.historyEmpty')}</td></tr>`}
        ${alerts.data.items.map((a) => html`<tr key=${a.id} data-outcome=${a.outcome}>
          <td data-label=${t('alerts.col.when')}>${formatMs(a.created_ms)}</td>
          <td data-label=${t('field.name')}>${a.channel_name}</td>
          <td data-label=${t('alerts.col.job')}><a href=${`#/jobs/${a.job_id}`}>${a.job_id}</a></td>
          <td data-label=${t('alerts.col.fire')}><a href=${`#/logs/${a.log_id}`}>${a.log_id}</a></td>
          <td data-label=${t('alerts.col.event')}>${t(`enum.alertEvent.${a.event}`)}</td>
          <td data-label=${t('alerts.col.outcome')}><span class=${`badge outcome-${a.outcome.toLowerCase()}`}>${t(`enum.alertOutcome.${a.outcome}`)}</span>${a.attempts > 1 ? html` <span class="muted small">${t('alerts.attempts', { count: a.attempts, n: a.attempts })}</span>` : ''}</td>
          <td class="muted small" data-label=${t('alerts.col.detail')}>${a.message}</td>
        </tr>`)}
      </tbody>
    </table></div>`}
  </${ResourcePage}>`;
}

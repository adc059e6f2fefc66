// @ts-check
// Alert channels (docs/operations.md, "Alert channels"): where alarms go. Admins create, change, test and
// delete them; jobs and groups name them in their forms.
import { html, useState } from '../lib.js';
import { api } from '../api.js';
import { ConfirmButton, ErrorBanner, Field, Loading, Notice, PageHeader, Select, useLoad } from '../components.js';
import { enumOptions, formatMs } from '../util.js';
import { t } from '../i18n.js';

export const ALERT_KINDS = ['WEBHOOK', 'EMAIL'];
export const ALERT_PRESETS = ['SLACK', 'DINGTALK', 'WECOM', 'FEISHU', 'JSON', 'CUSTOM'];
const SIGNED = ['DINGTALK', 'FEISHU'];
const FIELDS = ['name', 'kind', 'preset', 'target', 'body_template', 'secret', 'events', 'threshold', 'silence_s'];
export const ALERT_EVENTS = ['FAILED', 'TIMEOUT', 'LOST', 'MISFIRE', 'RECOVERED'];
const TEMPLATE_FIELDS = '{{title}} {{text}} {{job_id}} {{job_description}} {{app_name}} {{log_id}} {{trigger_type}} '
  + '{{scheduled}} {{scheduled_ms}} {{trigger_code}} {{trigger_msg}} {{handle_code}} {{handle_msg}} {{event}}';

/** @typedef {import('../types.js').AlertChannel} AlertChannel */

/**
 * The channel form's fields as typed (threshold and silence_s as their inputs give them).
 * @typedef {{
 *   name: string, kind: string, preset: string, target: string | undefined, body_template: string | undefined,
 *   secret: string, change_secret: boolean, events: string[], threshold: number | string,
 *   silence_s: number | string,
 * }} ChannelDraft
 */

/**
 * @param {{ channel: AlertChannel | null, onDone: (saved: AlertChannel) => void, onCancel: () => void }} props
 */
function ChannelForm({ channel, onDone, onCancel }) {
  const [c, setC] = useState(/** @type {ChannelDraft} */ ({
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
  }));
  const [error, setError] = useState(/** @type {import('../api.js').ApiError | null} */ (null));
  const err = (/** @type {string} */ k) => (error ? error.field(k) : '');
  /**
   * @template {keyof ChannelDraft} K
   * @param {K} k
   */
  const set = (k) => (/** @type {ChannelDraft[K]} */ v) => setC({ ...c, [k]: v });
  const webhook = c.kind === 'WEBHOOK';
  const templated = !webhook || c.preset === 'CUSTOM';
  const signed = webhook && SIGNED.includes(c.preset);
  const save = async (/** @type {Event} */ e) => {
    e.preventDefault();
    /**
     * @type {{
     *   name: string, kind: string, target: string | undefined, body_template: string | undefined, events: string[],
     *   threshold: number, silence_s: number, preset?: string, secret?: string,
     * }}
     */
    const body = {
      name: c.name,
      kind: c.kind,
      target: c.target,
      body_template: templated ? c.body_template : '',
      events: c.events,
      threshold: Number(c.threshold),
      silence_s: Number(c.silence_s),
    };
    if (webhook) body.preset = c.preset;
    // A secret is sent only when typed (or cleared on a preset that does not sign).
    if (signed && c.change_secret) body.secret = c.secret;
    if (!signed && channel && channel.has_secret) body.secret = '';
    try {
      /** @type {AlertChannel} */
      const saved = channel ? await api.put(`/api/v1/alert-channels/${channel.id}`, body) : await api.post('/api/v1/alert-channels', body);
      onDone(saved);
    } catch (ex) {
      setError(ex);
    }
  };
  return html`<form class="card form" onSubmit=${save} data-testid="channel-form">
    <h2>${channel ? t('alerts.edit', { name: channel.name }) : t('alerts.new')}</h2>
    <${ErrorBanner} error=${error} shownFields=${FIELDS} />
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
          ? html`<button type="button" onClick=${() => setC({ ...c, change_secret: true })}>${t('alerts.changeSecret')}</button>`
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
    <div class="form-actions">
      <button type="button" onClick=${onCancel}>${t('common.cancel')}</button>
      <button type="submit" class="primary" data-testid="save-channel">${channel ? t('common.save') : t('alerts.create')}</button>
    </div>
  </form>`;
}

/** @param {import('../components.js').PageProps} props */
export function AlertsPage({ user }) {
  const admin = user.role === 'ADMIN';
  /** @type {import('../components.js').Load<import('../types.js').List<AlertChannel>>} */
  const channels = useLoad(() => api.get('/api/v1/alert-channels'), []);
  /** @type {import('../components.js').Load<import('../types.js').List<import('../types.js').AlertEntry>>} */
  const alerts = useLoad(() => api.get('/api/v1/alerts?limit=50'), []);
  const [editing, setEditing] = useState(/** @type {AlertChannel | 'new' | null} */ (null)); // null, 'new' or a channel
  const [notice, setNotice] = useState({ text: '', kind: 'ok' });
  const [error, setError] = useState(/** @type {import('../api.js').ApiError | null} */ (null));
  const act = async (/** @type {() => Promise<void>} */ fn) => {
    setError(null);
    try {
      await fn();
    } catch (ex) {
      setError(ex);
    }
  };
  const test = (/** @type {AlertChannel} */ c) => act(async () => {
    /** @type {import('../types.js').AlertChannelTestResult} */
    const r = await api.post(`/api/v1/alert-channels/${c.id}/test`);
    setNotice({ text: t(r.ok ? 'alerts.testOk' : 'alerts.testFailed', { name: c.name, message: r.message }), kind: r.ok ? 'ok' : 'error' });
  });
  const remove = (/** @type {AlertChannel} */ c) => act(async () => {
    await api.del(`/api/v1/alert-channels/${c.id}`);
    setNotice({ text: t('alerts.deleted', { name: c.name }), kind: 'ok' });
    channels.reload();
  });
  return html`<section>
    <${PageHeader} title=${t('alerts.title')}>
      ${admin && !editing && html`<button type="button" class="primary" onClick=${() => setEditing('new')} data-testid="new-channel">${t('alerts.newButton')}</button>`}
    </${PageHeader}>
    <p class="muted">${t('alerts.intro')}</p>
    <${Notice} text=${notice.text} kind=${notice.kind} onClose=${() => setNotice({ text: '', kind: 'ok' })} />
    <${ErrorBanner} error=${error || channels.error} />
    ${editing && html`<${ChannelForm} key=${editing === 'new' ? 'new' : editing.id} channel=${editing === 'new' ? null : editing}
      onCancel=${() => setEditing(null)}
      onDone=${(c) => { setEditing(null); setNotice({ text: t('alerts.saved', { name: c.name }), kind: 'ok' }); channels.reload(); }} />`}
    ${!channels.data ? html`<${Loading} />` : html`<div class="table-wrap"><table class="list cards" data-testid="channels-table">
      <thead><tr><th>${t('common.id')}</th><th>${t('field.name')}</th><th>${t('field.kind')}</th>${admin && html`<th>${t('field.target')}</th>`}<th>${t('alerts.col.signed')}</th>${admin && html`<th>${t('common.actions')}</th>`}</tr></thead>
      <tbody>
        ${channels.data.items.length === 0 && html`<tr><td colspan="6" class="muted">${t('alerts.empty')}</td></tr>`}
        ${channels.data.items.map((c) => html`<tr key=${c.id} data-channel-id=${c.id}>
          <td data-label=${t('common.id')}>${c.id}</td>
          <td data-label=${t('field.name')}>${c.name}</td>
          <td data-label=${t('field.kind')}>${c.kind === 'EMAIL' ? t('enum.alertKind.EMAIL') : t(`enum.alertPreset.${c.preset}`)}</td>
          ${admin && html`<td class="mono" data-label=${t('field.target')}>${c.target}</td>`}
          <td data-label=${t('alerts.col.signed')}>${c.has_secret ? t('alerts.signed.yes') : ''}</td>
          ${admin && html`<td class="row-actions" data-label="">
            <button type="button" onClick=${() => setEditing(c)}>${t('common.edit')}</button>
            <button type="button" onClick=${() => test(c)}>${t('alerts.test')}</button>
            <${ConfirmButton} label=${t('common.delete')} confirmLabel=${t('common.deleteConfirm')} onConfirm=${() => remove(c)} />
          </td>`}
        </tr>`)}
      </tbody>
    </table></div>`}
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
  </section>`;
}

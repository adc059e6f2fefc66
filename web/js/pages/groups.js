// @ts-check
import { html, useState } from '../lib.js';
import { api } from '../api.js';
import { ConfirmButton, ErrorBanner, Field, IdPicker, Loading, Notice, PageHeader, Select, useLoad } from '../components.js';
import { ADDRESS_TYPES, can, enumOptions } from '../util.js';
import { t } from '../i18n.js';

const FIELDS = ['app_name', 'title', 'address_type', 'addresses', 'access_token', 'alert_channel_ids', 'allow_scripts'];

// `full`: a global ADMIN's form; a group's ADMIN changes only its title and alert channels (the API keeps
// where its fires go, how its executors authenticate and whether its DEVELOPERs may write script jobs,
// allow_scripts, to global ADMINs).
/** @typedef {import('../types.js').Group} Group */

/**
 * @param {{ group: Group | null, full: boolean, onDone: (saved: Group) => void, onCancel: () => void }} props
 */
function GroupForm({ group, full, onDone, onCancel }) {
  const [g, setG] = useState({
    app_name: group ? group.app_name : '',
    title: group ? group.title : '',
    address_type: group ? group.address_type : 'AUTO',
    addresses: group ? group.addresses.join('\n') : '',
    access_token: '',
    change_token: !group,
    alert_channel_ids: group ? group.alert_channel_ids || [] : [],
    allow_scripts: group ? Boolean(group.allow_scripts) : false,
  });
  /** @type {import('../components.js').Load<import('../types.js').List<import('../types.js').AlertChannel>>} */
  const channels = useLoad(() => api.get('/api/v1/alert-channels'), []);
  const [error, setError] = useState(/** @type {import('../api.js').ApiError | null} */ (null));
  const err = (/** @type {string} */ k) => (error ? error.field(k) : '');
  const save = async (/** @type {Event} */ e) => {
    e.preventDefault();
    /**
     * @type {{
     *   title: string, alert_channel_ids: number[], app_name?: string, address_type?: string, addresses?: string[],
     *   allow_scripts?: boolean, access_token?: string | null,
     * }}
     */
    const body = full ? {
      app_name: g.app_name,
      title: g.title,
      address_type: g.address_type,
      addresses: g.addresses.split(/[\s,]+/).filter(Boolean),
      alert_channel_ids: g.alert_channel_ids,
      allow_scripts: g.allow_scripts,
    } : { title: g.title, alert_channel_ids: g.alert_channel_ids };
    if (full && g.change_token) body.access_token = g.access_token || null;
    try {
      /** @type {Group} */
      const saved = group ? await api.put(`/api/v1/groups/${group.id}`, body) : await api.post('/api/v1/groups', body);
      onDone(saved);
    } catch (ex) {
      setError(ex);
    }
  };
  return html`<form class="card form" onSubmit=${save} data-testid="group-form">
    <h2>${group ? t('groups.edit', { id: group.id }) : t('groups.new')}</h2>
    <${ErrorBanner} error=${error} shownFields=${FIELDS} />
    ${!full && html`<p class="muted">${t('groups.groupAdminNote')}</p>`}
    <div class="grid">
      <${Field} label=${t('field.app_name')} error=${err('app_name')} hint=${t('groups.hint.appName')}>
        <input name="app_name" required disabled=${!full} value=${g.app_name} onInput=${(e) => setG({ ...g, app_name: e.target.value })} />
      </${Field}>
      <${Field} label=${t('field.title')} error=${err('title')}>
        <input name="title" required value=${g.title} onInput=${(e) => setG({ ...g, title: e.target.value })} />
      </${Field}>
      <${Field} label=${t('field.address_type')} error=${err('address_type')} hint=${t('groups.hint.addressType')}>
        <${Select} name="address_type" disabled=${!full} value=${g.address_type} onChange=${(v) => setG({ ...g, address_type: v })} options=${enumOptions(ADDRESS_TYPES, 'enum.addressType')} />
      </${Field}>
      ${g.address_type === 'MANUAL' && html`<${Field} label=${t('field.addresses')} error=${err('addresses')} hint=${t('groups.hint.addresses')} wide>
        <textarea name="addresses" rows="3" class="mono" disabled=${!full} value=${g.addresses} onInput=${(e) => setG({ ...g, addresses: e.target.value })}></textarea>
      </${Field}>`}
      <${Field} label=${t('field.access_token')} error=${err('access_token')}
        hint=${group && !g.change_token ? (group.has_access_token ? t('groups.hint.tokenSet') : t('groups.hint.tokenNone')) : t('groups.hint.tokenEmpty')}>
        ${group && !g.change_token
          ? html`<button type="button" disabled=${!full} onClick=${() => setG({ ...g, change_token: true })}>${t('groups.changeToken')}</button>`
          : html`<input name="access_token" type="password" autocomplete="new-password" value=${g.access_token}
              onInput=${(e) => setG({ ...g, access_token: e.target.value })} />`}
      </${Field}>
      <${Field} label=${t('field.alert_channel_ids')} error=${err('alert_channel_ids')} hint=${t('groups.hint.channels')}>
        <${IdPicker} name="alert_channel_ids" load=${channels} value=${g.alert_channel_ids} onChange=${(v) => setG({ ...g, alert_channel_ids: v })} />
      </${Field}>
      <${Field} label=${t('groups.allowScripts')} error=${err('allow_scripts')} hint=${t('groups.hint.allowScripts')}>
        <input type="checkbox" name="allow_scripts" disabled=${!full} checked=${g.allow_scripts} onChange=${(e) => setG({ ...g, allow_scripts: e.target.checked })} />
      </${Field}>
    </div>
    <div class="form-actions">
      <button type="button" onClick=${onCancel}>${t('common.cancel')}</button>
      <button type="submit" class="primary" data-testid="save-group">${group ? t('common.save') : t('groups.create')}</button>
    </div>
  </form>`;
}

/** @param {import('../components.js').PageProps} props */
export function GroupsPage({ user }) {
  const admin = user.role === 'ADMIN';
  /** @type {import('../components.js').Load<import('../types.js').List<Group>>} */
  const groups = useLoad(() => api.get('/api/v1/groups'), []);
  const [editing, setEditing] = useState(/** @type {Group | 'new' | null} */ (null)); // null, 'new' or a group
  const [notice, setNotice] = useState('');
  const [error, setError] = useState(/** @type {import('../api.js').ApiError | null} */ (null));
  const remove = async (/** @type {Group} */ g) => {
    setError(null);
    try {
      await api.del(`/api/v1/groups/${g.id}`);
      setNotice(t('groups.deleted', { app: g.app_name }));
      groups.reload();
    } catch (ex) {
      setError(ex);
    }
  };
  return html`<section>
    <${PageHeader} title=${t('groups.title')}>
      ${admin && !editing && html`<button type="button" class="primary" onClick=${() => setEditing('new')} data-testid="new-group">${t('groups.newButton')}</button>`}
    </${PageHeader}>
    <${Notice} text=${notice} onClose=${() => setNotice('')} />
    <${ErrorBanner} error=${error || groups.error} />
    ${editing && html`<${GroupForm} key=${editing === 'new' ? 'new' : editing.id} group=${editing === 'new' ? null : editing} full=${admin}
      onCancel=${() => setEditing(null)}
      onDone=${(g) => { setEditing(null); setNotice(t('groups.saved', { app: g.app_name })); groups.reload(); }} />`}
    ${!groups.data ? html`<${Loading} />` : html`<div class="table-wrap"><table class="list cards" data-testid="groups-table">
      <thead><tr><th>${t('common.id')}</th><th>${t('field.app_name')}</th><th>${t('field.title')}</th><th>${t('field.address_type')}</th><th>${t('groups.col.addresses')}</th><th>${t('groups.col.token')}</th><th>${t('common.actions')}</th></tr></thead>
      <tbody>
        ${groups.data.items.length === 0 && html`<tr><td colspan="7" class="muted">${admin ? t('groups.empty') : t('groups.emptyVisible')}</td></tr>`}
        ${groups.data.items.map((g) => html`<tr key=${g.id}>
          <td data-label=${t('common.id')}>${g.id}</td><td class="mono" data-label=${t('field.app_name')}>${g.app_name}</td><td data-label=${t('field.title')}>${g.title}${g.allow_scripts && html` <span class="badge scripts" data-testid="scripts-allowed" title=${t('groups.hint.allowScripts')}>${t('groups.scriptsAllowed')}</span>`}</td>
          <td data-label=${t('field.address_type')} title=${g.address_type}>${t(`enum.addressType.${g.address_type}`)}</td>
          <td class="mono" data-label=${t('groups.col.addressesShort')}>${(g.online_addresses || []).length === 0
            ? html`<span class="muted">${t('groups.noneOnline')}</span>`
            : (g.online_addresses || []).map((a) => html`<div>${a}</div>`)}</td>
          <td data-label=${t('groups.col.token')}>${g.has_access_token ? t('groups.token.own') : t('groups.token.global')}</td>
          <td class="row-actions" data-label="">
            ${can(user, g.id, 'admin') && html`<button type="button" onClick=${() => setEditing(g)}>${t('common.edit')}</button>`}
            <a class="button" href=${`#/jobs?group=${g.id}`}>${t('groups.jobs')}</a>
            ${admin && html`<${ConfirmButton} label=${t('common.delete')} confirmLabel=${t('common.deleteConfirm')} onConfirm=${() => remove(g)} />`}
          </td>
        </tr>`)}
      </tbody>
    </table></div>`}
  </section>`;
}

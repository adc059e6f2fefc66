// @ts-check
import { html } from '../lib.js';
import { api } from '../api.js';
import { Field, FormCard, IdPicker, ResourcePage, Select, saveResource, useDraft, useLoad } from '../components.js';
import { ADDRESS_TYPES, can, enumOptions } from '../util.js';
import { t } from '../i18n.js';

const FIELDS = ['app_name', 'title', 'address_type', 'addresses', 'access_token', 'alert_channel_ids', 'allow_scripts'];
const PATH = '/api/v1/groups';

// `full`: a global ADMIN's form; a group's ADMIN changes only its title and alert channels (the API keeps
// where its fires go, how its executors authenticate and whether its DEVELOPERs may write script jobs,
// allow_scripts, to global ADMINs).
/** @typedef {import('../types.js').Group} Group */

/** @param {import('../components.js').ResourceFormProps<Group> & { full: boolean }} props */
function GroupForm({ item: group, full, onDone, onCancel }) {
  const { draft: g, set, error, err, submit } = useDraft({
    app_name: group ? group.app_name : '',
    title: group ? group.title : '',
    address_type: group ? group.address_type : 'AUTO',
    addresses: group ? group.addresses.join('\n') : '',
    access_token: '',
    change_token: !group,
    alert_channel_ids: group ? group.alert_channel_ids || [] : [],
    allow_scripts: group ? Boolean(group.allow_scripts) : false,
  }, (d) => {
    /**
     * @type {{
     *   title: string, alert_channel_ids: number[], app_name?: string, address_type?: string, addresses?: string[],
     *   allow_scripts?: boolean, access_token?: string | null,
     * }}
     */
    const body = full ? {
      app_name: d.app_name,
      title: d.title,
      address_type: d.address_type,
      addresses: d.addresses.split(/[\s,]+/).filter(Boolean),
      alert_channel_ids: d.alert_channel_ids,
      allow_scripts: d.allow_scripts,
    } : { title: d.title, alert_channel_ids: d.alert_channel_ids };
    if (full && d.change_token) body.access_token = d.access_token || null;
    return saveResource(PATH, group, body);
  }, onDone);
  /** @type {import('../components.js').Load<import('../types.js').List<import('../types.js').AlertChannel>>} */
  const channels = useLoad(() => api.get('/api/v1/alert-channels'), []);
  return html`<${FormCard} testid="group-form" title=${group ? t('groups.edit', { id: group.id }) : t('groups.new')}
    error=${error} shownFields=${FIELDS} onSubmit=${submit} onCancel=${onCancel}
    saveTestid="save-group" saveLabel=${group ? t('common.save') : t('groups.create')}>
    ${!full && html`<p class="muted">${t('groups.groupAdminNote')}</p>`}
    <div class="grid">
      <${Field} label=${t('field.app_name')} error=${err('app_name')} hint=${t('groups.hint.appName')}>
        <input name="app_name" required disabled=${!full} value=${g.app_name} onInput=${(e) => set('app_name')(e.target.value)} />
      </${Field}>
      <${Field} label=${t('field.title')} error=${err('title')}>
        <input name="title" required value=${g.title} onInput=${(e) => set('title')(e.target.value)} />
      </${Field}>
      <${Field} label=${t('field.address_type')} error=${err('address_type')} hint=${t('groups.hint.addressType')}>
        <${Select} name="address_type" disabled=${!full} value=${g.address_type} onChange=${set('address_type')} options=${enumOptions(ADDRESS_TYPES, 'enum.addressType')} />
      </${Field}>
      ${g.address_type === 'MANUAL' && html`<${Field} label=${t('field.addresses')} error=${err('addresses')} hint=${t('groups.hint.addresses')} wide>
        <textarea name="addresses" rows="3" class="mono" disabled=${!full} value=${g.addresses} onInput=${(e) => set('addresses')(e.target.value)}></textarea>
      </${Field}>`}
      <${Field} label=${t('field.access_token')} error=${err('access_token')}
        hint=${group && !g.change_token ? (group.has_access_token ? t('groups.hint.tokenSet') : t('groups.hint.tokenNone')) : t('groups.hint.tokenEmpty')}>
        ${group && !g.change_token
          ? html`<button type="button" disabled=${!full} onClick=${() => set('change_token')(true)}>${t('groups.changeToken')}</button>`
          : html`<input name="access_token" type="password" autocomplete="new-password" value=${g.access_token}
              onInput=${(e) => set('access_token')(e.target.value)} />`}
      </${Field}>
      <${Field} label=${t('field.alert_channel_ids')} error=${err('alert_channel_ids')} hint=${t('groups.hint.channels')}>
        <${IdPicker} name="alert_channel_ids" load=${channels} value=${g.alert_channel_ids} onChange=${set('alert_channel_ids')} />
      </${Field}>
      <${Field} label=${t('groups.allowScripts')} error=${err('allow_scripts')} hint=${t('groups.hint.allowScripts')}>
        <input type="checkbox" name="allow_scripts" disabled=${!full} checked=${g.allow_scripts} onChange=${(e) => set('allow_scripts')(e.target.checked)} />
      </${Field}>
    </div>
  </${FormCard}>`;
}

/** @param {import('../components.js').PageProps} props */
export function GroupsPage({ user }) {
  const admin = user.role === 'ADMIN';
  /** @type {import('../components.js').ResourcePageProps<Group, { full: boolean }>} */
  const page = {
    title: t('groups.title'),
    path: PATH,
    canCreate: admin,
    newButton: { label: t('groups.newButton'), testid: 'new-group' },
    form: GroupForm,
    formProps: { full: admin },
    savedText: (g) => t('groups.saved', { app: g.app_name }),
    deletedText: (g) => t('groups.deleted', { app: g.app_name }),
    tableTestid: 'groups-table',
    empty: admin ? t('groups.empty') : t('groups.emptyVisible'),
    columns: [
      { label: t('common.id'), cell: (g) => g.id },
      { label: t('field.app_name'), cls: 'mono', cell: (g) => g.app_name },
      {
        label: t('field.title'),
        cell: (g) => html`${g.title}${g.allow_scripts && html` <span class="badge scripts" data-testid="scripts-allowed" title=${t('groups.hint.allowScripts')}>${t('groups.scriptsAllowed')}</span>`}`,
      },
      { label: t('field.address_type'), cell: (g) => t(`enum.addressType.${g.address_type}`), attrs: (g) => ({ title: g.address_type }) },
      {
        label: t('groups.col.addresses'),
        cardLabel: t('groups.col.addressesShort'),
        cls: 'mono',
        cell: (g) => ((g.online_addresses || []).length === 0
          ? html`<span class="muted">${t('groups.noneOnline')}</span>`
          : (g.online_addresses || []).map((a) => html`<div>${a}</div>`)),
      },
      { label: t('groups.col.token'), cell: (g) => (g.has_access_token ? t('groups.token.own') : t('groups.token.global')) },
      {
        label: t('common.actions'),
        cardLabel: '',
        cls: 'row-actions',
        cell: (g, a) => [
          can(user, g.id, 'admin') && a.editButton(g),
          html`<a class="button" href=${`#/jobs?group=${g.id}`}>${t('groups.jobs')}</a>`,
          admin && a.deleteButton(g),
        ],
      },
    ],
  };
  return html`<${ResourcePage} ...${page} />`;
}

// @ts-check
import { html, useState } from '../lib.js';
import { api } from '../api.js';
import {
  ConfirmButton, ErrorBanner, Field, FormCard, Notice, ResourcePage, Select, saveResource, useDraft, useLoad,
} from '../components.js';
import { GROUP_ROLES, ROLES, formatMs, loginSource, loginSourceText, providerTitle } from '../util.js';
import { t, tOr } from '../i18n.js';

/** @typedef {import('../types.js').User} User */
/** @typedef {import('../types.js').Providers} Providers */
/** @typedef {import('../api.js').ApiError} ApiError */

const FIELDS = ['username', 'password', 'role', 'group_roles'];
const PATH = '/api/v1/users';

// A user's roles by group id ({3: 'OPERATOR'}); an older answer without group_roles: DEVELOPER in each of
// its permitted groups (what the API makes of permitted_group_ids).
/**
 * @param {User | null} user
 * @returns {Record<string, string>} a role name by group id; '' (chosen in the form): none
 */
function rolesOf(user) {
  if (!user) return {};
  if (user.group_roles) return Object.fromEntries(user.group_roles.map((g) => [g.group_id, g.role]));
  return Object.fromEntries((user.permitted_group_ids || []).map((id) => [id, 'DEVELOPER']));
}

// A user of the LDAP directory or of an OpenID provider: no password here, and the role and group roles are
// set again from the groups there at each login (the API refuses a password for such a user).
/** @type {(user: User | null) => boolean} */
const external = (user) => !!user && loginSource(user.login_source).kind !== 'local';

/** @typedef {{ groups: import('../types.js').Group[], providers: Providers | null }} UserFormExtra */

/** @param {import('../components.js').ResourceFormProps<User> & UserFormExtra} props */
function UserForm({ item: user, groups, providers, onDone, onCancel }) {
  /** @typedef {{ group_id: number, role: string }} Grant */
  const [sent, setSent] = useState(/** @type {Grant[]} */ ([])); // the group_roles of the last request, to place its errors
  const { draft: u, set, error, err, submit } = useDraft({
    username: user ? user.username : '',
    password: '',
    role: user ? user.role : 'USER',
    roles: rolesOf(user),
  }, (d) => {
    const grants = Object.entries(d.roles).filter(([, role]) => role).map(([id, role]) => ({ group_id: Number(id), role }));
    /** @type {{ role: string, group_roles: Grant[], username?: string, password?: string }} */
    const body = { role: d.role, group_roles: grants };
    if (!user) body.username = d.username;
    if (!user || d.password) body.password = d.password;
    setSent(grants);
    return saveResource(PATH, user, body);
  }, onDone);
  // The errors of group_roles[i] are shown next to that group's role.
  const grantFields = (/** @type {number} */ id) => {
    const i = sent.findIndex((g) => g.group_id === id);
    return i < 0 ? [] : [`group_roles[${i}].role`, `group_roles[${i}].group_id`, `group_roles[${i}]`];
  };
  const grantError = (/** @type {number} */ id) => grantFields(id).map(err).find(Boolean) || '';
  const shownFields = [...FIELDS, ...groups.flatMap((g) => grantFields(g.id))];
  // Cast: read only where external(user) holds, which needs a user.
  const someone = /** @type {User} */ (user);
  const roleOptions = [['', t('users.groupRole.none')], ...GROUP_ROLES.map((r) => [r, t(`enum.groupRole.${r}`)])];
  return html`<${FormCard} testid="user-form" title=${user ? t('users.edit', { name: user.username }) : t('users.new')}
    error=${error} shownFields=${shownFields} onSubmit=${submit} onCancel=${onCancel}
    saveTestid="save-user" saveLabel=${user ? t('common.save') : t('users.create')}>
    ${external(user) && html`<div class="banner warn" role="note" data-testid="user-external">
      ${t('users.external', { name: someone.username, source: loginSourceText(someone.login_source, providers) })}
    </div>`}
    <div class="grid">
      <${Field} label=${t('field.username')} error=${err('username')} hint=${t('users.hint.username')}>
        <input name="username" required disabled=${!!user} value=${u.username} onInput=${(e) => set('username')(e.target.value)} />
      </${Field}>
      ${!external(user) && html`<${Field} label=${user ? t('users.newPassword') : t('field.password')} error=${err('password')} hint=${t('users.hint.password')}>
        <input name="password" type="password" autocomplete="new-password" required=${!user} value=${u.password}
          onInput=${(e) => set('password')(e.target.value)} />
      </${Field}>`}
      <${Field} label=${t('field.role')} error=${err('role')} hint=${t('users.hint.role')}>
        <${Select} name="role" value=${u.role} onChange=${set('role')} options=${ROLES.map((r) => [r, t(`enum.role.${r}`)])} />
      </${Field}>
      <${Field} label=${t('field.group_roles')} error=${err('group_roles')} hint=${t('users.hint.groupRoles')} wide>
        <div class="checks group-roles">
          ${groups.length === 0 && html`<span class="muted">${t('users.noGroups')}</span>`}
          ${groups.map((g) => html`<label class=${`inline${grantError(g.id) ? ' invalid' : ''}`} key=${g.id}>
            ${g.title} <span class="muted">(${g.app_name})</span>
            <${Select} name=${`group-${g.app_name}`} value=${u.roles[g.id] || ''} options=${roleOptions}
              onChange=${(v) => set('roles')({ ...u.roles, [g.id]: v })} />
            ${grantError(g.id) && html`<span class="field-error">${grantError(g.id)}</span>`}
          </label>`)}
        </div>
      </${Field}>
    </div>
  </${FormCard}>`;
}

// The single sign-on sources a user may be linked to: 'ldap' when the directory is offered, 'oidc:<name>' per
// OpenID provider.
/** @param {Providers | null} providers */
function sourcesOf(providers) {
  if (!providers) return [];
  return [...(providers.ldap ? ['ldap'] : []), ...(providers.oidc || []).map((p) => `oidc:${p.name}`)];
}

// A user's link to a single sign-on identity (source, subject): the only thing a sign-in through a provider
// finds a user by, never its name. An ADMIN links one here (the subject is named by the refused sign-in and
// the audit log), or removes it (the user becomes local, without a password). Changing or removing a link
// ends the user's sessions and revokes its API tokens.
/**
 * @param {{ user: User, providers: Providers | null, onDone: (user: User, notice: string) => void }} props
 */
function IdentityCard({ user, providers, onDone }) {
  const sources = sourcesOf(providers);
  const [source, setSource] = useState(external(user) ? user.login_source : sources[0] || '');
  const [subject, setSubject] = useState(user.external_subject || '');
  const [error, setError] = useState(/** @type {ApiError | null} */ (null));
  if (sources.length === 0 && !external(user)) return null;
  const err = (/** @type {string} */ k) => (error ? error.field(k) : '');
  const link = async (/** @type {Event} */ e) => {
    e.preventDefault();
    setError(null);
    try {
      /** @type {User} */
      const u = await api.put(`/api/v1/users/${user.id}/identity`, { source, subject });
      onDone(u, t('users.identity.linked', { name: u.username, source: loginSourceText(u.login_source, providers) }));
    } catch (ex) {
      setError(ex);
    }
  };
  const unlink = async () => {
    setError(null);
    try {
      /** @type {User} */
      const u = await api.del(`/api/v1/users/${user.id}/identity`);
      onDone(u, t('users.identity.unlinked', { name: u.username }));
    } catch (ex) {
      setError(ex);
    }
  };
  return html`<form class="card form" onSubmit=${link} data-testid="user-identity">
    <h2>${t('users.identity.title')}</h2>
    <${ErrorBanner} error=${error} shownFields=${['source', 'subject']} />
    <p data-testid="user-identity-state">${external(user)
      ? t('users.identity.current', { source: loginSourceText(user.login_source, providers), subject: user.external_subject || '' })
      : t('users.identity.none')}</p>
    <p class="muted">${t('users.identity.hint')}</p>
    <div class="grid">
      <${Field} label=${t('users.identity.source')} error=${err('source')}>
        <${Select} name="identity-source" value=${source} onChange=${setSource}
          options=${sources.map((s) => [s, loginSourceText(s, providers)])} />
      </${Field}>
      <${Field} label=${t('users.identity.subject')} error=${err('subject')}>
        <input name="identity-subject" required maxlength="255" value=${subject} onInput=${(e) => setSubject(e.target.value)} />
      </${Field}>
    </div>
    <div class="form-actions">
      ${external(user) && html`<${ConfirmButton} label=${t('users.identity.unlink')} confirmLabel=${t('users.identity.unlinkConfirm')}
        onConfirm=${unlink} />`}
      <button type="submit" data-testid="link-identity" disabled=${sources.length === 0}>${t('users.identity.link')}</button>
    </div>
  </form>`;
}

// Where a user logs in: a badge (local, LDAP, SSO) and the OpenID provider's name.
/** @type {(user: User, providers: Providers | null) => import('../components.js').Children} */
function source(user, providers) {
  const { kind, name } = loginSource(user.login_source);
  return html`<span class=${`badge source-${kind}`}>${tOr(`users.source.${kind}`, kind)}</span>
    ${name && html` <span class="muted" title=${providerTitle(providers, name)}>${name}</span>`}`;
}

// The sign-in policy (global ADMIN only): whether single sign-on is required, so that only global admins may
// log in with a local password. Requiring it ends the sessions of local users who are not admins.
function PolicyCard() {
  /** @type {import('../components.js').Load<import('../types.js').AuthPolicy>} */
  const policy = useLoad(() => api.get('/api/v1/auth/policy'), []);
  const [notice, setNotice] = useState('');
  const [error, setError] = useState(/** @type {ApiError | null} */ (null));
  if (!policy.data) return html`<${ErrorBanner} error=${policy.error} />`;
  const p = policy.data;
  const change = async (/** @type {boolean} */ require) => {
    setError(null);
    setNotice('');
    try {
      /** @type {{ require_sso: boolean, sessions_ended: number }} */
      const r = await api.put('/api/v1/auth/policy', { require_sso: require });
      setNotice(r.require_sso ? t('users.policy.enabled', { count: Number(r.sessions_ended) || 0 }) : t('users.policy.disabled'));
      policy.reload();
    } catch (ex) {
      setError(ex);
    }
  };
  return html`<div class="card policy" data-testid="sso-policy" data-require-sso=${String(Boolean(p.require_sso))}>
    <h2>${t('users.policy.title')}</h2>
    <${Notice} text=${notice} onClose=${() => setNotice('')} />
    <${ErrorBanner} error=${error} />
    <p data-testid="sso-policy-state">${p.require_sso ? t('users.policy.required') : t('users.policy.optional')}</p>
    ${!p.sso_configured && html`<p class="muted">${t('users.policy.notConfigured')}</p>`}
    ${p.updated_ms > 0 && p.updated_by && html`<p class="muted">${t('users.policy.changedBy', { name: p.updated_by, time: formatMs(p.updated_ms) })}</p>`}
    <div class="form-actions">
      ${p.require_sso
        ? html`<${ConfirmButton} key="allow" cls="" label=${t('users.policy.allow')} onConfirm=${() => change(false)} />`
        : html`<${ConfirmButton} key="require" label=${t('users.policy.require')} confirmLabel=${t('users.policy.requireConfirm')}
            disabled=${!p.sso_configured} onConfirm=${() => change(true)} />`}
    </div>
  </div>`;
}

// A user's forms: its fields, and its single sign-on identity once it exists.
/** @param {import('../components.js').ResourceFormProps<User> & UserFormExtra} props */
function UserEditor(props) {
  const { item, providers, onDone } = props;
  return html`<${UserForm} ...${props} />
    ${item && html`<${IdentityCard} user=${item} providers=${providers} onDone=${onDone} />`}`;
}

/** @param {import('../components.js').PageProps} props */
export function UsersPage({ user: me }) {
  /** @type {import('../components.js').Load<import('../types.js').List<import('../types.js').Group>>} */
  const groups = useLoad(() => api.get('/api/v1/groups'), []);
  const providers = useLoad(() => {
    /** @type {Promise<import('../types.js').Providers>} */
    const asked = api.get('/api/v1/auth/providers');
    return asked.catch(() => ({ oidc: [] }));
  }, []);
  if (me.role !== 'ADMIN') return html`<div class="banner error">${t('users.adminsOnly')}</div>`;
  const groupList = (groups.data && groups.data.items) || [];
  const groupName = Object.fromEntries(groupList.map((g) => [g.id, g.title]));
  /** @type {import('../components.js').ResourcePageProps<User, UserFormExtra>} */
  const page = {
    title: t('users.title'),
    path: PATH,
    canCreate: true,
    newButton: { label: t('users.newButton'), testid: 'new-user' },
    form: UserEditor,
    formProps: { groups: groupList, providers: providers.data },
    savedText: (u) => t('users.saved', { name: u.username }),
    deletedText: (u) => t('users.deleted', { name: u.username }),
    tableClass: 'list',
    tableTestid: 'users-table',
    rowAttrs: (u) => ({ 'data-username': u.username }),
    columns: [
      { label: t('common.id'), cell: (u) => u.id },
      { label: t('field.username'), cell: (u) => u.username },
      { label: t('field.role'), cell: (u) => html`<span class="badge role" title=${u.role}>${t(`enum.role.${u.role}`)}</span>` },
      {
        label: t('users.col.source'),
        cell: (u) => source(u, providers.data),
        attrs: (u) => ({ 'data-testid': 'user-source', 'data-source': u.login_source || 'local' }),
      },
      {
        label: t('users.col.groups'),
        attrs: () => ({ 'data-testid': 'user-groups' }),
        cell: (u) => (u.role === 'ADMIN' ? html`<span class="muted">${t('users.allGroups')}</span>` : Object.entries(rolesOf(u))
          .map(([id, role]) => t('users.groupWithRole', { group: groupName[id] || id, role: t(`enum.groupRole.${role}`) }))
          .join(t('common.listSeparator'))),
      },
      { label: t('users.col.changed'), cell: (u) => formatMs(u.updated_ms) },
      { label: t('common.actions'), cardLabel: '', cls: 'row-actions', cell: (u, a) => [a.editButton(u), u.id !== me.id && a.deleteButton(u)] },
    ],
  };
  return html`<${ResourcePage} ...${page}><${PolicyCard} /></${ResourcePage}>`;
}

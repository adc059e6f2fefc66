import { html, useState } from '../lib.js';
import { api } from '../api.js';
import { ConfirmButton, ErrorBanner, Field, Loading, Notice, PageHeader, Select, useLoad } from '../components.js';
import { formatMs } from '../util.js';

const FIELDS = ['username', 'password', 'role', 'permitted_group_ids'];

function UserForm({ user, groups, onDone, onCancel }) {
  const [u, setU] = useState({
    username: user ? user.username : '',
    password: '',
    role: user ? user.role : 'USER',
    permitted_group_ids: user ? user.permitted_group_ids : [],
  });
  const [error, setError] = useState(null);
  const err = (k) => (error ? error.field(k) : '');
  const save = async (e) => {
    e.preventDefault();
    const body = { role: u.role, permitted_group_ids: u.permitted_group_ids };
    if (!user) body.username = u.username;
    if (!user || u.password) body.password = u.password;
    try {
      onDone(user ? await api.put(`/api/v1/users/${user.id}`, body) : await api.post('/api/v1/users', body));
    } catch (ex) {
      setError(ex);
    }
  };
  const toggle = (id) =>
    setU({
      ...u,
      permitted_group_ids: u.permitted_group_ids.includes(id)
        ? u.permitted_group_ids.filter((x) => x !== id)
        : [...u.permitted_group_ids, id],
    });
  return html`<form class="card form" onSubmit=${save} data-testid="user-form">
    <h2>${user ? `Edit ${user.username}` : 'New user'}</h2>
    <${ErrorBanner} error=${error} shownFields=${FIELDS} />
    <div class="grid">
      <${Field} label="Username" error=${err('username')} hint="3–50: letters, digits . _ -">
        <input name="username" required disabled=${!!user} value=${u.username} onInput=${(e) => setU({ ...u, username: e.target.value })} />
      </${Field}>
      <${Field} label=${user ? 'New password (empty: unchanged)' : 'Password'} error=${err('password')} hint="at least 10 characters">
        <input name="password" type="password" autocomplete="new-password" required=${!user} value=${u.password}
          onInput=${(e) => setU({ ...u, password: e.target.value })} />
      </${Field}>
      <${Field} label="Role" error=${err('role')} hint="ADMIN: everything; USER: the groups below">
        <${Select} name="role" value=${u.role} onChange=${(v) => setU({ ...u, role: v })} options=${['USER', 'ADMIN']} />
      </${Field}>
      <${Field} label="Permitted groups" error=${err('permitted_group_ids')} wide>
        <div class="checks">
          ${groups.length === 0 && html`<span class="muted">No groups yet.</span>`}
          ${groups.map((g) => html`<label class="inline"><input type="checkbox" name=${`group-${g.app_name}`}
            checked=${u.permitted_group_ids.includes(g.id)} onChange=${() => toggle(g.id)} /> ${g.title} <span class="muted">(${g.app_name})</span></label>`)}
        </div>
      </${Field}>
    </div>
    <div class="form-actions">
      <button type="button" onClick=${onCancel}>Cancel</button>
      <button type="submit" class="primary" data-testid="save-user">${user ? 'Save' : 'Create user'}</button>
    </div>
  </form>`;
}

export function UsersPage({ user: me }) {
  const users = useLoad(() => api.get('/api/v1/users'), []);
  const groups = useLoad(() => api.get('/api/v1/groups'), []);
  const [editing, setEditing] = useState(null);
  const [notice, setNotice] = useState('');
  const [error, setError] = useState(null);
  if (me.role !== 'ADMIN') return html`<div class="banner error">Only admins manage users.</div>`;
  const groupList = (groups.data && groups.data.items) || [];
  const groupName = Object.fromEntries(groupList.map((g) => [g.id, g.title]));
  const remove = async (u) => {
    setError(null);
    try {
      await api.del(`/api/v1/users/${u.id}`);
      setNotice(`Deleted ${u.username}.`);
      users.reload();
    } catch (ex) {
      setError(ex);
    }
  };
  return html`<section>
    <${PageHeader} title="Users">
      ${!editing && html`<button type="button" class="primary" onClick=${() => setEditing('new')} data-testid="new-user">New user</button>`}
    </${PageHeader}>
    <${Notice} text=${notice} onClose=${() => setNotice('')} />
    <${ErrorBanner} error=${error || users.error} />
    ${editing && html`<${UserForm} key=${editing === 'new' ? 'new' : editing.id} user=${editing === 'new' ? null : editing} groups=${groupList}
      onCancel=${() => setEditing(null)}
      onDone=${(u) => { setEditing(null); setNotice(`Saved ${u.username}.`); users.reload(); }} />`}
    ${!users.data ? html`<${Loading} />` : html`<div class="table-wrap"><table class="list" data-testid="users-table">
      <thead><tr><th>ID</th><th>Username</th><th>Role</th><th>Groups</th><th>Changed</th><th>Actions</th></tr></thead>
      <tbody>${users.data.items.map((u) => html`<tr key=${u.id}>
        <td>${u.id}</td><td>${u.username}</td><td><span class="badge role">${u.role}</span></td>
        <td>${u.role === 'ADMIN' ? html`<span class="muted">all</span>` : u.permitted_group_ids.map((id) => groupName[id] || id).join(', ')}</td>
        <td>${formatMs(u.updated_ms)}</td>
        <td class="row-actions">
          <button type="button" onClick=${() => setEditing(u)}>Edit</button>
          ${u.id !== me.id && html`<${ConfirmButton} label="Delete" onConfirm=${() => remove(u)} />`}
        </td>
      </tr>`)}</tbody>
    </table></div>`}
  </section>`;
}

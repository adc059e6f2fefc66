import { html, useState } from '../lib.js';
import { api } from '../api.js';
import { ConfirmButton, ErrorBanner, Field, Loading, Notice, PageHeader, Select, useLoad } from '../components.js';

const FIELDS = ['app_name', 'title', 'address_type', 'addresses', 'access_token'];

function GroupForm({ group, onDone, onCancel }) {
  const [g, setG] = useState({
    app_name: group ? group.app_name : '',
    title: group ? group.title : '',
    address_type: group ? group.address_type : 'AUTO',
    addresses: group ? group.addresses.join('\n') : '',
    access_token: '',
    change_token: !group,
  });
  const [error, setError] = useState(null);
  const err = (k) => (error ? error.field(k) : '');
  const save = async (e) => {
    e.preventDefault();
    const body = {
      app_name: g.app_name,
      title: g.title,
      address_type: g.address_type,
      addresses: g.addresses.split(/[\s,]+/).filter(Boolean),
    };
    if (g.change_token) body.access_token = g.access_token || null;
    try {
      const saved = group ? await api.put(`/api/v1/groups/${group.id}`, body) : await api.post('/api/v1/groups', body);
      onDone(saved);
    } catch (ex) {
      setError(ex);
    }
  };
  return html`<form class="card form" onSubmit=${save} data-testid="group-form">
    <h2>${group ? `Edit group ${group.id}` : 'New executor group'}</h2>
    <${ErrorBanner} error=${error} shownFields=${FIELDS} />
    <div class="grid">
      <${Field} label="App name" error=${err('app_name')} hint="executors register under it (4–64: letters, digits . _ -)">
        <input name="app_name" required value=${g.app_name} onInput=${(e) => setG({ ...g, app_name: e.target.value })} />
      </${Field}>
      <${Field} label="Title" error=${err('title')}>
        <input name="title" required value=${g.title} onInput=${(e) => setG({ ...g, title: e.target.value })} />
      </${Field}>
      <${Field} label="Addresses" error=${err('address_type')} hint="AUTO: the executors that register; MANUAL: the list below">
        <${Select} name="address_type" value=${g.address_type} onChange=${(v) => setG({ ...g, address_type: v })} options=${['AUTO', 'MANUAL']} />
      </${Field}>
      ${g.address_type === 'MANUAL' && html`<${Field} label="Executor addresses" error=${err('addresses')} hint="one URL per line" wide>
        <textarea name="addresses" rows="3" class="mono" value=${g.addresses} onInput=${(e) => setG({ ...g, addresses: e.target.value })}></textarea>
      </${Field}>`}
      <${Field} label="Access token" error=${err('access_token')}
        hint=${group && !g.change_token ? (group.has_access_token ? 'set (hidden)' : 'none: the global token') : 'empty = the global token'}>
        ${group && !g.change_token
          ? html`<button type="button" onClick=${() => setG({ ...g, change_token: true })}>Change</button>`
          : html`<input name="access_token" type="password" autocomplete="new-password" value=${g.access_token}
              onInput=${(e) => setG({ ...g, access_token: e.target.value })} />`}
      </${Field}>
    </div>
    <div class="form-actions">
      <button type="button" onClick=${onCancel}>Cancel</button>
      <button type="submit" class="primary" data-testid="save-group">${group ? 'Save' : 'Create group'}</button>
    </div>
  </form>`;
}

export function GroupsPage({ user }) {
  const admin = user.role === 'ADMIN';
  const groups = useLoad(() => api.get('/api/v1/groups'), []);
  const [editing, setEditing] = useState(null); // null, 'new' or a group
  const [notice, setNotice] = useState('');
  const [error, setError] = useState(null);
  const remove = async (g) => {
    setError(null);
    try {
      await api.del(`/api/v1/groups/${g.id}`);
      setNotice(`Deleted group ${g.app_name}.`);
      groups.reload();
    } catch (ex) {
      setError(ex);
    }
  };
  return html`<section>
    <${PageHeader} title="Executor groups">
      ${admin && !editing && html`<button type="button" class="primary" onClick=${() => setEditing('new')} data-testid="new-group">New group</button>`}
    </${PageHeader}>
    <${Notice} text=${notice} onClose=${() => setNotice('')} />
    <${ErrorBanner} error=${error || groups.error} />
    ${editing && html`<${GroupForm} key=${editing === 'new' ? 'new' : editing.id} group=${editing === 'new' ? null : editing}
      onCancel=${() => setEditing(null)}
      onDone=${(g) => { setEditing(null); setNotice(`Saved group ${g.app_name}.`); groups.reload(); }} />`}
    ${!groups.data ? html`<${Loading} />` : html`<div class="table-wrap"><table class="list cards" data-testid="groups-table">
      <thead><tr><th>ID</th><th>App name</th><th>Title</th><th>Type</th><th>Online / configured addresses</th><th>Token</th>${admin && html`<th>Actions</th>`}</tr></thead>
      <tbody>
        ${groups.data.items.length === 0 && html`<tr><td colspan="7" class="muted">No groups${admin ? '' : ' you may see'}.</td></tr>`}
        ${groups.data.items.map((g) => html`<tr key=${g.id}>
          <td data-label="ID">${g.id}</td><td class="mono" data-label="App name">${g.app_name}</td><td data-label="Title">${g.title}</td><td data-label="Type">${g.address_type}</td>
          <td class="mono" data-label="Addresses">${g.online_addresses.length === 0
            ? html`<span class="muted">none online</span>`
            : g.online_addresses.map((a) => html`<div>${a}</div>`)}</td>
          <td data-label="Token">${g.has_access_token ? 'own' : 'global'}</td>
          ${admin && html`<td class="row-actions" data-label="">
            <button type="button" onClick=${() => setEditing(g)}>Edit</button>
            <a class="button" href=${`#/jobs?group=${g.id}`}>Jobs</a>
            <${ConfirmButton} label="Delete" onConfirm=${() => remove(g)} />
          </td>`}
        </tr>`)}
      </tbody>
    </table></div>`}
  </section>`;
}

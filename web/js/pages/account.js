// @ts-check
import { html, useState } from '../lib.js';
import { api } from '../api.js';
import { ErrorBanner, Field, Notice, PageHeader, useLoad } from '../components.js';
import { t } from '../i18n.js';
import { loginSource, loginSourceText } from '../util.js';

// A user of the LDAP directory or of an OpenID provider has no password here: the page says where they log
// in instead of offering a change of password.
/** @param {{ user: import('../types.js').User }} props */
function ExternalAccount({ user }) {
  /** @type {import('../components.js').Load<import('../types.js').Providers>} */
  const providers = useLoad(() => {
    /** @type {Promise<import('../types.js').Providers>} */
    const asked = api.get('/api/v1/auth/providers');
    return asked.catch(() => ({ oidc: [] }));
  }, []);
  return html`<div class="banner warn" role="note" data-testid="account-external">
    ${t('account.external', { source: loginSourceText(user.login_source, providers.data) })}
  </div>`;
}

/** @param {import('../components.js').PageProps} props */
export function AccountPage({ user }) {
  const [f, setF] = useState({ old_password: '', new_password: '', again: '' });
  const [error, setError] = useState(/** @type {import('../api.js').ApiError | null} */ (null));
  const [mismatch, setMismatch] = useState(false);
  const [notice, setNotice] = useState('');
  const err = (/** @type {string} */ k) => (error && error.field ? error.field(k) : '');
  const submit = async (/** @type {Event} */ e) => {
    e.preventDefault();
    setError(null);
    setMismatch(f.new_password !== f.again);
    if (f.new_password !== f.again) return;
    try {
      await api.post('/api/v1/users/me/password', { old_password: f.old_password, new_password: f.new_password });
      setF({ old_password: '', new_password: '', again: '' });
      setNotice(t('account.changed'));
    } catch (ex) {
      setError(ex);
    }
  };
  if (loginSource(user.login_source).kind !== 'local') {
    return html`<section>
      <${PageHeader} title=${t('account.title')} />
      <p>${user.username} · <span class="badge role" title=${user.role}>${t(`enum.role.${user.role}`)}</span></p>
      <${ExternalAccount} user=${user} />
    </section>`;
  }
  return html`<section>
    <${PageHeader} title=${t('account.title')} />
    <p>${user.username} · <span class="badge role" title=${user.role}>${t(`enum.role.${user.role}`)}</span></p>
    <${Notice} text=${notice} onClose=${() => setNotice('')} />
    ${mismatch && html`<div class="banner error" role="alert">${t('account.differ')}</div>`}
    <${ErrorBanner} error=${error} shownFields=${['old_password', 'new_password']} />
    <form class="card form narrow" onSubmit=${submit}>
      <h2>${t('account.change')}</h2>
      <${Field} label=${t('field.old_password')} error=${err('old_password')}>
        <input name="old_password" type="password" autocomplete="current-password" required value=${f.old_password} onInput=${(e) => setF({ ...f, old_password: e.target.value })} />
      </${Field}>
      <${Field} label=${t('field.new_password')} error=${err('new_password')} hint=${t('users.hint.password')}>
        <input name="new_password" type="password" autocomplete="new-password" required value=${f.new_password} onInput=${(e) => setF({ ...f, new_password: e.target.value })} />
      </${Field}>
      <${Field} label=${t('account.again')} error=${mismatch ? t('account.mismatch') : ''}>
        <input name="again" type="password" autocomplete="new-password" required value=${f.again} onInput=${(e) => setF({ ...f, again: e.target.value })} />
      </${Field}>
      <div class="form-actions"><button type="submit" class="primary">${t('account.change')}</button></div>
    </form>
  </section>`;
}

// @ts-check
// Shared pieces of the pages. Every value is rendered through htm/Preact as text, never as HTML.
import { html, useEffect, useState } from './lib.js';
import { api } from './api.js';
import {
  LANGUAGES, describeError, fieldErrorText, fieldLabel, formatNumber, language, setLanguage, t, tOr,
} from './i18n.js';

/** @typedef {import('../vendor/htm-preact-standalone.module.js').ComponentChildren} Children */
/** @typedef {import('./i18n.js').ShownError} ShownError */

// --- routing: "#/jobs/12?group=3" -> { path: '/jobs/12', parts: ['jobs', '12'], params } ---------------
/** @typedef {{ path: string, parts: string[], params: Record<string, string> }} Route */
/**
 * What the shell gives every page: the route and the user logged in (a page of one object also gets its id,
 * the route's second part).
 * @typedef {{ route: Route, user: import('./types.js').User }} PageProps
 */

/**
 * @param {string} [hash]
 * @returns {Route}
 */
export function parseHash(hash = window.location.hash) {
  const raw = hash.replace(/^#/, '') || '/';
  const [path, q = ''] = raw.split('?');
  return { path, parts: path.split('/').filter(Boolean), params: Object.fromEntries(new URLSearchParams(q)) };
}

export function useRoute() {
  const [route, setRoute] = useState(parseHash());
  useEffect(() => {
    const on = () => setRoute(parseHash());
    window.addEventListener('hashchange', on);
    return () => window.removeEventListener('hashchange', on);
  }, []);
  return route;
}

/**
 * @param {string} path
 * @param {Record<string, string | number | null | undefined>} [params] those '' or null are left out
 */
export function navigate(path, params) {
  const q = params
    ? new URLSearchParams(Object.entries(params).filter(([, v]) => v !== '' && v != null).map(([k, v]) => [k, String(v)])).toString()
    : '';
  window.location.hash = q ? `${path}?${q}` : path;
}

// --- display -------------------------------------------------------------------------------------------
/** @param {{ title: string, children?: Children }} props */
export function PageHeader({ title, children }) {
  return html`<div class="page-header"><h1>${title}</h1><div class="actions">${children}</div></div>`;
}

// An error from the API in the console's language: a translated lead, the server's English message as
// detail where it adds something, and the field errors not shown next to a field (each with its label).
/** @param {{ error: ShownError | null | undefined, shownFields?: string[] }} props */
export function ErrorBanner({ error, shownFields = [] }) {
  if (!error) return null;
  const { lead, detail } = describeError(error);
  const rest = (error.errors || []).filter((e) => !shownFields.includes(e.field));
  return html`<div class="banner error" role="alert" data-testid="error-banner">
    <strong>${lead}</strong>${detail && html`<span class="detail">${detail}</span>`}
    ${rest.length > 0 &&
    html`<ul>
      ${rest.map((e) => html`<li>${t('error.fieldLine', { field: fieldLabel(e.field), message: fieldErrorText(e) })}</li>`)}
    </ul>`}
  </div>`;
}

/** @param {{ text: string, kind?: 'ok' | 'error', onClose?: () => void }} props */
export function Notice({ text, kind = 'ok', onClose }) {
  if (!text) return null;
  return html`<div class=${`banner ${kind}`} role="status">
    <span>${text}</span>${onClose && html`<button class="link" onClick=${onClose}>${t('common.dismiss')}</button>`}
  </div>`;
}

/**
 * @param {{ label: string, error?: string | null | false, hint?: string, children?: Children, wide?: boolean }} props
 */
export function Field({ label, error, hint, children, wide }) {
  return html`<label class=${`field${wide ? ' wide' : ''}${error ? ' invalid' : ''}`}>
    <span class="label">${label}</span>
    ${children}
    ${error ? html`<span class="field-error">${error}</span>` : hint ? html`<span class="hint">${hint}</span>` : null}
  </label>`;
}

/**
 * A select of `options`: each a value shown as it is, or [value, label].
 * @typedef {string | number | [value: string | number, label: string]} Option
 * @param {{
 *   value: string | number, options: Option[], onChange: (value: string) => void, name?: string, id?: string,
 *   disabled?: boolean,
 * }} props
 */
export function Select({ value, options, onChange, name, id, disabled }) {
  return html`<select name=${name} id=${id} disabled=${disabled} value=${value} onChange=${(e) => onChange(e.target.value)}>
    ${options.map((o) => {
      const [v, label] = Array.isArray(o) ? o : [o, o];
      return html`<option value=${v} selected=${String(v) === String(value)}>${label}</option>`;
    })}
  </select>`;
}

// A fire's status (PENDING, RUNNING, SUCCESS, FAILED, SKIPPED) in the console's language.
/** @param {{ status: string }} props */
export function StatusBadge({ status }) {
  return html`<span class=${`badge status-${String(status).toLowerCase()}`} title=${status}>${tOr(`enum.logStatus.${status}`, status)}</span>`;
}

// The header's language switch: applied at once, remembered in this browser.
/** @param {{ id?: string, testid?: string }} props */
export function LanguageSwitch({ id = 'language', testid = 'language' }) {
  return html`<select class="language" id=${id} name="language" value=${language()} data-testid=${testid} aria-label=${t('common.language')}
    onChange=${(e) => setLanguage(e.target.value, { remember: true })}>
    ${LANGUAGES.map(([code, name]) => html`<option value=${code} lang=${code} selected=${code === language()}>${name}</option>`)}
  </select>`;
}

// A button that asks once more, in place (no browser dialogs): the first click arms it for 4 s.
/**
 * @param {{ label: string, confirmLabel?: string, onConfirm: () => void, cls?: string, disabled?: boolean }} props
 */
export function ConfirmButton({ label, confirmLabel, onConfirm, cls = 'danger', disabled }) {
  const [armed, setArmed] = useState(false);
  useEffect(() => {
    if (!armed) return undefined;
    const t = setTimeout(() => setArmed(false), 4000);
    return () => clearTimeout(t);
  }, [armed]);
  return html`<button
    type="button"
    class=${`${cls}${armed ? ' armed' : ''}`}
    disabled=${disabled}
    onClick=${() => {
      if (armed) {
        setArmed(false);
        onConfirm();
      } else {
        setArmed(true);
      }
    }}
  >
    ${armed ? confirmLabel || t('common.confirmAgain') : label}
  </button>`;
}

/** @param {{ total: number, offset: number, limit: number, onChange: (offset: number) => void }} props */
export function Pager({ total, offset, limit, onChange }) {
  if (total <= limit && offset === 0) return html`<div class="pager muted">${t('pager.total', { count: total, total: formatNumber(total) })}</div>`;
  const last = Math.min(offset + limit, total);
  return html`<div class="pager">
    <button type="button" disabled=${offset === 0} onClick=${() => onChange(Math.max(0, offset - limit))}>${t('pager.previous')}</button>
    <span>${t('pager.range', { from: formatNumber(total === 0 ? 0 : offset + 1), to: formatNumber(last), total: formatNumber(total) })}</span>
    <button type="button" disabled=${last >= total} onClick=${() => onChange(offset + limit)}>${t('pager.next')}</button>
  </div>`;
}

export function Loading() {
  return html`<p class="muted">${t('common.loading')}</p>`;
}

// Runs `load` now and whenever `deps` change; returns { data, error, reload }.
/**
 * What useLoad holds: the answer (null until it comes, and after an error), the error, whether it is asking.
 * @template T
 * @typedef {{ data: T | null, error: ShownError | null, loading: boolean }} LoadState
 */
/**
 * @template T
 * @typedef {LoadState<T> & { reload: () => void }} Load
 */
/**
 * @template T
 * @param {() => Promise<T>} load
 * @param {unknown[]} deps
 * @returns {Load<T>}
 */
export function useLoad(load, deps) {
  const [state, setState] = useState(/** @type {LoadState<T>} */ ({ data: null, error: null, loading: true }));
  const [tick, setTick] = useState(0);
  useEffect(() => {
    let live = true;
    setState((s) => ({ ...s, loading: true }));
    load()
      .then((data) => live && setState({ data, error: null, loading: false }))
      .catch((error) => live && setState({ data: null, error, loading: false }));
    return () => {
      live = false;
    };
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [...deps, tick]);
  return { ...state, reload: () => setTick((t) => t + 1) };
}

// A multi-select of named objects (alert channels, calendars) by name, for the job and group forms: `load` is
// a useLoad of a list answer ({items: [{id, name}]}), `value` and onChange's argument lists of ids.
/**
 * @param {{
 *   name: string, load: Load<import('./types.js').List<{ id: number, name: string }>>, value: number[] | undefined,
 *   onChange: (ids: number[]) => void,
 * }} props
 */
export function IdPicker({ name, load, value, onChange }) {
  const items = (load.data && load.data.items) || [];
  return html`<select name=${name} multiple size="3"
    onChange=${(e) => onChange(Array.from(e.target.selectedOptions).map((o) => Number(o.value)))}>
    ${items.map((c) => html`<option value=${c.id} selected=${(value || []).includes(c.id)}>${c.name}</option>`)}
  </select>`;
}

// --- a page of one kind of object (calendars, alert channels, groups, users) ----------------------------
// The list from `path`, a table of it, a form to create one or change one (`editing`: null, 'new' or the
// object), a notice of what was done and a banner of what failed, and the delete of a row (DELETE
// `${path}/${id}`, asked twice in place). The page names its columns and its form; the form gets the object
// (null: a new one) and says when it saved.

/**
 * What a form of a ResourcePage gets: the object it changes (null: a new one), and what to call once it is
 * saved (the notice: the page's savedText of it, or the form's own) or left.
 * @template T
 * @typedef {{ item: T | null, onDone: (saved: T, notice?: string) => void, onCancel: () => void }} ResourceFormProps
 */
/**
 * What a column's cells may do: open the form on the object, delete it (asked twice), run a call whose
 * failure the page's banner shows, and say something in the page's notice.
 * @template T
 * @typedef {Object} RowActions
 * @property {(item: T) => Children} editButton
 * @property {(item: T) => Children} deleteButton
 * @property {(fn: () => Promise<void>) => Promise<void>} act
 * @property {(text: string, kind?: 'ok' | 'error') => void} notify
 */
/**
 * A column of the table: its heading, a cell's content, the cell's class and attributes; `cardLabel`, the
 * label of the cell at phone width (class cards), is the heading unless given.
 * @template T
 * @typedef {Object} Column
 * @property {string} label
 * @property {(item: T, actions: RowActions<T>) => Children} cell
 * @property {string} [cls]
 * @property {(item: T) => Record<string, string | number>} [attrs]
 * @property {string} [cardLabel]
 */
/**
 * The page's props; E, the props its form takes besides ResourceFormProps (given as formProps).
 * @template {{ id: number }} T
 * @template {object} [E={}]
 * @typedef {Object} ResourcePageProps
 * @property {string} title
 * @property {string} [intro] a paragraph under the title
 * @property {string} path the list's GET and the base of each object's `${path}/${id}`
 * @property {boolean} canCreate whether the "new" button shows (when no form is open)
 * @property {{ label: string, testid: string }} newButton
 * @property {(props: ResourceFormProps<T> & E) => Children} form
 * @property {E} [formProps]
 * @property {(saved: T) => string} savedText
 * @property {(item: T) => string} deletedText
 * @property {Array<Column<T> | false | null | undefined>} columns those not a column are left out
 * @property {(item: T) => Record<string, string | number>} [rowAttrs]
 * @property {string} [empty] the row of an empty list (none: no such row)
 * @property {string} [tableClass] 'list cards' unless given
 * @property {string} tableTestid
 * @property {Children} [children] after the table
 */

/**
 * @template {{ id: number }} T
 * @template {object} E
 * @param {ResourcePageProps<T, E>} props
 */
export function ResourcePage({
  title, intro, path, canCreate, newButton, form: Form, formProps, savedText, deletedText, columns, rowAttrs,
  empty, tableClass = 'list cards', tableTestid, children,
}) {
  /** @type {Load<import('./types.js').List<T>>} */
  const list = useLoad(() => api.get(path), [path]);
  const [editing, setEditing] = useState(/** @type {T | 'new' | null} */ (null));
  const [notice, setNotice] = useState(/** @type {{ text: string, kind: 'ok' | 'error' }} */ ({ text: '', kind: 'ok' }));
  const [error, setError] = useState(/** @type {import('./api.js').ApiError | null} */ (null));
  const notify = (/** @type {string} */ text, /** @type {'ok' | 'error'} */ kind = 'ok') => setNotice({ text, kind });
  const act = async (/** @type {() => Promise<void>} */ fn) => {
    setError(null);
    try {
      await fn();
    } catch (ex) {
      setError(ex);
    }
  };
  const remove = (/** @type {T} */ item) => act(async () => {
    await api.del(`${path}/${item.id}`);
    notify(deletedText(item));
    list.reload();
  });
  /** @type {RowActions<T>} */
  const actions = {
    editButton: (item) => html`<button type="button" onClick=${() => setEditing(item)}>${t('common.edit')}</button>`,
    deleteButton: (item) => html`<${ConfirmButton} label=${t('common.delete')} confirmLabel=${t('common.deleteConfirm')} onConfirm=${() => remove(item)} />`,
    act,
    notify,
  };
  const shown = /** @type {Column<T>[]} */ (columns.filter(Boolean)); // Cast: filter(Boolean) leaves the columns
  const done = (/** @type {T} */ saved, /** @type {string | undefined} */ text) => {
    setEditing(null);
    setError(null); // what failed before is not what the page shows after a save
    notify(text === undefined ? savedText(saved) : text);
    list.reload();
  };
  const item = editing === 'new' ? null : editing;
  return html`<section>
    <${PageHeader} title=${title}>
      ${canCreate && !editing && html`<button type="button" class="primary" onClick=${() => setEditing('new')} data-testid=${newButton.testid}>${newButton.label}</button>`}
    </${PageHeader}>
    ${intro && html`<p class="muted">${intro}</p>`}
    <${Notice} text=${notice.text} kind=${notice.kind} onClose=${() => notify('')} />
    <${ErrorBanner} error=${error || list.error} />
    ${editing && html`<${Form} key=${item ? item.id : 'new'} item=${item} onDone=${done} onCancel=${() => setEditing(null)} ...${formProps || {}} />`}
    ${!list.data ? html`<${Loading} />` : html`<div class="table-wrap"><table class=${tableClass} data-testid=${tableTestid}>
      <thead><tr>${shown.map((c) => html`<th>${c.label}</th>`)}</tr></thead>
      <tbody>
        ${empty !== undefined && list.data.items.length === 0 && html`<tr><td colspan=${shown.length} class="muted">${empty}</td></tr>`}
        ${list.data.items.map((row) => html`<tr key=${row.id} ...${rowAttrs ? rowAttrs(row) : {}}>
          ${shown.map((c) => html`<td class=${c.cls} data-label=${c.cardLabel === undefined ? c.label : c.cardLabel} ...${c.attrs ? c.attrs(row) : {}}>${c.cell(row, actions)}</td>`)}
        </tr>`)}
      </tbody>
    </table></div>`}
    ${children}
  </section>`;
}

// The state of a ResourcePage's form: the draft as typed (`set(k)` a setter of one field), the last error
// and its field errors (`err(k)`: the message of field k in the console's language, or ''), and `submit`,
// the form's onSubmit, which sends the draft and hands the saved object on (or keeps the error).
/**
 * @template D, T
 * @param {D} initial
 * @param {(draft: D) => Promise<T>} send
 * @param {(saved: T) => void} onSaved
 */
export function useDraft(initial, send, onSaved) {
  const [draft, setDraft] = useState(initial);
  const [error, setError] = useState(/** @type {import('./api.js').ApiError | null} */ (null));
  /** @type {<K extends keyof D>(k: K) => (v: D[K]) => void} */
  const set = (k) => (v) => setDraft((d) => ({ ...d, [k]: v }));
  const err = (/** @type {string} */ k) => (error ? error.field(k) : '');
  const submit = async (/** @type {Event} */ e) => {
    e.preventDefault();
    try {
      onSaved(await send(draft));
    } catch (ex) {
      setError(ex);
    }
  };
  return { draft, setDraft, set, error, err, submit };
}

// An object created (POST `path`) or changed (PUT `${path}/${id}`).
/**
 * @template T
 * @param {string} path
 * @param {{ id: number } | null} item
 * @param {unknown} body
 * @returns {Promise<T>}
 */
export const saveResource = (path, item, body) => (item ? api.put(`${path}/${item.id}`, body) : api.post(path, body));

// A ResourcePage's form around its fields: the heading, the error banner (less the fields shown next to
// their input), and Cancel and the submit button.
/**
 * @param {{
 *   title: string, testid: string, saveTestid: string, saveLabel: string, error: ShownError | null,
 *   shownFields: string[], onSubmit: (e: Event) => void, onCancel: () => void, children?: Children,
 * }} props
 */
export function FormCard({ title, testid, saveTestid, saveLabel, error, shownFields, onSubmit, onCancel, children }) {
  return html`<form class="card form" onSubmit=${onSubmit} data-testid=${testid}>
    <h2>${title}</h2>
    <${ErrorBanner} error=${error} shownFields=${shownFields} />
    ${children}
    <div class="form-actions">
      <button type="button" onClick=${onCancel}>${t('common.cancel')}</button>
      <button type="submit" class="primary" data-testid=${saveTestid}>${saveLabel}</button>
    </div>
  </form>`;
}

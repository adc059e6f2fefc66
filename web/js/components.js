// Shared pieces of the pages. Every value is rendered through htm/Preact as text, never as HTML.
import { html, useEffect, useState } from './lib.js';

// --- routing: "#/jobs/12?group=3" -> { path: '/jobs/12', parts: ['jobs', '12'], params } ---------------
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

export function navigate(path, params) {
  const q = params ? new URLSearchParams(Object.entries(params).filter(([, v]) => v !== '' && v != null)).toString() : '';
  window.location.hash = q ? `${path}?${q}` : path;
}

// --- display -------------------------------------------------------------------------------------------
export function PageHeader({ title, children }) {
  return html`<div class="page-header"><h1>${title}</h1><div class="actions">${children}</div></div>`;
}

// An error from the API: the message, and the field errors not shown next to a field.
export function ErrorBanner({ error, shownFields = [] }) {
  if (!error) return null;
  const rest = (error.errors || []).filter((e) => !shownFields.includes(e.field));
  return html`<div class="banner error" role="alert">
    <strong>${error.message}</strong>
    ${rest.length > 0 &&
    html`<ul>
      ${rest.map((e) => html`<li><code>${e.field || 'body'}</code>: ${e.message}</li>`)}
    </ul>`}
  </div>`;
}

export function Notice({ text, kind = 'ok', onClose }) {
  if (!text) return null;
  return html`<div class=${`banner ${kind}`} role="status">
    <span>${text}</span>${onClose && html`<button class="link" onClick=${onClose}>dismiss</button>`}
  </div>`;
}

export function Field({ label, error, hint, children, wide }) {
  return html`<label class=${`field${wide ? ' wide' : ''}${error ? ' invalid' : ''}`}>
    <span class="label">${label}</span>
    ${children}
    ${error ? html`<span class="field-error">${error}</span>` : hint ? html`<span class="hint">${hint}</span>` : null}
  </label>`;
}

export function Select({ value, options, onChange, name, id, disabled }) {
  return html`<select name=${name} id=${id} disabled=${disabled} value=${value} onChange=${(e) => onChange(e.target.value)}>
    ${options.map((o) => {
      const [v, label] = Array.isArray(o) ? o : [o, o];
      return html`<option value=${v} selected=${String(v) === String(value)}>${label}</option>`;
    })}
  </select>`;
}

export function StatusBadge({ status }) {
  return html`<span class=${`badge status-${String(status).toLowerCase()}`}>${status}</span>`;
}

// A button that asks once more, in place (no browser dialogs): the first click arms it for 4 s.
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
    ${armed ? confirmLabel || `Really ${label.toLowerCase()}?` : label}
  </button>`;
}

export function Pager({ total, offset, limit, onChange }) {
  if (total <= limit && offset === 0) return html`<div class="pager muted">${total} in all</div>`;
  const last = Math.min(offset + limit, total);
  return html`<div class="pager">
    <button type="button" disabled=${offset === 0} onClick=${() => onChange(Math.max(0, offset - limit))}>Previous</button>
    <span>${total === 0 ? 0 : offset + 1}–${last} of ${total}</span>
    <button type="button" disabled=${last >= total} onClick=${() => onChange(offset + limit)}>Next</button>
  </div>`;
}

export function Loading() {
  return html`<p class="muted">Loading…</p>`;
}

// Runs `load` now and whenever `deps` change; returns { data, error, reload }.
export function useLoad(load, deps) {
  const [state, setState] = useState({ data: null, error: null, loading: true });
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

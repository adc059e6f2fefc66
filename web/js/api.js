// JSON calls to the REST API. The session cookie is HttpOnly (the browser sends it); the CSRF token is
// kept in memory only and sent on every state-changing request.
import { fieldErrorText } from './i18n.js';

let csrfToken = '';
let onUnauthorized = () => {};

// A failed call: the HTTP status (0: the server was not reached), the error body's kind `code`, its English
// `error` message (serverMessage) and its field errors {field, message, code, params}
// (docs/architecture.md, "Errors").
export class ApiError extends Error {
  constructor(status, body) {
    super((body && body.error) || `HTTP ${status}`);
    this.status = status;
    this.code = (body && body.code) || '';
    this.serverMessage = (body && body.error) || '';
    this.errors = (body && body.errors) || [];
  }
  // The error of one field in the current language, or ''.
  field(name) {
    const e = this.errors.find((x) => x.field === name);
    return e ? fieldErrorText(e) : '';
  }
}

export function setCsrf(token) {
  csrfToken = token || '';
}

export function setUnauthorizedHandler(fn) {
  onUnauthorized = fn;
}

async function call(method, path, body) {
  const headers = { Accept: 'application/json' };
  if (method !== 'GET') headers['X-CSRF-Token'] = csrfToken;
  if (body !== undefined) headers['Content-Type'] = 'application/json';
  let res;
  try {
    res = await fetch(path, {
      method,
      headers,
      credentials: 'same-origin',
      body: body === undefined ? undefined : JSON.stringify(body),
    });
  } catch (e) {
    throw new ApiError(0, { error: e.message }); // not reached: offline, refused, aborted
  }
  let data = null;
  try {
    data = await res.json();
  } catch (_) {
    data = null;
  }
  if (!res.ok) {
    if (res.status === 401 && path !== '/api/v1/auth/login') onUnauthorized();
    throw new ApiError(res.status, data);
  }
  return data;
}

// A query string from the non-empty values of `params`.
export function query(params) {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) {
    if (v !== undefined && v !== null && v !== '') q.set(k, String(v));
  }
  const s = q.toString();
  return s ? `?${s}` : '';
}

export const api = {
  get: (path) => call('GET', path),
  post: (path, body) => call('POST', path, body === undefined ? {} : body),
  put: (path, body) => call('PUT', path, body),
  del: (path) => call('DELETE', path),
};

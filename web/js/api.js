// @ts-check
// JSON calls to the REST API. The session cookie is HttpOnly (the browser sends it); the CSRF token is
// kept in memory only and sent on every state-changing request.
import { fieldErrorText } from './i18n.js';

let csrfToken = '';
/** @type {() => void} */
let onUnauthorized = () => {};

// A failed call: the HTTP status (0: the server was not reached), the error body's kind `code`, its English
// `error` message (serverMessage) and its field errors {field, message, code, params}
// (docs/architecture.md, "Errors").
export class ApiError extends Error {
  /**
   * @param {number} status
   * @param {Partial<import('./types.js').ErrorBody> | null} body
   */
  constructor(status, body) {
    super((body && body.error) || `HTTP ${status}`);
    this.status = status;
    this.code = (body && body.code) || '';
    this.serverMessage = (body && body.error) || '';
    /** @type {import('./types.js').FieldError[]} */
    this.errors = (body && body.errors) || [];
  }
  // The error of one field in the current language, or ''.
  /** @param {string} name */
  field(name) {
    const e = this.errors.find((x) => x.field === name);
    return e ? fieldErrorText(e) : '';
  }
}

/** @param {string | undefined} token */
export function setCsrf(token) {
  csrfToken = token || '';
}

/** @param {() => void} fn */
export function setUnauthorizedHandler(fn) {
  onUnauthorized = fn;
}

// The answer's JSON (null when the body is not JSON); an ApiError for any status but 2xx.
/**
 * @param {'GET' | 'POST' | 'PUT' | 'DELETE'} method
 * @param {string} path
 * @param {unknown} [body]
 * @returns {Promise<any>} the caller names the answer's type (api below)
 */
async function call(method, path, body) {
  /** @type {Record<string, string>} */
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
    // Cast: fetch rejects with a TypeError (an abort: a DOMException), both Errors with a message.
    throw new ApiError(0, { error: /** @type {Error} */ (e).message }); // not reached: offline, refused, aborted
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
/** @param {Record<string, string | number | boolean | null | undefined>} params */
export function query(params) {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) {
    if (v !== undefined && v !== null && v !== '') q.set(k, String(v));
  }
  const s = q.toString();
  return s ? `?${s}` : '';
}

// Each call answers the type its caller names (`/** @type {import('./types.js').Job} */ const job = await
// api.get(...)`, or the type of the useLoad holding it): the server's answer is not checked at run time, so
// the name is the caller's word for what the path returns (web/openapi.json).
export const api = {
  /** @type {<T = unknown>(path: string) => Promise<T>} */
  get: (path) => call('GET', path),
  /** @type {<T = unknown>(path: string, body?: unknown) => Promise<T>} */
  post: (path, body) => call('POST', path, body === undefined ? {} : body),
  /** @type {<T = unknown>(path: string, body: unknown) => Promise<T>} */
  put: (path, body) => call('PUT', path, body),
  /** @type {<T = unknown>(path: string) => Promise<T>} */
  del: (path) => call('DELETE', path),
};

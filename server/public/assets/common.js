// Shared by every page: the session, the API client, error wording and small DOM helpers.
//
// Where the access token lives: in sessionStorage, under one key, and nowhere else. It is
// per tab, gone when the tab closes, never sent by the browser on its own (so no cross-site
// request can use it, unlike a cookie without CSRF protection), and it expires with the token
// itself (15 minutes by default). sessionStorage rather than a variable only because the
// pages are separate documents; nothing else is ever stored in the browser.

const SESSION_KEY = 'iki.session';

/** The current session {token, accountId, expiresAt, email}, or null when signed out. */
export function session() {
  try {
    const raw = sessionStorage.getItem(SESSION_KEY);
    if (raw === null) return null;
    const value = JSON.parse(raw);
    if (typeof value?.token !== 'string' || typeof value.expiresAt !== 'number' || value.expiresAt <= Date.now()) {
      sessionStorage.removeItem(SESSION_KEY);
      return null;
    }
    return value;
  } catch {
    return null;
  }
}

/** Keeps the answer of `POST /api/sessions` for this tab. */
export function saveSession(answer, email) {
  const value = { token: answer.accessToken, accountId: answer.accountId, email,
    expiresAt: Date.now() + answer.expiresIn * 1000 };
  sessionStorage.setItem(SESSION_KEY, JSON.stringify(value));
  return value;
}

export function signOut() {
  sessionStorage.removeItem(SESSION_KEY);
}

/** An error answer of the API ({error: {code, message, details?, requestId}}) or a network failure. */
export class ApiProblem extends Error {
  constructor(status, body, headers) {
    const error = body?.error ?? {};
    super(typeof error.message === 'string' ? error.message : `HTTP ${status}`);
    this.name = 'ApiProblem';
    this.status = status;
    this.code = typeof error.code === 'string' ? error.code : status === 0 ? 'NETWORK' : 'HTTP_ERROR';
    this.requestId = typeof error.requestId === 'string' ? error.requestId : headers?.get('x-request-id') ?? null;
    this.details = error.details ?? null;
    const retry = Number(headers?.get('retry-after') ?? error.details?.retryAfterSeconds);
    this.retryAfterSeconds = Number.isFinite(retry) && retry > 0 ? retry : null;
  }
}

/** Builds an ApiProblem from a non-2xx response. */
export async function problemFrom(response) {
  let body = null;
  try {
    if ((response.headers.get('content-type') ?? '').includes('application/json')) body = await response.json();
  } catch {
    body = null;
  }
  const problem = new ApiProblem(response.status, body, response.headers);
  if (problem.status === 401) signOut();
  return problem;
}

/** Authorization header of the session, if any. */
export function authHeaders() {
  const current = session();
  return current === null ? {} : { authorization: `Bearer ${current.token}` };
}

/**
 * Calls the API. `json` is sent as application/json; `body` is sent raw with `type`.
 * Resolves to the parsed JSON answer; rejects with ApiProblem.
 */
export async function api(path, { method = 'GET', json, body, type, signal } = {}) {
  const headers = { accept: 'application/json', ...authHeaders() };
  let payload = body;
  if (json !== undefined) {
    payload = JSON.stringify(json);
    headers['content-type'] = 'application/json';
  } else if (type !== undefined) {
    headers['content-type'] = type;
  }
  let response;
  try {
    response = await fetch(path, { method, headers, body: payload, signal, cache: 'no-store', credentials: 'omit' });
  } catch (err) {
    if (err?.name === 'AbortError') throw err;
    throw new ApiProblem(0, { error: { message: 'the service could not be reached' } });
  }
  if (!response.ok) throw await problemFrom(response);
  return response.status === 204 ? null : response.json();
}

/** Plain words for the codes a person is likely to meet; the API's message otherwise. */
const WORDS = {
  NETWORK: 'The service could not be reached. Check the connection and try again.',
  UNAUTHENTICATED: 'Your session has ended. Please sign in again.',
  INVALID_CREDENTIALS: 'That e-mail address and password do not match an account.',
  EMAIL_TAKEN: 'An account with this e-mail address already exists. Sign in instead.',
  VERIFICATION_INVALID: 'This verification link is not valid any more: it was used already, a newer link replaced it, or it expired.',
  VALIDATION_FAILED: 'Some of the information is not in the expected form.',
  ACCOUNT_NOT_FOUND: 'No account has this id or verified e-mail address. The buyer has to sign up and verify their e-mail first.',
  MASTER_NOT_FOUND: 'This master does not exist or is not yours.',
  LICENSE_NOT_FOUND: 'This license does not exist or is not yours.',
  FORBIDDEN: 'You are not allowed to do this.',
  LICENSE_REVOKED: 'The seller revoked this license. No copies or keys are issued for it any more.',
  RATE_LIMITED: 'Too many key releases recently.',
  PAYLOAD_TOO_LARGE: 'The file is larger than the service accepts.',
  UNSUPPORTED_MEDIA_TYPE: 'The service does not accept this type of file here.',
  SIGNER_NOT_SELLER: 'The master is not signed by a signing key registered to your account.',
  CRYPTO_UNAVAILABLE: 'The service\'s key module is not loaded, so this cannot be done right now.',
  INTERNAL: 'Something went wrong on the service.',
  DECRYPT_FAILED: 'The file could not be decrypted: it was not made for this service, or it was changed.',
  BAD_SIGNATURE: 'The file\'s signature does not match its contents: it was changed after signing.',
  KEY_REQUIRED: 'The file is not sealed to this service\'s key. Pack it with the service key shown on this page.',
};

/** A sentence for an error, without internals. */
export function plainWords(err) {
  if (err instanceof ApiProblem) {
    if (err.code === 'RATE_LIMITED' && (err.details?.scope === 'license' || err.details?.scope === 'user')) {
      return `Too many key releases for this ${err.details.scope === 'user' ? 'account' : 'license'} recently.`;
    }
    if (err.code === 'SIGN_IN_THROTTLED') {
      return `Too many failed sign-ins for this address or from this network. Try again in ${retryMinutes(err)}.`;
    }
    if (err.code === 'MAIL_THROTTLED') {
      return `Too many verification e-mails were asked for, for this address or from this network. Try again in ${retryMinutes(err)}.`;
    }
    const words = WORDS[err.code];
    if (words !== undefined) return words;
    if (err.status === 422) return `The file failed the service's check (${err.message}).`;
    return sentence(err.message);
  }
  return sentence(err?.message ?? String(err));
}

/** "1 minute", "15 minutes": the wait a 429 names, rounded up to whole minutes. */
function retryMinutes(err) {
  const minutes = Math.max(1, Math.ceil(Number(err.details?.retryAfterSeconds ?? 60) / 60));
  return `${minutes} minute${minutes === 1 ? '' : 's'}`;
}

/**
 * Asks for a new verification link for `email` and tells the outcome in `target`. The service
 * answers alike whether or not the address has an account waiting, so the words do too.
 */
export async function requestVerificationLink(email, target) {
  try {
    await api('/api/accounts/verification', { method: 'POST', json: { email } });
    showNotice(target, `If ${email} belongs to an account that is not verified yet, a new link is on its way. It replaces any earlier link.`, 'success');
  } catch (err) {
    showProblem(target, err);
  }
}

function sentence(text) {
  const trimmed = String(text).trim();
  if (trimmed === '') return 'Something went wrong.';
  const first = trimmed.charAt(0).toUpperCase() + trimmed.slice(1);
  return /[.!?]$/.test(first) ? first : `${first}.`;
}

/**
 * Creates an element: `el('a', {href: '/x', class: 'btn'}, 'text', child)`. Properties that
 * start with "on" are listeners; `dataset` and `aria-*`/other strings become attributes.
 * Children are text or nodes; text never becomes markup.
 */
export function el(tag, props = {}, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(props)) {
    if (value === undefined || value === null || value === false) continue;
    if (key.startsWith('on') && typeof value === 'function') node.addEventListener(key.slice(2), value);
    else if (key === 'dataset') Object.assign(node.dataset, value);
    else if (key in node && typeof value !== 'string') node[key] = value;
    else node.setAttribute(key, value === true ? '' : String(value));
  }
  node.append(...children.flat().filter((c) => c !== undefined && c !== null && c !== false));
  return node;
}

/** Shows an error (plain words, the code and the request id) in `target`. */
export function showProblem(target, err, lead) {
  const parts = [el('p', {}, lead === undefined ? plainWords(err) : `${lead} ${plainWords(err)}`)];
  if (err instanceof ApiProblem && err.code !== 'NETWORK') {
    const meta = [`Code ${err.code}`];
    if (err.requestId !== null) meta.push(`request id ${err.requestId}`);
    parts.push(el('p', { class: 'meta' }, `${meta.join(' · ')}.`));
  }
  if (err instanceof ApiProblem && err.status === 401 && location.pathname !== '/') {
    parts.push(el('p', {}, el('a', { href: `/?next=${encodeURIComponent(location.pathname)}` }, 'Sign in again')));
  }
  target.replaceChildren(el('div', { class: 'notice error', role: 'alert' }, ...parts));
}

/** Shows a short status message in `target` (announced politely). */
export function showNotice(target, text, kind = 'info') {
  target.replaceChildren(el('div', { class: `notice ${kind}`, role: 'status' }, text));
}

/** A notice for work under way: marked `pending` until the answer replaces it. */
export function showPending(target, text) {
  target.replaceChildren(el('div', { class: 'notice info pending', role: 'status', 'aria-busy': 'true' }, text));
}

const BYTE_UNITS = ['bytes', 'KiB', 'MiB', 'GiB'];

export function formatBytes(n) {
  let value = n;
  let unit = 0;
  while (value >= 1024 && unit < BYTE_UNITS.length - 1) {
    value /= 1024;
    unit += 1;
  }
  return unit === 0 ? `${n} bytes` : `${value.toFixed(value < 10 ? 1 : 0)} ${BYTE_UNITS[unit]}`;
}

export function formatTime(iso) {
  const date = typeof iso === 'number' ? new Date(iso) : new Date(String(iso));
  if (Number.isNaN(date.getTime())) return String(iso);
  return date.toLocaleString(undefined, { dateStyle: 'medium', timeStyle: 'short' });
}

/** A <time> element for an ISO timestamp. */
export function timeEl(iso) {
  return el('time', { datetime: String(iso) }, formatTime(iso));
}

/** Fills the header's session area: who is signed in, and a sign-out button. */
export function renderSessionBar() {
  const target = document.getElementById('session');
  if (target === null) return;
  const current = session();
  if (current === null) {
    target.replaceChildren(el('a', { href: `/?next=${encodeURIComponent(location.pathname)}` }, 'Sign in'));
    return;
  }
  target.replaceChildren(
    el('span', { class: 'who' }, current.email ?? current.accountId),
    el('button', { type: 'button', class: 'link', onclick: () => { signOut(); location.assign('/'); } }, 'Sign out'),
  );
}

/** For pages that need an account: the session, or a sign-in prompt in `target` and null. */
export function requireSession(target) {
  const current = session();
  if (current !== null) return current;
  target.replaceChildren(el('div', { class: 'notice info', role: 'status' },
    el('p', {}, 'Sign in to use this page. '),
    el('p', {}, el('a', { class: 'button', href: `/?next=${encodeURIComponent(location.pathname)}` }, 'Sign in'))));
  return null;
}

/** Disables a form's controls while `work` runs. */
export async function busy(form, work) {
  const controls = [...form.querySelectorAll('button, input, select, textarea')];
  const was = controls.map((c) => c.disabled);
  controls.forEach((c) => { c.disabled = true; });
  form.setAttribute('aria-busy', 'true');
  try {
    return await work();
  } finally {
    controls.forEach((c, i) => { c.disabled = was[i]; });
    form.removeAttribute('aria-busy');
  }
}

/**
 * A table that stacks into labelled rows on narrow screens. `columns` are {label, num?,
 * hidden?} (hidden: a visually hidden header, e.g. for an actions column); `rows` are arrays of
 * cells (text or nodes), optionally {cells, dataset}.
 */
export function dataTable({ columns, rows, caption, id }) {
  const head = el('tr', {}, columns.map((c) => el('th', { scope: 'col', class: c.num ? 'num' : undefined },
    c.hidden ? el('span', { class: 'visually-hidden' }, c.label) : c.label)));
  const body = rows.map((row) => {
    const { cells, dataset } = Array.isArray(row) ? { cells: row, dataset: undefined } : row;
    return el('tr', { dataset }, cells.map((cell, i) => el('td', {
      class: columns[i]?.num ? 'num' : undefined, 'data-label': columns[i]?.hidden ? undefined : columns[i]?.label,
    }, el('div', {}, cell))));
  });
  return el('div', { class: 'table-wrap' }, el('table', { id, class: 'stack' },
    caption === undefined ? null : el('caption', { class: 'meta' }, caption),
    el('thead', {}, head), el('tbody', {}, body)));
}

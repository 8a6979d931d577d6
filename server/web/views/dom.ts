/**
 * DOM helpers every page shares: building elements (text never becomes markup, so the pages
 * need no HTML sink and run under Trusted Types with no policy), notices and errors in plain
 * words with the code and request id, the header's session bar, busy forms and tables that
 * stack on narrow screens. Everything that is not about the page's DOM lives in
 * `@iki/core/browser`.
 */
import {
  ApiProblem, currentSession, onSessionChange, sessionApi, signOut, type Session,
} from '@iki/core/browser';
import { errorWords } from '../i18n/errors.js';
import { LOCALE_NAMES, chooseLocale, formatDateTime, locale, t, type Locale } from '../i18n/index.js';

/** A child of {@link el}: text, a node, nothing, or a list of those. */
export type Child = Node | string | null | undefined | false | readonly Child[];

/** Properties of {@link el}: `on*` functions are listeners, `dataset` fills data-*, other values are properties or attributes. */
export type Props = Record<string, unknown>;

/**
 * Creates an element: `el('a', {href: '/x', class: 'btn'}, 'text', child)`. Properties that
 * start with "on" are listeners; `dataset` and `aria-*`/other strings become attributes;
 * non-string values of existing properties (`disabled: true`) are set as properties.
 */
export function el<K extends keyof HTMLElementTagNameMap>(tag: K, props: Props = {}, ...children: Child[]): HTMLElementTagNameMap[K] {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(props)) {
    if (value === undefined || value === null || value === false) continue;
    if (key.startsWith('on') && typeof value === 'function') node.addEventListener(key.slice(2), value as EventListener);
    else if (key === 'dataset') Object.assign(node.dataset, value);
    else if (key in node && typeof value !== 'string') Reflect.set(node, key, value);
    else node.setAttribute(key, value === true ? '' : String(value));
  }
  node.append(...flatten(children));
  return node;
}

function flatten(children: readonly Child[]): (Node | string)[] {
  const out: (Node | string)[] = [];
  for (const child of children) {
    if (Array.isArray(child)) out.push(...flatten(child));
    else if (child !== undefined && child !== null && child !== false) out.push(child as Node | string);
  }
  return out;
}

/** The element with `id`; a page missing it is a bug, reported as such. */
export function byId<T extends HTMLElement = HTMLElement>(id: string): T {
  const node = document.getElementById(id);
  if (node === null) throw new Error(`the page has no #${id}`);
  return node as T;
}

/** The form control named `name` (an input, select or textarea). */
export function field(form: HTMLFormElement, name: string): HTMLInputElement {
  const control = form.elements.namedItem(name);
  if (!(control instanceof HTMLInputElement)) throw new Error(`the form has no input "${name}"`);
  return control;
}

/** The first element matching `selector` inside `root`. */
export function inside<T extends Element = HTMLElement>(root: ParentNode, selector: string): T {
  const node = root.querySelector<T & Element>(selector);
  if (node === null) throw new Error(`nothing matches ${selector}`);
  return node;
}

/** Where "Sign in" leads from this page (back here afterwards). */
function signInHref(): string {
  return `/?next=${encodeURIComponent(location.pathname)}`;
}

/** Shows an error (plain words, the code and the request id) in `target`. */
export function showProblem(target: Element, err: unknown, lead?: string): void {
  const parts: Node[] = [el('p', {}, lead === undefined ? errorWords(err) : `${lead} ${errorWords(err)}`)];
  if (err instanceof ApiProblem && err.code !== 'NETWORK') {
    parts.push(el('p', { class: 'meta' }, err.requestId === null ? t('common.codeLine', { code: err.code })
      : t('common.codeRequestLine', { code: err.code, requestId: err.requestId })));
  }
  if (err instanceof ApiProblem && err.status === 401 && location.pathname !== '/') {
    parts.push(el('p', {}, el('a', { href: signInHref() }, t('common.signInAgain'))));
  }
  target.replaceChildren(el('div', { class: 'notice error', role: 'alert' }, ...parts));
}

/** Shows a short status message in `target` (announced politely). */
export function showNotice(target: Element, text: string, kind: 'info' | 'success' | 'error' = 'info'): void {
  target.replaceChildren(el('div', { class: `notice ${kind}`, role: 'status' }, text));
}

/** A notice for work under way: marked `pending` until the answer replaces it. */
export function showPending(target: Element, text: string): void {
  target.replaceChildren(el('div', { class: 'notice info pending', role: 'status', 'aria-busy': 'true' }, text));
}

/** A <time> element for an ISO timestamp: the local date and time in the page's language, the ISO form in its tooltip. */
export function timeEl(iso: string): HTMLTimeElement {
  return el('time', { datetime: String(iso), title: String(iso) }, formatDateTime(iso));
}

/** The e-mail address of a sign-up waiting for its link, kept for this tab only (for the banner). */
const PENDING_KEY = 'iki.pendingSignUp';

/** Remembers (or forgets, with null) the address of this tab's sign-up waiting for its link. */
export function rememberPendingSignUp(email: string | null): void {
  try {
    if (email === null) sessionStorage.removeItem(PENDING_KEY);
    else sessionStorage.setItem(PENDING_KEY, email);
  } catch {
    // Storage blocked: no banner, nothing else lost.
  }
}

function pendingSignUp(): string | null {
  try {
    return sessionStorage.getItem(PENDING_KEY);
  } catch {
    return null;
  }
}

/**
 * The banner every page shows while an address waits for verification (issue 14 item 3): this
 * tab's sign-up waiting for its link, or a signed-in account whose address is not verified.
 * It offers to send the link again.
 */
function renderBanner(current: Session | null): void {
  const old = document.getElementById('verify-banner');
  const pending = current === null ? pendingSignUp() : current.emailVerified === false ? current.email ?? null : null;
  if (pending === null) {
    old?.remove();
    return;
  }
  const result = el('span', { class: 'result', 'aria-live': 'polite' });
  const button: HTMLButtonElement = el('button', { type: 'button', class: 'secondary small', onclick: async () => {
    button.disabled = true;
    try {
      await requestVerificationLink(pending, result);
    } finally {
      button.disabled = false;
    }
  } }, t('common.resendLink'));
  const banner = el('div', { id: 'verify-banner', class: 'notice info banner', role: 'status' },
    el('p', {}, t('common.verifyBanner', { email: pending })),
    el('p', { class: 'actions' }, button, result));
  if (old !== null) old.replaceWith(banner);
  else document.querySelector('main')?.prepend(banner);
}

/** The header's language switch: the page's language, remembered when changed. */
function languageSwitch(): HTMLElement {
  const select = el('select', { id: 'language', 'aria-label': t('nav.language'), onchange: (e: Event) => {
    chooseLocale((e.currentTarget as HTMLSelectElement).value as Locale);
  } }, (Object.keys(LOCALE_NAMES) as Locale[]).map((l) => el('option', { value: l, selected: l === locale, lang: l }, LOCALE_NAMES[l])));
  return el('label', { class: 'language' }, select);
}

/** Fills the header's session area: who is signed in, the account page, and sign-out; kept current across tabs. */
export function renderSessionBar(): void {
  const target = document.getElementById('session');
  const draw = (current: Session | null) => {
    renderBanner(current);
    if (target === null) return;
    if (current === null) {
      target.replaceChildren(languageSwitch(), el('a', { href: signInHref() }, t('common.signIn')));
      return;
    }
    target.replaceChildren(
      languageSwitch(),
      el('a', { class: 'who', href: '/account', title: t('common.yourAccount') }, current.email ?? current.accountId),
      el('button', { type: 'button', class: 'link', id: 'sign-out', onclick: async () => { await signOut(); location.assign('/'); } }, t('common.signOut')),
    );
  };
  if (target !== null && target.dataset['live'] !== 'yes') {
    target.dataset['live'] = 'yes';
    onSessionChange(draw);
  }
  draw(currentSession());
}

/** For pages that need an account: the session, or a sign-in prompt in `target` and null. */
export function requireSession(target: Element): Session | null {
  const current = currentSession();
  if (current !== null) return current;
  target.replaceChildren(el('div', { class: 'notice info', role: 'status' },
    el('p', {}, t('common.signInToUse')),
    el('p', {}, el('a', { class: 'button', href: signInHref() }, t('common.signIn')))));
  return null;
}

/** Disables a form's controls while `work` runs. */
export async function busy<T>(form: HTMLFormElement, work: () => Promise<T>): Promise<T> {
  const controls = [...form.querySelectorAll<HTMLButtonElement | HTMLInputElement | HTMLSelectElement | HTMLTextAreaElement>(
    'button, input, select, textarea')];
  const was = controls.map((c) => c.disabled);
  controls.forEach((c) => { c.disabled = true; });
  form.setAttribute('aria-busy', 'true');
  try {
    return await work();
  } finally {
    controls.forEach((c, i) => { c.disabled = was[i] ?? false; });
    form.removeAttribute('aria-busy');
  }
}

/** A column of {@link dataTable}; `hidden`: a visually hidden header (an actions column). */
export interface Column { label: string; num?: boolean; hidden?: boolean }
/** A row of {@link dataTable}: its cells, optionally with data-* attributes. */
export type Row = readonly Child[] | { cells: readonly Child[]; dataset?: Record<string, string> };

/** A table that stacks into labelled rows on narrow screens. */
export function dataTable({ columns, rows, caption, id }: { columns: readonly Column[]; rows: readonly Row[]; caption?: string; id?: string }):
HTMLDivElement {
  const head = el('tr', {}, columns.map((c) => el('th', { scope: 'col', class: c.num === true ? 'num' : undefined },
    c.hidden === true ? el('span', { class: 'visually-hidden' }, c.label) : c.label)));
  const body = rows.map((row) => {
    const { cells, dataset } = isCellList(row) ? { cells: row, dataset: undefined } : row;
    return el('tr', { dataset }, cells.map((cell, i) => el('td', {
      class: columns[i]?.num === true ? 'num' : undefined, 'data-label': columns[i]?.hidden === true ? undefined : columns[i]?.label,
    }, el('div', {}, cell))));
  });
  return el('div', { class: 'table-wrap' }, el('table', { id, class: 'stack' },
    caption === undefined ? null : el('caption', { class: 'meta' }, caption),
    el('thead', {}, head), el('tbody', {}, body)));
}

function isCellList(row: Row): row is readonly Child[] {
  return Array.isArray(row);
}

/**
 * Asks for a new verification link for `email` and tells the outcome in `target`. The service
 * answers alike whether or not the address has an account waiting, so the words do too.
 */
export async function requestVerificationLink(email: string, target: Element): Promise<void> {
  try {
    await sessionApi.call('/api/accounts/verification', { method: 'POST', json: { email } });
    showNotice(target, t('common.linkSent', { email }), 'success');
  } catch (err) {
    showProblem(target, err);
  }
}

/** A file path that breaks after its slashes, not inside a name (a <wbr> after each `/`). */
export function pathEl(path: string): HTMLSpanElement {
  const parts = path.split('/');
  return el('span', { class: 'mono path' }, parts.flatMap((part, i) => (i < parts.length - 1 ? [`${part}/`, el('wbr')] : [part])));
}


/**
 * The project page's panel of this browser's signing key (issue 24 items 1 and 2): the key
 * that signs for whoever uses the page (the signed-in account's own key on this browser, or the
 * signed-out key), whether it is registered, and the account's keys, current and revoked, with
 * their dates. Revoking asks first, naming the key and where it was made; revoking this
 * browser's key makes and registers a new one at once, so the next save signs with it.
 *
 * Only the signed-in account's own key and keys are ever shown: another account that used this
 * browser is neither named nor hinted at.
 */
import {
  currentSession, plainWords, sessionApi, type KeyInfo, type ProjectTasks, type SigningKeyView, type WorkerClient,
} from '@iki/core/browser';
import { ask } from './confirm.js';
import { byId, dataTable, el, showNotice, showProblem, timeEl } from './dom.js';

/** What the panel needs from the page. */
export interface KeyPanelContext {
  worker: WorkerClient<ProjectTasks>;
  /** The session fields the worker acts with. */
  sessionArgs: () => { accessToken?: string; accountId?: string; email?: string };
}

/** A refusal of the worker or the service, in plain words with its code in a details line. */
function refusal(target: Element, err: unknown): void {
  const code = (err as { code?: unknown }).code;
  target.replaceChildren(el('div', { class: 'notice error', role: 'alert' }, el('p', {}, plainWords(err)),
    typeof code === 'string' ? el('p', { class: 'meta' }, `Code ${code}.`) : null));
}

/** Draws the panel into `#key-panel` and `#account-keys`. */
export async function renderKeyPanel(ctx: KeyPanelContext): Promise<void> {
  const panel = byId('key-panel');
  let info: KeyInfo;
  try {
    info = await ctx.worker.run('keyInfo', ctx.sessionArgs());
  } catch (err) {
    refusal(panel, err);
    return;
  }
  const session = currentSession();
  const registered = session !== null && info.registeredAccount === session.accountId;
  const register = session === null || registered ? null : el('button', { type: 'button', id: 'register-key', onclick: async () => {
    try {
      await ctx.worker.run('registerKey', ctx.sessionArgs());
      await renderKeyPanel(ctx);
    } catch (err) {
      refusal(panel, err);
    }
  } }, 'Register with my account');
  const status = session === null ? 'The key that signs while nobody is signed in. It is not registered with an account.'
    : registered ? `Registered with your account${session.email === undefined ? '' : ` (${session.email})`}.`
      : 'Not registered with your account yet.';
  panel.replaceChildren(
    el('p', { class: 'fingerprint', id: 'key-fingerprint', 'data-fingerprint': info.fingerprint }, `Fingerprint ${info.fingerprint}`),
    el('p', { id: 'key-status', 'data-registered': String(registered) }, status),
    el('p', { class: 'meta' }, `Made ${new Date(info.createdMs).toLocaleString()} in ${info.name}. `, info.kind === 'webcrypto'
      ? 'A WebCrypto Ed25519 key this browser keeps and will not export.'
      : 'Fallback: this browser has no WebCrypto Ed25519, so the key is kept encrypted and used inside WebAssembly (weaker: script on this site could copy it).'),
    register ?? '');
  await renderAccountKeys(ctx, info.fingerprint);
}

/** The signed-in account's keys, current first, with revoke. */
async function renderAccountKeys(ctx: KeyPanelContext, own: string): Promise<void> {
  const target = byId('account-keys');
  if (currentSession() === null) {
    target.replaceChildren(el('p', { class: 'meta' }, 'Sign in to see your account\'s keys.'));
    return;
  }
  try {
    const { keys } = await sessionApi.call<{ keys: SigningKeyView[] }>('/api/keys/signing');
    const ordered = [...keys].sort((a, b) => Number(a.status === 'revoked') - Number(b.status === 'revoked')
      || b.createdAt.localeCompare(a.createdAt));
    target.replaceChildren(el('h3', {}, 'Your account\'s keys'), ordered.length === 0 ? el('p', { class: 'meta' }, 'None registered yet.') : dataTable({
      columns: [{ label: 'Key' }, { label: 'Made in' }, { label: 'Registered' }, { label: 'Status' }, { label: 'Actions', hidden: true }],
      rows: ordered.map((k) => ({ dataset: { key: k.publicKey, status: k.status }, cells: [
        el('span', { class: 'fingerprint' }, k.publicKey, k.publicKey === own ? el('strong', {}, ' (this browser)') : null), k.name,
        timeEl(k.createdAt),
        k.status === 'revoked' ? el('span', {}, 'Revoked ', k.revokedAt === null ? null : timeEl(k.revokedAt)) : 'Active',
        k.status === 'revoked' ? null : el('button', { type: 'button', class: 'danger small', onclick: () => void revoke(ctx, k, own) }, 'Revoke'),
      ] })),
    }));
  } catch (err) {
    showProblem(target, err);
  }
}

/** Asks, revokes, and replaces this browser's key when it was the one revoked. */
async function revoke(ctx: KeyPanelContext, key: SigningKeyView, own: string): Promise<void> {
  const target = byId('account-keys');
  const thisBrowser = key.publicKey === own;
  const yes = await ask({
    title: 'Revoke this signing key?', confirm: 'Revoke key', danger: true,
    body: [
      el('p', {}, `The key made in ${key.name}, registered ${new Date(key.createdAt).toLocaleString()}:`),
      el('p', { class: 'fingerprint' }, key.publicKey),
      el('p', {}, 'Files it signed will show "key revoked" from now on, and it can never sign for your account again.'),
      thisBrowser ? el('p', {}, 'It is this browser\'s key: a new key is made and registered at once, and the next save uses it.') : null,
    ],
  });
  if (!yes) return;
  try {
    await sessionApi.call(`/api/keys/signing/${encodeURIComponent(key.publicKey)}/revoke`, { method: 'POST' });
    if (thisBrowser) await ctx.worker.run('registerKey', ctx.sessionArgs());
    await renderKeyPanel(ctx);
    if (thisBrowser) showNotice(byId('key-panel').appendChild(el('div')), 'The old key is revoked; this browser now signs with the new key above.', 'success');
  } catch (err) {
    showProblem(target, err);
    await renderKeyPanel(ctx).catch(() => undefined);
  }
}

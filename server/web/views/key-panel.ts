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
  currentSession, sessionApi, type KeyInfo, type ProjectTasks, type SigningKeyView, type WorkerClient,
} from '@iki/core/browser';
import { errorWords } from '../i18n/errors.js';
import { formatDateTime, locale, t, tParts } from '../i18n/index.js';
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
  target.replaceChildren(el('div', { class: 'notice error', role: 'alert' }, el('p', {}, errorWords(err)),
    typeof code === 'string' ? el('p', { class: 'meta' }, t('common.codeLine', { code })) : null));
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
  } }, t('keys.register'));
  const status = session === null ? t('keys.signedOut')
    : registered ? t('keys.registered', { email: session.email ?? 'none' }) : t('keys.notRegistered');
  panel.replaceChildren(
    el('p', { class: 'fingerprint', id: 'key-fingerprint', 'data-fingerprint': info.fingerprint }, t('keys.fingerprint', { fingerprint: info.fingerprint })),
    el('p', { id: 'key-status', 'data-registered': String(registered) }, status),
    // Two sentences side by side (Japanese sets sentences without a space); the time with its ISO form in a tooltip.
    el('p', { class: 'meta' }, ...tParts('keys.made', { when: timeEl(new Date(info.createdMs).toISOString()), name: info.name }),
      locale === 'ja' ? '' : ' ', t(info.kind === 'webcrypto' ? 'keys.webcrypto' : 'keys.fallback')),
    register ?? '');
  await renderAccountKeys(ctx, info.fingerprint);
}

/** The signed-in account's keys, current first, with revoke. */
async function renderAccountKeys(ctx: KeyPanelContext, own: string): Promise<void> {
  const target = byId('account-keys');
  if (currentSession() === null) {
    target.replaceChildren(el('p', { class: 'meta' }, t('keys.signInToSee')));
    return;
  }
  try {
    const { keys } = await sessionApi.call<{ keys: SigningKeyView[] }>('/api/keys/signing');
    const ordered = [...keys].sort((a, b) => Number(a.status === 'revoked') - Number(b.status === 'revoked')
      || b.createdAt.localeCompare(a.createdAt));
    target.replaceChildren(el('h3', {}, t('keys.accountKeys')), ordered.length === 0 ? el('p', { class: 'meta' }, t('keys.none')) : dataTable({
      columns: [{ label: t('keys.col.key') }, { label: t('keys.col.madeIn') }, { label: t('keys.col.registered') }, { label: t('keys.col.status') },
        { label: t('keys.col.actions'), hidden: true }],
      rows: ordered.map((k) => ({ dataset: { key: k.publicKey, status: k.status }, cells: [
        el('span', { class: 'fingerprint' }, k.publicKey, k.publicKey === own ? el('strong', {}, t('keys.thisBrowser')) : null), k.name,
        timeEl(k.createdAt),
        k.status === 'revoked' ? el('span', {}, `${t('keys.revokedAt')} `, k.revokedAt === null ? null : timeEl(k.revokedAt)) : t('keys.active'),
        k.status === 'revoked' ? null : el('button', { type: 'button', class: 'danger small', onclick: () => void revoke(ctx, k, own) }, t('keys.revoke')),
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
    title: t('keys.revokeTitle'), confirm: t('keys.revokeConfirm'), cancel: t('common.cancel'), danger: true,
    body: [
      el('p', {}, t('keys.revokeWhich', { name: key.name, when: formatDateTime(key.createdAt) })),
      el('p', { class: 'fingerprint' }, key.publicKey),
      el('p', {}, t('keys.revokeEffect')),
      thisBrowser ? el('p', {}, t('keys.revokeThisBrowser')) : null,
    ],
  });
  if (!yes) return;
  try {
    await sessionApi.call(`/api/keys/signing/${encodeURIComponent(key.publicKey)}/revoke`, { method: 'POST' });
    if (thisBrowser) await ctx.worker.run('registerKey', ctx.sessionArgs());
    await renderKeyPanel(ctx);
    if (thisBrowser) showNotice(byId('key-panel').appendChild(el('div')), t('keys.rotatedNotice'), 'success');
  } catch (err) {
    showProblem(target, err);
    await renderKeyPanel(ctx).catch(() => undefined);
  }
}

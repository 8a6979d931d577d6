/**
 * `/account`: the account id with a copy button, the sessions of the account (device, last use;
 * end one, or sign out everywhere), and changing the password with the current one. Issue 14
 * items 1-3.
 */
import { sessionApi, signOutEverywhere, type AccountAnswer, type SessionInfo } from '@iki/core/browser';
import { t } from '../i18n/index.js';
import { ask } from '../views/confirm.js';
import { accountIdBox } from '../views/account-id.js';
import {
  busy, byId, dataTable, el, field, inside, renderSessionBar, requireSession, showNotice, showProblem, timeEl,
} from '../views/dom.js';

async function showAccount(): Promise<void> {
  const target = byId('who');
  try {
    const me = await sessionApi.call<AccountAnswer>('/api/me');
    target.replaceChildren(
      el('p', {}, t('account.who', { name: me.name, email: me.email, verified: me.emailVerified ? 'yes' : 'no' })),
      accountIdBox(me.accountId));
  } catch (err) {
    showProblem(target, err);
  }
}

async function showSessions(): Promise<void> {
  const target = byId('sessions');
  try {
    const { sessions } = await sessionApi.call<{ sessions: SessionInfo[] }>('/api/sessions');
    target.replaceChildren(dataTable({
      id: 'session-list',
      columns: [{ label: t('account.col.device') }, { label: t('account.col.lastUsed') }, { label: t('account.col.signedIn') },
        { label: t('account.col.actions'), hidden: true }],
      rows: sessions.map((s) => ({
        dataset: { sessionId: s.sessionId },
        cells: [
          s.current ? [s.device, ' ', el('strong', {}, t('account.thisBrowser'))] : s.device,
          timeEl(s.lastUsedAt), timeEl(s.createdAt),
          s.current ? null : el('button', { type: 'button', class: 'secondary small', onclick: () => void endSession(s.sessionId) },
            t('account.signOut')),
        ],
      })),
    }));
  } catch (err) {
    showProblem(target, err);
  }
}

async function endSession(id: string): Promise<void> {
  try {
    await sessionApi.call(`/api/sessions/${encodeURIComponent(id)}/revoke`, { method: 'POST' });
    showNotice(byId('sessions-result'), t('account.sessionEnded'), 'success');
  } catch (err) {
    showProblem(byId('sessions-result'), err);
  }
  await showSessions();
}

async function everywhere(button: HTMLButtonElement): Promise<void> {
  const yes = await ask({
    title: t('account.everywhereTitle'), confirm: t('account.signOutEverywhere'), cancel: t('common.cancel'), danger: true,
    body: el('p', {}, t('account.everywhereBody')),
  });
  if (!yes) return;
  button.disabled = true;
  try {
    const count = await signOutEverywhere();
    location.assign(`/?signed-out=${count}`);
  } catch (err) {
    showProblem(byId('sessions-result'), err);
    button.disabled = false;
  }
}

async function changePassword(event: SubmitEvent): Promise<void> {
  event.preventDefault();
  const form = event.currentTarget as HTMLFormElement;
  const result = inside(form, '.result');
  const current = field(form, 'current').value;
  const next = field(form, 'next').value;
  if (current === '' || next.length < 10) {
    showNotice(result, t('account.enterPasswords'), 'error');
    return;
  }
  if (next !== field(form, 'again').value) {
    showNotice(result, t('account.passwordsDiffer'), 'error');
    return;
  }
  await busy(form, async () => {
    try {
      await sessionApi.call('/api/me/password', { method: 'POST', json: { currentPassword: current, newPassword: next } });
      form.reset();
      showNotice(result, t('account.passwordChanged'), 'success');
      await showSessions();
    } catch (err) {
      showProblem(result, err);
    }
  });
}

renderSessionBar();
if (requireSession(byId('gate')) !== null) {
  byId('account').hidden = false;
  const button = byId<HTMLButtonElement>('sign-out-everywhere');
  button.addEventListener('click', () => void everywhere(button));
  byId<HTMLFormElement>('password').addEventListener('submit', (e) => void changePassword(e));
  await Promise.all([showAccount(), showSessions()]);
}

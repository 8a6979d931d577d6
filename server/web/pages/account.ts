/**
 * `/account`: the account id with a copy button, the sessions of the account (device, last use;
 * end one, or sign out everywhere), and changing the password with the current one. Issue 14
 * items 1-3.
 */
import { sessionApi, signOutEverywhere, type AccountAnswer, type SessionInfo } from '@iki/core/browser';
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
      el('p', {}, `${me.name} · ${me.email}${me.emailVerified ? ' (verified)' : ' (not verified yet)'}`),
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
      columns: [{ label: 'Device' }, { label: 'Last used' }, { label: 'Signed in' }, { label: 'Actions', hidden: true }],
      rows: sessions.map((s) => ({
        dataset: { sessionId: s.sessionId },
        cells: [
          s.current ? [s.device, ' ', el('strong', {}, '(this browser)')] : s.device,
          timeEl(s.lastUsedAt), timeEl(s.createdAt),
          s.current ? null : el('button', { type: 'button', class: 'secondary small', onclick: () => void endSession(s.sessionId) },
            'Sign out'),
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
    showNotice(byId('sessions-result'), 'That session has ended.', 'success');
  } catch (err) {
    showProblem(byId('sessions-result'), err);
  }
  await showSessions();
}

async function everywhere(button: HTMLButtonElement): Promise<void> {
  const yes = await ask({
    title: 'Sign out everywhere?', confirm: 'Sign out everywhere', danger: true,
    body: el('p', {}, 'Every session of your account ends: this browser, your other browsers and devices, and the CLI. Opened models close. You sign in again where you need to.'),
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
    showNotice(result, 'Enter your current password and a new one of at least 10 characters.', 'error');
    return;
  }
  if (next !== field(form, 'again').value) {
    showNotice(result, 'The two new passwords differ; type the same one twice.', 'error');
    return;
  }
  await busy(form, async () => {
    try {
      await sessionApi.call('/api/me/password', { method: 'POST', json: { currentPassword: current, newPassword: next } });
      form.reset();
      showNotice(result, 'Password changed. Every other session of your account has been signed out.', 'success');
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

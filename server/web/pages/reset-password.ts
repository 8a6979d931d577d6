/**
 * `/reset-password?token=…`: the target of the password-reset link. The token is taken out of
 * the address bar at once (so it does not stay in history); the new password is asked twice
 * and sent with it once. Using the link ends every session of the account.
 */
import { sessionApi } from '@iki/core/browser';
import { t } from '../i18n/index.js';
import { busy, byId, el, field, inside, rememberPendingSignUp, renderSessionBar, showNotice, showProblem } from '../views/dom.js';

const token = new URLSearchParams(location.search).get('token');
history.replaceState(null, '', location.pathname);

async function reset(event: SubmitEvent): Promise<void> {
  event.preventDefault();
  const form = event.currentTarget as HTMLFormElement;
  const result = inside(form, '.result');
  const password = field(form, 'password').value;
  if (token === null || token === '') {
    showNotice(result, t('reset.needLink'), 'error');
    return;
  }
  if (password.length < 10) {
    showNotice(result, t('password.short'), 'error');
    return;
  }
  if (password !== field(form, 'again').value) {
    showNotice(result, t('password.differ'), 'error');
    return;
  }
  await busy(form, async () => {
    try {
      await sessionApi.call('/api/accounts/password-reset/complete', { method: 'POST', json: { token, password } });
      form.reset();
      rememberPendingSignUp(null);
      result.replaceChildren(el('div', { class: 'notice success', role: 'status' },
        el('p', {}, t('reset.done')),
        el('p', {}, el('a', { class: 'button', href: '/' }, t('common.signIn')))));
    } catch (err) {
      showProblem(result, err);
    }
  });
}

renderSessionBar();
byId<HTMLFormElement>('reset').addEventListener('submit', (e) => void reset(e));

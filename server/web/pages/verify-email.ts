/**
 * `/verify-email?token=…`: the target of the verification link. The token is taken out of the
 * address bar at once (so it does not stay in history) and sent once to the API. A missing,
 * used or expired link offers the form that asks for a new one.
 */
import { sessionApi, type AccountAnswer } from '@iki/core/browser';
import {
  busy, byId, el, field, inside, rememberPendingSignUp, renderSessionBar, requestVerificationLink, showNotice, showProblem,
} from '../views/dom.js';

/** Shows the "get a new link" form below a failure. */
function offerNewLink(): void {
  const form = byId<HTMLFormElement>('resend-form');
  byId('resend').hidden = false;
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    const result = inside(form, '.result');
    const email = field(form, 'email').value.trim();
    if (email === '') {
      showNotice(result, 'Enter the e-mail address you signed up with.', 'error');
      return;
    }
    void busy(form, () => requestVerificationLink(email, result));
  });
}

async function verify(): Promise<void> {
  const result = byId('result');
  const token = new URLSearchParams(location.search).get('token');
  history.replaceState(null, '', location.pathname);
  if (token === null || token === '') {
    result.replaceChildren(el('div', { class: 'notice error', role: 'alert' },
      'This page needs the link from the verification e-mail.'));
    offerNewLink();
    return;
  }
  try {
    const account = await sessionApi.call<AccountAnswer>('/api/accounts/verify', { method: 'POST', json: { token } });
    rememberPendingSignUp(null);
    renderSessionBar();
    result.replaceChildren(el('div', { class: 'notice success', role: 'status' },
      el('p', {}, `Thank you, ${account.name}. ${account.email} is verified.`),
      el('p', {}, el('a', { class: 'button', href: '/' }, 'Sign in'))));
  } catch (err) {
    showProblem(result, err);
    offerNewLink();
  }
}

renderSessionBar();
void verify();

/**
 * `/verify-email?token=…`: the target of the verification link. The token is taken out of the
 * address bar at once (so it does not stay in history) and sent once to the API. A missing,
 * used or expired link offers the form that asks for a new one.
 *
 * Issue 22 item 3: in the browser that signed up the link completes with the password typed
 * there (the service knows that browser by its sign-up cookie). Opened anywhere else, the
 * service answers `SIGN_UP_PASSWORD_REQUIRED` and nothing is created; the page then asks the
 * person at the link to choose the password, so a password they never saw typed (someone
 * else's sign-up with their address) never becomes theirs.
 */
import { ApiProblem, verifyEmail, type AccountAnswer } from '@iki/core/browser';
import { t } from '../i18n/index.js';
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
      showNotice(result, t('verify.enterEmail'), 'error');
      return;
    }
    void busy(form, () => requestVerificationLink(email, result));
  });
}

/** Shows the account the link created. */
function done(account: AccountAnswer): void {
  rememberPendingSignUp(null);
  renderSessionBar();
  byId('choose').hidden = true;
  byId('result').replaceChildren(el('div', { class: 'notice success', role: 'status' },
    el('p', {}, t('verify.verified', { name: account.name, email: account.email })),
    el('p', {}, el('a', { class: 'button', href: '/' }, t('common.signIn')))));
}

/** Asks the person at the link for the account's password, then sends it with the token. */
function choosePassword(token: string): void {
  const form = byId<HTMLFormElement>('choose-form');
  byId('result').replaceChildren();
  byId('choose').hidden = false;
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    const result = inside(form, '.result');
    const password = field(form, 'password').value;
    if (password.length < 10) return showNotice(result, t('password.short'), 'error');
    if (password !== field(form, 'again').value) return showNotice(result, t('password.differ'), 'error');
    void busy(form, async () => {
      try {
        done(await verifyEmail(token, password));
        form.reset();
      } catch (err) {
        showProblem(result, err);
      }
    });
  });
}

async function verify(): Promise<void> {
  const result = byId('result');
  const token = new URLSearchParams(location.search).get('token');
  history.replaceState(null, '', location.pathname);
  if (token === null || token === '') {
    result.replaceChildren(el('div', { class: 'notice error', role: 'alert' }, t('verify.needLink')));
    offerNewLink();
    return;
  }
  try {
    done(await verifyEmail(token));
  } catch (err) {
    if (err instanceof ApiProblem && err.code === 'SIGN_UP_PASSWORD_REQUIRED') {
      choosePassword(token);
      return;
    }
    showProblem(result, err);
    offerNewLink();
  }
}

renderSessionBar();
void verify();

/**
 * `/`: sign in, sign up, and ask for a password-reset link. After signing in, goes to `?next=`
 * when it names one of our pages. A sign-up is pending until its link is used, so the page
 * says to open the mail and the banner (views/dom.ts) keeps saying it on every page.
 */
import { currentSession, sessionApi, signIn as openSession, signUp as signUpAccount } from '@iki/core/browser';
import { accountIdBox } from '../views/account-id.js';
import {
  busy, byId, el, field, inside, rememberPendingSignUp, renderSessionBar, requestVerificationLink, showNotice, showProblem,
} from '../views/dom.js';

const NEXT_PAGES = new Set(['/seller', '/player', '/project', '/account']);

function next(): string | null {
  const target = new URLSearchParams(location.search).get('next');
  return target !== null && NEXT_PAGES.has(target) ? target : null;
}

function showSignedIn(): void {
  const current = currentSession();
  const box = byId('signed-in');
  if (current === null) {
    box.hidden = true;
    return;
  }
  box.hidden = false;
  box.replaceChildren(el('div', { class: 'notice success', role: 'status' },
    el('p', {}, `You are signed in as ${current.email ?? current.accountId}.`),
    accountIdBox(current.accountId),
    el('p', { class: 'actions' },
      el('a', { class: 'button', href: '/seller' }, 'Seller dashboard'),
      el('a', { class: 'button', href: '/player' }, 'My licenses'),
      el('a', { class: 'button secondary', href: '/account' }, 'Account and sessions'))));
}

async function signIn(event: SubmitEvent): Promise<void> {
  event.preventDefault();
  const form = event.currentTarget as HTMLFormElement;
  const result = inside(form, '.result');
  const email = field(form, 'email').value.trim();
  const password = field(form, 'password').value;
  if (email === '' || password === '') {
    showNotice(result, 'Enter your e-mail address and password.', 'error');
    return;
  }
  await busy(form, async () => {
    try {
      await openSession(email, password);
      rememberPendingSignUp(null);
      form.reset();
      const target = next();
      if (target !== null) {
        location.assign(target);
        return;
      }
      result.replaceChildren();
      renderSessionBar();
      showSignedIn();
    } catch (err) {
      showProblem(result, err);
    }
  });
}

async function signUp(event: SubmitEvent): Promise<void> {
  event.preventDefault();
  const form = event.currentTarget as HTMLFormElement;
  const result = inside(form, '.result');
  const name = field(form, 'name').value.trim();
  const email = field(form, 'email').value.trim();
  const password = field(form, 'password').value;
  if (name === '' || email === '' || password.length < 10) {
    showNotice(result, 'Enter your name, your e-mail address and a password of at least 10 characters.', 'error');
    return;
  }
  await busy(form, async () => {
    try {
      await signUpAccount({ name, email, password });
      form.reset();
      rememberPendingSignUp(email);
      renderSessionBar();
      showSignedUp(result, email);
    } catch (err) {
      showProblem(result, err);
    }
  });
}

/** The sign-up notice, with a button that asks for the link again (a lost or late e-mail). */
function showSignedUp(result: HTMLElement, email: string): void {
  const again = el('div', { class: 'result', 'aria-live': 'polite' });
  const button: HTMLButtonElement = el('button', { type: 'button', class: 'secondary small', onclick: async () => {
    button.disabled = true;
    try {
      await requestVerificationLink(email, again);
    } finally {
      button.disabled = false;
    }
  } }, 'Send the link again');
  result.replaceChildren(el('div', { class: 'notice success', role: 'status' },
    el('p', {}, `Almost done. We sent a verification link to ${email}: your account is created when you open it; then sign in. (If the address already has an account, no link is sent: sign in, or reset the password. Without a mail server, the link is written to the service's log.)`),
    el('p', { class: 'actions' }, button)), again);
}

/** Asks for a reset link; the answer is the same whether or not the address has an account. */
async function forgot(event: SubmitEvent): Promise<void> {
  event.preventDefault();
  const form = event.currentTarget as HTMLFormElement;
  const result = inside(form, '.result');
  const email = field(form, 'email').value.trim();
  if (email === '') {
    showNotice(result, 'Enter the e-mail address of your account.', 'error');
    return;
  }
  await busy(form, async () => {
    try {
      await sessionApi.call('/api/accounts/password-reset', { method: 'POST', json: { email } });
      showNotice(result, `If ${email} has an account, a link to choose a new password is on its way. It works once, for an hour.`, 'success');
    } catch (err) {
      showProblem(result, err);
    }
  });
}

/** After "sign out everywhere" (from /account): how many sessions ended. */
function showSignedOut(): void {
  const count = new URLSearchParams(location.search).get('signed-out');
  if (count === null || !/^[0-9]{1,6}$/.test(count) || currentSession() !== null) return;
  history.replaceState(null, '', location.pathname);
  const box = byId('signed-in');
  box.hidden = false;
  showNotice(box, `Signed out everywhere: ${count} session${count === '1' ? '' : 's'} ended, on every device.`, 'success');
}

renderSessionBar();
showSignedIn();
showSignedOut();
byId<HTMLFormElement>('signin').addEventListener('submit', (e) => void signIn(e));
byId<HTMLFormElement>('signup').addEventListener('submit', (e) => void signUp(e));
byId<HTMLFormElement>('forgot').addEventListener('submit', (e) => void forgot(e));

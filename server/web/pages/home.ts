/**
 * `/`: sign in, sign up, and ask for a password-reset link. After signing in, goes to `?next=`
 * when it names one of our pages. A sign-up is pending until its link is used, so the page
 * says to open the mail and the banner (views/dom.ts) keeps saying it on every page.
 */
import { t } from '../i18n/index.js';
import { currentSession, onSessionChange, sessionApi, signIn as openSession, signUp as signUpAccount } from '@iki/core/browser';
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
  // Signed in, the page offers where to go next, not the sign-in and sign-up forms.
  byId('forms').hidden = current !== null;
  if (current === null) {
    box.hidden = true;
    return;
  }
  box.hidden = false;
  box.replaceChildren(el('div', { class: 'notice success', role: 'status' },
    el('p', {}, t('home.signedInAs', { who: current.email ?? current.accountId })),
    accountIdBox(current.accountId),
    el('p', { class: 'actions' },
      el('a', { class: 'button', href: '/seller' }, t('home.sellerDashboard')),
      el('a', { class: 'button', href: '/player' }, t('home.myLicenses')),
      el('a', { class: 'button secondary', href: '/account' }, t('home.accountSessions')))));
}

async function signIn(event: SubmitEvent): Promise<void> {
  event.preventDefault();
  const form = event.currentTarget as HTMLFormElement;
  const result = inside(form, '.result');
  const email = field(form, 'email').value.trim();
  const password = field(form, 'password').value;
  if (email === '' || password === '') {
    showNotice(result, t('home.enterEmailPassword'), 'error');
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
onSessionChange(() => showSignedIn());
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
    showNotice(result, t('home.enterSignUp'), 'error');
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
  } }, t('home.sendAgain'));
  result.replaceChildren(el('div', { class: 'notice success', role: 'status' },
    el('p', {}, t('home.almostDone', { email })),
    el('p', { class: 'actions' }, button)), again);
}

/** Asks for a reset link; the answer is the same whether or not the address has an account. */
async function forgot(event: SubmitEvent): Promise<void> {
  event.preventDefault();
  const form = event.currentTarget as HTMLFormElement;
  const result = inside(form, '.result');
  const email = field(form, 'email').value.trim();
  if (email === '') {
    showNotice(result, t('home.enterAccountEmail'), 'error');
    return;
  }
  await busy(form, async () => {
    try {
      await sessionApi.call('/api/accounts/password-reset', { method: 'POST', json: { email } });
      showNotice(result, t('home.resetSent', { email }), 'success');
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
  showNotice(box, t('home.signedOutEverywhere', { count: Number(count) }), 'success');
}

renderSessionBar();
showSignedIn();
onSessionChange(() => showSignedIn());
showSignedOut();
byId<HTMLFormElement>('signin').addEventListener('submit', (e) => void signIn(e));
byId<HTMLFormElement>('signup').addEventListener('submit', (e) => void signUp(e));
byId<HTMLFormElement>('forgot').addEventListener('submit', (e) => void forgot(e));

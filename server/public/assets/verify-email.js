// `/verify-email?token=…`: the target of the verification link. The token is taken out of the
// address bar at once (so it does not stay in history) and sent once to the API.
import { api, el, renderSessionBar, showProblem } from './common.js';

async function verify() {
  const result = document.getElementById('result');
  const token = new URLSearchParams(location.search).get('token');
  history.replaceState(null, '', location.pathname);
  if (token === null || token === '') {
    result.replaceChildren(el('div', { class: 'notice error', role: 'alert' },
      'This page needs the link from the verification e-mail.'));
    return;
  }
  try {
    const account = await api('/api/accounts/verify', { method: 'POST', json: { token } });
    result.replaceChildren(el('div', { class: 'notice success', role: 'status' },
      el('p', {}, `Thank you, ${account.name}. ${account.email} is verified.`),
      el('p', {}, el('a', { class: 'button', href: '/' }, 'Sign in'))));
  } catch (err) {
    showProblem(result, err);
  }
}

renderSessionBar();
verify();

/**
 * `/seller`, "Flags to look at" (issue 29 item 3): the seller's open flags, newest first, each
 * with the sentence saying why it was raised, a link to its license's timeline
 * (`#activity=<masterId>/<licenseId>`, seller-activity.ts), and what the seller can do about
 * it: dismiss the flag, suspend the license, or revoke it (asked first; the same API calls as a
 * master's licenses table).
 */
import { sessionApi } from '@iki/core/browser';
import { formatDateTime, t } from '../i18n/index.js';
import { ask } from './confirm.js';
import { el, showNotice, showPending, showProblem } from './dom.js';
import { dismissFlag, sellerFlags, type LicenseFlag } from './seller-activity-api.js';
import { followActivityLink } from './seller-activity.js';
import { flagSentence } from './seller-activity-timeline.js';

/** Runs a button's action with the button disabled, reporting to `status`. */
async function act(button: HTMLButtonElement, status: HTMLElement, work: () => Promise<string>): Promise<void> {
  button.disabled = true;
  try {
    showNotice(status, await work(), 'success');
  } catch (err) {
    showProblem(status, err);
  } finally {
    button.disabled = false;
  }
}

/** The link to the flagged license's timeline (followed again when it is the page's address already). */
function timelineLink(masterId: string, license: string): HTMLAnchorElement {
  const hash = `#activity=${masterId}/${license}`;
  return el('a', { href: hash, class: 'timeline-link', onclick: () => {
    if (location.hash === hash) followActivityLink(hash);
  } }, t('activity.flags.showTimeline'));
}

function flagItem(flag: LicenseFlag, status: HTMLElement, changed: () => void): HTMLLIElement {
  const license = flag.licenseId ?? '';
  const item = el('li', { class: 'flag open', dataset: { flagId: flag.id, licenseId: license } });
  const path = `/api/licenses/${encodeURIComponent(license)}`;
  const dismiss: HTMLButtonElement = el('button', { type: 'button', class: 'secondary small dismiss',
    'aria-label': t('activity.flags.dismissLabel', { license }),
    onclick: () => act(dismiss, status, async () => {
      await dismissFlag(license, flag.id);
      item.remove();
      return t('activity.flags.dismissed', { license });
    }) }, t('activity.flags.dismiss'));
  const suspend: HTMLButtonElement = el('button', { type: 'button', class: 'secondary small suspend',
    'aria-label': t('activity.flags.suspendLabel', { license }),
    onclick: () => act(suspend, status, async () => {
      await sessionApi.call(`${path}/suspend`, { method: 'POST' });
      changed();
      return t('activity.flags.suspended', { license });
    }) }, t('activity.flags.suspend'));
  const revoke: HTMLButtonElement = el('button', { type: 'button', class: 'danger small revoke',
    'aria-label': t('activity.flags.revokeLabel', { license }),
    onclick: async () => {
      const yes = await ask({ title: t('seller.revokeTitle'), confirm: t('seller.revokeConfirm'), danger: true,
        body: el('p', {}, t('activity.flags.revokeBody', { license })) });
      if (!yes) return;
      await act(revoke, status, async () => {
        await sessionApi.call(`${path}/revoke`, { method: 'POST', json: {} });
        changed();
        return t('activity.flags.revoked', { license });
      });
    } }, t('activity.flags.revoke'));
  item.append(
    el('p', {}, flagSentence(flag)),
    el('p', { class: 'meta' }, el('span', { class: 'mono' }, t('activity.flags.on', { license })), ' · ',
      el('time', { datetime: flag.raisedAt, title: flag.raisedAt }, t('activity.flags.raised', { when: formatDateTime(flag.raisedAt) }))),
    el('p', { class: 'actions' },
      flag.masterId === undefined ? null : timelineLink(flag.masterId, license),
      dismiss, suspend, revoke));
  return item;
}

/** The card of open flags; `changed` is called after a license was suspended or revoked (to redraw the masters). */
export function flagsSection(changed: () => void = () => {}): HTMLElement {
  const list = el('ul', { class: 'flags' });
  const status = el('div', { class: 'result', 'aria-live': 'polite' });
  const body = el('div', { 'aria-live': 'polite' });
  const more: HTMLButtonElement = el('button', { type: 'button', class: 'secondary small', hidden: true }, t('activity.flags.more'));
  let cursor: string | undefined;
  const load = async () => {
    try {
      const page = await sellerFlags('open', cursor);
      list.append(...page.flags.map((f) => flagItem(f, status, changed)));
      cursor = page.next ?? undefined;
      more.hidden = cursor === undefined;
      body.replaceChildren(list.children.length === 0 ? el('p', { class: 'meta none' }, t('activity.flags.none')) : list);
    } catch (err) {
      showProblem(body, err);
    }
  };
  more.addEventListener('click', () => void load());
  showPending(body, t('activity.flags.loading'));
  void load();
  return el('section', { class: 'card flags-card', id: 'flags', 'aria-labelledby': 'flags-title' },
    el('h2', { id: 'flags-title' }, t('activity.flags.title')),
    el('p', { class: 'meta' }, t('activity.flags.lead')),
    body, more, status);
}

/**
 * `/seller`, "Webhooks" (issue 26 item 4): the addresses the service POSTs sales events to,
 * signed. A new endpoint's signing secret is shown once under the form with a Copy button;
 * the list shows each endpoint's URL, events and state (disabled after failing for days, with
 * why) with Enable/Disable and Delete; "Deliveries" opens its log (event, state, attempts,
 * last answer, next attempt) with "Resend" per delivery. Its words come from the message catalogs (`seller.webhooks.*`).
 */
import { sessionApi } from '@iki/core/browser';
import { formatNumber, t, tParts, type MessageKey } from '../i18n/index.js';
import { ask } from './confirm.js';
import { busy, dataTable, el, field, showNotice, showProblem, timeEl } from './dom.js';
import { copyButton } from './seller-service-key.js';

/** An endpoint as `GET /api/webhooks` answers it. */
interface Webhook {
  webhookId: string; url: string; events: string[]; createdAt: string; enabled: boolean;
  disabledAt: string | null; disabledReason: string | null; disabledReasonCode: 'seller' | 'failing' | null; failingSince: string | null;
}
/**
 * Why an endpoint is disabled, in the page's words from the service's code (its `disabledReason`
 * is the service's English, for the API and logs): the seller, or failing since a time.
 */
function disabledWhy(hook: Webhook): (string | HTMLTimeElement)[] {
  const since = hook.failingSince ?? hook.disabledAt;
  if (hook.disabledReasonCode === 'failing' && since !== null) return tParts('seller.webhooks.reason.failing', { since: timeEl(since) });
  return [t('seller.webhooks.reason.seller')];
}

/** A delivery of the log. */
interface Delivery {
  deliveryId: string; eventId: string; type: string; occurredAt: string; state: 'pending' | 'delivered' | 'failed';
  attempts: number; lastAttemptAt: string | null; lastStatus: number | null; lastError: string | null;
  nextAttemptAt: string | null; deliveredAt: string | null;
}

/** The event types, with the message saying what each means to a seller. */
const EVENTS: readonly (readonly [type: string, label: MessageKey])[] = [
  ['license.created', 'seller.webhooks.event.licenseCreated'],
  ['license.suspended', 'seller.webhooks.event.licenseSuspended'],
  ['license.reinstated', 'seller.webhooks.event.licenseReinstated'],
  ['license.revoked', 'seller.webhooks.event.licenseRevoked'],
  ['license.expired', 'seller.webhooks.event.licenseExpired'],
  ['key.released', 'seller.webhooks.event.keyReleased'],
  ['copy.downloaded', 'seller.webhooks.event.copyDownloaded'],
  ['leak.identified', 'seller.webhooks.event.leakIdentified'],
  ['rate_limit.exceeded', 'seller.webhooks.event.rateLimitExceeded'],
  ['license.flagged', 'seller.webhooks.event.licenseFlagged'],
];
const DEFAULT_EVENTS = new Set(['license.created', 'license.suspended', 'license.reinstated', 'license.revoked']);

/** An example address for the form (data, the same in every language). */
const URL_PLACEHOLDER = 'https://shop.example/iki-webhook';
/** The endpoints' columns. */
const COLUMNS: readonly MessageKey[] = ['seller.webhooks.col.url', 'seller.webhooks.col.events', 'seller.webhooks.col.state',
  'seller.webhooks.col.actions'];
/** The delivery log's columns. */
const LOG_COLUMNS: readonly MessageKey[] = ['seller.webhooks.log.col.event', 'seller.webhooks.log.col.state',
  'seller.webhooks.log.col.attempts', 'seller.webhooks.log.col.lastAttempt', 'seller.webhooks.log.col.answer',
  'seller.webhooks.log.col.nextAttempt', 'seller.webhooks.log.col.actions'];
/** A delivery's state in words. */
const STATES: Readonly<Record<Delivery['state'], MessageKey>> = {
  pending: 'seller.webhooks.state.pending', delivered: 'seller.webhooks.state.delivered', failed: 'seller.webhooks.state.failed',
};

function deliveryLog(hook: Webhook, target: HTMLElement): void {
  const status = el('div', { 'aria-live': 'polite' });
  const body = el('div', {}, el('p', { class: 'meta' }, '…'));
  const load = async () => {
    try {
      const { deliveries } = await sessionApi.call<{ deliveries: Delivery[] }>(`/api/webhooks/${hook.webhookId}/deliveries`);
      body.replaceChildren(deliveries.length === 0 ? el('p', { class: 'meta' }, t('seller.webhooks.logNone')) : dataTable({
        id: 'webhook-deliveries', columns: LOG_COLUMNS.map((key, i) => ({ label: t(key), hidden: i === LOG_COLUMNS.length - 1 })),
        rows: deliveries.map((d) => ({
          dataset: { deliveryId: d.deliveryId, eventId: d.eventId },
          cells: [
            el('span', {}, el('code', {}, d.type), ' ', el('code', { class: 'meta mono' }, d.eventId)),
            el('span', { class: `badge ${d.state === 'delivered' ? 'active' : d.state === 'failed' ? 'revoked' : 'suspended'}` }, t(STATES[d.state])),
            el('span', {}, formatNumber(d.attempts)),
            d.lastAttemptAt === null ? el('span', { class: 'meta' }, '—') : timeEl(d.lastAttemptAt),
            el('span', {}, d.lastStatus !== null ? String(d.lastStatus) : d.lastError ?? (d.lastAttemptAt === null ? '—' : t('seller.webhooks.noAnswer'))),
            d.nextAttemptAt === null ? el('span', { class: 'meta' }, '—') : timeEl(d.nextAttemptAt),
            el('div', { class: 'actions' }, el('button', { type: 'button', class: 'small', 'aria-label': t('seller.webhooks.resendLabel', { eventId: d.eventId }),
              onclick: async () => {
                try {
                  await sessionApi.call(`/api/webhooks/${hook.webhookId}/deliveries/${d.deliveryId}/resend`, { method: 'POST' });
                  showNotice(status, t('seller.webhooks.resent'), 'success');
                  await load();
                } catch (err) {
                  showProblem(status, err, t('seller.webhooks.resendFailed'));
                }
              } }, t('seller.webhooks.resend'))),
          ],
        })),
      }));
    } catch (err) {
      showProblem(body, err);
    }
  };
  target.replaceChildren(el('h3', { class: 'webhook-log-title' }, t('seller.webhooks.logTitle', { url: hook.url })), status, body);
  void load();
}

function endpointRow(hook: Webhook, status: HTMLElement, log: HTMLElement, reload: () => Promise<void>):
{ cells: HTMLElement[]; dataset: Record<string, string> } {
  const change = async (path: string, method: 'POST' | 'DELETE') => {
    try {
      await sessionApi.call(`/api/webhooks/${hook.webhookId}${path}`, { method });
      if (method === 'DELETE') {
        showNotice(status, t('seller.webhooks.removed'), 'success');
        log.replaceChildren();
      }
      await reload();
    } catch (err) {
      showProblem(status, err, t('seller.webhooks.changeFailed'));
    }
  };
  const remove = async () => {
    if (!(await ask({ title: t('seller.webhooks.removeTitle'), confirm: t('seller.webhooks.removeConfirm'), danger: true, body: el('p', {}, t('seller.webhooks.removeBody', { url: hook.url })) }))) return;
    await change('', 'DELETE');
  };
  return {
    dataset: { webhookId: hook.webhookId },
    cells: [
      el('code', { class: 'webhook-url' }, hook.url),
      el('span', { class: 'scopes' }, hook.events.join(', ')),
      hook.enabled ? el('span', { class: 'badge active' }, t('seller.webhooks.enabled'))
        : el('span', {}, el('span', { class: 'badge revoked' }, t('seller.webhooks.disabled')), ' ', el('span', { class: 'meta disabled-reason' }, disabledWhy(hook))),
      el('div', { class: 'actions' },
        el('button', { type: 'button', class: 'small', onclick: () => deliveryLog(hook, log) }, t('seller.webhooks.deliveries')),
        el('button', { type: 'button', class: 'small', onclick: () => void change(hook.enabled ? '/disable' : '/enable', 'POST') },
          hook.enabled ? t('seller.webhooks.disable') : t('seller.webhooks.enable')),
        el('button', { type: 'button', class: 'danger small', onclick: () => void remove() }, t('seller.webhooks.remove'))),
    ],
  };
}

/** The "Webhooks" card: the form, the secret of an endpoint just added, the list and a delivery log. */
export function webhooksSection(): HTMLElement {
  const status = el('div', { 'aria-live': 'polite' });
  const secret = el('div', { class: 'api-key-secret', 'aria-live': 'polite' });
  const list = el('div', { id: 'webhook-list' }, el('p', { class: 'meta' }, '…'));
  const log = el('div', { id: 'webhook-log', 'aria-live': 'polite' });
  const reload = async () => {
    try {
      const { webhooks } = await sessionApi.call<{ webhooks: Webhook[] }>('/api/webhooks');
      list.replaceChildren(webhooks.length === 0 ? el('p', { class: 'meta' }, t('seller.webhooks.none')) : dataTable({
        id: 'webhooks', columns: COLUMNS.map((key, i) => ({ label: t(key), hidden: i === COLUMNS.length - 1 })),
        rows: webhooks.map((w) => endpointRow(w, status, log, reload)),
      }));
    } catch (err) {
      showProblem(list, err);
    }
  };
  const form = el('form', { id: 'webhook-form', class: 'api-key-form', novalidate: true },
    el('div', {}, el('label', { for: 'webhook-url' }, t('seller.webhooks.url')),
      el('input', { id: 'webhook-url', name: 'url', type: 'url', maxlength: 2048, autocomplete: 'off', placeholder: URL_PLACEHOLDER })),
    el('fieldset', { class: 'scopes' }, el('legend', {}, t('seller.webhooks.events')), EVENTS.map(([type, label]) =>
      el('label', { class: 'check' }, el('input', { type: 'checkbox', name: 'event', value: type, defaultChecked: DEFAULT_EVENTS.has(type) }),
        ' ', t(label), ' ', el('code', { class: 'meta' }, type)))),
    el('button', { type: 'submit' }, t('seller.webhooks.create')));
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    const url = field(form, 'url').value.trim();
    const events = [...form.querySelectorAll<HTMLInputElement>('input[name="event"]:checked')].map((c) => c.value);
    if (!/^https?:\/\/\S+$/u.test(url)) return showNotice(status, t('seller.webhooks.noUrl'), 'error');
    if (events.length === 0) return showNotice(status, t('seller.webhooks.noEvent'), 'error');
    void busy(form, async () => {
      try {
        const made = await sessionApi.call<Webhook & { secret: string }>('/api/webhooks', { method: 'POST', json: { url, events } });
        form.reset();
        status.replaceChildren();
        secret.replaceChildren(el('div', { class: 'notice success', role: 'status' }, el('p', {}, t('seller.webhooks.secretLead')),
          el('div', { class: 'command' }, el('pre', {}, el('code', { id: 'webhook-secret' }, made.secret)),
            copyButton(made.secret, t('seller.webhooks.copySecret')))));
        await reload();
      } catch (err) {
        showProblem(status, err, t('seller.webhooks.createFailed'));
      }
    });
  });
  void reload();
  return el('section', { class: 'card api-keys webhooks', 'aria-labelledby': 'webhooks-title' },
    el('h2', { id: 'webhooks-title' }, t('seller.webhooks.title')), el('p', { class: 'meta' }, t('seller.webhooks.intro')), form, status, secret, list, log);
}

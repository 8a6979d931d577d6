/**
 * `/seller`, "Webhooks" (issue 26 item 4): the addresses the service POSTs sales events to,
 * signed. A new endpoint's signing secret is shown once under the form with a Copy button;
 * the list shows each endpoint's URL, events and state (disabled after failing for days, with
 * why) with Enable/Disable and Delete; "Deliveries" opens its log (event, state, attempts,
 * last answer, next attempt) with "Resend" per delivery. Every text of this view is in `WORDS`.
 */
import { sessionApi } from '@iki/core/browser';
import { ask } from './confirm.js';
import { busy, dataTable, el, field, showNotice, showProblem, timeEl } from './dom.js';
import { copyButton } from './seller-service-key.js';

/** An endpoint as `GET /api/webhooks` answers it. */
interface Webhook {
  webhookId: string; url: string; events: string[]; createdAt: string; enabled: boolean;
  disabledAt: string | null; disabledReason: string | null; failingSince: string | null;
}
/** A delivery of the log. */
interface Delivery {
  deliveryId: string; eventId: string; type: string; occurredAt: string; state: 'pending' | 'delivered' | 'failed';
  attempts: number; lastAttemptAt: string | null; lastStatus: number | null; lastError: string | null;
  nextAttemptAt: string | null; deliveredAt: string | null;
}

/** The event types, with what each means to a seller. */
const EVENTS: readonly (readonly [type: string, label: string])[] = [
  ['license.created', 'A license was created'],
  ['license.suspended', 'A license was suspended'],
  ['license.reinstated', 'A license was reinstated'],
  ['license.revoked', 'A license was revoked'],
  ['license.expired', 'A license reached its expiry date'],
  ['key.released', 'A buyer\'s player received a model key'],
  ['copy.downloaded', 'A buyer downloaded a copy'],
  ['leak.identified', 'A leaked copy was traced to a license'],
  ['rate_limit.exceeded', 'A buyer was refused by a rate limit (at most once per license per window)'],
];
const DEFAULT_EVENTS = new Set(['license.created', 'license.suspended', 'license.reinstated', 'license.revoked']);

/** Every text a person reads in this view. */
const WORDS = {
  title: 'Webhooks',
  intro: 'The service sends these events to your shop\'s address as they happen, signed with the endpoint\'s secret '
    + '(the Iki-Signature header). Failed deliveries are retried for three days; an endpoint that keeps failing is disabled.',
  url: 'Endpoint URL',
  urlPlaceholder: 'https://shop.example/iki-webhook',
  events: 'Events to send',
  create: 'Add endpoint',
  noUrl: 'Give the address of your endpoint (http or https).',
  noEvent: 'Tick at least one event.',
  createFailed: 'The endpoint was not added.',
  secretLead: 'Copy this signing secret now: it is shown only this once. Your endpoint checks each request with it.',
  copySecret: 'Copy the signing secret',
  none: 'No webhook endpoints yet.',
  columns: ['URL', 'Events', 'State', 'Actions'],
  enabled: 'enabled',
  disabled: 'disabled',
  enable: 'Enable',
  disable: 'Disable',
  remove: 'Delete',
  deliveries: 'Deliveries',
  removeTitle: 'Delete this endpoint?',
  removeBody: (url: string) => `Nothing more is sent to ${url}, and its delivery log is deleted.`,
  removeConfirm: 'Delete endpoint',
  removed: 'The endpoint was deleted.',
  changeFailed: 'The endpoint was not changed.',
  logTitle: (url: string) => `Deliveries to ${url}`,
  logNone: 'Nothing sent yet.',
  logColumns: ['Event', 'State', 'Attempts', 'Last attempt', 'Answer', 'Next attempt', 'Actions'],
  noAnswer: 'no answer',
  resend: 'Resend',
  resendLabel: (eventId: string) => `Resend event ${eventId}`,
  resent: 'Queued to be sent again.',
  resendFailed: 'The delivery was not queued again.',
  states: { pending: 'pending', delivered: 'delivered', failed: 'failed' },
} as const;

function deliveryLog(hook: Webhook, target: HTMLElement): void {
  const status = el('div', { 'aria-live': 'polite' });
  const body = el('div', {}, el('p', { class: 'meta' }, '…'));
  const load = async () => {
    try {
      const { deliveries } = await sessionApi.call<{ deliveries: Delivery[] }>(`/api/webhooks/${hook.webhookId}/deliveries`);
      body.replaceChildren(deliveries.length === 0 ? el('p', { class: 'meta' }, WORDS.logNone) : dataTable({
        id: 'webhook-deliveries', columns: WORDS.logColumns.map((label, i) => ({ label, hidden: i === WORDS.logColumns.length - 1 })),
        rows: deliveries.map((d) => ({
          dataset: { deliveryId: d.deliveryId, eventId: d.eventId },
          cells: [
            el('span', {}, el('code', {}, d.type), ' ', el('code', { class: 'meta mono' }, d.eventId)),
            el('span', { class: `badge ${d.state === 'delivered' ? 'active' : d.state === 'failed' ? 'revoked' : 'suspended'}` }, WORDS.states[d.state]),
            el('span', {}, String(d.attempts)),
            d.lastAttemptAt === null ? el('span', { class: 'meta' }, '—') : timeEl(d.lastAttemptAt),
            el('span', {}, d.lastStatus !== null ? String(d.lastStatus) : d.lastError ?? (d.lastAttemptAt === null ? '—' : WORDS.noAnswer)),
            d.nextAttemptAt === null ? el('span', { class: 'meta' }, '—') : timeEl(d.nextAttemptAt),
            el('div', { class: 'actions' }, el('button', { type: 'button', class: 'small', 'aria-label': WORDS.resendLabel(d.eventId),
              onclick: async () => {
                try {
                  await sessionApi.call(`/api/webhooks/${hook.webhookId}/deliveries/${d.deliveryId}/resend`, { method: 'POST' });
                  showNotice(status, WORDS.resent, 'success');
                  await load();
                } catch (err) {
                  showProblem(status, err, WORDS.resendFailed);
                }
              } }, WORDS.resend)),
          ],
        })),
      }));
    } catch (err) {
      showProblem(body, err);
    }
  };
  target.replaceChildren(el('h3', { class: 'webhook-log-title' }, WORDS.logTitle(hook.url)), status, body);
  void load();
}

function endpointRow(hook: Webhook, status: HTMLElement, log: HTMLElement, reload: () => Promise<void>):
{ cells: HTMLElement[]; dataset: Record<string, string> } {
  const change = async (path: string, method: 'POST' | 'DELETE') => {
    try {
      await sessionApi.call(`/api/webhooks/${hook.webhookId}${path}`, { method });
      if (method === 'DELETE') {
        showNotice(status, WORDS.removed, 'success');
        log.replaceChildren();
      }
      await reload();
    } catch (err) {
      showProblem(status, err, WORDS.changeFailed);
    }
  };
  const remove = async () => {
    if (!(await ask({ title: WORDS.removeTitle, confirm: WORDS.removeConfirm, danger: true, body: el('p', {}, WORDS.removeBody(hook.url)) }))) return;
    await change('', 'DELETE');
  };
  return {
    dataset: { webhookId: hook.webhookId },
    cells: [
      el('code', { class: 'webhook-url' }, hook.url),
      el('span', { class: 'scopes' }, hook.events.join(', ')),
      hook.enabled ? el('span', { class: 'badge active' }, WORDS.enabled)
        : el('span', {}, el('span', { class: 'badge revoked' }, WORDS.disabled), ' ', el('span', { class: 'meta' }, hook.disabledReason ?? '')),
      el('div', { class: 'actions' },
        el('button', { type: 'button', class: 'small', onclick: () => deliveryLog(hook, log) }, WORDS.deliveries),
        el('button', { type: 'button', class: 'small', onclick: () => void change(hook.enabled ? '/disable' : '/enable', 'POST') },
          hook.enabled ? WORDS.disable : WORDS.enable),
        el('button', { type: 'button', class: 'danger small', onclick: () => void remove() }, WORDS.remove)),
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
      list.replaceChildren(webhooks.length === 0 ? el('p', { class: 'meta' }, WORDS.none) : dataTable({
        id: 'webhooks', columns: WORDS.columns.map((label, i) => ({ label, hidden: i === WORDS.columns.length - 1 })),
        rows: webhooks.map((w) => endpointRow(w, status, log, reload)),
      }));
    } catch (err) {
      showProblem(list, err);
    }
  };
  const form = el('form', { id: 'webhook-form', class: 'api-key-form', novalidate: true },
    el('div', {}, el('label', { for: 'webhook-url' }, WORDS.url),
      el('input', { id: 'webhook-url', name: 'url', type: 'url', maxlength: 2048, autocomplete: 'off', placeholder: WORDS.urlPlaceholder })),
    el('fieldset', { class: 'scopes' }, el('legend', {}, WORDS.events), EVENTS.map(([type, label]) =>
      el('label', { class: 'check' }, el('input', { type: 'checkbox', name: 'event', value: type, defaultChecked: DEFAULT_EVENTS.has(type) }),
        ' ', label, ' ', el('code', { class: 'meta' }, type)))),
    el('button', { type: 'submit' }, WORDS.create));
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    const url = field(form, 'url').value.trim();
    const events = [...form.querySelectorAll<HTMLInputElement>('input[name="event"]:checked')].map((c) => c.value);
    if (!/^https?:\/\/\S+$/u.test(url)) return showNotice(status, WORDS.noUrl, 'error');
    if (events.length === 0) return showNotice(status, WORDS.noEvent, 'error');
    void busy(form, async () => {
      try {
        const made = await sessionApi.call<Webhook & { secret: string }>('/api/webhooks', { method: 'POST', json: { url, events } });
        form.reset();
        status.replaceChildren();
        secret.replaceChildren(el('div', { class: 'notice success', role: 'status' }, el('p', {}, WORDS.secretLead),
          el('div', { class: 'command' }, el('pre', {}, el('code', { id: 'webhook-secret' }, made.secret)),
            copyButton(made.secret, WORDS.copySecret))));
        await reload();
      } catch (err) {
        showProblem(status, err, WORDS.createFailed);
      }
    });
  });
  void reload();
  return el('section', { class: 'card api-keys webhooks', 'aria-labelledby': 'webhooks-title' },
    el('h2', { id: 'webhooks-title' }, WORDS.title), el('p', { class: 'meta' }, WORDS.intro), form, status, secret, list, log);
}

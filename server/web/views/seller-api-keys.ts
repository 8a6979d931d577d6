/**
 * `/seller`, "API keys" (issue 26 item 1): the keys a shop's server uses to create and read
 * licenses without a person signing in. A new key's secret is shown once, right under the
 * form, with a Copy button, and never again (the service keeps only its hash); the list shows
 * each key's name, the secret's last characters, its scopes, when it was made and last used,
 * and revokes it (asking first; it stops at once). Its words come from the message catalogs (`seller.apiKeys.*`).
 */
import { sessionApi, type ApiKey } from '@iki/core/browser';
import { t, type MessageKey } from '../i18n/index.js';
import { ask } from './confirm.js';
import { busy, dataTable, el, field, showNotice, showProblem, timeEl } from './dom.js';
import { copyButton } from './seller-service-key.js';

/** The scopes a key may hold, with the message saying what each lets a shop do. */
const SCOPES: readonly (readonly [scope: string, label: MessageKey])[] = [
  ['licenses:write', 'seller.apiKeys.scope.licensesWrite'],
  ['licenses:read', 'seller.apiKeys.scope.licensesRead'],
  ['masters:read', 'seller.apiKeys.scope.mastersRead'],
  ['events:read', 'seller.apiKeys.scope.eventsRead'],
  ['webhooks:write', 'seller.apiKeys.scope.webhooksWrite'],
];
/** Scopes ticked for a new key: what a shop needs to sell. */
const DEFAULT_SCOPES = new Set(['licenses:write', 'licenses:read', 'masters:read']);

/** The list's columns. */
const COLUMNS: readonly MessageKey[] = ['seller.apiKeys.col.name', 'seller.apiKeys.col.key', 'seller.apiKeys.col.scopes',
  'seller.apiKeys.col.created', 'seller.apiKeys.col.lastUsed', 'seller.apiKeys.col.state', 'seller.apiKeys.col.actions'];

function keyRow(key: ApiKey, status: HTMLElement, reload: () => Promise<void>): { cells: HTMLElement[]; dataset: Record<string, string> } {
  const revoke = el('button', {
    type: 'button', class: 'danger small', disabled: key.revokedAt !== null, 'aria-label': t('seller.apiKeys.revokeLabel', { name: key.name }),
    onclick: async () => {
      if (!(await ask({ title: t('seller.apiKeys.revokeTitle'), confirm: t('seller.apiKeys.revokeConfirm'), danger: true, body: el('p', {}, t('seller.apiKeys.revokeBody', { name: key.name })) }))) return;
      try {
        await sessionApi.call(`/api/api-keys/${key.apiKeyId}/revoke`, { method: 'POST' });
        showNotice(status, t('seller.apiKeys.revokedNotice', { name: key.name }), 'success');
        await reload();
      } catch (err) {
        showProblem(status, err, t('seller.apiKeys.revokeFailed'));
      }
    },
  }, t('seller.apiKeys.revoke'));
  return {
    dataset: { apiKeyId: key.apiKeyId },
    cells: [
      el('span', {}, key.name), el('code', { class: 'mono' }, key.hint), el('span', { class: 'scopes' }, key.scopes.join(', ')),
      timeEl(key.createdAt), key.lastUsedAt === null ? el('span', { class: 'meta' }, t('seller.apiKeys.never')) : timeEl(key.lastUsedAt),
      key.revokedAt === null ? el('span', { class: 'badge active' }, t('seller.apiKeys.active'))
        : el('span', {}, el('span', { class: 'badge revoked' }, t('seller.apiKeys.revoked')), ' ', timeEl(key.revokedAt)),
      el('div', { class: 'actions' }, revoke),
    ],
  };
}

/** The "API keys" card: the form, the secret of a key just made, and the list. */
export function apiKeysSection(): HTMLElement {
  const status = el('div', { 'aria-live': 'polite' });
  const secret = el('div', { class: 'api-key-secret', 'aria-live': 'polite' });
  const list = el('div', { id: 'api-key-list' }, el('p', { class: 'meta' }, '…'));
  const reload = async () => {
    try {
      const { apiKeys } = await sessionApi.call<{ apiKeys: ApiKey[] }>('/api/api-keys');
      list.replaceChildren(apiKeys.length === 0 ? el('p', { class: 'meta' }, t('seller.apiKeys.none')) : dataTable({
        id: 'api-keys', columns: COLUMNS.map((key, i) => ({ label: t(key), hidden: i === COLUMNS.length - 1 })),
        rows: apiKeys.map((k) => keyRow(k, status, reload)),
      }));
    } catch (err) {
      showProblem(list, err);
    }
  };
  const form = el('form', { id: 'api-key-form', class: 'api-key-form', novalidate: true },
    el('div', {}, el('label', { for: 'api-key-name' }, t('seller.apiKeys.name')),
      el('input', { id: 'api-key-name', name: 'name', type: 'text', maxlength: 100, autocomplete: 'off', placeholder: t('seller.apiKeys.namePlaceholder') })),
    el('fieldset', { class: 'scopes' }, el('legend', {}, t('seller.apiKeys.scopes')), SCOPES.map(([scope, label]) =>
      el('label', { class: 'check' }, el('input', { type: 'checkbox', name: 'scope', value: scope, defaultChecked: DEFAULT_SCOPES.has(scope) }),
        ' ', t(label), ' ', el('code', { class: 'meta' }, scope)))),
    el('button', { type: 'submit' }, t('seller.apiKeys.create')));
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    const name = field(form, 'name').value.trim();
    const scopes = [...form.querySelectorAll<HTMLInputElement>('input[name="scope"]:checked')].map((c) => c.value);
    if (name === '') return showNotice(status, t('seller.apiKeys.noName'), 'error');
    if (scopes.length === 0) return showNotice(status, t('seller.apiKeys.noScope'), 'error');
    void busy(form, async () => {
      try {
        const made = await sessionApi.call<ApiKey & { secret: string }>('/api/api-keys', { method: 'POST', json: { name, scopes } });
        form.reset();
        status.replaceChildren();
        secret.replaceChildren(el('div', { class: 'notice success', role: 'status' }, el('p', {}, t('seller.apiKeys.secretLead')),
          el('div', { class: 'command' }, el('pre', {}, el('code', { id: 'api-key-secret' }, made.secret)),
            copyButton(made.secret, t('seller.apiKeys.copySecret')))));
        await reload();
      } catch (err) {
        showProblem(status, err, t('seller.apiKeys.createFailed'));
      }
    });
  });
  void reload();
  return el('section', { class: 'card api-keys', 'aria-labelledby': 'api-keys-title' },
    el('h2', { id: 'api-keys-title' }, t('seller.apiKeys.title')), el('p', { class: 'meta' }, t('seller.apiKeys.intro')), form, status, secret, list);
}

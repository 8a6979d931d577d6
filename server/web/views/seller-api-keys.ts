/**
 * `/seller`, "API keys" (issue 26 item 1): the keys a shop's server uses to create and read
 * licenses without a person signing in. A new key's secret is shown once, right under the
 * form, with a Copy button, and never again (the service keeps only its hash); the list shows
 * each key's name, the secret's last characters, its scopes, when it was made and last used,
 * and revokes it (asking first; it stops at once). Every text of this view is in `WORDS`.
 */
import { sessionApi, type ApiKey } from '@iki/core/browser';
import { ask } from './confirm.js';
import { busy, dataTable, el, field, showNotice, showProblem, timeEl } from './dom.js';
import { copyButton } from './seller-service-key.js';

/** The scopes a key may hold, with what each lets a shop do. */
const SCOPES: readonly (readonly [scope: string, label: string])[] = [
  ['licenses:write', 'Create, suspend, reinstate and revoke licenses'],
  ['licenses:read', 'Read and search licenses and their history'],
  ['masters:read', 'List your masters'],
  ['events:read', 'Read events (for webhooks)'],
  ['webhooks:write', 'Manage webhooks'],
];
/** Scopes ticked for a new key: what a shop needs to sell. */
const DEFAULT_SCOPES = new Set(['licenses:write', 'licenses:read', 'masters:read']);

/** Every text a person reads in this view. */
const WORDS = {
  title: 'API keys',
  intro: 'An API key lets your shop\'s server create and look up licenses for you, for example when a sale completes. '
    + 'It can never sign in, change your account, download a copy or release a model key.',
  name: 'Name',
  namePlaceholder: 'e.g. shop server',
  scopes: 'What it may do',
  create: 'Create API key',
  noName: 'Give the key a name.',
  noScope: 'Tick at least one thing the key may do.',
  createFailed: 'The API key was not created.',
  secretLead: 'Copy this key now: it is shown only this once. Keep it in your shop\'s secret settings.',
  copySecret: 'Copy the new API key',
  none: 'No API keys yet.',
  columns: ['Name', 'Key', 'May do', 'Created', 'Last used', 'State', 'Actions'],
  never: 'never',
  active: 'active',
  revoked: 'revoked',
  revoke: 'Revoke',
  revokeLabel: (name: string) => `Revoke API key ${name}`,
  revokeTitle: 'Revoke this API key?',
  revokeBody: (name: string) => `Requests made with “${name}” are refused from now on, on every server. This cannot be undone.`,
  revokeConfirm: 'Revoke API key',
  revoked_: (name: string) => `API key “${name}” was revoked.`,
  revokeFailed: 'The API key was not revoked.',
} as const;

function keyRow(key: ApiKey, status: HTMLElement, reload: () => Promise<void>): { cells: HTMLElement[]; dataset: Record<string, string> } {
  const revoke = el('button', {
    type: 'button', class: 'danger small', disabled: key.revokedAt !== null, 'aria-label': WORDS.revokeLabel(key.name),
    onclick: async () => {
      if (!(await ask({ title: WORDS.revokeTitle, confirm: WORDS.revokeConfirm, danger: true, body: el('p', {}, WORDS.revokeBody(key.name)) }))) return;
      try {
        await sessionApi.call(`/api/api-keys/${key.apiKeyId}/revoke`, { method: 'POST' });
        showNotice(status, WORDS.revoked_(key.name), 'success');
        await reload();
      } catch (err) {
        showProblem(status, err, WORDS.revokeFailed);
      }
    },
  }, WORDS.revoke);
  return {
    dataset: { apiKeyId: key.apiKeyId },
    cells: [
      el('span', {}, key.name), el('code', { class: 'mono' }, key.hint), el('span', { class: 'scopes' }, key.scopes.join(', ')),
      timeEl(key.createdAt), key.lastUsedAt === null ? el('span', { class: 'meta' }, WORDS.never) : timeEl(key.lastUsedAt),
      key.revokedAt === null ? el('span', { class: 'badge active' }, WORDS.active)
        : el('span', {}, el('span', { class: 'badge revoked' }, WORDS.revoked), ' ', timeEl(key.revokedAt)),
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
      list.replaceChildren(apiKeys.length === 0 ? el('p', { class: 'meta' }, WORDS.none) : dataTable({
        id: 'api-keys', columns: WORDS.columns.map((label, i) => ({ label, hidden: i === WORDS.columns.length - 1 })),
        rows: apiKeys.map((k) => keyRow(k, status, reload)),
      }));
    } catch (err) {
      showProblem(list, err);
    }
  };
  const form = el('form', { id: 'api-key-form', class: 'api-key-form', novalidate: true },
    el('div', {}, el('label', { for: 'api-key-name' }, WORDS.name),
      el('input', { id: 'api-key-name', name: 'name', type: 'text', maxlength: 100, autocomplete: 'off', placeholder: WORDS.namePlaceholder })),
    el('fieldset', { class: 'scopes' }, el('legend', {}, WORDS.scopes), SCOPES.map(([scope, label]) =>
      el('label', { class: 'check' }, el('input', { type: 'checkbox', name: 'scope', value: scope, defaultChecked: DEFAULT_SCOPES.has(scope) }),
        ' ', label, ' ', el('code', { class: 'meta' }, scope)))),
    el('button', { type: 'submit' }, WORDS.create));
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    const name = field(form, 'name').value.trim();
    const scopes = [...form.querySelectorAll<HTMLInputElement>('input[name="scope"]:checked')].map((c) => c.value);
    if (name === '') return showNotice(status, WORDS.noName, 'error');
    if (scopes.length === 0) return showNotice(status, WORDS.noScope, 'error');
    void busy(form, async () => {
      try {
        const made = await sessionApi.call<ApiKey & { secret: string }>('/api/api-keys', { method: 'POST', json: { name, scopes } });
        form.reset();
        status.replaceChildren();
        secret.replaceChildren(el('div', { class: 'notice success', role: 'status' }, el('p', {}, WORDS.secretLead),
          el('div', { class: 'command' }, el('pre', {}, el('code', { id: 'api-key-secret' }, made.secret)),
            copyButton(made.secret, WORDS.copySecret))));
        await reload();
      } catch (err) {
        showProblem(status, err, WORDS.createFailed);
      }
    });
  });
  void reload();
  return el('section', { class: 'card api-keys', 'aria-labelledby': 'api-keys-title' },
    el('h2', { id: 'api-keys-title' }, WORDS.title), el('p', { class: 'meta' }, WORDS.intro), form, status, secret, list);
}

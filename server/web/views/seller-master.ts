/**
 * One master's panel on `/seller`: its facts, its licenses (licensee with name, e-mail and
 * account id, issue time, key releases, revoked state) with each license's history right under
 * them, and beside them on a wide panel the forms: creating a license for a buyer (asking first
 * when the buyer already holds one of this master, or is the seller), and identifying a leaked
 * texture (views/seller-identify.ts). Revoking asks for confirmation.
 */
import { currentSession, formatBytes, sessionApi, type License, type LicenseEvent, type Master } from '@iki/core/browser';
import { ask } from './confirm.js';
import { busy, byId, dataTable, el, field, showNotice, showPending, showProblem, timeEl, type Row } from './dom.js';
import { stateBadge } from './license-state.js';
import { identifyForm, score } from './seller-identify.js';

const ACCOUNT_ID = /^acct_[0-9a-f]{32}$/;
const EVENT_WORDS: Readonly<Record<string, string>> = {
  license_created: 'License created',
  release: 'Key released to the player',
  download: 'Copy downloaded',
  revoke: 'License revoked',
  identify: 'Found in a leaked texture',
  suspend: 'License suspended',
  reinstate: 'License reinstated',
  expire: 'License expired',
  rate_limited: 'Refused by a rate limit',
};
/** The texts of issue 26 (reference, expiry, suspend and reinstate) in this view. */
const SALE_WORDS = {
  ref: 'Order reference',
  refHint: 'optional, e.g. your order id',
  expires: 'Expires',
  expiresHint: 'optional',
  expiresPast: 'The expiry must be in the future.',
  suspend: 'Suspend',
  reinstate: 'Reinstate',
  suspendLabel: (id: string) => `Suspend license ${id}`,
  reinstateLabel: (id: string) => `Reinstate license ${id}`,
  suspended: (id: string) => `License ${id} is suspended: no copies or keys until you reinstate it.`,
  reinstated: (id: string) => `License ${id} is reinstated.`,
  viaKey: (id: string) => `API key ${id}`,
  refLine: (ref: string) => `Reference ${ref}`,
} as const;

/** The places a panel reports to, its licenses as last drawn, and how it redraws them. */
interface PanelContext { status: HTMLElement; history: HTMLElement; licenses: License[]; reload: () => Promise<void> }

/** Asks for confirmation in the page's <dialog>; resolves to {reason} or null. */
function confirmRevoke(license: License): Promise<{ reason: string } | null> {
  const dialog = byId<HTMLDialogElement>('revoke-dialog');
  const form = byId<HTMLFormElement>('revoke-form');
  byId('revoke-text').textContent =
    `License ${license.licenseId} of “${license.masterName}” for ${license.licensee.name || license.licensee.accountId}.`;
  form.reset();
  return new Promise((resolve) => {
    dialog.addEventListener('close', () => {
      const reason = field(form, 'reason').value.trim();
      resolve(dialog.returnValue === 'revoke' ? { reason } : null);
    }, { once: true });
    dialog.returnValue = '';
    dialog.showModal();
  });
}

function party(license: License, accountId: string, apiKeyId?: unknown): string {
  if (accountId === license.seller.accountId) return typeof apiKeyId === 'string' ? `you (${SALE_WORDS.viaKey(apiKeyId)})` : 'you';
  if (accountId === license.licensee.accountId) return license.licensee.name || 'the licensee';
  return accountId;
}

function eventDetails(event: LicenseEvent): string {
  const d = event.details ?? {};
  if ((event.kind === 'revoke' || event.kind === 'suspend') && typeof d['reason'] === 'string' && d['reason'] !== '') return `Reason: ${d['reason']}`;
  if (event.kind === 'license_created' && typeof d['externalRef'] === 'string') return SALE_WORDS.refLine(d['externalRef']);
  if (event.kind === 'identify' && typeof d['confidence'] === 'number') return `Confidence score ${score(d['confidence'])}`;
  return '';
}

async function showHistory(target: HTMLElement, license: License): Promise<void> {
  showPending(target, `Loading the history of ${license.licenseId}…`);
  target.scrollIntoView({ block: 'nearest' });
  try {
    const { events } = await sessionApi.call<{ events: LicenseEvent[] }>(`/api/licenses/${license.licenseId}/events?limit=200`);
    target.replaceChildren(
      el('h3', {}, 'History of license ', el('code', {}, license.licenseId)),
      events.length === 0 ? el('p', { class: 'meta' }, 'Nothing happened yet.') : dataTable({
        id: `history-${license.licenseId}`,
        columns: [{ label: 'When' }, { label: 'What' }, { label: 'By' }, { label: 'Details' }],
        rows: events.map((e) => [timeEl(e.at), EVENT_WORDS[e.kind] ?? e.kind, party(license, e.actorId, e.details?.['apiKeyId']), eventDetails(e)]),
      }));
  } catch (err) {
    showProblem(target, err);
  }
  target.scrollIntoView({ block: 'nearest' });
}

function licenseRow(license: License, ctx: PanelContext): Row {
  const revoke = el('button', {
    type: 'button', class: 'danger small', disabled: license.revokedAt !== null,
    'aria-label': `Revoke license ${license.licenseId}`,
    onclick: async () => {
      const answer = await confirmRevoke(license);
      if (answer === null) return;
      try {
        await sessionApi.call(`/api/licenses/${license.licenseId}/revoke`, { method: 'POST',
          json: answer.reason === '' ? {} : { reason: answer.reason } });
        showNotice(ctx.status, `License ${license.licenseId} was revoked.`, 'success');
        await ctx.reload();
      } catch (err) {
        showProblem(ctx.status, err);
      }
    },
  }, 'Revoke');
  const history = el('button', {
    type: 'button', class: 'secondary small', 'aria-label': `History of license ${license.licenseId}`,
    onclick: () => showHistory(ctx.history, license),
  }, 'History');
  const suspending = license.state !== 'suspended';
  const pause = el('button', {
    type: 'button', class: 'secondary small', disabled: license.revokedAt !== null,
    'aria-label': suspending ? SALE_WORDS.suspendLabel(license.licenseId) : SALE_WORDS.reinstateLabel(license.licenseId),
    onclick: async () => {
      try {
        await sessionApi.call(`/api/licenses/${license.licenseId}/${suspending ? 'suspend' : 'reinstate'}`, { method: 'POST' });
        showNotice(ctx.status, suspending ? SALE_WORDS.suspended(license.licenseId) : SALE_WORDS.reinstated(license.licenseId), 'success');
        await ctx.reload();
      } catch (err) {
        showProblem(ctx.status, err);
      }
    },
  }, suspending ? SALE_WORDS.suspend : SALE_WORDS.reinstate);
  return {
    dataset: { licenseId: license.licenseId },
    cells: [
      [el('div', {}, license.licensee.name || '(no name)'),
        license.licensee.email === undefined ? null : el('div', { class: 'licensee-email' }, license.licensee.email),
        el('div', { class: 'meta mono' }, license.licensee.accountId)],
      [el('code', {}, license.licenseId), license.externalRef === undefined || license.externalRef === null ? null
        : el('div', { class: 'meta license-ref' }, SALE_WORDS.refLine(license.externalRef))],
      timeEl(license.issuedAt), String(license.releaseCount), stateBadge(license),
      el('div', { class: 'actions' }, history, pause, revoke),
    ],
  };
}

function licensesTable(licenses: License[], ctx: PanelContext): HTMLElement {
  if (licenses.length === 0) return el('p', { class: 'meta' }, 'No licenses yet.');
  return dataTable({
    columns: [{ label: 'Licensee' }, { label: 'License' }, { label: 'Issued' }, { label: 'Key releases', num: true },
      { label: 'State' }, { label: 'Actions', hidden: true }],
    rows: licenses.map((l) => licenseRow(l, ctx)),
  });
}

/** The buyer's earlier licenses of this master, matched by account id or e-mail. */
function heldBy(buyer: string, licenses: readonly License[]): License[] {
  const wanted = buyer.toLowerCase();
  return licenses.filter((l) => l.licensee.accountId === buyer || l.licensee.email?.toLowerCase() === wanted);
}

/** The signed-in account (GET /api/me), asked once: who "yourself" is, whatever the session keeps. */
let whoAmI: Promise<{ accountId: string; email: string } | null> | undefined;
function me(): Promise<{ accountId: string; email: string } | null> {
  whoAmI ??= sessionApi.call<{ accountId: string; email: string }>('/api/me').catch(() => {
    whoAmI = undefined;
    const session = currentSession();
    return session === null ? null : { accountId: session.accountId, email: session.email ?? '' };
  });
  return whoAmI;
}

/** Asks before a license a seller may not mean; true to go ahead. */
async function confirmBuyer(buyer: string, master: Master, licenses: readonly License[]): Promise<boolean> {
  const self = await me();
  if (self !== null && (buyer === self.accountId || (self.email !== '' && buyer.toLowerCase() === self.email.toLowerCase()))) {
    const yes = await ask({ title: 'License yourself?', confirm: 'Create a license for myself',
      body: el('p', {}, `${buyer} is your own account. A license for yourself lets you try the buyer's side `
        + `(the player), but it is not a sale. Create it anyway?`) });
    if (!yes) return false;
  }
  const earlier = heldBy(buyer, licenses);
  const first = earlier[0];
  if (first === undefined) return true;
  const active = earlier.filter((l) => l.revokedAt === null).length;
  return ask({ title: 'This buyer already has a license', confirm: 'Create another license',
    body: el('p', {}, `${first.licensee.name || first.licensee.accountId}${first.licensee.email === undefined ? '' : ` (${first.licensee.email})`} `
      + `already holds ${earlier.length === 1 ? 'a license' : `${earlier.length} licenses`} of “${master.name}” `
      + `(${active} active): ${earlier.map((l) => l.licenseId).join(', ')}. A second license gives them a second, `
      + 'differently watermarked copy. Create another?') });
}

function createForm(master: Master, ctx: PanelContext): HTMLElement {
  if (master.archivedAt !== null && master.archivedAt !== undefined) {
    return el('p', { class: 'meta archived-note' }, 'This master is archived: it takes no new license. Restore it (above) to license it again.');
  }
  const id = `buyer-${master.masterId}`;
  const form = el('form', { class: 'inline create-license', novalidate: true },
    el('div', {},
      el('label', { for: id }, 'Buyer\'s verified e-mail or account id'),
      el('input', { id, name: 'buyer', type: 'text', autocomplete: 'off', required: true, placeholder: 'buyer@example.com or acct_…' })),
    el('div', {},
      el('label', { for: `ref-${master.masterId}` }, SALE_WORDS.ref, ' ', el('span', { class: 'hint' }, `(${SALE_WORDS.refHint})`)),
      el('input', { id: `ref-${master.masterId}`, name: 'ref', type: 'text', maxlength: 200, autocomplete: 'off' })),
    el('div', {},
      el('label', { for: `expires-${master.masterId}` }, SALE_WORDS.expires, ' ', el('span', { class: 'hint' }, `(${SALE_WORDS.expiresHint})`)),
      el('input', { id: `expires-${master.masterId}`, name: 'expires', type: 'datetime-local' })),
    el('button', { type: 'submit' }, 'Create license'));
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    const buyer = field(form, 'buyer').value.trim();
    if (buyer === '') {
      showNotice(ctx.status, 'Enter the buyer\'s e-mail address or account id.', 'error');
      return;
    }
    const ref = field(form, 'ref').value.trim();
    const expiresText = field(form, 'expires').value;
    // datetime-local is the seller's local time; the service takes an instant.
    const expires = expiresText === '' ? undefined : new Date(expiresText);
    if (expires !== undefined && !(expires.getTime() > Date.now())) {
      showNotice(ctx.status, SALE_WORDS.expiresPast, 'error');
      return;
    }
    const extras = { ...(ref === '' ? {} : { externalRef: ref }), ...(expires === undefined ? {} : { expiresAt: expires.toISOString() }) };
    void busy(form, async () => {
      if (!(await confirmBuyer(buyer, master, ctx.licenses))) {
        showNotice(ctx.status, 'No license was created.', 'info');
        return;
      }
      try {
        const license = await sessionApi.call<License>(`/api/licenses/masters/${master.masterId}/licenses`, { method: 'POST',
          json: { ...(ACCOUNT_ID.test(buyer) ? { accountId: buyer } : { email: buyer }), ...extras } });
        form.reset();
        showNotice(ctx.status, `License ${license.licenseId} created for ${license.licensee.name || license.licensee.accountId}.`, 'success');
        await ctx.reload();
      } catch (err) {
        showProblem(ctx.status, err, 'The license was not created.');
      }
    });
  });
  return form;
}

/** Fills `body` with the panel of `master` (called when its <details> first opens). */
export async function masterPanel(body: HTMLElement, master: Master, onCount: (n: number) => void = () => {}): Promise<void> {
  const list = el('div', { 'aria-live': 'polite' }, el('p', { class: 'meta' }, 'Loading licenses…'));
  const ctx: PanelContext = {
    status: el('div', { class: 'result', 'aria-live': 'polite' }),
    history: el('div', { class: 'history' }),
    licenses: [],
    reload: async () => {
      const { licenses } = await sessionApi.call<{ licenses: License[] }>(`/api/licenses/masters/${master.masterId}/licenses`);
      ctx.licenses = licenses;
      list.replaceChildren(licensesTable(licenses, ctx));
      onCount(licenses.length);
    },
  };
  body.replaceChildren(
    el('dl', { class: 'facts' },
      el('dt', {}, 'Master id'), el('dd', {}, el('code', {}, master.masterId)),
      el('dt', {}, 'SHA-256'), el('dd', {}, el('code', { class: 'mono' }, master.sha256)),
      el('dt', {}, 'Signed by'), el('dd', {}, el('code', { class: 'mono' }, master.signerPublicKey)),
      el('dt', {}, 'Size'), el('dd', {}, `${formatBytes(master.size)} (${master.size} bytes)`)),
    el('div', { class: 'panel-grid' },
      el('div', { class: 'panel-list' }, el('h3', {}, 'Licenses'), list, ctx.history),
      el('div', { class: 'panel-forms' },
        el('h3', {}, 'New license'), createForm(master, ctx), ctx.status,
        el('h3', {}, 'Identify a leaked texture'), ...identifyForm(master, () => ctx.reload()))));
  try {
    await ctx.reload();
  } catch (err) {
    showProblem(list, err);
  }
}

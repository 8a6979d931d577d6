/**
 * One master's panel on `/seller`: its facts, its licenses (licensee with name, e-mail and
 * account id, issue time, key releases, revoked state) with each license's history right under
 * them, and beside them on a wide panel the forms: creating a license for a buyer (asking first
 * when the buyer already holds one of this master, or is the seller), and identifying a leaked
 * texture (views/seller-identify.ts). Revoking asks for confirmation.
 */
import { currentSession, sessionApi, type License, type LicenseEvent, type Master } from '@iki/core/browser';
import { formatSize, hasMessage, locale, t, tParts } from '../i18n/index.js';
import { ask } from './confirm.js';
import { busy, byId, dataTable, el, field, showNotice, showPending, showProblem, timeEl, type Row } from './dom.js';
import { stateBadge } from './license-state.js';
import { identifyForm, score } from './seller-identify.js';

const ACCOUNT_ID = /^acct_[0-9a-f]{32}$/;
/** A history event's kind in words (`seller.master.event.<kind>`); an unknown kind as it is. */
function eventWords(kind: string): string {
  const key = `seller.master.event.${kind}`;
  return hasMessage(key) ? t(key) : kind;
}

/** The places a panel reports to, its licenses as last drawn, and how it redraws them. */
interface PanelContext { status: HTMLElement; history: HTMLElement; licenses: License[]; reload: () => Promise<void> }

/** Asks for confirmation in the page's <dialog>; resolves to {reason} or null. */
function confirmRevoke(license: License): Promise<{ reason: string } | null> {
  const dialog = byId<HTMLDialogElement>('revoke-dialog');
  const form = byId<HTMLFormElement>('revoke-form');
  byId('revoke-text').textContent = t('seller.revokeText',
    { license: license.licenseId, master: license.masterName, buyer: license.licensee.name || license.licensee.accountId });
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
  if (accountId === license.seller.accountId) {
    return typeof apiKeyId === 'string' ? t('seller.master.youViaKey', { key: apiKeyId }) : t('seller.master.you');
  }
  if (accountId === license.licensee.accountId) return license.licensee.name || t('seller.master.theLicensee');
  return accountId;
}

function eventDetails(event: LicenseEvent): string {
  const d = event.details ?? {};
  if ((event.kind === 'revoke' || event.kind === 'suspend') && typeof d['reason'] === 'string' && d['reason'] !== '') {
    return t('seller.master.reason', { reason: d['reason'] });
  }
  if (event.kind === 'license_created' && typeof d['externalRef'] === 'string') return t('seller.master.refLine', { ref: d['externalRef'] });
  if (event.kind === 'identify' && typeof d['confidence'] === 'number') return t('seller.master.confidence', { score: score(d['confidence']) });
  return '';
}

async function showHistory(target: HTMLElement, license: License): Promise<void> {
  showPending(target, t('seller.master.loadingHistory', { license: license.licenseId }));
  target.scrollIntoView({ block: 'nearest' });
  try {
    const { events } = await sessionApi.call<{ events: LicenseEvent[] }>(`/api/licenses/${license.licenseId}/events?limit=200`);
    target.replaceChildren(
      el('h3', {}, ...tParts('seller.master.historyOf', { license: el('code', {}, license.licenseId) })),
      events.length === 0 ? el('p', { class: 'meta' }, t('seller.master.nothingYet')) : dataTable({
        id: `history-${license.licenseId}`,
        columns: [{ label: t('seller.master.col.when') }, { label: t('seller.master.col.what') }, { label: t('seller.master.col.by') },
          { label: t('seller.master.col.details') }],
        rows: events.map((e) => [timeEl(e.at), eventWords(e.kind), party(license, e.actorId, e.details?.['apiKeyId']), eventDetails(e)]),
      }));
  } catch (err) {
    showProblem(target, err);
  }
  target.scrollIntoView({ block: 'nearest' });
}

function licenseRow(license: License, ctx: PanelContext): Row {
  const revoke = el('button', {
    type: 'button', class: 'danger small', disabled: license.revokedAt !== null,
    'aria-label': t('seller.master.revokeLabel', { license: license.licenseId }),
    onclick: async () => {
      const answer = await confirmRevoke(license);
      if (answer === null) return;
      try {
        await sessionApi.call(`/api/licenses/${license.licenseId}/revoke`, { method: 'POST',
          json: answer.reason === '' ? {} : { reason: answer.reason } });
        showNotice(ctx.status, t('seller.master.revoked', { license: license.licenseId }), 'success');
        await ctx.reload();
      } catch (err) {
        showProblem(ctx.status, err);
      }
    },
  }, t('seller.master.revoke'));
  const history = el('button', {
    type: 'button', class: 'secondary small', 'aria-label': t('seller.master.historyLabel', { license: license.licenseId }),
    onclick: () => showHistory(ctx.history, license),
  }, t('seller.master.history'));
  const suspending = license.state !== 'suspended';
  const pause = el('button', {
    type: 'button', class: 'secondary small', disabled: license.revokedAt !== null,
    'aria-label': t(suspending ? 'seller.master.suspendLabel' : 'seller.master.reinstateLabel', { id: license.licenseId }),
    onclick: async () => {
      try {
        await sessionApi.call(`/api/licenses/${license.licenseId}/${suspending ? 'suspend' : 'reinstate'}`, { method: 'POST' });
        showNotice(ctx.status, t(suspending ? 'seller.master.suspended' : 'seller.master.reinstated', { id: license.licenseId }), 'success');
        await ctx.reload();
      } catch (err) {
        showProblem(ctx.status, err);
      }
    },
  }, t(suspending ? 'seller.master.suspend' : 'seller.master.reinstate'));
  return {
    dataset: { licenseId: license.licenseId },
    cells: [
      [el('div', {}, license.licensee.name || t('seller.master.noName')),
        license.licensee.email === undefined ? null : el('div', { class: 'licensee-email' }, license.licensee.email),
        el('div', { class: 'meta mono' }, license.licensee.accountId)],
      [el('code', {}, license.licenseId), license.externalRef === undefined || license.externalRef === null ? null
        : el('div', { class: 'meta license-ref' }, t('seller.master.refLine', { ref: license.externalRef }))],
      timeEl(license.issuedAt), String(license.releaseCount), stateBadge(license),
      el('div', { class: 'actions' }, history, pause, revoke),
    ],
  };
}

function licensesTable(licenses: License[], ctx: PanelContext): HTMLElement {
  if (licenses.length === 0) return el('p', { class: 'meta' }, t('seller.master.noLicenses'));
  return dataTable({
    columns: [{ label: t('seller.master.col.licensee') }, { label: t('seller.master.col.license') }, { label: t('seller.master.col.issued') },
      { label: t('seller.master.col.releases'), num: true }, { label: t('seller.master.col.state') },
      { label: t('seller.master.col.actions'), hidden: true }],
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
    const yes = await ask({ title: t('seller.master.selfTitle'), confirm: t('seller.master.selfConfirm'),
      body: el('p', {}, t('seller.master.selfBody', { buyer })) });
    if (!yes) return false;
  }
  const earlier = heldBy(buyer, licenses);
  const first = earlier[0];
  if (first === undefined) return true;
  const active = earlier.filter((l) => l.revokedAt === null).length;
  const who = first.licensee.name || first.licensee.accountId;
  return ask({ title: t('seller.master.heldTitle'), confirm: t('seller.master.heldConfirm'),
    body: el('p', {}, t('seller.master.heldBody', { buyer: first.licensee.email === undefined ? who : `${who} (${first.licensee.email})`,
      n: earlier.length, master: master.name, active, licenses: new Intl.ListFormat(locale, { type: 'unit' }).format(earlier.map((l) => l.licenseId)) })) });
}

function createForm(master: Master, ctx: PanelContext): HTMLElement {
  if (master.archivedAt !== null && master.archivedAt !== undefined) {
    return el('p', { class: 'meta archived-note' }, t('seller.master.archivedNote'));
  }
  const id = `buyer-${master.masterId}`;
  const form = el('form', { class: 'inline create-license', novalidate: true },
    el('div', {},
      el('label', { for: id }, t('seller.master.buyer')),
      el('input', { id, name: 'buyer', type: 'text', autocomplete: 'off', required: true, placeholder: t('seller.master.buyerPlaceholder') })),
    el('div', {},
      el('label', { for: `ref-${master.masterId}` }, t('seller.master.ref'), ' ', el('span', { class: 'hint' }, t('seller.master.refHint'))),
      el('input', { id: `ref-${master.masterId}`, name: 'ref', type: 'text', maxlength: 200, autocomplete: 'off' })),
    el('div', {},
      el('label', { for: `expires-${master.masterId}` }, t('seller.master.expires'), ' ', el('span', { class: 'hint' }, t('seller.master.expiresHint'))),
      el('input', { id: `expires-${master.masterId}`, name: 'expires', type: 'datetime-local' })),
    el('button', { type: 'submit' }, t('seller.master.create')));
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    const buyer = field(form, 'buyer').value.trim();
    if (buyer === '') {
      showNotice(ctx.status, t('seller.master.enterBuyer'), 'error');
      return;
    }
    const ref = field(form, 'ref').value.trim();
    const expiresText = field(form, 'expires').value;
    // datetime-local is the seller's local time; the service takes an instant.
    const expires = expiresText === '' ? undefined : new Date(expiresText);
    if (expires !== undefined && !(expires.getTime() > Date.now())) {
      showNotice(ctx.status, t('seller.master.expiresPast'), 'error');
      return;
    }
    const extras = { ...(ref === '' ? {} : { externalRef: ref }), ...(expires === undefined ? {} : { expiresAt: expires.toISOString() }) };
    void busy(form, async () => {
      if (!(await confirmBuyer(buyer, master, ctx.licenses))) {
        showNotice(ctx.status, t('seller.master.noneCreated'), 'info');
        return;
      }
      try {
        const license = await sessionApi.call<License>(`/api/licenses/masters/${master.masterId}/licenses`, { method: 'POST',
          json: { ...(ACCOUNT_ID.test(buyer) ? { accountId: buyer } : { email: buyer }), ...extras } });
        form.reset();
        showNotice(ctx.status, t('seller.master.created', { license: license.licenseId, buyer: license.licensee.name || license.licensee.accountId }), 'success');
        await ctx.reload();
      } catch (err) {
        showProblem(ctx.status, err, t('seller.master.notCreated'));
      }
    });
  });
  return form;
}

/** Fills `body` with the panel of `master` (called when its <details> first opens). */
export async function masterPanel(body: HTMLElement, master: Master, onCount: (n: number) => void = () => {}): Promise<void> {
  const list = el('div', { 'aria-live': 'polite' }, el('p', { class: 'meta' }, t('seller.master.loadingLicenses')));
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
      el('dt', {}, t('seller.master.masterId')), el('dd', {}, el('code', {}, master.masterId)),
      el('dt', {}, t('seller.master.sha256')), el('dd', {}, el('code', { class: 'mono' }, master.sha256)),
      el('dt', {}, t('seller.master.signedBy')), el('dd', {}, el('code', { class: 'mono' }, master.signerPublicKey)),
      el('dt', {}, t('seller.master.size')), el('dd', {}, t('seller.master.sizeValue', { size: formatSize(master.size), bytes: master.size }))),
    el('div', { class: 'panel-grid' },
      el('div', { class: 'panel-list' }, el('h3', {}, t('seller.master.licenses')), list, ctx.history),
      el('div', { class: 'panel-forms' },
        el('h3', {}, t('seller.master.newLicense')), createForm(master, ctx), ctx.status,
        el('h3', {}, t('seller.master.identify')), ...identifyForm(master, () => ctx.reload()))));
  try {
    await ctx.reload();
  } catch (err) {
    showProblem(list, err);
  }
}

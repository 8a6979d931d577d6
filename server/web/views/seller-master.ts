/**
 * One master's panel on `/seller`: its facts, its licenses (licensee, issue time, key releases,
 * revoked state), creating a license for a buyer, revoking with a confirmation, a license's
 * history, and identifying a leaked texture.
 */
import { formatBytes, sessionApi, type IdentifyResult, type License, type LicenseEvent, type Master } from '@iki/core/browser';
import { busy, byId, dataTable, el, field, showNotice, showPending, showProblem, timeEl, type Child, type Row } from './dom.js';

const ACCOUNT_ID = /^acct_[0-9a-f]{32}$/;
const IMAGE_TYPES = new Set(['image/png', 'image/jpeg', 'image/webp']);
const EVENT_WORDS: Readonly<Record<string, string>> = {
  license_created: 'License created',
  release: 'Key released to the player',
  download: 'Copy downloaded',
  revoke: 'License revoked',
  identify: 'Found in a leaked texture',
};

/** The places a panel reports to, and how it redraws its licenses. */
interface PanelContext { status: HTMLElement; history: HTMLElement; reload: () => Promise<void> }

/** The watermark reader's confidence score (docs/watermark.md section 7), one decimal. */
const score = (value: unknown): string => (typeof value === 'number' && Number.isFinite(value) ? value.toFixed(1) : '?');

function stateBadge(license: License): Child {
  if (license.revokedAt === null) return el('span', { class: 'badge active' }, 'active');
  return [el('span', { class: 'badge revoked' }, 'revoked'), el('div', { class: 'meta' }, timeEl(license.revokedAt))];
}

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

function party(license: License, accountId: string): string {
  if (accountId === license.seller.accountId) return 'you';
  if (accountId === license.licensee.accountId) return license.licensee.name || 'the licensee';
  return accountId;
}

function eventDetails(event: LicenseEvent): string {
  const d = event.details ?? {};
  if (event.kind === 'revoke' && typeof d['reason'] === 'string' && d['reason'] !== '') return `Reason: ${d['reason']}`;
  if (event.kind === 'identify' && typeof d['confidence'] === 'number') return `Confidence score ${score(d['confidence'])}`;
  return '';
}

async function showHistory(target: HTMLElement, license: License): Promise<void> {
  showPending(target, `Loading the history of ${license.licenseId}…`);
  try {
    const { events } = await sessionApi.call<{ events: LicenseEvent[] }>(`/api/licenses/${license.licenseId}/events?limit=200`);
    target.replaceChildren(
      el('h3', {}, 'History of license ', el('code', {}, license.licenseId)),
      events.length === 0 ? el('p', { class: 'meta' }, 'Nothing happened yet.') : dataTable({
        id: `history-${license.licenseId}`,
        columns: [{ label: 'When' }, { label: 'What' }, { label: 'By' }, { label: 'Details' }],
        rows: events.map((e) => [timeEl(e.at), EVENT_WORDS[e.kind] ?? e.kind, party(license, e.actorId), eventDetails(e)]),
      }));
  } catch (err) {
    showProblem(target, err);
  }
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
  return {
    dataset: { licenseId: license.licenseId },
    cells: [
      [el('div', {}, license.licensee.name || '(no name)'), el('div', { class: 'meta mono' }, license.licensee.accountId)],
      el('code', {}, license.licenseId), timeEl(license.issuedAt), String(license.releaseCount), stateBadge(license),
      el('div', { class: 'actions' }, history, revoke),
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

function createForm(master: Master, ctx: PanelContext): HTMLFormElement {
  const id = `buyer-${master.masterId}`;
  const form = el('form', { class: 'inline', novalidate: true },
    el('div', {},
      el('label', { for: id }, 'Buyer\'s verified e-mail or account id'),
      el('input', { id, name: 'buyer', type: 'text', autocomplete: 'off', required: true, placeholder: 'buyer@example.com or acct_…' })),
    el('button', { type: 'submit' }, 'Create license'));
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    const buyer = field(form, 'buyer').value.trim();
    if (buyer === '') {
      showNotice(ctx.status, 'Enter the buyer\'s e-mail address or account id.', 'error');
      return;
    }
    void busy(form, async () => {
      try {
        const license = await sessionApi.call<License>(`/api/licenses/masters/${master.masterId}/licenses`, { method: 'POST',
          json: ACCOUNT_ID.test(buyer) ? { accountId: buyer } : { email: buyer } });
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

function identifyResult(result: IdentifyResult): HTMLElement {
  if (!result.found) {
    return el('div', { class: 'notice info', role: 'status' },
      el('p', {}, el('strong', {}, 'Not found. '), 'No license watermark of this master could be read from this image.'),
      el('p', { class: 'meta' }, 'Resized, cropped, rotated or heavily compressed images lose the mark; try the texture as it was found.'));
  }
  const l = result.license;
  const facts: [string, Child][] = [
    ['License', el('code', {}, result.licenseId)],
    ['Confidence', [score(result.confidence),
      el('span', { class: 'meta' }, ' (the watermark reader\'s score: a read needs at least 10, an unmarked image scores about 0)')]],
  ];
  if (l !== null) {
    facts.push(['Licensee', `${l.licensee.name} (${l.licensee.accountId})`], ['Issued', timeEl(l.issuedAt)],
      ['State', stateBadge(l)], ['Key releases', String(l.releaseCount)]);
  } else {
    facts.push(['Licensee', 'unknown: this id is not a license of this master']);
  }
  return el('div', { class: 'notice success', role: 'status' },
    el('p', {}, el('strong', {}, 'Found. '), 'This texture carries a license watermark.'),
    el('dl', { class: 'facts' }, facts.flatMap(([k, v]) => [el('dt', {}, k), el('dd', {}, v)])));
}

function identifyForm(master: Master, ctx: PanelContext): [HTMLFormElement, HTMLElement] {
  const id = `leak-${master.masterId}`;
  const result = el('div', { class: 'result', 'aria-live': 'polite' });
  const form = el('form', { class: 'inline' },
    el('div', { class: 'file' },
      el('label', { for: id }, 'Leaked texture (PNG, JPEG or WebP)'),
      el('input', { id, name: 'image', type: 'file', accept: 'image/png,image/jpeg,image/webp', required: true })),
    el('button', { type: 'submit', class: 'secondary' }, 'Identify'));
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    const file = field(form, 'image').files?.[0];
    if (file === undefined || !IMAGE_TYPES.has(file.type)) {
      showNotice(result, 'Choose a PNG, JPEG or WebP image.', 'error');
      return;
    }
    showPending(result, `Reading the watermark of ${file.name}…`);
    void busy(form, async () => {
      try {
        const answer = await sessionApi.call<IdentifyResult>(`/api/licenses/masters/${master.masterId}/identify`,
          { method: 'POST', body: file, type: file.type });
        result.replaceChildren(identifyResult(answer));
        // The answer carries the license's current state and release count: keep the table in step.
        if (answer.found && answer.license !== null) await ctx.reload();
      } catch (err) {
        showProblem(result, err);
      }
    });
  });
  return [form, result];
}

/** Fills `body` with the panel of `master` (called when its <details> first opens). */
export async function masterPanel(body: HTMLElement, master: Master, onCount: (n: number) => void = () => {}): Promise<void> {
  const list = el('div', { 'aria-live': 'polite' }, el('p', { class: 'meta' }, 'Loading licenses…'));
  const ctx: PanelContext = {
    status: el('div', { class: 'result', 'aria-live': 'polite' }),
    history: el('div'),
    reload: async () => {
      const { licenses } = await sessionApi.call<{ licenses: License[] }>(`/api/licenses/masters/${master.masterId}/licenses`);
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
    el('h3', {}, 'Licenses'), list,
    el('h3', {}, 'New license'), createForm(master, ctx), ctx.status, ctx.history,
    el('h3', {}, 'Identify a leaked texture'), ...identifyForm(master, ctx));
  try {
    await ctx.reload();
  } catch (err) {
    showProblem(list, err);
  }
}

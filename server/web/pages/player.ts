/**
 * `/player`: the buyer's licenses and opening a license copy in memory (SPEC behaviour rule 4).
 *
 * The work happens in a Web Worker (`LicensePlayer` of `@iki/core/browser`): it downloads the
 * copy (`cache: 'no-store'`), makes the ephemeral X25519 key inside its own WASM instance,
 * has the license key released to it, and reads the copy; this page receives only the
 * verified files it draws, moved out of the worker. The decrypted bytes exist only in memory:
 * no service worker, no IndexedDB, no Cache API, no storage, no object URLs. The built-in
 * runtime loads the model through the package resolver only (`player.resolver`). Closing the
 * model (or leaving the page) zero-fills the files and terminates the worker.
 */
import {
  ApiProblem, DamagedCopy, LicensePlayer, formatBytes, plainWords, refreshSession, sessionApi, sessionToken,
  type License, type OpenLicenseProgress,
} from '@iki/core/browser';
import { WASM_URL, workerUrl } from '../views/assets.js';
import { byId, dataTable, el, renderSessionBar, requireSession, showNotice, showProblem, timeEl, type Row } from '../views/dom.js';
import { closeRuntime, renderRuntime } from '../views/model-runtime-view.js';
import { stateBadge } from '../views/license-state.js';
import { renderPackage } from '../views/package-view.js';

const player = new LicensePlayer({ workerUrl: workerUrl('license'), wasmUrl: WASM_URL, token: sessionToken });
/** License id → time (ms) until which its Open button waits after a 429. */
const waitUntil = new Map<string, number>();

const STEP_WORDS: Readonly<Record<string, string>> = {
  start: 'Starting the player…',
  keys: 'Fetching the service key…',
  download: 'Downloading the copy…',
  release: 'Releasing the license key…',
  read: 'Opening the copy in memory…',
};

function progressView(): { node: HTMLElement; update(p: OpenLicenseProgress): void } {
  const words = el('span', {}, 'Preparing the player…');
  const download = el('span', { class: 'meta' });
  const bar = el('progress', { 'aria-label': 'Opening progress' });
  return {
    node: el('div', { class: 'status-line', role: 'status' }, words, bar, download),
    update(p) {
      if (p.type === 'step') words.textContent = STEP_WORDS[p.step] ?? words.textContent;
      else if (p.type === 'downloaded') {
        download.textContent = p.total > 0 ? `Downloaded ${formatBytes(p.bytes)} of ${formatBytes(p.total)}` : `Downloaded ${formatBytes(p.bytes)}`;
      } else {
        bar.max = Math.max(p.total, 1);
        bar.value = p.bytes;
      }
    },
  };
}

function minutes(seconds: number): string {
  return seconds < 90 ? `${Math.ceil(seconds)} seconds` : `${Math.ceil(seconds / 60)} minutes`;
}

/** Shows why opening failed, in plain words. */
function showFailure(target: HTMLElement, err: unknown, license: License): void {
  // The token may have lapsed (a worker holds the one it was given): ask the session again; it ends the tab's session only when the service did.
  if (err instanceof ApiProblem && err.status === 401) void refreshSession();
  if (err instanceof ApiProblem && (err.code === 'LICENSE_REVOKED' || err.status === 410)) {
    showProblem(target, err, 'Revoked.');
    return;
  }
  if (err instanceof ApiProblem && err.status === 429) {
    const seconds = err.retryAfterSeconds ?? 60;
    waitUntil.set(license.licenseId, Date.now() + seconds * 1000);
    setTimeout(() => void loadLicenses(), seconds * 1000 + 500);
    const at = new Date(Date.now() + seconds * 1000).toLocaleTimeString(undefined, { timeStyle: 'short' });
    showProblem(target, err, `Rate limited. You can open it again in ${minutes(seconds)} (at ${at}).`);
    return;
  }
  if (err instanceof DamagedCopy) {
    const code = (err.cause as { code?: unknown } | undefined)?.code;
    target.replaceChildren(el('div', { class: 'notice error', role: 'alert' },
      el('p', {}, 'The downloaded copy is damaged or incomplete, so nothing from it is shown. Try opening it again; if it keeps failing, tell the seller.'),
      el('p', { class: 'meta' }, typeof code === 'string' ? `Code ${code}: ${err.message}` : err.message)));
    return;
  }
  if (err instanceof ApiProblem) {
    showProblem(target, err);
    return;
  }
  target.replaceChildren(el('div', { class: 'notice error', role: 'alert' },
    el('p', {}, 'The player could not open this copy.'), el('p', { class: 'meta' }, plainWords(err))));
}

/** Wipes the package on screen (buffers zero-filled, the worker ended, canvases and text removed). */
function closeShown(): void {
  closeRuntime();
  player.close();
  byId('package').replaceChildren();
  byId('viewer-status').replaceChildren();
  byId('viewer').hidden = true;
}

async function openLicense(license: License): Promise<void> {
  closeShown();
  const viewer = byId('viewer');
  const status = byId('viewer-status');
  viewer.hidden = false;
  byId('viewer-title').textContent = license.masterName;
  const progress = progressView();
  status.replaceChildren(progress.node);
  // One copy at a time: every Open waits until this one is done (the list is redrawn after).
  for (const other of document.querySelectorAll<HTMLButtonElement>('#license-list button')) other.disabled = true;
  viewer.setAttribute('aria-busy', 'true');
  try {
    const pkg = await player.open(license.licenseId, { onProgress: (p) => progress.update(p) });
    const runtime = renderPackage(byId('package'), pkg);
    if (player.resolver !== null) await renderRuntime(runtime, player.resolver);
    status.replaceChildren(el('div', { class: 'notice success', role: 'status' },
      el('p', {}, 'Opened in memory: every chunk authenticated and the service\'s signature verified.'),
      el('p', { class: 'actions' }, el('button', { type: 'button', class: 'secondary small', onclick: closeShown }, 'Close model'))));
    byId('viewer-title').focus();
  } catch (err) {
    showFailure(status, err, license);
  } finally {
    viewer.removeAttribute('aria-busy');
    await loadLicenses();
  }
}

function licenseRow(license: License): Row {
  const wait = (waitUntil.get(license.licenseId) ?? 0) - Date.now();
  // Revoked, suspended or expired: no copy or key is issued, so there is nothing to open.
  const revoked = license.revokedAt !== null || (license.state !== undefined && license.state !== 'active');
  const open = el('button', {
    type: 'button', class: 'small', disabled: revoked || wait > 0,
    'aria-label': `Open ${license.masterName}`, dataset: { open: license.licenseId },
  }, wait > 0 ? `Wait ${minutes(wait / 1000)}` : 'Open');
  open.addEventListener('click', () => void openLicense(license));
  return {
    dataset: { licenseId: license.licenseId },
    cells: [
      el('strong', {}, license.masterName), license.seller.name || license.seller.accountId,
      el('code', {}, license.licenseId), timeEl(license.issuedAt), String(license.releaseCount),
      stateBadge(license),
      open,
    ],
  };
}

async function loadLicenses(): Promise<void> {
  const target = byId('licenses');
  try {
    const { licenses } = await sessionApi.call<{ licenses: License[] }>('/api/licenses');
    if (licenses.length === 0) {
      showNotice(target, 'You have no licenses yet. When a seller licenses a model to your account, it appears here.');
      return;
    }
    target.replaceChildren(dataTable({
      id: 'license-list',
      columns: [{ label: 'Model' }, { label: 'Seller' }, { label: 'License' }, { label: 'Issued' },
        { label: 'Key releases', num: true }, { label: 'State' }, { label: 'Open', hidden: true }],
      rows: licenses.map(licenseRow),
    }));
  } catch (err) {
    showProblem(target, err);
  }
}

renderSessionBar();
window.addEventListener('pagehide', closeShown);
if (requireSession(byId('gate')) !== null) {
  byId('licenses-section').hidden = false;
  void loadLicenses();
}

// `/player`: the buyer's licenses and opening a license copy in memory.
//
// Opening a license (SPEC behaviour rule 4): download the copy (`cache: 'no-store'`), make a
// PlayerSession (its ephemeral X25519 key never leaves WebAssembly), release the license key
// sealed to that key, and stream the copy through the WASM reader. The decrypted bytes exist
// only in this page's memory: no service worker, no IndexedDB, no Cache API, no storage, no
// object URLs. The license key stays inside the session and is freed with it.
import {
  ApiProblem, api, authHeaders, dataTable, el, formatBytes, plainWords, problemFrom, renderSessionBar, requireSession,
  showNotice, showProblem, timeEl,
} from './common.js';
import { DamagedCopy, PackageAssembler, renderPackage } from './package-view.js';

let core = null;
let servicePublicKey = null;
/** The package on screen, wiped when another opens or the page goes away. */
let shown = null;
/** License id → time (ms) until which its Open button waits after a 429. */
const waitUntil = new Map();

/** Loads @iki/core and its WebAssembly module (once). */
async function loadCore() {
  if (core === null) {
    const module = await import('@iki/core');
    await module.loadWasm();
    core = module;
  }
  return core;
}

/** The key that signs license copies; the reader checks the copy was signed with it. */
async function licenseSigningKey(iki) {
  if (servicePublicKey === null) {
    const keys = await api('/api/keys/service');
    servicePublicKey = iki.fromBase64Url(keys.licenseSigningPublicKey, 32);
  }
  return servicePublicKey;
}

function progressView() {
  const words = el('span', {}, 'Preparing the player…');
  const download = el('span', { class: 'meta' });
  const bar = el('progress', { 'aria-label': 'Opening progress' });
  return {
    node: el('div', { class: 'status-line', role: 'status' }, words, bar, download),
    step(text) { words.textContent = text; },
    downloaded(bytes, total) {
      download.textContent = total > 0 ? `Downloaded ${formatBytes(bytes)} of ${formatBytes(total)}` : `Downloaded ${formatBytes(bytes)}`;
    },
    decoded(done, total) {
      bar.max = Math.max(total, 1);
      bar.value = done;
    },
  };
}

/** The response body, counting bytes as they arrive. */
function counted(body, onBytes) {
  let seen = 0;
  return body.pipeThrough(new TransformStream({
    transform(chunk, controller) {
      seen += chunk.byteLength;
      onBytes(seen);
      controller.enqueue(chunk);
    },
  }));
}

/** Releases the license key into `session`. */
async function releaseKey(iki, session, licenseId) {
  const release = await api(`/api/licenses/${licenseId}/key`, { method: 'POST',
    json: { publicKey: iki.toBase64Url(session.publicKey) } });
  session.acceptLicenseKey(licenseId, {
    ephemeral: iki.fromBase64Url(release.ephemeralPublicKey, 32),
    nonce: iki.fromBase64Url(release.nonce, 24),
    sealed: iki.fromBase64Url(release.sealedKey, 48),
  });
  return release;
}

/** Downloads, unlocks and reads the copy of `license`; resolves to the verified package. */
async function openCopy(license, progress) {
  progress.step('Loading the player module…');
  const iki = await loadCore();
  const signingKey = await licenseSigningKey(iki);
  progress.step('Downloading the copy…');
  const response = await fetch(`/api/licenses/${license.licenseId}/model`, {
    headers: authHeaders(), cache: 'no-store', credentials: 'omit',
  }).catch(() => { throw new ApiProblem(0, null); });
  if (!response.ok) throw await problemFrom(response);
  const total = Number(response.headers.get('content-length') ?? 0);
  const body = counted(response.body, (n) => progress.downloaded(n, total));
  const assembler = new PackageAssembler((done, all) => progress.decoded(done, all));
  let session = null;
  try {
    session = iki.PlayerSession.create();
    progress.step('Releasing the license key…');
    await releaseKey(iki, session, license.licenseId);
    progress.step('Opening the copy in memory…');
    try {
      for await (const event of iki.openLicenseCopy(body, session, signingKey)) assembler.add(event);
      return { assembler, pkg: assembler.result() };
    } catch (err) {
      throw err instanceof DamagedCopy ? err : Object.assign(new DamagedCopy(err?.message ?? String(err)), { cause: err });
    }
  } catch (err) {
    assembler.wipe();
    body.cancel().catch(() => {});
    throw err;
  } finally {
    session?.free();
  }
}

function minutes(seconds) {
  return seconds < 90 ? `${Math.ceil(seconds)} seconds` : `${Math.ceil(seconds / 60)} minutes`;
}

/** Shows why opening failed, in plain words. */
function showFailure(target, err, license) {
  if (err instanceof ApiProblem && (err.code === 'LICENSE_REVOKED' || err.status === 410)) {
    showProblem(target, err, 'Revoked.');
    return;
  }
  if (err instanceof ApiProblem && err.status === 429) {
    const seconds = err.retryAfterSeconds ?? 60;
    waitUntil.set(license.licenseId, Date.now() + seconds * 1000);
    setTimeout(loadLicenses, seconds * 1000 + 500);
    const at = new Date(Date.now() + seconds * 1000).toLocaleTimeString(undefined, { timeStyle: 'short' });
    showProblem(target, err, `Rate limited. You can open it again in ${minutes(seconds)} (at ${at}).`);
    return;
  }
  if (err instanceof DamagedCopy) {
    const code = err.cause?.code;
    target.replaceChildren(el('div', { class: 'notice error', role: 'alert' },
      el('p', {}, 'The downloaded copy is damaged or incomplete, so nothing from it is shown. Try opening it again; if it keeps failing, tell the seller.'),
      el('p', { class: 'meta' }, code === undefined ? err.message : `Code ${code}: ${err.message}`)));
    return;
  }
  if (err instanceof ApiProblem) {
    showProblem(target, err);
    return;
  }
  target.replaceChildren(el('div', { class: 'notice error', role: 'alert' },
    el('p', {}, 'The player could not open this copy.'), el('p', { class: 'meta' }, plainWords(err))));
}

/** Wipes the package on screen (buffers zero-filled, canvases and text removed). */
function closeShown() {
  shown?.assembler.wipe();
  shown = null;
  document.getElementById('package').replaceChildren();
  document.getElementById('viewer-status').replaceChildren();
  document.getElementById('viewer').hidden = true;
}

async function openLicense(license) {
  closeShown();
  const viewer = document.getElementById('viewer');
  const status = document.getElementById('viewer-status');
  viewer.hidden = false;
  document.getElementById('viewer-title').textContent = license.masterName;
  const progress = progressView();
  status.replaceChildren(progress.node);
  // One copy at a time: every Open waits until this one is done (the list is redrawn after).
  for (const other of document.querySelectorAll('#license-list button')) other.disabled = true;
  document.getElementById('viewer').setAttribute('aria-busy', 'true');
  try {
    shown = await openCopy(license, progress);
    renderPackage(document.getElementById('package'), shown.pkg);
    status.replaceChildren(el('div', { class: 'notice success', role: 'status' },
      el('p', {}, `Opened in memory: every chunk authenticated and the service's signature verified.`),
      el('p', { class: 'actions' }, el('button', { type: 'button', class: 'secondary small', onclick: closeShown }, 'Close model'))));
    document.getElementById('viewer-title').focus();
  } catch (err) {
    showFailure(status, err, license);
  } finally {
    document.getElementById('viewer').removeAttribute('aria-busy');
    await loadLicenses();
  }
}

function licenseRow(license) {
  const wait = (waitUntil.get(license.licenseId) ?? 0) - Date.now();
  const revoked = license.revokedAt !== null;
  const open = el('button', {
    type: 'button', class: 'small', disabled: revoked || wait > 0,
    'aria-label': `Open ${license.masterName}`, dataset: { open: license.licenseId },
  }, wait > 0 ? `Wait ${minutes(wait / 1000)}` : 'Open');
  open.addEventListener('click', () => openLicense(license));
  return {
    dataset: { licenseId: license.licenseId },
    cells: [
      el('strong', {}, license.masterName), license.seller.name || license.seller.accountId,
      el('code', {}, license.licenseId), timeEl(license.issuedAt), String(license.releaseCount),
      revoked ? el('span', { class: 'badge revoked' }, 'revoked') : el('span', { class: 'badge active' }, 'active'),
      open,
    ],
  };
}

async function loadLicenses() {
  const target = document.getElementById('licenses');
  try {
    const { licenses } = await api('/api/licenses');
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
if (requireSession(document.getElementById('gate')) !== null) {
  document.getElementById('licenses-section').hidden = false;
  loadLicenses();
}

/**
 * `/player`: the buyer's licenses and opening a license copy in memory (SPEC behaviour rule 4).
 *
 * The work happens in a Web Worker (`LicensePlayer` of `@iki/core/browser`): it downloads the
 * copy (`cache: 'no-store'`), makes the ephemeral X25519 key inside its own WASM instance,
 * has the license key released to it, and reads the copy; this page receives only the
 * verified files it draws, moved out of the worker. The decrypted bytes exist only in memory:
 * no IndexedDB, no Cache API, no storage, no object URLs. The built-in runtime loads the model
 * through the package resolver (`player.resolver`); other runtimes on this page can load it by
 * URL through the package service worker, which asks this page for every file and keeps
 * nothing (package-urls-view.ts). Closing the model (or leaving the page) zero-fills the
 * files, ends the URLs and terminates the worker.
 *
 * The model closes by itself wherever its buyer's right to it ends (issue 24 item 6): signing
 * out in any tab, "sign out everywhere", a refused refresh (all of which end this tab's session,
 * `onSessionChange`), and a revocation the page sees (the license list, an open refused as
 * revoked) close it, and a revocation is passed to every other tab of the browser on the
 * `iki.player` BroadcastChannel so theirs close too. A revoked license says when, and why when
 * the seller gave a reason.
 */
import {
  ApiProblem, DamagedCopy, LicensePlayer, licenseDeviceId, onSessionChange, refreshSession, sessionApi, sessionToken,
  type License, type LicenseEvent, type OpenLicenseProgress,
} from '@iki/core/browser';
// uPlot's style sheet, for the activity plots (loaded with them when first shown; see seller-activity-chart.ts).
import 'uplot/dist/uPlot.min.css';
import { errorWords } from '../i18n/errors.js';
import { formatNumber, formatSize, locale, type MessageKey, t, tParts } from '../i18n/index.js';
import { WASM_URL, workerUrl } from '../views/assets.js';
import { byId, dataTable, el, renderSessionBar, requireSession, showNotice, showProblem, timeEl, type Row } from '../views/dom.js';
import { renderEmbedInfo } from '../views/embed-info.js';
import { closeRuntime, renderRuntime } from '../views/model-runtime-view.js';
import { closePackageUrls, renderPackageUrls, startPackageUrls } from '../views/package-urls-view.js';
import { stateBadge } from '../views/license-state.js';
import { licenseTimeline } from '../views/seller-activity-timeline.js';
import { renderPackage } from '../views/package-view.js';

// The device id (issue 29): one random seed in localStorage, the page's only stored item (ts/src/browser/device-id.ts).
const player = new LicensePlayer({ workerUrl: workerUrl('license'), wasmUrl: WASM_URL, token: sessionToken, deviceId: (id) => licenseDeviceId(id) });
/** License id → time (ms) until which its Open button waits after a 429. */
const waitUntil = new Map<string, number>();
/** The license whose copy is open (or opening) in this tab. */
let openId: string | null = null;
/** Tells this browser's other tabs which license was seen revoked. */
const tabs = typeof BroadcastChannel === 'undefined' ? null : new BroadcastChannel('iki.player');

const STEP_WORDS: Readonly<Record<string, MessageKey>> = {
  start: 'player.step.start',
  keys: 'player.step.keys',
  download: 'player.step.download',
  release: 'player.step.release',
  read: 'player.step.read',
};

function progressView(): { node: HTMLElement; update(p: OpenLicenseProgress): void } {
  const words = el('span', {}, t('player.step.prepare'));
  const download = el('span', { class: 'meta' });
  const bar = el('progress', { 'aria-label': t('player.progress') });
  return {
    node: el('div', { class: 'status-line', role: 'status' }, words, bar, download),
    update(p) {
      if (p.type === 'step') {
        const key = STEP_WORDS[p.step];
        if (key !== undefined) words.textContent = t(key);
      }
      else if (p.type === 'downloaded') {
        download.textContent = p.total > 0 ? t('player.downloadedOf', { bytes: formatSize(p.bytes), total: formatSize(p.total) })
          : t('player.downloaded', { bytes: formatSize(p.bytes) });
      } else {
        bar.max = Math.max(p.total, 1);
        bar.value = p.bytes;
      }
    },
  };
}

function minutes(seconds: number): string {
  return seconds < 90 ? t('wait.seconds', { n: Math.ceil(seconds) }) : t('wait.minutes', { n: Math.ceil(seconds / 60) });
}

/** Shows why opening failed, in plain words. */
function showFailure(target: HTMLElement, err: unknown, license: License): void {
  // The token may have lapsed (a worker holds the one it was given): ask the session again; it ends the tab's session only when the service did.
  if (err instanceof ApiProblem && err.status === 401) void refreshSession();
  if (err instanceof ApiProblem && (err.code === 'LICENSE_REVOKED' || err.status === 410)) {
    showProblem(target, err, t('player.revokedLead'));
    tabs?.postMessage({ revoked: [license.licenseId] });
    void revocationWords(license.licenseId, license.revokedAt).then((words) => {
      target.querySelector('.notice')?.append(el('p', { 'data-revocation': '' }, words));
    });
    return;
  }
  if (err instanceof ApiProblem && err.status === 429) {
    const seconds = err.retryAfterSeconds ?? 60;
    waitUntil.set(license.licenseId, Date.now() + seconds * 1000);
    setTimeout(() => void loadLicenses(), seconds * 1000 + 500);
    const at = new Intl.DateTimeFormat(locale, { timeStyle: 'short' }).format(new Date(Date.now() + seconds * 1000));
    showProblem(target, err, t('player.rateLimited', { wait: minutes(seconds), at }));
    return;
  }
  if (err instanceof DamagedCopy) {
    const code = (err.cause as { code?: unknown } | undefined)?.code;
    target.replaceChildren(el('div', { class: 'notice error', role: 'alert' },
      el('p', {}, t('player.damaged')),
      el('p', { class: 'meta' }, typeof code === 'string' ? `${t('common.codeLine', { code })} ${err.message}` : err.message)));
    return;
  }
  if (err instanceof ApiProblem) {
    showProblem(target, err);
    return;
  }
  target.replaceChildren(el('div', { class: 'notice error', role: 'alert' },
    el('p', {}, t('player.couldNotOpen')), el('p', { class: 'meta' }, errorWords(err))));
}

/** Wipes the package on screen (buffers zero-filled, the worker ended, canvases and text removed). */
function closeShown(): void {
  closePackageUrls();
  closeRuntime();
  player.close();
  openId = null;
  delete document.body.dataset['openLicense'];
  byId('package').replaceChildren();
  byId('viewer-status').replaceChildren();
  byId('viewer').hidden = true;
}

/** When a license was revoked and the seller's reason, if any, as a sentence. */
async function revocationWords(licenseId: string, revokedAt: string | null): Promise<(string | HTMLTimeElement)[]> {
  let reason: string | undefined;
  try {
    const { events } = await sessionApi.call<{ events: LicenseEvent[] }>(`/api/licenses/${encodeURIComponent(licenseId)}/events?limit=50`);
    const revoke = events.find((e) => e.kind === 'revoke');
    const given = revoke?.details?.['reason'];
    if (typeof given === 'string' && given.trim() !== '') reason = given.trim();
    revokedAt ??= revoke?.at ?? null;
  } catch {
    // The history could not be read: the revocation is still said, without its reason.
  }
  // The time as a <time> with its ISO form in a tooltip; two whole sentences side by side
  // (Japanese sets sentences without a space).
  const when = revokedAt === null ? [] : [...tParts<HTMLTimeElement>('player.revokedWhen', { when: timeEl(revokedAt) }), locale === 'ja' ? '' : ' '];
  return [...when, reason === undefined ? t('player.revokedNoReason') : t('player.revokedReason', { reason })];
}

/** A license seen revoked: its copy closes here and in every other tab, and the buyer is told when and why. */
async function revokedSeen(licenseId: string, revokedAt: string | null, tell = true): Promise<void> {
  if (tell) tabs?.postMessage({ revoked: [licenseId] });
  if (openId !== licenseId) return;
  closeShown();
  const viewer = byId('viewer');
  viewer.hidden = false;
  byId('viewer-status').replaceChildren(el('div', { class: 'notice error', role: 'alert', 'data-revoked': licenseId },
    el('p', {}, t('player.closedRevoked')), el('p', {}, await revocationWords(licenseId, revokedAt))));
}

/** The session ended (signed out here or in another tab, everywhere, or a refused refresh): nothing stays open. */
function sessionEnded(): void {
  closeShown();
  byId('licenses-section').hidden = true;
  byId('licenses').replaceChildren();
  requireSession(byId('gate'));
}

async function openLicense(license: License): Promise<void> {
  closeShown();
  const viewer = byId('viewer');
  const status = byId('viewer-status');
  viewer.hidden = false;
  byId('viewer-title').textContent = license.masterName;
  const progress = progressView();
  status.replaceChildren(progress.node);
  openId = license.licenseId;
  // One copy at a time: every Open waits until this one is done (the list is redrawn after).
  for (const other of document.querySelectorAll<HTMLButtonElement>('#license-list button')) other.disabled = true;
  viewer.setAttribute('aria-busy', 'true');
  try {
    const pkg = await player.open(license.licenseId, { onProgress: (p) => progress.update(p) });
    const runtime = renderPackage(byId('package'), pkg);
    if (player.resolver !== null) {
      const urls = el('div', { id: 'package-urls' });
      runtime.before(urls);
      await renderPackageUrls(urls, player.resolver, license.licenseId, (sentence) => {
        closeShown();
        byId('viewer').hidden = false;
        showNotice(byId('viewer-status'), sentence, 'error');
        void loadLicenses();
      });
      await renderRuntime(runtime, player.resolver);
    }
    document.body.dataset['openLicense'] = license.licenseId;
    status.replaceChildren(el('div', { class: 'notice success', role: 'status' },
      el('p', {}, t('player.opened')),
      el('p', { class: 'actions' }, el('button', { type: 'button', class: 'secondary small', onclick: closeShown }, t('player.close')))));
    byId('viewer-title').focus();
  } catch (err) {
    // Nothing is open: a revocation seen later must not replace this answer with "closed".
    openId = null;
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
    'aria-label': t('player.openLabel', { name: license.masterName }), dataset: { open: license.licenseId },
  }, wait > 0 ? t('player.wait', { wait: minutes(wait / 1000) }) : t('player.open'));
  open.addEventListener('click', () => void openLicense(license));
  // Issue 29 item 4: the buyer sees what the seller sees of this license's releases.
  const history = el('button', { type: 'button', class: 'secondary small', 'aria-label': t('activity.buyer.historyLabel', { name: license.masterName }),
    dataset: { history: license.licenseId }, onclick: () => showReleaseHistory(license) }, t('activity.buyer.history'));
  return {
    dataset: { licenseId: license.licenseId },
    cells: [
      el('strong', {}, license.masterName), license.seller.name || license.seller.accountId,
      el('code', {}, license.licenseId), timeEl(license.issuedAt), formatNumber(license.releaseCount),
      stateBadge(license),
      el('div', { class: 'actions' }, open, history),
    ],
  };
}

/** The license's release history under the list (its timeline, views/seller-activity-timeline.ts). */
function showReleaseHistory(license: License): void {
  const slot = byId('release-history');
  const timeline = licenseTimeline({ licenseId: license.licenseId, lead: t('activity.buyer.lead'), onClose: () => slot.replaceChildren() });
  slot.replaceChildren(timeline);
  timeline.scrollIntoView({ block: 'start' });
  timeline.querySelector<HTMLElement>('h3')?.focus({ preventScroll: true });
}

async function loadLicenses(): Promise<void> {
  const target = byId('licenses');
  try {
    const { licenses } = await sessionApi.call<{ licenses: License[] }>('/api/licenses');
    // Every revoked license is passed on: another tab may have it open.
    const revoked = licenses.filter((l) => l.revokedAt !== null);
    if (revoked.length > 0) tabs?.postMessage({ revoked: revoked.map((l) => l.licenseId) });
    const shown = revoked.find((l) => l.licenseId === openId);
    if (shown !== undefined) void revokedSeen(shown.licenseId, shown.revokedAt, false);
    if (licenses.length === 0) {
      showNotice(target, t('player.none'));
      return;
    }
    target.replaceChildren(dataTable({
      id: 'license-list',
      columns: [{ label: t('player.col.model') }, { label: t('player.col.seller') }, { label: t('player.col.license') }, { label: t('player.col.issued') },
        { label: t('player.col.releases'), num: true }, { label: t('player.col.state') }, { label: t('player.col.open'), hidden: true }],
      rows: licenses.map(licenseRow),
    }));
  } catch (err) {
    showProblem(target, err);
  }
}

renderSessionBar();
window.addEventListener('pagehide', closeShown);
onSessionChange((session) => { if (session === null) sessionEnded(); });
if (tabs !== null) {
  tabs.onmessage = (event: MessageEvent) => {
    const revoked = (event.data as { revoked?: unknown } | null)?.revoked;
    if (Array.isArray(revoked) && openId !== null && revoked.includes(openId)) void revokedSeen(openId, null, false);
  };
}
// Back to the page after a while: the list is read again, so a revocation meanwhile closes the model.
document.addEventListener('visibilitychange', () => {
  if (document.visibilityState === 'visible' && !byId('licenses-section').hidden) void loadLicenses();
});
if (requireSession(byId('gate')) !== null) {
  byId('licenses-section').hidden = false;
  startPackageUrls();
  void loadLicenses();
  void renderEmbedInfo(byId('main'));
}

/**
 * The opened copy's package URLs on `/player` (issue 25 item 1): registers the package
 * service worker for this page (`/assets/js/package-sw.js`, scope `/player`), serves the open
 * copy under `/package/<license>/<open-id>/` while it is open, and shows the model's URL so a
 * runtime (PixiJS `Assets.load`, a Cubism loader, `fetch`) can load it unchanged.
 *
 * The URLs stop answering when the copy is closed, the page goes away, the session ends (this
 * tab's or, through session.ts's BroadcastChannel, another tab's sign-out) or the service no
 * longer lets this buyer open the license (revoked: checked before answering, at most every
 * two seconds). Page text is in the
 * message catalogs (`player.urls.*`).
 */
import { ApiProblem, PackageUrls, onSessionChange, sessionApi, type License, type PackageResolver, type ServedPackage } from '@iki/core/browser';
import { t } from '../i18n/index.js';
import { el } from './dom.js';

/** The service worker bundle (scripts/build-web.mjs, server/web/service-workers/package.ts). */
const SERVICE_WORKER_URL = '/assets/js/package-sw.js';
const SCOPE = '/player';
/** How long a "the license may still be opened" answer counts. */
const RECHECK_MS = 2000;
/** The reason this view gives when the session ends (any other ending is the library's license check). */
const SESSION_ENDED = 'the session ended';

let urls: Promise<PackageUrls> | null = null;
let served: ServedPackage | null = null;
let stopWatching: (() => void) | null = null;

/** Whether the buyer may still open `licenseId` (false once revoked or signed out). */
async function stillValid(licenseId: string): Promise<boolean> {
  try {
    const license = await sessionApi.call<License>(`/api/licenses/${encodeURIComponent(licenseId)}`);
    return license.revokedAt === null;
  } catch (err) {
    // The service said no (signed out, revoked, gone): end. A network failure keeps the copy.
    if (err instanceof ApiProblem && err.status >= 400 && err.status < 500) return false;
    return true;
  }
}

/**
 * Registers the service worker and starts answering for this page, before any copy is open:
 * a request the worker forwards to this page then gets its 404 at once, and the first Open
 * does not wait for the registration.
 */
export function startPackageUrls(): void {
  urls ??= PackageUrls.register({ serviceWorkerUrl: SERVICE_WORKER_URL, scope: SCOPE });
  urls.catch(() => {
    urls = null;
  });
}

/** Stops serving the open copy (its URLs answer 410). */
export function closePackageUrls(): void {
  stopWatching?.();
  stopWatching = null;
  served?.close();
  served = null;
}

/**
 * Serves `resolver`'s files for `licenseId` and renders their model URL into `target`;
 * `onEnded` gets a sentence to show when the copy ends for a reason other than closing it here.
 */
export async function renderPackageUrls(target: HTMLElement, resolver: PackageResolver, licenseId: string,
  onEnded: (sentence: string) => void): Promise<ServedPackage | null> {
  closePackageUrls();
  try {
    startPackageUrls();
    const registered = await (urls as Promise<PackageUrls>);
    const copy = registered.serve(resolver, {
      licenseId, stillValid: () => stillValid(licenseId), recheckMs: RECHECK_MS,
      onEnded: (reason) => onEnded(t(reason === SESSION_ENDED ? 'player.urls.endedSession' : 'player.urls.endedLicense')),
    });
    served = copy;
    stopWatching = onSessionChange((session) => {
      if (session === null) registered.closeAll(SESSION_ENDED);
    });
    target.replaceChildren(el('h3', {}, t('player.urls.heading')), el('p', { class: 'meta' }, t('player.urls.lead')),
      el('dl', { class: 'facts' }, el('dt', {}, t('player.urls.model')),
        el('dd', {}, el('code', { id: 'package-model-url', class: 'mono' }, copy.modelUrl))));
    return copy;
  } catch (err) {
    urls = null;
    target.replaceChildren(el('p', { class: 'meta' }, t('player.urls.unavailable', { reason: err instanceof Error ? err.message : String(err) })));
    return null;
  }
}

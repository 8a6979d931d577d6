/**
 * Package URLs, page side (issue 25 item 1): while a license copy is open, its files are
 * reachable at same-origin URLs, `<base>/package/<license>/<open-id>/<path>`, so a model
 * runtime loads it unchanged (`fetch`, `XMLHttpRequest`, `<img>`, PixiJS `Assets.load`, and
 * the relative references inside `model3.json`). The service worker (`package-sw.ts`) asks
 * the page that opened the copy for every request; this module answers from the opened
 * package's memory (a {@link PackageResolver}) and from nothing else.
 *
 * - The open id is 128 random bits, new for every opening; only this page knows it, and the
 *   worker asks only the page a request came from, so another tab gets nothing.
 * - {@link ServedPackage.close} (the copy closed), a session that ended, or a license the
 *   service no longer lets this buyer open (checked before answering, at most once per
 *   `recheckMs`, and whenever the session changes) make every URL of the copy answer 410.
 * - A texture leaves as its pixels (a copy, transferred): to the served copy's PNG encoder
 *   when it has one (the license worker's WASM, which answers the service worker's port
 *   itself, package-png.ts), else to the service worker, which encodes the PNG; either
 *   zero-fills them once encoded. Other files leave as a copy of their bytes. Nothing is
 *   cached anywhere.
 */
import type { PngEncoder } from './package-png.js';
import type { PackageAnswer, PackageRequest } from './package-sw.js';
import type { PackageResolver } from './package-resolver.js';
import { NotInPackage } from './package-resolver.js';
import { trustedScriptUrl } from './trusted-worker.js';

/** Where the service worker comes from and which pages it controls. */
export interface PackageUrlsOptions {
  /** The bundled service worker (an entry that calls `servePackageUrls(self)`), same origin. */
  serviceWorkerUrl: string | URL;
  /**
   * The pages it controls (a path prefix); the script's directory by default. A script outside
   * the scope must be served with `Service-Worker-Allowed`. Package URLs live under
   * `new URL('package/', scope)`.
   */
  scope?: string;
  /** How long to wait for the worker to control this page (ms); 10 s by default. */
  controlTimeoutMs?: number;
}

/** How one opened copy is served. */
export interface ServeOptions {
  /** The license id (the first path segment). */
  licenseId: string;
  /**
   * Whether the copy may still be shown (the session is alive and the license not revoked).
   * Asked before a request is answered, at most once per {@link recheckMs}; false closes the copy.
   */
  stillValid?: () => Promise<boolean>;
  /** How long a `stillValid` answer counts (ms); 2 s by default. */
  recheckMs?: number;
  /** Called once when the copy stops being served for a reason other than `close()`. */
  onEnded?: (reason: string) => void;
  /**
   * Encodes textures off the page's main thread and answers the service worker itself; the
   * resolver's own (`PackageResolver.pngEncoder`, set by `LicensePlayer` to its worker) by
   * default. Without one the service worker encodes in JavaScript.
   */
  pngEncoder?: PngEncoder;
}

/** One opened copy's URLs. */
export interface ServedPackage {
  /** `<origin>/…/package/<license>/<open-id>/`: every file's URL starts with it. */
  readonly baseUrl: string;
  /** The model JSON's URL (what a runtime loads), or the base when the package has none. */
  readonly modelUrl: string;
  /** The URL of a package path. */
  urlOf(path: string): string;
  /** Whether the URLs still answer. */
  readonly open: boolean;
  /** Stops answering (410 from now on). */
  close(): void;
}

interface Entry {
  resolver: PackageResolver;
  licenseId: string;
  options: ServeOptions;
  checkedAt: number;
  checking: Promise<boolean> | null;
  closed: boolean;
}

/** A random 128-bit id, base64url. */
function openId(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  return btoa(String.fromCharCode(...bytes)).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
}

/** Registers the package URLs' service worker and answers its requests for this page. */
export class PackageUrls {
  /** `new URL('package/', scope)`. */
  readonly packageBase: string;
  readonly #entries = new Map<string, Entry>();
  /** Open ids closed on this page: they answer 410, not 404. */
  readonly #ended = new Set<string>();

  private constructor(packageBase: string) {
    this.packageBase = packageBase;
    navigator.serviceWorker.addEventListener('message', (event) => this.#onMessage(event));
    navigator.serviceWorker.startMessages();
  }

  /** Registers the worker and waits until it controls this page. */
  static async register(options: PackageUrlsOptions): Promise<PackageUrls> {
    if (!('serviceWorker' in navigator)) throw new Error('this browser has no service workers (a secure context is needed)');
    const script = trustedScriptUrl(String(options.serviceWorkerUrl));
    const registration = await navigator.serviceWorker.register(script as string, {
      updateViaCache: 'none', ...(options.scope === undefined ? {} : { scope: options.scope }) });
    if (navigator.serviceWorker.controller === null) {
      await new Promise<void>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error('the package service worker did not take control of this page')),
          options.controlTimeoutMs ?? 10_000);
        navigator.serviceWorker.addEventListener('controllerchange', () => {
          clearTimeout(timer);
          resolve();
        }, { once: true });
        // Active already but not controlling (a reload that bypassed it): ask it to claim.
        registration.active?.postMessage('iki-claim');
      });
    }
    return new PackageUrls(new URL('package/', registration.scope).href);
  }

  /** Serves `resolver`'s files under a new open id until {@link ServedPackage.close}. */
  serve(resolver: PackageResolver, options: ServeOptions): ServedPackage {
    if (!/^[A-Za-z0-9_-]{1,128}$/.test(options.licenseId)) throw new TypeError('licenseId must be a license id');
    const id = openId();
    const entry: Entry = { resolver, licenseId: options.licenseId, options, checkedAt: Date.now(), checking: null, closed: false };
    this.#entries.set(id, entry);
    const baseUrl = `${this.packageBase}${options.licenseId}/${id}/`;
    const urlOf = (path: string): string => new URL(path.split('/').map(encodeURIComponent).join('/'), baseUrl).href;
    return {
      baseUrl,
      modelUrl: resolver.modelPath === undefined ? baseUrl : urlOf(resolver.modelPath),
      urlOf,
      get open() { return !entry.closed; },
      close: () => this.#end(id, entry),
    };
  }

  /** Closes every copy this page serves. */
  closeAll(reason: string): void {
    for (const [id, entry] of [...this.#entries]) this.#end(id, entry, reason);
  }

  /** Stops serving `id`; `reason` (not for `close()`) goes to `onEnded`. */
  #end(id: string, entry: Entry, reason?: string): void {
    if (entry.closed) return;
    entry.closed = true;
    this.#entries.delete(id);
    this.#ended.add(id);
    if (reason !== undefined) entry.options.onEnded?.(reason);
  }

  /** Whether `entry` may still answer (asks `stillValid` when the last answer is stale). */
  async #valid(id: string, entry: Entry): Promise<boolean> {
    const check = entry.options.stillValid;
    if (check === undefined) return true;
    if (Date.now() - entry.checkedAt < (entry.options.recheckMs ?? 2000) && entry.checking === null) return true;
    entry.checking ??= check().catch(() => true).finally(() => {
      entry.checking = null;
      entry.checkedAt = Date.now();
    });
    const ok = await entry.checking;
    if (!ok) this.#end(id, entry, 'the license or the session ended');
    return ok && !entry.closed;
  }

  async #onMessage(event: MessageEvent): Promise<void> {
    const data = event.data as PackageRequest | undefined;
    const port = event.ports[0];
    if (port === undefined || data?.type !== 'iki-package-request' || event.origin !== location.origin) return;
    const reply = (answer: PackageAnswer, transfer: Transferable[] = []): void => port.postMessage(answer, transfer);
    const entry = this.#entries.get(data.openId);
    if (entry === undefined || entry.licenseId !== data.licenseId) {
      reply(this.#ended.has(data.openId)
        ? { status: 410, reason: 'this copy was closed' }
        : { status: 404, reason: 'no copy is open here under this URL' });
      return;
    }
    if (!(await this.#valid(data.openId, entry))) {
      reply({ status: 410, reason: 'this copy was closed' });
      return;
    }
    try {
      const file = entry.resolver.file(new URL(data.path, entry.resolver.baseUrl).href);
      const body = file.bytes.slice().buffer;
      const { info } = file;
      const width = info.meta?.width;
      const height = info.meta?.height;
      const encoder = entry.options.pngEncoder ?? entry.resolver.pngEncoder;
      if (info.encoding === 'rgba8' && width !== undefined && height !== undefined && encoder !== undefined && data.method === 'GET') {
        // The port goes with the pixels: the encoder answers the service worker directly.
        encoder({ width, height, pixels: body, port });
      } else if (info.encoding === 'rgba8' && width !== undefined && height !== undefined) {
        reply({ status: 200, rgba8: { width, height }, body }, [body]);
      } else {
        reply({ status: 200, contentType: info.type || 'application/octet-stream', body }, [body]);
      }
    } catch (err) {
      reply({ status: 404, reason: err instanceof NotInPackage ? err.message : 'not a file of the package' });
      if (!(err instanceof NotInPackage)) throw err;
    }
  }
}

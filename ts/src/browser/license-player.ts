/**
 * The player, page side: opens a license copy in a Web Worker of its own (`license-copy.ts`
 * does the work there) and holds the verified package the page shows. One worker, with one
 * WASM instance, per opened copy: {@link LicensePlayer.close} zero-fills the package's
 * buffers and terminates the worker, dropping its whole memory. The page's main thread never
 * loads WebAssembly, never sees the license key and never receives the encrypted copy.
 */
import { ApiProblem } from './api.js';
import type { LicenseTasks, OpenLicenseProgress } from './license-copy.js';
import { wipePackage, type OpenedPackage } from './package-assembler.js';
import { pngTransfers, type PngRequest } from './package-png.js';
import { PackageResolver } from './package-resolver.js';
import { startModuleWorker } from './trusted-worker.js';
import { WorkerClient } from './worker-client.js';

export type { OpenLicenseProgress } from './license-copy.js';

/** Where the player's worker and WASM come from, and whose session it uses. */
export interface LicensePlayerOptions {
  /** The bundled license worker (an entry that calls `exposeTasks(licenseTasks)`), same origin. */
  workerUrl: string | URL;
  /** The `.wasm` the worker instantiates (a relative URL is resolved against the page). */
  wasmUrl: string | URL;
  /** The signed-in buyer's access token, or null. */
  token: () => string | null;
  /** The service's origin; the page's own when omitted. */
  baseUrl?: string;
  /**
   * The player's device id for a license, sent with its key release and copy download
   * (`licenseDeviceId` of device-id.ts keeps one seed in `localStorage`); none when omitted or null.
   */
  deviceId?: (licenseId: string) => Promise<string | null>;
}

/** Opens one license copy at a time, each in a fresh worker. */
export class LicensePlayer {
  readonly #options: LicensePlayerOptions;
  #worker: WorkerClient<LicenseTasks> | null = null;
  #shown: OpenedPackage | null = null;
  #resolver: PackageResolver | null = null;

  constructor(options: LicensePlayerOptions) {
    this.#options = options;
  }

  /** The package on screen, if any. */
  get shown(): OpenedPackage | null {
    return this.#shown;
  }

  /**
   * The package on screen as a runtime loads it (`resolve(path) -> Response`, a scoped
   * `fetch`, textures as `ImageBitmap`, sounds as `AudioBuffer`; package-resolver.ts), or
   * null when nothing is open. Closing the player closes it.
   */
  get resolver(): PackageResolver | null {
    return this.#resolver;
  }

  /** `resolver.resolve(path)` of the package on screen; a 404 `Response` when nothing is open. */
  resolve(path: string): Response {
    return this.#resolver?.resolve(path)
      ?? new Response('iki: no package is open\n', { status: 404, statusText: 'Not Found' });
  }

  /**
   * Closes what is open, then downloads, unlocks and reads `licenseId` in a new worker.
   * Rejects with an `ApiProblem` (the service refused or could not be reached), a
   * `DamagedCopy` (the copy did not read back), or an `AbortError` (cancelled, or closed).
   */
  async open(licenseId: string, options: { onProgress?: (update: OpenLicenseProgress) => void; signal?: AbortSignal } = {}):
  Promise<OpenedPackage> {
    this.close();
    const accessToken = this.#options.token();
    if (accessToken === null) {
      throw ApiProblem.fromAnswer(401, { error: { code: 'UNAUTHENTICATED', message: 'sign in to open a license' } });
    }
    options.onProgress?.({ type: 'step', step: 'start' });
    // Resolved against the page: the worker would resolve a relative URL against its own.
    const wasmUrl = new URL(String(this.#options.wasmUrl), globalThis.location.href).href;
    // No id (storage blocked, no WebCrypto) is no reason not to open: the service counts the release without one.
    const deviceId = (await this.#options.deviceId?.(licenseId).catch(() => null)) ?? null;
    const worker = new WorkerClient<LicenseTasks>(startModuleWorker(this.#options.workerUrl, 'iki-license'), { wasmUrl });
    this.#worker = worker;
    try {
      const pkg = await worker.run('openLicenseCopy', {
        licenseId, accessToken, ...(this.#options.baseUrl === undefined ? {} : { baseUrl: this.#options.baseUrl }),
        ...(deviceId === null ? {} : { deviceId }),
      }, options);
      if (this.#worker !== worker) {
        // Closed while the result was on its way: nothing of it is kept.
        wipePackage(pkg);
        throw new DOMException('the player was closed', 'AbortError');
      }
      this.#shown = pkg;
      // Textures asked for by package URL are encoded in this copy's worker (package-png.ts):
      // the pixels and the service worker's port are moved there, and the worker answers.
      const pngEncoder = (request: PngRequest): void => {
        worker.run('answerPng', request, { transfer: pngTransfers(request) }).catch(() => {
          // The worker was closed before the request reached it: the copy is closed.
          if (request.pixels.byteLength === 0) return;
          new Uint8Array(request.pixels).fill(0);
          request.port.postMessage({ status: 410, reason: 'this copy was closed' });
        });
      };
      this.#resolver = new PackageResolver(pkg, { id: licenseId, pngEncoder });
      return pkg;
    } catch (err) {
      if (this.#worker === worker) this.close();
      throw err;
    }
  }

  /**
   * Zero-fills the package on screen and terminates its worker. The license key was already
   * freed (zeroized by Rust's drop) inside the worker's WASM when the copy had been read;
   * ending the worker drops that whole instance.
   */
  close(): void {
    this.#resolver?.close();
    this.#resolver = null;
    if (this.#shown !== null) wipePackage(this.#shown);
    this.#shown = null;
    this.#worker?.terminate();
    this.#worker = null;
  }
}

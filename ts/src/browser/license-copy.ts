/**
 * Opening a license copy, as a worker task (SPEC behaviour rule 4; threat model item 5: the
 * player never writes decrypted bytes anywhere). Runs inside a Web Worker with its own WASM
 * instance (`worker-host.ts`):
 *
 * 1. `GET /api/keys/service`: the key that signs license copies (the reader refuses any other);
 * 2. `GET /api/licenses/{id}/model`: the copy, streamed (`cache: 'no-store'`), resumed from
 *    where it broke when the connection is cut (`resumable.ts`);
 * 3. a `PlayerSession` makes its ephemeral X25519 key pair inside this worker's WASM, and
 *    `POST /api/licenses/{id}/key` answers the license key sealed to it, opened inside, once;
 * 4. the copy streams through the WASM reader (every chunk authenticated, inflated, the
 *    signature checked at the end) into one buffer per file.
 *
 * The page gets only the verified package, its buffers transferred (moved, not copied). The
 * license key never leaves WASM: it is freed, and zeroized by Rust's drop, as soon as the
 * copy is read, and the page terminates the worker when the model is closed, which drops the
 * whole instance. Nothing is stored anywhere and no URL is made of any decrypted byte.
 */
import { fromBase64Url, toBase64Url } from '../keys.js';
import { openLicenseCopy, PlayerSession } from '../player.js';
import { resumableBody, totalSize } from '../resumable.js';
import { ApiClient, ApiProblem } from './api.js';
import type { KeyRelease, ServiceKeys } from './api-types.js';
import { DEVICE_HEADER } from './device-id.js';
import { answerPngTask } from './package-png-task.js';
import { DamagedCopy, PackageAssembler, packageBuffers, type OpenedPackage } from './package-assembler.js';
import type { TaskContext } from './worker-rpc.js';

/** What the page hands the worker to open one license. */
export interface OpenLicenseArgs {
  licenseId: string;
  /** The signed-in buyer's access token (the worker has no session of its own). */
  accessToken: string;
  /** The service's origin; the worker's own origin when omitted. */
  baseUrl?: string;
  /** The player's device id for this license (device-id.ts), sent as `X-Iki-Device`; none when omitted. */
  deviceId?: string;
}

/** Progress of {@link openLicenseCopyTask}: a step, bytes downloaded, bytes decoded (`start`: the page's own step while the worker loads). */
export type OpenLicenseProgress =
  | { type: 'step'; step: 'start' | 'keys' | 'download' | 'release' | 'read' }
  | { type: 'downloaded'; bytes: number; total: number }
  | { type: 'decoded'; bytes: number; total: number };

/** Byte counts go to the page at most this often (steps and the last count always do). */
const PROGRESS_INTERVAL_MS = 100;

/** Calls `report(a, b)` at most every {@link PROGRESS_INTERVAL_MS}, and always when a >= b. */
function throttled(report: (done: number, total: number) => void): (done: number, total: number) => void {
  let last = 0;
  return (done, total) => {
    const now = Date.now();
    if (now - last < PROGRESS_INTERVAL_MS && done < total) return;
    last = now;
    report(done, total);
  };
}

/** The response body, counting bytes as they arrive. */
function counted(body: ReadableStream<Uint8Array>, onBytes: (seen: number) => void): ReadableStream<Uint8Array> {
  let seen = 0;
  return body.pipeThrough(new TransformStream<Uint8Array, Uint8Array>({
    transform(chunk, controller) {
      seen += chunk.byteLength;
      onBytes(seen);
      controller.enqueue(chunk);
    },
  }));
}

/** Releases the license key into `session` (its ephemeral secret is spent by this). */
async function releaseKey(api: ApiClient, session: PlayerSession, licenseId: string, device: Record<string, string>, signal: AbortSignal):
Promise<void> {
  const release = await api.call<KeyRelease>(`/api/licenses/${encodeURIComponent(licenseId)}/key`, {
    method: 'POST', json: { publicKey: toBase64Url(session.publicKey) }, headers: device, signal });
  session.acceptLicenseKey(licenseId, {
    ephemeral: fromBase64Url(release.ephemeralPublicKey, 32),
    nonce: fromBase64Url(release.nonce, 24),
    sealed: fromBase64Url(release.sealedKey, 48),
  });
}

/** Downloads, unlocks and reads one license copy; resolves to the verified package (transferred). */
export async function openLicenseCopyTask(args: OpenLicenseArgs,
  context: TaskContext<OpenLicenseProgress>): Promise<OpenedPackage> {
  const { signal } = context;
  const api = new ApiClient({ token: () => args.accessToken, ...(args.baseUrl === undefined ? {} : { baseUrl: args.baseUrl }) });
  context.progress({ type: 'step', step: 'keys' });
  const keys = await api.call<ServiceKeys>('/api/keys/service', { signal });
  const signingKey = fromBase64Url(keys.licenseSigningPublicKey, 32);
  context.progress({ type: 'step', step: 'download' });
  const path = `/api/licenses/${encodeURIComponent(args.licenseId)}/model`;
  const device: Record<string, string> = args.deviceId === undefined ? {} : { [DEVICE_HEADER]: args.deviceId };
  const response = await api.fetch(path, { signal, headers: device });
  if (response.body === null) throw ApiProblem.network('the copy arrived without a body');
  const total = totalSize(response) ?? 0;
  const downloaded = throttled((bytes, all) => context.progress({ type: 'downloaded', bytes, total: all }));
  // A cut connection resumes where it broke (Range + If-Range on the copy's strong ETag).
  const resumed = resumableBody((headers) => api.fetch(path, { signal, headers: { ...device, ...headers } }), response, { signal });
  const body = counted(resumed, (n) => downloaded(n, total));
  const decoded = throttled((bytes, all) => context.progress({ type: 'decoded', bytes, total: all }));
  const assembler = new PackageAssembler(decoded);
  let session: PlayerSession | null = null;
  try {
    session = PlayerSession.create();
    context.progress({ type: 'step', step: 'release' });
    await releaseKey(api, session, args.licenseId, device, signal);
    context.progress({ type: 'step', step: 'read' });
    try {
      for await (const event of openLicenseCopy(body, session, signingKey)) {
        signal.throwIfAborted();
        assembler.add(event);
      }
    } catch (err) {
      if (signal.aborted || err instanceof DamagedCopy) throw err;
      throw new DamagedCopy(err instanceof Error ? err.message : String(err), { cause: err });
    }
    const pkg = assembler.result();
    context.transfer(packageBuffers(pkg));
    return pkg;
  } catch (err) {
    assembler.wipe();
    body.cancel().catch(() => {});
    throw err;
  } finally {
    session?.free();
  }
}

/**
 * The tasks of the license worker (server/web/workers/license.ts exposes them): opening the
 * copy, then, while it is open, the PNG of a texture asked for by URL (package-png-task.ts).
 */
export const licenseTasks = { openLicenseCopy: openLicenseCopyTask, answerPng: answerPngTask };

/** Their types, for `WorkerClient<LicenseTasks>`. */
export type LicenseTasks = typeof licenseTasks;

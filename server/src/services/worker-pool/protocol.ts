/**
 * Messages between the pool (main thread, `pool.ts`) and a crypto worker (`crypto-worker.ts`).
 *
 * Streams are pulled, never pushed: the worker asks for the next input chunk (`pull`) only when
 * WASM wants more, and sends an output chunk (`out`) only while less than `OUT_WINDOW_BYTES` is
 * unacknowledged; the pool acknowledges one (`ack`) each time its consumer takes one. So a slow
 * HTTP client slows the worker, which slows the read of the blob store: back-pressure end to
 * end, with about `OUT_WINDOW_BYTES` in flight. Chunks cross as transferred ArrayBuffers
 * (`transferable`), copied only when they are views into a larger buffer.
 */
import type { PasswordHashing } from '../../config.js';
import type { IdentifyOptions, ImageMediaType, LicenseObject, MasterRef } from '../crypto-port.js';
import type { ObjectRef } from '../../storage/blobs.js';

/**
 * Output bytes a worker may have sent and not yet had acknowledged, per job. A piece is sent
 * whenever less than this is in flight, so one piece larger than it (a whole container chunk)
 * still goes, alone.
 */
export const OUT_WINDOW_BYTES = 1024 * 1024;

/** The jobs a worker runs. Stream 0 is the job's source; identify's master is stream 1. */
export type JobSpec =
  /** `file` or `object`: the upload's file or S3 object, read by the worker itself (no stream 0 then). */
  | { op: 'verify'; file?: string; object?: ObjectRef; maxDecodedBytes?: number }
  /** `file` or `object`: the master's stored file or S3 object, read by the worker itself (no stream 0 then). */
  | { op: 'copy'; master: MasterRef; license: LicenseObject; service: string; file?: string; object?: ObjectRef }
  | { op: 'identify'; master: MasterRef; image: Uint8Array; mediaType: ImageMediaType; options: IdentifyOptions }
  | { op: 'hash'; password: string; params: PasswordHashing }
  | { op: 'check'; password: string; encoded: string };

/** An error as it crosses threads: the port's `code` and `details` survive. */
export interface WireError {
  name: string;
  message: string;
  code?: string;
  details?: unknown;
}

/** Pool → worker. */
export type ToWorker =
  | { t: 'job'; id: number; spec: JobSpec }
  | { t: 'chunk'; id: number; stream: number; chunk: Uint8Array }
  | { t: 'end'; id: number; stream: number; error?: WireError }
  | { t: 'ack'; id: number }
  | { t: 'cancel'; id: number }
  /** The pool is idle after work: collect garbage now if no job runs (idle-gc.ts). */
  | { t: 'gc' }
  /** Free the keys (zeroized inside WASM) and exit. */
  | { t: 'close' };

/** Worker → pool. */
export type FromWorker =
  | { t: 'ready' }
  | { t: 'failed'; error: WireError }
  | { t: 'pull'; id: number; stream: number }
  | { t: 'out'; id: number; chunk: Uint8Array }
  | { t: 'result'; id: number; value: unknown }
  | { t: 'error'; id: number; error: WireError }
  /** The worker's WebAssembly memory in bytes, sent once up and after each job (`pool.ts` recycles). */
  | { t: 'memory'; bytes: number };

/** What the worker is started with; `root` is zero-filled by the worker once used. */
export interface WorkerInit {
  root: Uint8Array;
  service: string;
}

/**
 * A chunk ready to transfer: itself when it owns its whole ArrayBuffer, otherwise a copy (a
 * view into a pooled or larger buffer must not be detached from under its other users).
 */
export function transferable(chunk: Uint8Array): Uint8Array {
  const whole = chunk.byteOffset === 0 && chunk.byteLength === chunk.buffer.byteLength
    && chunk.buffer instanceof ArrayBuffer && chunk.byteLength > 0;
  return whole ? chunk : new Uint8Array(chunk);
}

export function toWire(err: unknown): WireError {
  if (!(err instanceof Error)) return { name: 'Error', message: String(err) };
  const { code, details } = err as { code?: unknown; details?: unknown };
  return { name: err.name, message: err.message, ...(typeof code === 'string' ? { code } : {}),
    ...(details !== undefined ? { details } : {}) };
}

/** An `Error` carrying the port's `code` and `details`, as `fromPortError` reads them. */
export function fromWire(wire: WireError): Error {
  const err = new Error(wire.message) as Error & { code?: string; details?: unknown };
  err.name = wire.name;
  if (wire.code !== undefined) err.code = wire.code;
  if (wire.details !== undefined) err.details = wire.details;
  return err;
}

// Shared fixtures of the container, robustness and vector tests. Every key
// here is an obviously fake constant.
import { createHash } from 'node:crypto';
import { ERROR_CODES } from '../src/codes.js';
import { type Kind, type NewEntry, type WriteOptions, writeContainer } from '../src/container.js';
import type { PasswordCost } from '../src/container-write.js';
import { IkiError } from '../src/errors.js';
import { SigningKey } from '../src/keys.js';
import { collect } from '../src/streams.js';

export const PASSWORD = 'correct horse battery staple';
/** The cheapest Argon2id cost readers accept: fast tests that still run Argon2id. */
export const CHEAP: PasswordCost = { mKib: 8, t: 1, p: 1 };
export const FAKE_SEED = new Uint8Array(32).fill(0x51);
export const FAKE_IDENTITY = new Uint8Array(32).fill(0x1d);

export function sha256hex(bytes: Uint8Array): string {
  return createHash('sha256').update(bytes).digest('hex');
}

/** Deterministic bytes: text-like (compressible) or noise. */
export function sample(length: number, seed: number, noisy = false): Uint8Array {
  const out = new Uint8Array(length);
  let x = (seed * 2654435761) >>> 0 || 1;
  for (let i = 0; i < length; i++) {
    x ^= x << 13;
    x >>>= 0;
    x ^= x >>> 17;
    x ^= x << 5;
    x >>>= 0;
    out[i] = noisy ? x & 0xff : 'iki container '.charCodeAt((i + (x % 3)) % 14);
  }
  return out;
}

export function metaFor(kind: Kind): Record<string, unknown> {
  return kind === 'project'
    ? { format: 'iki-project', version: 1, name: 'Test', savedAt: '2024-05-01T12:30:00.000Z', canvas: { width: 800, height: 600 }, app: 'iki-tests 0' }
    : { format: 'iki-model', version: 1, name: 'Test model', role: 'master' };
}

/** An entry over in-memory bytes, with its size and sha256. */
export function entry(path: string, encoding: NewEntry['encoding'], data: Uint8Array, meta?: NewEntry['meta']): NewEntry {
  return {
    path,
    type: encoding === 'rgba8' ? 'image/x-rgba8' : 'application/octet-stream',
    encoding,
    data,
    size: data.length,
    sha256: sha256hex(data),
    ...(meta === undefined ? {} : { meta }),
  };
}

/** An rgba8 entry of `width x height` pixels. */
export function imageEntry(path: string, width: number, height: number, seed: number): NewEntry {
  return entry(path, 'rgba8', sample(width * height * 4, seed, true), { kind: 'texture', width, height, source: 'image/png' });
}

export function options(kind: Kind, key: SigningKey, extra: Partial<WriteOptions> = {}): WriteOptions {
  return { kind, signingKey: key, signer: { kind: 'device', name: 'test' }, meta: metaFor(kind), createdMs: 1_700_000_000_000, ...extra };
}

/** Writes a whole file into memory. */
export async function writeAll(entries: NewEntry[], opts: WriteOptions): Promise<Uint8Array> {
  return collect(writeContainer(entries, opts));
}

/** The error a promise rejects with (fails when it resolves). */
export async function rejection(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  throw new Error('expected a rejection');
}

/** Whether `error` is an IkiError with a documented code other than INTERNAL. */
export function isKnownIkiError(error: unknown): boolean {
  return error instanceof IkiError && (ERROR_CODES as readonly string[]).includes(error.code) && error.code !== 'INTERNAL';
}

/** An async iterable that yields `bytes` in pieces of `size`. */
export async function* inPieces(bytes: Uint8Array, size: number): AsyncGenerator<Uint8Array> {
  for (let at = 0; at < bytes.length; at += size) yield bytes.slice(at, at + size);
}

/** The DATA payloads of a container, in order. */
export function dataChunks(file: Uint8Array): Uint8Array[] {
  const view = new DataView(file.buffer, file.byteOffset, file.byteLength);
  const out: Uint8Array[] = [];
  for (let at = 12; at < file.length;) {
    const length = view.getUint32(at + 4, true);
    if (String.fromCharCode(...file.subarray(at, at + 4)) === 'DATA') out.push(new Uint8Array(file.subarray(at + 8, at + 8 + length)));
    at += 8 + length;
  }
  return out;
}

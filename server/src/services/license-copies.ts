/**
 * The streamed license copy's plumbing (SPEC "License copy"; issue 16 item 4): its strong ETag,
 * its file name, byte ranges of a deterministic stream, and holding the download slot for as
 * long as the bytes flow. `LicenseService.openCopy` puts these together.
 */
import { createHash } from 'node:crypto';
import { ApiError } from '../errors.js';
import type { UsageProgress } from '../storage/repository.js';
import type { UsageSlot } from './usage-limits.js';

/** A license copy on its way out; `close` ends its download slot however the transfer ended. */
export interface OpenCopy {
  fileName: string;
  etag: string;
  /** The whole copy's size in bytes, once known (always known for a ranged answer). */
  size: number | undefined;
  /** The bytes sent, first and last (inclusive), when a range was asked for. */
  range: { start: number; end: number } | undefined;
  chunks: AsyncIterable<Uint8Array>;
  close(): Promise<void>;
}

/** What identifies a copy before any of it is made (for `If-None-Match` and `If-Range`). */
export interface CopyInfo {
  fileName: string;
  etag: string;
  size: number | undefined;
}

/** A byte range asked for: first byte, and last byte (inclusive) or to the end; or the last `suffix` bytes. */
export type CopyRange = { start: number; end: number | undefined } | { suffix: number };

/**
 * Version of the copies' bytes: major, minor. The minor moves whenever the same license and
 * master give other bytes (docs/format.md §9): 1 since DATA chunks that do not compress are
 * written as stored blocks without a match search (issue 28); 2 since each chunk follows the
 * master's verdict for it (stored stays stored, deflated goes to level 1 without a sample), which
 * can differ from a sample of the marked pixels on a chunk at the edge (issue 28 item 3); 3 since
 * the marked rgba8 chunks the master deflated to under an eighth go to the pixel encoder instead
 * of level 1 (docs/format.md §6, issue 28 item 3).
 */
const COPY_FORMAT_VERSION = [1, 3] as const;

/**
 * Strong ETag of a license copy. Every download of one license is byte-identical (docs/format.md
 * §9: the copy is a function of the root secret, the master's bytes and the license record), so
 * the tag is SHA-256 over `"iki-license-copy" || 0x00 || master SHA-256 || license id (16 hex
 * digits) || major (u16 LE) || minor (u16 LE)`, in hex: stable per license, different for every
 * license, and new if the copy format ever changes.
 */
export function licenseCopyEtag(masterSha256Hex: string, licenseId: string): string {
  const version = Buffer.alloc(4);
  version.writeUInt16LE(COPY_FORMAT_VERSION[0], 0);
  version.writeUInt16LE(COPY_FORMAT_VERSION[1], 2);
  const hash = createHash('sha256').update('iki-license-copy\0').update(Buffer.from(masterSha256Hex, 'hex'))
    .update(licenseId, 'ascii').update(version);
  return `"${hash.digest('hex')}"`;
}

/** A file name of letters, digits, space, dot, underscore and dash only (no separators or quotes). */
export function safeFileName(name: string): string {
  const cleaned = name.replace(/[^\p{L}\p{N} ._-]/gu, '_').trim().slice(0, 100);
  return cleaned === '' ? 'model' : cleaned;
}

/**
 * `source` (the copy's bytes from byte `start` on), recording in `progress` how far it got (the
 * byte after the last one the consumer took) and, once it ended, whether it reached the copy's
 * last byte (`reachesEnd`): what a resume must continue (`storage/usage-window.ts`).
 */
export async function* tracking(source: AsyncIterable<Uint8Array>, start: number, progress: UsageProgress,
  reachesEnd: boolean): AsyncIterable<Uint8Array> {
  let at = start;
  for await (const piece of source) {
    yield piece;
    at += piece.length;
    progress.sentTo = at;
  }
  progress.complete = reachesEnd;
}

/** `chunks`, releasing the download slot when they end, fail or are abandoned. */
export async function* holding(slot: UsageSlot, chunks: AsyncIterable<Uint8Array>): AsyncIterable<Uint8Array> {
  try {
    yield* chunks;
  } finally {
    await slot.release();
  }
}

export async function* resume(first: IteratorResult<Uint8Array>, rest: AsyncIterator<Uint8Array>): AsyncIterable<Uint8Array> {
  try {
    if (first.done === true) return;
    yield first.value;
    for (let next = await rest.next(); next.done !== true; next = await rest.next()) yield next.value;
  } finally {
    // Stopped early (the client went away): let the source close its files.
    await rest.return?.();
  }
}

/** First and last byte (inclusive) of `range` in a copy of `size` bytes, or `RANGE_NOT_SATISFIABLE`. */
export function resolveRange(range: CopyRange, size: number): { start: number; end: number } {
  if ('suffix' in range) {
    if (range.suffix === 0) throw unsatisfiable(size);
    return { start: Math.max(0, size - range.suffix), end: size - 1 };
  }
  if (range.start >= size) throw unsatisfiable(size);
  return { start: range.start, end: Math.min(range.end ?? size - 1, size - 1) };
}

function unsatisfiable(size: number): ApiError {
  return new ApiError('RANGE_NOT_SATISFIABLE', 'the range starts past the end of the copy', { size },
    { 'Content-Range': `bytes */${size}` });
}

/** The bytes `start` to `end` (inclusive) of a stream; stops reading once past `end`. */
export async function* slice(source: AsyncIterable<Uint8Array>, start: number, end: number): AsyncIterable<Uint8Array> {
  let at = 0;
  for await (const piece of source) {
    const from = Math.max(0, start - at);
    const to = Math.min(piece.length, end + 1 - at);
    at += piece.length;
    if (to > from) yield piece.subarray(from, to);
    if (at > end) return;
  }
}

/** The number of bytes of a stream (read to its end). */
export async function measure(source: AsyncIterable<Uint8Array>): Promise<number> {
  let bytes = 0;
  for await (const piece of source) bytes += piece.length;
  return bytes;
}

/** `source`, calling `atEnd` with its length when it was read to the end. */
export async function* measuring(source: AsyncIterable<Uint8Array>, atEnd: (bytes: number) => Promise<void>): AsyncIterable<Uint8Array> {
  let bytes = 0;
  for await (const piece of source) {
    bytes += piece.length;
    yield piece;
  }
  await atEnd(bytes);
}

/**
 * Byte sources and the piecewise feeding that keeps memory around one chunk
 * (SPEC "Limits": memory during streaming stays around one chunk; STYLE.md
 * "WASM boundary": bytes cross by copy, one piece at a time).
 *
 * Every streaming API takes a {@link ByteSource}: an `AsyncIterable` of
 * `Uint8Array` (a Node stream, an async generator), a web `ReadableStream`,
 * or one `Uint8Array`. {@link pieces} cuts any of them into pieces of at
 * most {@link PIECE_BYTES}, which the container code hands to WASM one at a
 * time, draining events in between.
 */

/** Where bytes come from. */
export type ByteSource = AsyncIterable<Uint8Array> | ReadableStream<Uint8Array> | Uint8Array;

/** Largest piece handed to WASM at once: 64 KiB. */
export const PIECE_BYTES = 64 * 1024;

function isReadableStream(value: unknown): value is ReadableStream<Uint8Array> {
  return typeof value === 'object' && value !== null && typeof (value as ReadableStream).getReader === 'function';
}

function isAsyncIterable(value: unknown): value is AsyncIterable<Uint8Array> {
  return typeof value === 'object' && value !== null && typeof (value as AsyncIterable<unknown>)[Symbol.asyncIterator] === 'function';
}

/** Throws a `TypeError` naming `name` unless `value` is a {@link ByteSource}. */
export function checkByteSource(value: unknown, name: string): asserts value is ByteSource {
  if (!(value instanceof Uint8Array) && !isReadableStream(value) && !isAsyncIterable(value)) {
    throw new TypeError(`${name} must be a Uint8Array, a ReadableStream<Uint8Array> or an AsyncIterable<Uint8Array>`);
  }
}

async function* fromReadableStream(stream: ReadableStream<Uint8Array>): AsyncGenerator<Uint8Array> {
  const reader = stream.getReader();
  let done = false;
  try {
    for (;;) {
      const next = await reader.read();
      if (next.done) {
        done = true;
        return;
      }
      yield next.value;
    }
  } finally {
    // Stopped early (an error downstream): let the source release what it holds.
    if (!done) await reader.cancel().catch(() => undefined);
    reader.releaseLock();
  }
}

/**
 * The bytes of `source` in pieces of at most `max` bytes. Pieces of a
 * `Uint8Array` are views of it (WASM copies them in); anything else a
 * source yields that is not a `Uint8Array` is a `TypeError` naming `name`.
 */
export async function* pieces(source: ByteSource, name = 'source', max = PIECE_BYTES): AsyncGenerator<Uint8Array> {
  checkByteSource(source, name);
  if (source instanceof Uint8Array) {
    for (let at = 0; at < source.length; at += max) yield source.subarray(at, at + max);
    return;
  }
  const iterable = isReadableStream(source) ? fromReadableStream(source) : source;
  for await (const part of iterable) {
    if (!(part instanceof Uint8Array)) throw new TypeError(`${name} yielded a ${typeof part}, not a Uint8Array`);
    for (let at = 0; at < part.length; at += max) yield part.subarray(at, at + max);
  }
}

/** Bytes of a `Blob` read at once by {@link blobSource}: few enough reads, small next to a chunk's memory. */
export const BLOB_SLICE_BYTES = 2 * 1024 * 1024;

/**
 * The bytes `[start, end)` of a `Blob` (a `File`), read in slices of `sliceBytes` with the next
 * slice already being read while the current one is used: a browser reads a disk-backed File
 * outside the page's thread, so the read overlaps the work on the previous slice, and large
 * slices keep the number of reads (each a round trip to the browser process) low. Memory holds
 * at most two slices.
 */
export async function* blobSource(blob: Blob, start = 0, end = blob.size, sliceBytes = BLOB_SLICE_BYTES): AsyncGenerator<Uint8Array> {
  const read = (at: number) => blob.slice(at, Math.min(end, at + sliceBytes)).arrayBuffer();
  let next = start < end ? read(start) : undefined;
  for (let at = start; next !== undefined; at += sliceBytes) {
    const current = next;
    next = at + sliceBytes < end ? read(at + sliceBytes) : undefined;
    // A read that fails while the previous slice is in use is reported when its turn comes.
    next?.catch(() => undefined);
    yield new Uint8Array(await current);
  }
}

/** Reads a whole source into one `Uint8Array` (small files and tests only). */
export async function collect(source: ByteSource, name = 'source'): Promise<Uint8Array> {
  const parts: Uint8Array[] = [];
  let length = 0;
  for await (const piece of pieces(source, name)) {
    // Copy: a piece may be a view of a buffer its producer reuses.
    parts.push(piece.slice());
    length += piece.length;
  }
  const out = new Uint8Array(length);
  let at = 0;
  for (const part of parts) {
    out.set(part, at);
    at += part.length;
  }
  return out;
}

/**
 * Throws a `TypeError` naming `name` unless `value` is a `Uint8Array`, and a
 * `RangeError` when `length` is given and differs.
 */
export function checkBytes(value: unknown, name: string, length?: number): asserts value is Uint8Array {
  if (!(value instanceof Uint8Array)) throw new TypeError(`${name} must be a Uint8Array`);
  if (length !== undefined && value.length !== length) {
    throw new RangeError(`${name} must be ${length} bytes, not ${value.length}`);
  }
}

/**
 * Throws a `TypeError` naming `name` unless `value` is an integer, and a
 * `RangeError` unless it lies in `[min, max]`.
 */
export function checkInteger(value: unknown, name: string, min: number, max: number): asserts value is number {
  if (typeof value !== 'number' || !Number.isInteger(value)) throw new TypeError(`${name} must be an integer`);
  if (value < min || value > max) throw new RangeError(`${name} must be from ${min} to ${max}, not ${value}`);
}

/** Throws a `TypeError` naming `name` unless `value` is a string. */
export function checkString(value: unknown, name: string): asserts value is string {
  if (typeof value !== 'string') throw new TypeError(`${name} must be a string`);
}

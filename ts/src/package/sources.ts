/**
 * Entry data read from disk lazily: an entry's bytes are opened only when the container
 * writer (or a hashing pass) iterates them, so packing a folder keeps one file open and about
 * one read buffer in memory, whatever the number and size of the files.
 */
import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import { PackageError } from './errors.js';

/** Bytes of a read: large enough to keep syscalls few, small next to a container chunk. */
const READ_BYTES = 256 * 1024;

/** An entry's content, re-readable: every iteration starts from the first byte. */
export type EntrySource = AsyncIterable<Uint8Array>;

/** A file's bytes as plain `Uint8Array` views (never `Buffer`), read when iterated. */
export function fileSource(file: string): EntrySource {
  return {
    async *[Symbol.asyncIterator]() {
      for await (const chunk of createReadStream(file, { highWaterMark: READ_BYTES })) {
        const buffer = chunk as Buffer;
        yield new Uint8Array(buffer.buffer, buffer.byteOffset, buffer.byteLength);
      }
    },
  };
}

/** A source that yields `bytes` once per iteration. */
export function bytesSource(bytes: Uint8Array): EntrySource {
  return {
    async *[Symbol.asyncIterator]() {
      yield bytes;
    },
  };
}

/** Size and lowercase-hex SHA-256 of everything `source` yields. */
export async function hashSource(source: EntrySource): Promise<{ size: number; sha256: string }> {
  const hash = createHash('sha256');
  let size = 0;
  for await (const chunk of source) {
    hash.update(chunk);
    size += chunk.length;
  }
  return { size, sha256: hash.digest('hex') };
}

/** Lowercase-hex SHA-256 of `bytes`. */
export function sha256Hex(bytes: Uint8Array): string {
  return createHash('sha256').update(bytes).digest('hex');
}

/**
 * Size and SHA-256 of a regular file, refusing anything else (`NOT_A_FILE`) and a file that
 * changed size while it was read (`NOT_A_FILE` too: a growing log or a device is not content).
 */
export async function hashFile(file: string, path: string): Promise<{ size: number; sha256: string }> {
  const info = await stat(file);
  if (!info.isFile()) throw new PackageError('NOT_A_FILE', `${path} is not a regular file`, path);
  const hashed = await hashSource(fileSource(file));
  if (hashed.size !== info.size) throw new PackageError('NOT_A_FILE', `${path} changed while it was read`, path);
  return hashed;
}

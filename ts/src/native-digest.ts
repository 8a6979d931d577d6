/**
 * SHA-256 by the platform's native digest (`crypto.subtle`) where there is one, else by the
 * streaming hasher in WASM (docs/format.md section 2, "Who computes SHA-256").
 *
 * In a browser, WASM's SHA-256 runs at 117-161 MB/s on the thread that called it (bench/RESULTS.md,
 * "Project files in Chromium"); `crypto.subtle.digest` is several times faster and runs off that
 * thread. It has no streaming form, so it is used only for bytes held whole, up to
 * {@link ONE_SHOT_HASH_BYTES} (it copies its input); anything larger, and streams, go through
 * WASM in pieces, so memory stays bounded whatever the size. In Node, WASM's own hashing already
 * goes to `node:crypto` (host-hash.ts), and `crypto.subtle` is there too.
 */
import { hashEntry } from './container-write.js';
import { blobSource } from './streams.js';

/** An entry's size and lowercase hex SHA-256. */
export interface Digest {
  size: number;
  sha256: string;
}

/** Largest input hashed in one piece by the native digest: 64 MiB (it is held whole to hash it). */
export const ONE_SHOT_HASH_BYTES = 64 * 1024 * 1024;

const hex = (digest: ArrayBuffer): string => Array.from(new Uint8Array(digest), (b) => b.toString(16).padStart(2, '0')).join('');

const hasNativeDigest = (): boolean => globalThis.crypto?.subtle !== undefined;

/** Lowercase hex SHA-256 of bytes by the platform's native digest (`crypto.subtle`). */
export async function digestHex(bytes: Uint8Array | ArrayBuffer): Promise<string> {
  return hex(await crypto.subtle.digest('SHA-256', bytes as Uint8Array<ArrayBuffer>));
}

/** Size and SHA-256 of bytes held whole: natively up to {@link ONE_SHOT_HASH_BYTES}, else in WASM. */
export async function hashBytes(bytes: Uint8Array): Promise<Digest> {
  if (hasNativeDigest() && bytes.length <= ONE_SHOT_HASH_BYTES) return { size: bytes.length, sha256: await digestHex(bytes) };
  return hashEntry(bytes);
}

/**
 * Size and SHA-256 of a Blob, read once: by the platform's native digest up to
 * {@link ONE_SHOT_HASH_BYTES} (read whole), else in pieces by the streaming hasher in WASM.
 */
export async function hashBlob(blob: Blob): Promise<Digest> {
  if (hasNativeDigest() && blob.size <= ONE_SHOT_HASH_BYTES) {
    return { size: blob.size, sha256: await digestHex(await blob.arrayBuffer()) };
  }
  return hashEntry(blobSource(blob));
}

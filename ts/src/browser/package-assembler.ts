/**
 * The player's in-memory package: collects the reader's events (header, manifest, plaintext
 * of authenticated DATA chunks, per-entry verification, the final signature check) into one
 * `Uint8Array` per entry, each over its own `ArrayBuffer` so the package can be transferred
 * from the worker that read it to the page that shows it without a copy.
 *
 * Nothing here leaves memory: no storage API, no object URL. {@link PackageAssembler.result}
 * answers only after the reader's `end` event, the only statement that the signature
 * verified, and {@link wipePackage} zero-fills every buffer when the model is closed.
 */
import type { EntryInfo, Manifest, ReadEvent, Verified } from '../container.js';
import { formatBytes } from './format.js';

/** Ceiling on the decoded size a page holds, so a hostile manifest cannot exhaust memory. */
export const MAX_DECODED_BYTES = 1024 * 1024 * 1024;

/** A copy that does not read back as a consistent package. */
export class DamagedCopy extends Error {
  readonly code = 'DAMAGED';

  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'DamagedCopy';
  }
}

/** One decrypted file of the package. */
export interface PackageFile {
  info: EntryInfo;
  bytes: Uint8Array;
  /** Its manifest SHA-256 matched (entries with a sha256 only). */
  verified: boolean;
}

/** A package whose every chunk authenticated and whose signature verified. */
export interface OpenedPackage {
  manifest: Manifest;
  verified: Verified;
  files: PackageFile[];
}

/** The buffers of `pkg`, for a transfer list. */
export function packageBuffers(pkg: OpenedPackage): ArrayBuffer[] {
  return pkg.files.map((f) => f.bytes.buffer as ArrayBuffer);
}

/** Zero-fills every file of `pkg` (a transferred-away, detached buffer is already empty). */
export function wipePackage(pkg: OpenedPackage): void {
  for (const file of pkg.files) file.bytes.fill(0);
}

/** Collects read events into an {@link OpenedPackage}. */
export class PackageAssembler {
  #manifest: Manifest | null = null;
  #buffers: Uint8Array[] = [];
  #filled: number[] = [];
  readonly #verifiedEntries = new Set<number>();
  #verified: Verified | null = null;
  #done = 0;
  #total = 0;

  /** @param onProgress (decodedBytes, totalBytes) after the manifest and after each chunk */
  constructor(private readonly onProgress: (done: number, total: number) => void = () => {}) {}

  add(event: ReadEvent): void {
    switch (event.type) {
      case 'manifest': this.#onManifest(event.manifest); break;
      case 'chunk': this.#onChunk(event.entry, event.data); break;
      case 'entryVerified': this.#verifiedEntries.add(event.entry); break;
      case 'end': this.#onEnd(event.verified); break;
      default: break; // 'header' and 'locked' carry nothing to show
    }
  }

  #onManifest(manifest: Manifest): void {
    if (this.#manifest !== null || !Array.isArray(manifest?.entries)) throw new DamagedCopy('unexpected manifest');
    const total = manifest.entries.reduce((sum, e) => sum + (Number.isSafeInteger(e.size) && e.size >= 0 ? e.size : Infinity), 0);
    if (!(total <= MAX_DECODED_BYTES)) {
      throw new DamagedCopy(`the model is larger (${formatBytes(total)}) than this page holds in memory`);
    }
    this.#manifest = manifest;
    this.#total = total;
    this.#buffers = manifest.entries.map((e) => new Uint8Array(e.size));
    this.#filled = manifest.entries.map(() => 0);
    this.onProgress(0, total);
  }

  #onChunk(entry: number, data: Uint8Array): void {
    const buffer = this.#buffers[entry];
    const at = this.#filled[entry];
    if (buffer === undefined || at === undefined) throw new DamagedCopy(`a chunk names entry ${entry}, which the manifest does not list`);
    if (at + data.length > buffer.length) throw new DamagedCopy(`entry ${entry} is longer than its manifest size`);
    buffer.set(data, at);
    this.#filled[entry] = at + data.length;
    this.#done += data.length;
    this.onProgress(this.#done, this.#total);
  }

  #onEnd(verified: Verified): void {
    if (this.#manifest === null) throw new DamagedCopy('the copy has no readable manifest');
    this.#buffers.forEach((b, i) => {
      if (this.#filled[i] !== b.length) throw new DamagedCopy(`entry ${i} is incomplete`);
    });
    this.#verified = verified;
  }

  /** The package, once the signature verified. */
  result(): OpenedPackage {
    if (this.#verified === null || this.#manifest === null) throw new DamagedCopy('the copy ended before its signature');
    const manifest = this.#manifest;
    return {
      manifest, verified: this.#verified,
      files: manifest.entries.map((info, i) => ({ info, bytes: this.#buffers[i] as Uint8Array, verified: this.#verifiedEntries.has(i) })),
    };
  }

  /** Zero-fills every buffer and forgets them. */
  wipe(): void {
    for (const b of this.#buffers) b.fill(0);
    this.#buffers = [];
    this.#manifest = null;
  }
}

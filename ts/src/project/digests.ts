/**
 * Remembered SHA-256 digests of assets (issue 28 item 4; docs/format.md section 5.1): the
 * manifest precedes the data and names every asset's hash, so without a remembered digest a
 * save reads each asset twice (once to hash it, once to write it). An app hashes each file
 * while it is picked ({@link AssetDigests.remember}, in the worker, as the user goes on
 * working); the save then finds the digests here and reads every asset once.
 *
 * Two keys:
 * - the `Blob` object itself (a `WeakMap`): exact, because a Blob's bytes never change (a
 *   browser refuses to read a disk-backed `File` whose file changed after it was picked);
 * - a `File`'s identity, its name, size and lastModified: a picked file posted to a worker
 *   arrives as a new object at every save, so the object alone would never be found again. A
 *   changed file (new bytes) has a new lastModified or size and is hashed again. Two different
 *   files can still share all three (an archive unpacked twice keeps its times), so a digest
 *   found by identity is not trusted blindly: the save checks it on the bytes it writes
 *   ({@link checkedBlobSource}, `HASH_MISMATCH`: the save refused, nothing kept, the digest
 *   forgotten).
 */
import { ONE_SHOT_HASH_BYTES, digestHex, hashBlob, type Digest } from '../native-digest.js';
import { IkiError } from '../errors.js';
import { blobSource } from '../streams.js';

export { ONE_SHOT_HASH_BYTES, digestHex, hashBlob, type Digest } from '../native-digest.js';

/** How a digest was found: the same object, a File of the same identity, or hashed just now. */
export type DigestOrigin = 'object' | 'identity' | 'hashed';

/** Identities remembered at most (oldest forgotten first): 4096 entries of about 200 bytes. */
export const MAX_REMEMBERED_DIGESTS = 4096;

function isFile(blob: Blob): blob is File {
  return typeof File !== 'undefined' && blob instanceof File;
}

function identityOf(blob: Blob): string | undefined {
  return isFile(blob) ? JSON.stringify([blob.name, blob.size, blob.lastModified]) : undefined;
}

/**
 * The bytes of `blob` as a save reads them ({@link blobSource}), with `sha256` checked on those
 * same bytes: the slices are kept until the last one passed, then hashed in one piece by the
 * native digest (in a browser it runs off the worker's thread, so the save does not wait for
 * it). The check is appended to `checks` (the save's, in entry order) and rejects with
 * `HASH_MISMATCH` (entry `entry`) when the bytes differ. At most two assets' checks are pending
 * at once. Only for Blobs up to {@link ONE_SHOT_HASH_BYTES}: that is what is held.
 */
export async function* checkedBlobSource(blob: Blob, sha256: string, entry: number,
  checks: Promise<void>[]): AsyncGenerator<Uint8Array> {
  if (blob.size > ONE_SHOT_HASH_BYTES) throw new RangeError(`a checked blob holds at most ${ONE_SHOT_HASH_BYTES} bytes, not ${blob.size}`);
  // Memory stays bounded when the digests fall behind (a busy machine): the check of the asset
  // before the previous one has finished before this one is read.
  await checks.at(-2);
  const slices: Uint8Array[] = [];
  for await (const slice of blobSource(blob)) {
    slices.push(slice);
    yield slice;
  }
  const check = (async () => {
    let whole = slices[0] ?? new Uint8Array(0);
    if (slices.length > 1) {
      whole = new Uint8Array(blob.size);
      let at = 0;
      for (const slice of slices) {
        whole.set(slice, at);
        at += slice.length;
      }
    }
    slices.length = 0;
    if (await digestHex(whole) !== sha256) {
      throw new IkiError('HASH_MISMATCH', 'an asset\'s bytes are not those of its remembered digest (another file of the same name, size and time)', { entry });
    }
  })();
  check.catch(() => undefined);
  checks.push(check);
}

/** The digests an app remembers for its assets (one per worker or page; see the module comment). */
export class AssetDigests {
  readonly #byObject = new WeakMap<Blob, Promise<Digest>>();
  /** By identity; `null`: two files of this identity had different bytes, so it names neither. */
  readonly #byIdentity = new Map<string, Promise<Digest | null>>();
  #hashes = 0;

  /** Assets hashed (read for their digest) by this cache so far. */
  get hashes(): number {
    return this.#hashes;
  }

  /**
   * The digest of `blob` and how it was found; hashes it (once, however many callers ask at
   * the same time) when it is not remembered, or when `fresh` (its identity is not enough).
   * A failed hash is forgotten.
   */
  async find(blob: Blob, fresh = false): Promise<{ digest: Digest; origin: DigestOrigin }> {
    const same = this.#byObject.get(blob);
    if (same !== undefined) return { digest: await same, origin: 'object' };
    const identity = identityOf(blob);
    const known = identity === undefined || fresh ? undefined : await this.#byIdentity.get(identity)?.catch(() => null);
    // The size is part of the identity; checked again so that a wrong entry cannot pass.
    if (known !== undefined && known !== null && known.size === blob.size) return { digest: known, origin: 'identity' };
    return { digest: await this.#hash(blob, identity), origin: 'hashed' };
  }

  /**
   * The digests of several blobs (a pick, a save's assets). Two different objects of the same
   * identity among them are both hashed: they may be two files of one name in two folders.
   */
  async findAll(blobs: readonly Blob[], onFound?: (digest: Digest) => void): Promise<{ digest: Digest; origin: DigestOrigin }[]> {
    const seen = new Map<string, Blob>();
    const repeated = new Set<string>();
    for (const blob of blobs) {
      const identity = identityOf(blob);
      if (identity === undefined) continue;
      const first = seen.get(identity);
      if (first !== undefined && first !== blob) repeated.add(identity);
      seen.set(identity, blob);
    }
    const found = [];
    for (const blob of blobs) {
      found.push(await this.find(blob, repeated.has(identityOf(blob) ?? '')));
      onFound?.((found.at(-1) as { digest: Digest }).digest);
    }
    return found;
  }

  /** Hashes the files the user picked, so that a later save reads each of them once. */
  async remember(blobs: Iterable<Blob>): Promise<void> {
    await this.findAll([...blobs]);
  }

  /** Forgets a blob's digest (a save found it wrong). */
  forget(blob: Blob): void {
    this.#byObject.delete(blob);
    const identity = identityOf(blob);
    if (identity !== undefined) this.#byIdentity.delete(identity);
  }

  #hash(blob: Blob, identity: string | undefined): Promise<Digest> {
    this.#hashes += 1;
    const pending = hashBlob(blob);
    this.#byObject.set(blob, pending);
    if (identity !== undefined) {
      const before = this.#byIdentity.get(identity);
      this.#byIdentity.delete(identity);
      // A second hash under a known identity: the identity names a digest only while both agree.
      this.#byIdentity.set(identity, before === undefined ? pending
        : Promise.all([before, pending]).then(([a, b]) => (a !== null && a.sha256 === b.sha256 ? b : null)));
      if (this.#byIdentity.size > MAX_REMEMBERED_DIGESTS) this.#byIdentity.delete(this.#byIdentity.keys().next().value as string);
    }
    pending.catch(() => {
      if (this.#byObject.get(blob) === pending) this.#byObject.delete(blob);
      if (identity !== undefined) this.#byIdentity.delete(identity);
    });
    return pending;
  }
}

/** This realm's digests (a worker's, in a browser): what {@link saveProject} uses unless given others. */
export const assetDigests = new AssetDigests();

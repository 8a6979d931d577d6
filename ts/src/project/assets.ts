/**
 * The assets of a project (docs/format.md section 5.1): each distinct content once, at
 * `assets/<sha256 hex>`, with the names the user gave them kept in the project meta as
 * `assetNames` (name below `assets/` -> SHA-256). Names follow the entry-path rules, so a
 * name that would be refused in a manifest, or escape a folder when unpacked, is refused
 * before any work.
 *
 * Hashing is the first of two passes over an asset (the manifest, with every entry's size and
 * hash, precedes the data), unless the digest is remembered (digests.ts: hashed while the file
 * was picked), so that a save reads the asset once. A `Blob` up to {@link ONE_SHOT_HASH_BYTES}
 * is hashed by the platform's native SHA-256 (`crypto.subtle.digest`), which is several times
 * faster than any WASM implementation; larger ones and streams go through the streaming hasher
 * in WASM, so memory stays bounded whatever the asset's size.
 */
import { entryPathProblem } from '../entry-path.js';
import { MAX_ENTRIES, MAX_ENTRY_SIZE_BYTES } from '../limits.js';
import { encodingFor, mediaTypeOf } from '../package/media.js';
import { hashEntry } from '../container-write.js';
import { blobSource, type ByteSource } from '../streams.js';
import { ProjectError } from './errors.js';
import { assetDigests, digestHex, type AssetDigests, type DigestOrigin } from './digests.js';

export { ONE_SHOT_HASH_BYTES, digestHex } from './digests.js';

/** Where an asset's bytes come from, re-readable: its size, its SHA-256 when known, and a fresh stream per call. */
export interface AssetSource {
  readonly size: number;
  /** Lowercase hex SHA-256, when the source already knows it (an asset of an opened, verified file). */
  readonly sha256?: string;
  open(): ByteSource;
}

/** One asset to save. */
export interface ProjectAsset {
  /** Its name below `assets/` (`images/hero.png`). */
  name: string;
  /** Its bytes: a `Blob` (a `File` from a picker), bytes, or a re-readable source. */
  data: Blob | Uint8Array | AssetSource;
  /** Media type; by default from the name's extension. */
  type?: string;
}

/** An asset as it goes into the manifest. */
export interface PlannedAsset {
  path: string;
  type: string;
  encoding: 'stored' | 'deflate';
  size: number;
  sha256: string;
  /**
   * Its bytes are those its digest was taken from: a `Blob` hashed now or earlier as the same
   * object (a Blob cannot change). False for a digest found by a File's identity only (see
   * `identity`), and for bytes and sources that could change: the writer checks those.
   */
  trusted: boolean;
  /** The Blob, when its digest was found by its identity only (save.ts checks it as it writes). */
  identity?: Blob;
  open(): ByteSource;
}

function isBlob(value: unknown): value is Blob {
  return typeof Blob !== 'undefined' && value instanceof Blob;
}

function isSource(value: unknown): value is AssetSource {
  const s = value as AssetSource | null;
  return typeof s === 'object' && s !== null && typeof s.open === 'function' && typeof s.size === 'number';
}

/** A re-readable source over any of the accepted data forms. */
export function assetSource(data: ProjectAsset['data']): AssetSource {
  if (isSource(data)) return data;
  if (isBlob(data)) return { size: data.size, open: () => blobSource(data) };
  return { size: data.length, open: () => data };
}

/** Size and SHA-256 of `data` (see the module comment for which hasher; Blobs through `digests`). */
export async function hashAsset(data: ProjectAsset['data'], digests: AssetDigests = assetDigests): Promise<{ size: number; sha256: string }> {
  return (await findDigest(data, digests)).digest;
}

async function findDigest(data: ProjectAsset['data'], digests: AssetDigests):
Promise<{ digest: { size: number; sha256: string }; origin: DigestOrigin | 'source' }> {
  if (isSource(data) && data.sha256 !== undefined) return { digest: { size: data.size, sha256: data.sha256 }, origin: 'source' };
  if (isBlob(data)) return digests.find(data);
  if (globalThis.crypto?.subtle !== undefined && data instanceof Uint8Array) {
    return { digest: { size: data.length, sha256: await digestHex(data) }, origin: 'source' };
  }
  const hashed = await hashEntry(assetSource(data).open());
  if (isSource(data) && hashed.size !== data.size) {
    throw new ProjectError('BAD_ASSET', `an asset's source gave ${hashed.size} bytes, not its size ${data.size}`, { reason: 'size changed' });
  }
  return { digest: hashed, origin: 'source' };
}

function checkAsset(asset: unknown, index: number): asserts asset is ProjectAsset {
  const a = asset as ProjectAsset | null;
  if (typeof a !== 'object' || a === null || typeof a.name !== 'string') throw new TypeError(`assets[${index}].name must be a string`);
  if (!(a.data instanceof Uint8Array) && !isBlob(a.data) && !isSource(a.data)) {
    throw new TypeError(`assets[${index}].data must be a Blob, a Uint8Array or { size, open() }`);
  }
  if (a.type !== undefined && typeof a.type !== 'string') throw new TypeError(`assets[${index}].type must be a string`);
  // The name alone (no drive letter of its own) and as the path below assets/ (its length).
  const problem = entryPathProblem(a.name) ?? entryPathProblem(`assets/${a.name}`);
  if (problem !== undefined) {
    throw new ProjectError('BAD_ASSET', `the asset name ${JSON.stringify(a.name)} ${problem}`, { name: a.name, reason: problem });
  }
}

/** The media type of an asset: its own when it is a plausible one, else by extension. */
function typeOf(asset: ProjectAsset): string {
  const type = asset.type?.trim().toLowerCase() ?? '';
  return /^[a-z0-9][a-z0-9!#$&^_.+-]{0,126}\/[a-z0-9][a-z0-9!#$&^_.+-]{0,126}$/u.test(type) ? type : mediaTypeOf(asset.name);
}

/**
 * Hashes every asset (or finds its remembered digest) and plans the entries: distinct contents
 * once, names to hashes. Refuses a bad or repeated name (`BAD_ASSET`) and more assets than a
 * manifest holds. A digest found by identity only is used for an entry whose bytes the writer
 * checks; an asset merged into another entry as equal content is hashed again first.
 */
export async function planAssets(assets: readonly ProjectAsset[], onHashed?: (bytes: number) => void,
  digests: AssetDigests = assetDigests): Promise<{ entries: PlannedAsset[]; names: Record<string, string> }> {
  if (!Array.isArray(assets)) throw new TypeError('assets must be an array');
  assets.forEach(checkAsset);
  if (assets.length > MAX_ENTRIES - 1) {
    throw new ProjectError('BAD_ASSET', `${assets.length} assets is more than a project file holds (${MAX_ENTRIES - 1})`, { reason: 'too many' });
  }
  const names: Record<string, string> = Object.create(null) as Record<string, string>;
  for (const asset of assets) {
    if (Object.hasOwn(names, asset.name)) {
      throw new ProjectError('BAD_ASSET', `the asset name ${JSON.stringify(asset.name)} appears twice`, { name: asset.name, reason: 'repeated' });
    }
    names[asset.name] = '';
  }
  const blobs = assets.map((a) => a.data).filter(isBlob);
  const byBlob = new Map<Blob, { digest: { size: number; sha256: string }; origin: DigestOrigin | 'source' }>();
  (await digests.findAll(blobs, (d) => onHashed?.(d.size))).forEach((found, i) => byBlob.set(blobs[i] as Blob, found));
  const entries = new Map<string, PlannedAsset>();
  for (const asset of assets) {
    let found = isBlob(asset.data) ? byBlob.get(asset.data) : undefined;
    if (found === undefined) {
      found = await findDigest(asset.data, digests);
      onHashed?.(found.digest.size);
    }
    if (found.origin === 'identity' && entries.has(found.digest.sha256)) found = await digests.find(asset.data as Blob, true);
    const { digest: { size, sha256 }, origin } = found;
    if (size > MAX_ENTRY_SIZE_BYTES) throw new ProjectError('BAD_ASSET', `${asset.name} is too large`, { name: asset.name, reason: 'too large' });
    names[asset.name] = sha256;
    if (entries.has(sha256)) continue;
    const type = typeOf(asset);
    const source = assetSource(asset.data);
    entries.set(sha256, { path: `assets/${sha256}`, type, encoding: encodingFor(type), size, sha256,
      trusted: origin === 'object' || origin === 'hashed', ...(origin === 'identity' ? { identity: asset.data as Blob } : {}),
      open: () => source.open() });
  }
  return { entries: [...entries.values()], names: { ...names } };
}

/**
 * The license and key service's side of `@iki/core` (SPEC "What the service does" 3 and 4,
 * behaviour rules 1 to 7; docs/format.md sections 7.2, 8 and 9): the service's keys, the
 * streamed upload check of a master, the streamed license copy, key release, account slots,
 * key certificates and identify. Used by `@iki/server` (`services/wasm-crypto.ts`).
 *
 * Every secret (the root secret and everything derived from it) stays inside WebAssembly in
 * the handle classes below; bytes cross by copy, one piece at a time. Arguments are checked
 * here first (`TypeError`/`RangeError` naming the argument); every failure of an operation
 * is an `IkiError` with a stable code (docs/format.md section 11 and iki-license's
 * `NOT_A_MASTER`, `MASTER_MISMATCH`, `IMAGE_DECODE_FAILED`, `IMAGE_TOO_LARGE`).
 */
import type { WasmIdentifier, WasmLicenseCopier, WasmMasterVerifier, WasmServiceKeys } from '../../pkg/iki_wasm.js';
import type { EntryInfo, SignerInfo } from './container.js';
import { callWasm, IkiError } from './errors.js';
import { issuedIds, type LicenseCandidate } from './license-match.js';
import { handleOf, WasmOwned } from './keys.js';
import { MAX_IMAGE_RGBA_BYTES, MAX_IMAGE_SIDE_PX } from './limits.js';
import { checkBytes, checkInteger, checkString, pieces, PIECE_BYTES, type ByteSource } from './streams.js';
import { wasm } from './wasm.js';

/** What the service recorded about a verified master (docs/format.md §8.1). */
export interface MasterRef {
  /** Master id, 1 to 256 bytes of UTF-8. */
  readonly id: string;
  /** SHA-256 of the whole master file (32 bytes). */
  readonly sha256: Uint8Array;
}

/** A license as written into its copy's manifest (docs/format.md §5.2). */
export interface LicenseRecord {
  /** The 64-bit license id as 16 lowercase hex digits. */
  readonly id: string;
  /** Licensee account id. */
  readonly licensee: string;
  /** Licensee display name. */
  readonly licenseeName: string;
  /** Seller account id. */
  readonly seller: string;
  /** Milliseconds since the Unix epoch; the copy's `created_ms`. */
  readonly issuedAt: number;
}

/** A 32-byte key sealed to an X25519 key (docs/format.md §8.2); none of it is secret. */
export interface SealedKey {
  /** The sender's X25519 public key (32 bytes): one-time, except a key release's, kept up to a minute or 4096 releases (docs/format.md §8.2). */
  readonly ephemeral: Uint8Array;
  /** XChaCha20-Poly1305 nonce (24 bytes). */
  readonly nonce: Uint8Array;
  /** The key encrypted, with its tag (48 bytes). */
  readonly sealed: Uint8Array;
}

/** An `rgba8` entry of a master: what license copies watermark. */
export interface TextureInfo {
  path: string;
  width: number;
  height: number;
}

/** What the upload check found in a sound master. */
export interface MasterSummary {
  /** SHA-256 of the whole file, 64 hex digits: record it. */
  sha256: string;
  /** Size of the file in bytes. */
  size: number;
  /** `meta.name` of the model. */
  name: string;
  /** HEAD's `created_ms`. */
  createdMs: number;
  /** Manifest entries in order. */
  entries: EntryInfo[];
  /** The `rgba8` entries. */
  textures: TextureInfo[];
  /** The Ed25519 key that signed the master (verified strictly). */
  signerPublicKey: Uint8Array;
  /** The parsed signer JSON (a claim covered by the signature). */
  signer: SignerInfo;
  /** The signer JSON as found. */
  signerJson: string;
  /** The account a certificate from this service attributes the file to, if any. */
  certifiedAccount: string | null;
}

/** The answer of identify; "no mark" is an answer, not an error. */
export interface Identification {
  found: boolean;
  /** The license id read, 16 hex digits, when found. */
  licenseId?: string;
  /** About N(0, 1) on unmarked images, in the hundreds on marked ones. */
  confidence: number;
}

/** Where a leak sits on a texture (docs/watermark.md section 11). */
export interface Registration {
  /** Leak pixels per texture pixel on each axis (0.9 for a leak resized to 90 %). */
  scale: { x: number; y: number };
  /** Texture coordinates (pixels, edges) of the leak's top-left corner. */
  offset: { x: number; y: number };
  /** The texture pixels the leak covers. */
  region: { x: number; y: number; width: number; height: number };
  /** Correlation of the leak and the registered texture, up to 1. */
  similarity: number;
}

/** The texture of a master that a leak was registered on. */
export interface TextureMatch extends Registration {
  /** The texture's entry path in the master. */
  path: string;
  width: number;
  height: number;
}

/** Why identify found nothing. */
export type NotFoundReason = 'too_small' | 'too_busy' | 'no_matching_texture' | 'not_marked' | 'time_budget' | 'mixed';

/** How well an image could carry the mark, by the detector's own measure. */
export interface Capacity {
  /** Confidence of a freshly marked copy of the image read blind (a read needs 10). */
  confidence: number;
  /** Whether that copy read back. */
  reads: boolean;
  /** Pixels with alpha >= 8. */
  visiblePixels: number;
}

/** The answer of {@link ServiceKeys.identifyLeak}. */
export interface LeakIdentification extends Identification {
  /** `blind`: read as it is; `registered`: read after registering it on a texture. */
  method: 'blind' | 'registered';
  /** The texture that matched (with the transform found), when one did. */
  texture?: TextureMatch;
  /** When not found, why. */
  reason?: NotFoundReason;
  /** When not found, the image's own capacity. */
  capacity?: Capacity;
  /** Textures the leak was registered on. */
  texturesTried: number;
  /** `decoded`: the bits read carry a valid CRC; `scored`: the license was named by its score. */
  match: 'decoded' | 'scored';
  /** Whether the read looks like several differently licensed copies mixed. */
  mixed: boolean;
  /** The issued licenses scoring highest against the read (none when none were given). */
  candidates: LicenseCandidate[];
}

/** Default time budget of {@link ServiceKeys.identifyLeak}, in milliseconds. */
export const IDENTIFY_BUDGET_MS = 10_000;

/**
 * The largest image identify decodes, checked against the image's header before any pixel is
 * decoded: a side and an area in pixels. A leaked texture is no larger than the master's
 * largest, so the service passes that texture's side and area.
 */
export interface ImageBound {
  /** Largest width or height, 1 to `MAX_IMAGE_SIDE_PX`. */
  readonly maxSidePx: number;
  /** Largest width x height, 1 to `MAX_IMAGE_RGBA_BYTES / 4`. */
  readonly maxPixels: number;
}

/** The decoder's hard cap (crates/iki-license `ImageBound::CEILING`). */
export const IMAGE_BOUND_CEILING: ImageBound = Object.freeze({
  maxSidePx: MAX_IMAGE_SIDE_PX, maxPixels: MAX_IMAGE_RGBA_BYTES / 4,
});

function checkBound(bound: unknown): ImageBound {
  if (typeof bound !== 'object' || bound === null) throw new TypeError('bound must be an object');
  const { maxSidePx, maxPixels } = bound as ImageBound;
  checkInteger(maxSidePx, 'bound.maxSidePx', 1, IMAGE_BOUND_CEILING.maxSidePx);
  checkInteger(maxPixels, 'bound.maxPixels', 1, IMAGE_BOUND_CEILING.maxPixels);
  return { maxSidePx, maxPixels };
}

/** Bytes of a sealed key on the WASM boundary: ephemeral, nonce, sealed. */
const SEALED_KEY_BYTES = 32 + 24 + 48;
const LICENSE_ID = /^[0-9a-f]{16}$/;

/** `TypeError` unless `value` is a string, `RangeError` when it is empty. */
function checkText(value: unknown, name: string): asserts value is string {
  checkString(value, name);
  if (value === '') throw new RangeError(`${name} must not be empty`);
}

/** A license id (16 lowercase hex digits) as the `bigint` the WASM module takes. */
export function licenseIdToBigInt(licenseId: unknown, name = 'licenseId'): bigint {
  if (typeof licenseId !== 'string') throw new TypeError(`${name} must be a string`);
  if (!LICENSE_ID.test(licenseId)) throw new RangeError(`${name} must be 16 lowercase hex digits`);
  return BigInt(`0x${licenseId}`);
}

function checkMillis(value: unknown, name: string): bigint {
  if (typeof value !== 'number') throw new TypeError(`${name} must be a number`);
  if (!Number.isSafeInteger(value) || value < 0) throw new RangeError(`${name} must be a non-negative safe integer`);
  return BigInt(value);
}

function checkMaster(master: unknown): MasterRef {
  if (typeof master !== 'object' || master === null) throw new TypeError('master must be an object');
  const { id, sha256 } = master as MasterRef;
  checkText(id, 'master.id');
  checkBytes(sha256, 'master.sha256', 32);
  return { id, sha256 };
}

function checkSealed(value: unknown, name: string): SealedKey {
  if (typeof value !== 'object' || value === null) throw new TypeError(`${name} must be an object`);
  const { ephemeral, nonce, sealed } = value as SealedKey;
  checkBytes(ephemeral, `${name}.ephemeral`, 32);
  checkBytes(nonce, `${name}.nonce`, 24);
  checkBytes(sealed, `${name}.sealed`, 48);
  return { ephemeral, nonce, sealed };
}

/** `ephemeral || nonce || sealed`, the 104 bytes the WASM module takes. */
export function sealedKeyToBytes(value: SealedKey, name = 'sealed'): Uint8Array {
  const { ephemeral, nonce, sealed } = checkSealed(value, name);
  const out = new Uint8Array(SEALED_KEY_BYTES);
  out.set(ephemeral, 0);
  out.set(nonce, 32);
  out.set(sealed, 56);
  return out;
}

/** The inverse of {@link sealedKeyToBytes}. */
export function sealedKeyFromBytes(bytes: Uint8Array): SealedKey {
  if (bytes.length !== SEALED_KEY_BYTES) throw new IkiError('INTERNAL', 'a sealed key is not 104 bytes');
  return { ephemeral: bytes.slice(0, 32), nonce: bytes.slice(32, 56), sealed: bytes.slice(56) };
}

function hexBytes(hex: string): Uint8Array {
  return Uint8Array.from(hex.match(/../g) ?? [], (pair) => Number.parseInt(pair, 16));
}

function parseSummary(json: string): MasterSummary {
  const raw = JSON.parse(json) as Omit<MasterSummary, 'signerPublicKey'> & { signerPublicKey: string };
  return { ...raw, signerPublicKey: hexBytes(raw.signerPublicKey) };
}

/** The upload check of one master: `push` its bytes in order, then `finish` once. */
export class MasterVerifier extends WasmOwned<WasmMasterVerifier> {
  /** @internal Made by {@link ServiceKeys.masterVerifier}. */
  constructor(inner: WasmMasterVerifier) {
    super(inner);
  }

  /** Checks the next bytes of the master; any error is final. */
  push(bytes: Uint8Array): void {
    checkBytes(bytes, 'bytes');
    const inner = handleOf(this);
    for (let at = 0; at < bytes.length; at += PIECE_BYTES) {
      callWasm(() => inner.push(bytes.subarray(at, at + PIECE_BYTES)));
    }
  }

  /**
   * Refuses, as soon as the manifest is read and before any entry is decoded, a master whose
   * entries decode to more than `max` bytes in all (`LIMIT_EXCEEDED`).
   */
  limitDecodedBytes(max: number): void {
    if (!Number.isSafeInteger(max) || max < 0) throw new RangeError('max must be a whole number of bytes');
    const inner = handleOf(this);
    callWasm(() => inner.limitDecodedBytes(max));
  }

  /** Ends the input; the summary of a sound master, or the error that refuses it. */
  finish(): MasterSummary {
    const inner = handleOf(this);
    return parseSummary(callWasm(() => inner.finish()));
  }
}

/** One license copy in the making: `push` master bytes, `takeOutput` copy bytes, `finish`. */
export class LicenseCopier extends WasmOwned<WasmLicenseCopier> {
  /** @internal Made by {@link ServiceKeys.licenseCopier}. */
  constructor(inner: WasmLicenseCopier) {
    super(inner);
  }

  /** Reads the next bytes of the master (checked again while copying). */
  push(masterBytes: Uint8Array): void {
    checkBytes(masterBytes, 'masterBytes');
    const inner = handleOf(this);
    callWasm(() => inner.push(masterBytes));
  }

  /** The copy bytes produced so far (possibly none). */
  takeOutput(): Uint8Array {
    const inner = handleOf(this);
    return callWasm(() => inner.takeOutput());
  }

  /**
   * Ends the master and returns the rest of the copy (SIGN included). Throws when the stored
   * master is not the recorded one (`TRUNCATED`, `BAD_SIGNATURE`, `DECRYPT_FAILED`,
   * `MASTER_MISMATCH`, ...): the download must then be aborted, and the copy sent so far has
   * no SIGN, so no reader accepts it.
   */
  finish(): Uint8Array {
    const inner = handleOf(this);
    return callWasm(() => inner.finish());
  }
}

/** The service's keys, derived once from its root secret; they never leave WebAssembly. */
export class ServiceKeys extends WasmOwned<WasmServiceKeys> {
  /** The service identifier (its base URL). */
  readonly serviceId: string;
  /** X25519 key that masters' recipient slots are sealed to. */
  readonly x25519PublicKey: Uint8Array;
  /** Ed25519 key that signs license copies. */
  readonly licenseSigningPublicKey: Uint8Array;
  /** Ed25519 key that signs key certificates. */
  readonly certificatePublicKey: Uint8Array;

  private constructor(inner: WasmServiceKeys) {
    super(inner);
    this.serviceId = inner.serviceId;
    this.x25519PublicKey = inner.x25519PublicKey;
    this.licenseSigningPublicKey = inner.licenseSigningPublicKey;
    this.certificatePublicKey = inner.certificatePublicKey;
  }

  /**
   * Derives every service key from the 32-byte root secret (docs/format.md §8.4). The bytes
   * are copied into WASM and wiped there; the caller wipes its own copy (`root.fill(0)`).
   */
  static fromRoot(root: Uint8Array, serviceId: string): ServiceKeys {
    checkBytes(root, 'root', 32);
    checkText(serviceId, 'serviceId');
    const { WasmServiceKeys: Keys } = wasm();
    return new ServiceKeys(callWasm(() => new Keys(root, serviceId)));
  }

  /** Key release (§8.2): the license key of (`master`, `licenseId`) sealed to the player. */
  sealLicenseKey(master: MasterRef, licenseId: string, playerPublicKey: Uint8Array): SealedKey {
    const { id, sha256 } = checkMaster(master);
    const license = licenseIdToBigInt(licenseId);
    checkBytes(playerPublicKey, 'playerPublicKey', 32);
    const inner = handleOf(this);
    return sealedKeyFromBytes(callWasm(() => inner.sealLicenseKey(id, sha256, license, playerPublicKey)));
  }

  /** A fresh upload check; free it when done. */
  masterVerifier(): MasterVerifier {
    const inner = handleOf(this);
    return new MasterVerifier(callWasm(() => inner.masterVerifier()));
  }

  /**
   * Checks a whole master as it streams; resolves only after the last byte was checked.
   * `maxDecodedBytes` refuses, from the manifest, a master that decodes to more.
   */
  async verifyMaster(source: ByteSource, options: { maxDecodedBytes?: number } = {}): Promise<MasterSummary> {
    const verifier = this.masterVerifier();
    try {
      if (options.maxDecodedBytes !== undefined) verifier.limitDecodedBytes(options.maxDecodedBytes);
      for await (const piece of pieces(source)) verifier.push(piece);
      return verifier.finish();
    } finally {
      verifier.free();
    }
  }

  /** A copier of `master` for `license`; free it when done. */
  licenseCopier(master: MasterRef, license: LicenseRecord): LicenseCopier {
    const { id, sha256 } = checkMaster(master);
    if (typeof license !== 'object' || license === null) throw new TypeError('license must be an object');
    const licenseId = licenseIdToBigInt(license.id, 'license.id');
    for (const field of ['licensee', 'licenseeName', 'seller'] as const) {
      if (typeof license[field] !== 'string') throw new TypeError(`license.${field} must be a string`);
    }
    const issuedAt = checkMillis(license.issuedAt, 'license.issuedAt');
    const inner = handleOf(this);
    return new LicenseCopier(callWasm(() => inner.licenseCopier(id, sha256, licenseId, license.licensee,
      license.licenseeName, license.seller, issuedAt)));
  }

  /**
   * The license copy of `master` (docs/format.md §9), produced while the master streams in:
   * each yielded piece is ready to send. Pulling drives the work, so a slow consumer slows
   * the reading of the master (back-pressure). Throws at the end when the master is not the
   * recorded one; the consumer must then abort whatever it sent.
   */
  async *copyLicense(source: ByteSource, master: MasterRef, license: LicenseRecord): AsyncGenerator<Uint8Array> {
    const copier = this.licenseCopier(master, license);
    try {
      for await (const piece of pieces(source)) {
        copier.push(piece);
        const out = copier.takeOutput();
        if (out.length > 0) yield out;
      }
      const rest = copier.finish();
      if (rest.length > 0) yield rest;
    } finally {
      copier.free();
    }
  }

  /**
   * Reads the watermark of a leaked texture (PNG, JPEG or WebP bytes) of `master`. The image
   * is decoded only when its header's dimensions are within `bound` (the master's largest
   * texture; by default, and never beyond, {@link IMAGE_BOUND_CEILING}), else the answer is
   * `IMAGE_TOO_LARGE` before any pixel is decoded.
   */
  identify(master: MasterRef, image: Uint8Array, bound: ImageBound = IMAGE_BOUND_CEILING): Identification {
    const { id, sha256 } = checkMaster(master);
    checkBytes(image, 'image');
    const { maxSidePx, maxPixels } = checkBound(bound);
    const inner = handleOf(this);
    const found = callWasm(() => inner.identify(id, sha256, image, maxSidePx, maxPixels)) as Identification;
    return found.licenseId === undefined
      ? { found: found.found, confidence: found.confidence }
      : { found: found.found, licenseId: found.licenseId, confidence: found.confidence };
  }

  /**
   * Identifies a leaked texture (PNG, JPEG or WebP bytes) of `master`, also when it was
   * resized (25 % to 400 %), turned (up to 5 degrees), cropped (keeping a tenth of a
   * texture) or drawn over a background: reads it blind,
   * and when that finds nothing, streams the stored master from `masterSource()` and
   * registers the leak on each of its textures until one reads (docs/watermark.md section
   * 11). `budgetMs` (default {@link IDENTIFY_BUDGET_MS}) bounds the search; memory stays
   * around the largest texture plus the leak. `issued` (the ids of the licenses issued for the
   * master) lets a read whose bits do not decode name a license by its score, and a mix of
   * several copies name its colluders (docs/watermark.md section 12). The image is decoded only when its header's
   * dimensions are within `bound` (by default, and never beyond, {@link IMAGE_BOUND_CEILING}),
   * else the answer is `IMAGE_TOO_LARGE` before any pixel is decoded.
   */
  async identifyLeak(master: MasterRef, image: Uint8Array, masterSource: () => ByteSource,
    options: { budgetMs?: number; bound?: ImageBound; issued?: readonly string[] } = {}): Promise<LeakIdentification> {
    const { id, sha256 } = checkMaster(master);
    checkBytes(image, 'image');
    const { maxSidePx, maxPixels } = checkBound(options.bound ?? IMAGE_BOUND_CEILING);
    if (typeof masterSource !== 'function') throw new TypeError('masterSource must be a function');
    const budgetMs = options.budgetMs ?? IDENTIFY_BUDGET_MS;
    if (typeof budgetMs !== 'number' || !Number.isFinite(budgetMs) || budgetMs < 0) {
      throw new RangeError('budgetMs must be a non-negative number');
    }
    const issued = issuedIds(options.issued ?? []);
    const inner = handleOf(this);
    const identifier: WasmIdentifier = callWasm(() => inner.identifier(id, sha256, image, maxSidePx, maxPixels, budgetMs, issued));
    try {
      if (!identifier.done) {
        for await (const piece of pieces(masterSource())) {
          callWasm(() => identifier.push(piece));
          if (identifier.done) break;
        }
      }
      return callWasm(() => identifier.finish()) as LeakIdentification;
    } finally {
      identifier.free();
    }
  }

  /** An account slot's blob (§8.3) from a content key the client sealed for `accountId`. */
  createAccountBlob(accountId: string, sealedContentKey: SealedKey): Uint8Array {
    checkText(accountId, 'accountId');
    const sealed = sealedKeyToBytes(sealedContentKey, 'sealedContentKey');
    const inner = handleOf(this);
    return callWasm(() => inner.createAccountBlob(accountId, sealed));
  }

  /** Opens an account blob for `accountId` (signed in) and seals its key to the client. */
  unwrapAccountBlob(accountId: string, blob: Uint8Array, clientPublicKey: Uint8Array): SealedKey {
    checkText(accountId, 'accountId');
    checkBytes(blob, 'blob');
    checkBytes(clientPublicKey, 'clientPublicKey', 32);
    const inner = handleOf(this);
    return sealedKeyFromBytes(callWasm(() => inner.unwrapAccountBlob(accountId, blob, clientPublicKey)));
  }

  /**
   * Checks a device key's registration proof (a strict Ed25519 signature by the key over
   * `"IKI-KEY-REGISTRATION-V1" || 0x00 || accountId`) and returns its key certificate (§7.2),
   * valid in [issuedMs, expiresMs) (`expiresMs` 0: no end).
   */
  certifyRegisteredKey(subjectPublicKey: Uint8Array, proof: Uint8Array, accountId: string,
    issuedMs: number, expiresMs: number): Uint8Array {
    checkBytes(subjectPublicKey, 'subjectPublicKey', 32);
    checkBytes(proof, 'proof', 64);
    checkText(accountId, 'accountId');
    const issued = checkMillis(issuedMs, 'issuedMs');
    const expires = checkMillis(expiresMs, 'expiresMs');
    const inner = handleOf(this);
    return callWasm(() => inner.certifyRegisteredKey(subjectPublicKey, proof, accountId, issued, expires));
  }
}

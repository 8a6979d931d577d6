/**
 * The port between this service and the shared WASM module (`@iki/core`).
 *
 * Everything that touches key material or container bytes crosses this interface: opening a
 * master's recipient slot, decrypting and verifying every chunk, inflating, watermarking,
 * re-encrypting and signing a license copy, sealing a released key, wrapping and unwrapping
 * account slots and certifying device signing keys (SPEC "Master and license copy",
 * "Algorithms"; docs/format.md §3, §7.2, §8, §9). The service never derives a key in
 * JavaScript; it hands the root secret to the implementation once, at construction.
 *
 * Contract for every method: bytes are `Uint8Array` (never `Buffer`-specific), streams are
 * async iterables of chunks of any size, memory stays around one container chunk. Failures
 * reject with an `Error` whose `code` is one of docs/format.md §11 (`DECRYPT_FAILED`,
 * `BAD_SIGNATURE`, `WEAK_KEY`, ...) and whose `details` is a small non-secret object; the HTTP
 * layer maps those codes through `errors.ts`. Implementations must never log key material.
 */
import type { RootSecret } from '../secrets.js';

/** Public keys of the service, each 32 bytes (docs/format.md §8.4). */
export interface ServicePublicKeys {
  /** X25519 key that masters' recipient slots are sealed to. */
  readonly x25519: Uint8Array;
  /** Ed25519 key that signs license copies (signer kind `service`). */
  readonly licenseSigning: Uint8Array;
  /** Ed25519 key that signs key certificates (docs/format.md §7.2 issuer_key). */
  readonly certificateIssuer: Uint8Array;
}

/** What a complete check of a master reports (all of it covered by the seller's signature). */
export interface MasterSummary {
  /** `meta.name` from the manifest. */
  readonly name: string;
  /** The Ed25519 public key in SIGN (32 bytes). */
  readonly signerPublicKey: Uint8Array;
  /** The signer JSON from SIGN (docs/format.md §7.1), parsed; a claim, not an attribution. */
  readonly signer: Readonly<Record<string, unknown>>;
  /**
   * The account a certificate of this service attributes the file to (docs/format.md §7.2,
   * the readers' one check `check_signer`), or null when the signer claims none or the claim
   * does not hold. Revocation is the service's own record.
   */
  readonly certifiedAccount: string | null;
  /** HEAD's created_ms. */
  readonly createdMs: number;
  /** Manifest entries and, among them, `rgba8` textures. */
  readonly entries: number;
  readonly textures: number;
  /** Sum of the decoded sizes of all entries. */
  readonly decodedBytes: number;
  /** The largest texture: longest side and largest area among the textures (0, 0 without). */
  readonly textureBound: ImageBound;
}

/** A side and an area in pixels: the largest image identify decodes. */
export interface ImageBound {
  readonly maxSidePx: number;
  readonly maxPixels: number;
}

/** The identity of a stored master, as the key derivations need it. */
export interface MasterRef {
  /** Master id (UTF-8; docs/format.md §3.4 master_id). */
  readonly id: string;
  /** SHA-256 of the stored master file (32 bytes); salt of the license and watermark keys. */
  readonly sha256: Uint8Array;
}

/** The license object written into a license copy's manifest (docs/format.md §5.2). */
export interface LicenseObject {
  /** 16 lowercase hex digits. */
  readonly id: string;
  readonly masterId: string;
  readonly licensee: string;
  readonly licenseeName: string;
  readonly seller: string;
  /** Milliseconds since the Unix epoch; also the copy's HEAD created_ms. */
  readonly issuedAt: number;
}

/** A key sealed to a caller's X25519 key (docs/format.md §8.2). */
export interface SealedKey {
  /** The service's X25519 public key (32 bytes): per unwrap, or kept up to a minute or 4096 key releases (docs/format.md §8.2). */
  readonly ephemeralPublicKey: Uint8Array;
  /** XChaCha20-Poly1305 nonce (24 bytes). */
  readonly nonce: Uint8Array;
  /** Sealed 32-byte key plus tag (48 bytes). */
  readonly ciphertext: Uint8Array;
}

/** Media types `identify` accepts. */
export type ImageMediaType = 'image/png' | 'image/jpeg' | 'image/webp';

/** Where a leak sits on a texture of the master (docs/watermark.md section 11). */
export interface TextureMatch {
  /** The texture's entry path in the master. */
  readonly path: string;
  readonly width: number;
  readonly height: number;
  /** Leak pixels per texture pixel on each axis (0.9: resized to 90 %). */
  readonly scale: { readonly x: number; readonly y: number };
  /** Texture coordinates (pixels) of the leak's top-left corner. */
  readonly offset: { readonly x: number; readonly y: number };
  /** The texture pixels the leak covers. */
  readonly region: { readonly x: number; readonly y: number; readonly width: number; readonly height: number };
  /** Correlation of the leak and the registered texture, up to 1. */
  readonly similarity: number;
}

/** Why identify found nothing. */
export type NotFoundReason = 'too_small' | 'too_busy' | 'no_matching_texture' | 'not_marked' | 'time_budget' | 'mixed';

/** One issued license's score against the read (docs/watermark.md section 12). */
export interface LicenseCandidate {
  readonly licenseId: string;
  /** Correlation with the read in standard deviations of an innocent license's (at most sqrt(80)). */
  readonly score: number;
  /** Upper bound on the probability that an innocent license scores this high in this identify. */
  readonly falseAccusation: number;
  /** Named: falseAccusation at most 1e-9, or 1e-6 for the colluders of a mix. */
  readonly named: boolean;
}

/** What every identify answer carries besides the verdict. */
interface IdentifyFacts {
  readonly confidence: number;
  /** `blind`: read as uploaded; `registered`: read after registering it on a texture. */
  readonly method: 'blind' | 'registered';
  /** The texture that matched and the transform found, when one did. */
  readonly texture?: TextureMatch;
  /** Textures of the master the leak was registered on. */
  readonly texturesTried: number;
  /** `decoded`: the bits read carry a valid CRC; `scored`: named by its score against the issued licenses. */
  readonly match: 'decoded' | 'scored';
  /** Whether the read looks like several differently licensed copies mixed. */
  readonly mixed: boolean;
  /** The issued licenses scoring highest, best first. */
  readonly candidates: readonly LicenseCandidate[];
}

/** Result of reading a watermark; "no mark" is an answer, not an error. */
export type IdentifyResult =
  | (IdentifyFacts & {
    readonly found: false;
    readonly reason: NotFoundReason;
    /** The image's own capacity: a freshly marked copy's blind read. */
    readonly capacity?: { readonly confidence: number; readonly reads: boolean; readonly visiblePixels: number };
  })
  | (IdentifyFacts & { readonly found: true; readonly licenseId: string });

/** Identify's limits for one request. */
export interface IdentifyOptions {
  /** Time budget of the whole search, in milliseconds. */
  readonly budgetMs: number;
  /** The largest image decoded (the route derives it from the master's largest texture). */
  readonly bound: ImageBound;
  /** The account the work is for (the worker pool's per-account share; not sent to a worker). */
  readonly owner?: string;
  /** Ids of the licenses issued for the master, scored against the read. */
  readonly issued: readonly string[];
}

/** Options of the upload check. */
export interface VerifyOptions {
  /**
   * Refuse with `LIMIT_EXCEEDED` a master whose entries decode to more than this many bytes
   * in all, from its manifest, before any entry is decoded (issue 22 item 10).
   */
  maxDecodedBytes?: number;
  /** The seller whose upload this is: the worker pool counts and queues bulk jobs per account. */
  owner?: string;
}

/** The operations the WASM module provides to the service. */
export interface LicenseCrypto {
  /** The service's public keys; cheap and synchronous. */
  servicePublicKeys(): ServicePublicKeys;

  /**
   * Checks a whole master: magic and kind `.ikm`, role `master`, the recipient slot opens
   * with the service's X25519 key, every chunk decrypts and decodes, every hash matches and
   * the signature verifies strictly. Resolves only after the last byte was checked.
   */
  verifyMasterStream(source: AsyncIterable<Uint8Array>, options?: VerifyOptions): Promise<MasterSummary>;

  /**
   * Derives the license copy of `master` (docs/format.md §9): decrypts each chunk,
   * watermarks every rgba8 row band with `license.id`, re-encrypts under the license key and
   * signs as `service`. Yields container bytes in order; byte-identical for one license.
   */
  streamLicenseCopy(source: AsyncIterable<Uint8Array>, master: MasterRef, license: LicenseObject,
    service: string): AsyncIterable<Uint8Array>;

  /** Seals the license key of (`master`, `licenseId`) to the player's X25519 key (§8.2). */
  sealLicenseKey(master: MasterRef, licenseId: string, recipientPublicKey: Uint8Array): Promise<SealedKey>;

  /**
   * Reads the watermark of `master` from one leaked texture image (encoded bytes): blind
   * first, then, if nothing was read, registered on each texture of the stored master
   * (`masterSource()` streams it; called at most once, and only then) for a resized or
   * cropped leak, within `options.budgetMs`. The image's header dimensions are checked
   * against `options.bound` before any pixel is decoded or any memory is allocated for them,
   * and the decoder runs with the same bound: beyond it the answer is `IMAGE_TOO_LARGE`.
   * One self-contained call, so that it can run in a worker.
   */
  identify(master: MasterRef, image: Uint8Array, mediaType: ImageMediaType,
    masterSource: () => AsyncIterable<Uint8Array>, options: IdentifyOptions): Promise<IdentifyResult>;

  /**
   * Makes an account-slot blob (§8.3) for `accountId` from a content key that the client
   * sealed to the service's X25519 key with context `"iki-account-slot-v1" || 0x00 || accountId`
   * (docs/format.md §8.3; the same label is the associated data of the blob).
   */
  wrapAccountSlot(accountId: string, sealedContentKey: SealedKey): Promise<Uint8Array>;

  /**
   * Opens an account-slot blob for `accountId` and seals the content key to the caller's
   * X25519 key with context `"iki-account-unwrap-v1" || 0x00 || accountId` (§8.2).
   */
  unwrapAccountSlot(accountId: string, blob: Uint8Array, recipientPublicKey: Uint8Array): Promise<SealedKey>;

  /**
   * Checks `proof` (a strict Ed25519 signature by `subjectPublicKey` over
   * `"IKI-KEY-REGISTRATION-V1" || 0x00 || accountId`) and returns a key certificate (§7.2)
   * binding the key to the account for [issuedMs, expiresMs) (expiresMs 0 = never).
   */
  certifySigningKey(accountId: string, subjectPublicKey: Uint8Array, proof: Uint8Array,
    issuedMs: number, expiresMs: number): Promise<Uint8Array>;
}

/**
 * Builds the port from the root secret (the implementation keeps it inside WASM) for the
 * service identifier `service` (its public base URL).
 */
export type LicenseCryptoFactory = (root: RootSecret, service: string) => Promise<LicenseCrypto>;

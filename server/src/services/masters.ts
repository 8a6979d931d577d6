/**
 * Master upload and listing (SPEC behaviour rule 1, "Master and license copy"; issue 15
 * items 3 and 11).
 *
 * Before a byte of the body is read, the uploader must have a verified e-mail address, an
 * active signing key registered to the account, room in the storage quota for the declared
 * length, and a free upload slot (`UsageLimiter`); any refusal then leaves the body unread.
 * The upload is streamed to a temporary blob while its SHA-256 and size are computed and its
 * framing is followed (`UploadScan`): a wrong magic stops it at the first bytes, and the key in
 * SIGN, the file's last chunk, is checked against the seller's registered keys as soon as the
 * body ended, before the complete check reads it back (every chunk decrypted and verified, the
 * seller's signature valid). The signer must be a non-revoked key registered to the uploading
 * account, which is what makes the seller's signature the seller's; it is checked again on the
 * verified result. Only after all of that is the blob moved into place and the master recorded,
 * within the quota counted atomically; any failure leaves nothing.
 */
import { createHash } from 'node:crypto';
import type { UploadLimits } from '../config.js';
import { ApiError, fromPortError } from '../errors.js';
import type { BlobStore } from '../storage/blobs.js';
import type { Master, Repository } from '../storage/repository.js';
import type { LicenseCrypto, MasterRef } from './crypto-port.js';
import { QUOTA_DEFAULTS } from '../quota-config.js';
import { newMasterId } from './ids.js';
import { UploadScan } from './upload-scan.js';
import type { UsageLimiter } from './usage-limits.js';

/** Longest master name (the model's `meta.name`), in bytes of UTF-8. */
export const MAX_MASTER_NAME_BYTES = 256;

/** A master as the seller sees it. */
export interface MasterView {
  masterId: string;
  name: string;
  sha256: string;
  size: number;
  entries: number;
  textures: number;
  signerPublicKey: string;
  createdAt: string;
  /** When the seller archived it (it takes no new license), or null. */
  archivedAt: string | null;
  licenseCount?: number;
  /**
   * Upload answer only: the account the master's key certificate attributes it to (always the
   * uploader's when present), or null for a master signed without a certificate.
   */
  signerAccount?: string | null;
  /**
   * Upload answer only: the seller's other masters with the same SHA-256 (the same file
   * uploaded before), oldest first; empty when the file is new.
   */
  duplicateOf?: { masterId: string; name: string; createdAt: string }[];
}

/** Dependencies of the master service. */
export interface MasterDeps {
  repo: Repository;
  blobs: BlobStore;
  crypto: LicenseCrypto;
  now: () => Date;
  limiter: UsageLimiter;
  limits: UploadLimits;
}

/** How much an upload may receive: the body limit and what the storage quota has left. */
interface ReceiveLimits {
  maxBytes: number;
  quotaLeft: number;
}

/** The view of a stored master. */
export function masterView(m: Master, licenseCount?: number): MasterView {
  const view: MasterView = {
    masterId: m.id, name: m.name, sha256: m.sha256, size: m.size, entries: m.entries,
    textures: m.textures, signerPublicKey: m.signerPublicKey, createdAt: m.createdAt.toISOString(),
    archivedAt: m.archivedAt?.toISOString() ?? null,
  };
  if (licenseCount !== undefined) view.licenseCount = licenseCount;
  return view;
}

/** The reference the crypto port needs for key derivations. */
export function masterRef(m: Master): MasterRef {
  return { id: m.id, sha256: Uint8Array.from(Buffer.from(m.sha256, 'hex')) };
}

/**
 * The master's name (the model meta's `name`) is stored and shown as text, so it follows the
 * rule of every text field of the API (schemas/requests.ts): no control characters, of which
 * PostgreSQL cannot even store NUL.
 */
function refuseControlCharacters(name: string): void {
  if (/[\u0000-\u001f\u007f-\u009f]/u.test(name)) {
    throw new ApiError('VALIDATION_FAILED', 'the master\'s name contains control characters',
      { errors: [{ path: '/meta/name', message: 'must not contain control characters (U+0000 to U+001F, U+007F to U+009F)' }] });
  }
}

/** Upload, listing and look-up of masters. */
export class MasterService {
  constructor(private readonly deps: MasterDeps) {}

  /**
   * Stores, checks and records a master uploaded by `sellerId`. `declaredBytes` is the body's
   * Content-Length when it has one; `source` is not read before every refusal that the
   * headers allow was made.
   */
  async upload(sellerId: string, source: AsyncIterable<Uint8Array>, maxBytes: number,
    declaredBytes?: number): Promise<MasterView> {
    const quotaLeft = await this.admit(sellerId, declaredBytes);
    const slot = await this.deps.limiter.startUpload(sellerId);
    try {
      return await this.store(sellerId, source, { maxBytes, quotaLeft });
    } finally {
      await slot.release();
    }
  }

  /** Refusals decided on the request alone; returns the bytes the quota has left. */
  private async admit(sellerId: string, declaredBytes: number | undefined): Promise<number> {
    const { repo, limits } = this.deps;
    const account = await repo.findAccountById(sellerId);
    if (account === undefined) throw new ApiError('UNAUTHENTICATED', 'invalid or expired access token');
    if (!account.emailVerified) {
      throw new ApiError('EMAIL_NOT_VERIFIED', 'verify your e-mail address before uploading a master');
    }
    if (!(await repo.hasActiveSigningKey(sellerId))) {
      throw new ApiError('SIGNING_KEY_REQUIRED',
        'register a signing key (POST /api/keys/signing) and sign the master with it before uploading');
    }
    const used = await repo.storedMasterBytes(sellerId);
    const left = limits.storageQuotaBytes - used;
    if ((declaredBytes ?? 1) > left) throw quotaExceeded(limits.storageQuotaBytes, used);
    return left;
  }

  private async store(sellerId: string, source: AsyncIterable<Uint8Array>, limits: ReceiveLimits): Promise<MasterView> {
    const { blobs, crypto, repo, now } = this.deps;
    const upload = await blobs.begin();
    let committed: string | undefined;
    try {
      const scan = new UploadScan();
      const { sha256, size } = await this.receive(source, limits, async (chunk) => {
        scan.push(chunk);
        await upload.write(chunk);
      });
      await upload.finish();
      // The claimed signer, before the expensive pass; the verified one is checked below.
      if (scan.signerPublicKey !== undefined) await this.checkSigner(sellerId, scan.signerPublicKey);
      const summary = await crypto.verifyMasterStream(upload.read(), {
        maxDecodedBytes: this.deps.limits.maxDecodedBytes ?? QUOTA_DEFAULTS.uploads.maxDecodedBytes, owner: sellerId,
      }).catch((err: unknown) => {
        throw fromPortError(err);
      });
      refuseControlCharacters(summary.name);
      checkName(summary.name);
      const signerPublicKey = await this.checkSigner(sellerId, summary.signerPublicKey);
      // A certificate that verifies names the key's account, so this holds for every key
      // registered here; checked rather than assumed, as the attribution is what a buyer sees.
      if (summary.certifiedAccount !== null && summary.certifiedAccount !== sellerId) {
        throw new ApiError('SIGNER_NOT_SELLER', 'the master\'s key certificate names another account', { publicKey: signerPublicKey });
      }
      // Identical bytes are stored once: under a lock on the SHA-256, a master recorded again
      // shares the first one's blob, and only a new content moves its upload into place.
      const candidate: Master = {
        id: newMasterId(), sellerId, name: summary.name, sha256, size, entries: summary.entries,
        textures: summary.textures, signerPublicKey, createdAt: now(), textureBound: { ...summary.textureBound },
      };
      const master = await repo.recordMaster(candidate, this.deps.limits.storageQuotaBytes, async (blobId, within) => {
        committed = blobId;
        await upload.commit(blobId, within);
      });
      if (master === undefined) throw quotaExceeded(this.deps.limits.storageQuotaBytes, await repo.storedMasterBytes(sellerId));
      // A shared blob leaves the pending upload unused; one left by a crash is swept at start.
      if (committed === undefined) await upload.abort().catch(() => {});
      return { ...masterView(master, 0), signerAccount: summary.certifiedAccount,
        duplicateOf: await this.sameFile(sellerId, master) };
    } catch (err) {
      // A commit rolled back with its transaction leaves the upload pending: both are cleared.
      if (committed !== undefined) await blobs.remove(committed).catch(() => {});
      await upload.abort().catch(() => {});
      throw err;
    }
  }

  /**
   * The seller's other masters holding the same bytes. A duplicate is kept (the seller may mean
   * it, say to license one copy under another name) but the answer says so, so the page can warn.
   */
  private async sameFile(sellerId: string, master: Master): Promise<NonNullable<MasterView['duplicateOf']>> {
    const masters = await this.deps.repo.listMastersBySeller(sellerId);
    return masters.filter((m) => m.sha256 === master.sha256 && m.id !== master.id).reverse()
      .map((m) => ({ masterId: m.id, name: m.name, createdAt: m.createdAt.toISOString() }));
  }

  /**
   * Renames one of the seller's masters (the name shown in lists and copies' file names),
   * archives it (it then takes no new license; its licenses, copies and history go on: the way
   * to retire a master that has licenses, which cannot be deleted) or un-archives it. All
   * checks come before any change.
   */
  async update(sellerId: string, masterId: string, change: { name?: string; archived?: boolean }): Promise<MasterView> {
    const { repo, now } = this.deps;
    const name = change.name?.trim();
    if (name !== undefined) {
      if (name === '') {
        throw new ApiError('VALIDATION_FAILED', 'the name is empty', { errors: [{ path: '/name', message: 'must not be empty' }] });
      }
      refuseControlCharacters(name);
      checkName(name);
    }
    let master = await this.get(sellerId, masterId);
    if (name !== undefined) master = (await repo.renameMaster(masterId, sellerId, name)) ?? master;
    if (change.archived !== undefined) {
      master = (await repo.archiveMaster(masterId, sellerId, change.archived ? now() : undefined)) ?? master;
    }
    return masterView(master, (await repo.listLicensesByMaster(masterId)).length);
  }

  /**
   * Deletes one of the seller's masters and its stored file. Refused (`MASTER_HAS_LICENSES`)
   * while any license of it exists, revoked ones included: a license's buyer, history and
   * identify all need the master.
   */
  async remove(sellerId: string, masterId: string): Promise<void> {
    const outcome = await this.deps.repo.deleteMaster(masterId, sellerId);
    if (outcome.kind === 'not_found') throw new ApiError('MASTER_NOT_FOUND', 'no such master');
    if (outcome.kind === 'has_licenses') {
      throw new ApiError('MASTER_HAS_LICENSES',
        `this master has ${outcome.licenses} license${outcome.licenses === 1 ? '' : 's'} (revoked ones count too), so it `
        + 'is kept: its buyers\' copies and history depend on it', { licenses: outcome.licenses });
    }
    // Identical masters share one blob: it goes only with the last of them. The record is gone,
    // so nothing reads an orphaned blob any more; a failure leaves only unreachable bytes.
    if (outcome.orphanBlob !== undefined) await this.deps.blobs.remove(outcome.orphanBlob).catch(() => {});
  }

  /** The seller's masters, newest first. */
  async list(sellerId: string): Promise<MasterView[]> {
    const masters = await this.deps.repo.listMastersBySeller(sellerId);
    return masters.map((m) => masterView(m, m.licenseCount));
  }

  /** One master of the caller's; `MASTER_NOT_FOUND` for anyone but its seller. */
  async get(callerId: string, masterId: string): Promise<Master> {
    const master = await this.deps.repo.findMaster(masterId);
    if (master === undefined || master.sellerId !== callerId) {
      throw new ApiError('MASTER_NOT_FOUND', 'no such master');
    }
    return master;
  }

  private async receive(source: AsyncIterable<Uint8Array>, limits: ReceiveLimits,
    sink: (chunk: Uint8Array) => Promise<void>): Promise<{ sha256: string; size: number }> {
    const hash = createHash('sha256');
    let size = 0;
    for await (const chunk of source) {
      size += chunk.length;
      if (size > limits.maxBytes) {
        throw new ApiError('PAYLOAD_TOO_LARGE', 'the master exceeds the upload limit', { max: limits.maxBytes });
      }
      if (size > limits.quotaLeft) {
        throw quotaExceeded(this.deps.limits.storageQuotaBytes, this.deps.limits.storageQuotaBytes - limits.quotaLeft);
      }
      hash.update(chunk);
      await sink(chunk);
    }
    if (size === 0) throw new ApiError('VALIDATION_FAILED', 'the request body is empty');
    return { sha256: hash.digest('hex'), size };
  }

  private async checkSigner(sellerId: string, signer: Uint8Array): Promise<string> {
    const publicKey = Buffer.from(signer).toString('base64url');
    const key = await this.deps.repo.findSigningKey(publicKey);
    if (key === undefined || key.accountId !== sellerId || key.revokedAt !== undefined) {
      throw new ApiError('SIGNER_NOT_SELLER',
        'the master is not signed by an active signing key registered to your account', { publicKey });
    }
    return publicKey;
  }
}

function quotaExceeded(quotaBytes: number, usedBytes: number): ApiError {
  return new ApiError('STORAGE_QUOTA_EXCEEDED',
    `the upload would take your stored masters past your storage quota of ${quotaBytes} bytes`,
    { quotaBytes, usedBytes });
}

/** Refuses a name longer than `MAX_MASTER_NAME_BYTES` (it is shown in lists, copies and file names). */
function checkName(name: string): void {
  const bytes = Buffer.byteLength(name, 'utf8');
  if (bytes > MAX_MASTER_NAME_BYTES) {
    throw new ApiError('MASTER_NAME_TOO_LONG',
      `the model's name (meta.name) is ${bytes} bytes of UTF-8; at most ${MAX_MASTER_NAME_BYTES} are allowed`,
      { bytes, maxBytes: MAX_MASTER_NAME_BYTES });
  }
}

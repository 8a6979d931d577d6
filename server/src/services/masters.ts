/**
 * Master upload and listing (SPEC behaviour rule 1, "Master and license copy").
 *
 * An upload is streamed to a temporary blob while its SHA-256 and size are computed, then read
 * back through the crypto port's complete check (every chunk decrypted and verified, the
 * seller's signature valid). The signing key must be a non-revoked key registered to the
 * uploading account, which is what makes the seller's signature the seller's. Only after all
 * of that is the blob moved into place and the master recorded; any failure leaves nothing.
 */
import { createHash } from 'node:crypto';
import { ApiError, fromPortError } from '../errors.js';
import type { BlobStore } from '../storage/blobs.js';
import type { Master, Repository } from '../storage/repository.js';
import type { LicenseCrypto, MasterRef, MasterSummary } from './crypto-port.js';
import { newMasterId } from './ids.js';

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
  licenseCount?: number;
  /**
   * Upload answer only: the account the master's key certificate attributes it to (always the
   * uploader's when present), or null for a master signed without a certificate.
   */
  signerAccount?: string | null;
}

/** Dependencies of the master service. */
export interface MasterDeps {
  repo: Repository;
  blobs: BlobStore;
  crypto: LicenseCrypto;
  now: () => Date;
}

/** The view of a stored master. */
export function masterView(m: Master, licenseCount?: number): MasterView {
  const view: MasterView = {
    masterId: m.id, name: m.name, sha256: m.sha256, size: m.size, entries: m.entries,
    textures: m.textures, signerPublicKey: m.signerPublicKey, createdAt: m.createdAt.toISOString(),
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

  /** Stores, checks and records a master uploaded by `sellerId`. */
  async upload(sellerId: string, source: AsyncIterable<Uint8Array>, maxBytes: number): Promise<MasterView> {
    const { blobs, crypto, repo, now } = this.deps;
    const upload = await blobs.begin();
    let committed: string | undefined;
    try {
      const { sha256, size } = await this.receive(source, maxBytes, (chunk) => upload.write(chunk));
      await upload.finish();
      const summary = await crypto.verifyMasterStream(upload.read()).catch((err: unknown) => {
        throw fromPortError(err);
      });
      refuseControlCharacters(summary.name);
      const signerPublicKey = await this.checkSigner(sellerId, summary);
      const master: Master = {
        id: newMasterId(), sellerId, name: summary.name, sha256, size, entries: summary.entries,
        textures: summary.textures, signerPublicKey, createdAt: now(),
      };
      await upload.commit(master.id);
      committed = master.id;
      await repo.insertMaster(master);
      return { ...masterView(master, 0), signerAccount: summary.certifiedAccount };
    } catch (err) {
      if (committed !== undefined) await blobs.remove(committed).catch(() => {});
      else await upload.abort().catch(() => {});
      throw err;
    }
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

  private async receive(source: AsyncIterable<Uint8Array>, maxBytes: number,
    sink: (chunk: Uint8Array) => Promise<void>): Promise<{ sha256: string; size: number }> {
    const hash = createHash('sha256');
    let size = 0;
    for await (const chunk of source) {
      size += chunk.length;
      if (size > maxBytes) {
        throw new ApiError('PAYLOAD_TOO_LARGE', 'the master exceeds the upload limit', { max: maxBytes });
      }
      hash.update(chunk);
      await sink(chunk);
    }
    if (size === 0) throw new ApiError('VALIDATION_FAILED', 'the request body is empty');
    return { sha256: hash.digest('hex'), size };
  }

  private async checkSigner(sellerId: string, summary: MasterSummary): Promise<string> {
    const publicKey = Buffer.from(summary.signerPublicKey).toString('base64url');
    const key = await this.deps.repo.findSigningKey(publicKey);
    if (key === undefined || key.accountId !== sellerId || key.revokedAt !== undefined) {
      throw new ApiError('SIGNER_NOT_SELLER',
        'the master is not signed by an active signing key registered to your account', { publicKey });
    }
    // A certificate that verifies names the key's account, so this holds for every key
    // registered here; checked rather than assumed, as the attribution is what a buyer sees.
    if (summary.certifiedAccount !== null && summary.certifiedAccount !== sellerId) {
      throw new ApiError('SIGNER_NOT_SELLER', 'the master\'s key certificate names another account', { publicKey });
    }
    return publicKey;
  }
}

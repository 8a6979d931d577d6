/**
 * The crypto port (`crypto-port.ts`) and the password hasher over the worker pool (issue 13
 * item 1): the heavy calls (a master's complete check, a license copy, identify, Argon2id)
 * run on the pool's workers, each with its own WebAssembly instance, so they never hold the
 * event loop; the cheap ones (public keys, sealing a released key, account slots, key
 * certificates: one X25519 and a few hashes each) stay on a local instance in this thread,
 * where a key release answers without waiting behind a copy.
 */
import { IkiError } from '@iki/core';
import type { PasswordHashing } from '../../config.js';
import type { RootSecret } from '../../secrets.js';
import type {
  IdentifyOptions, IdentifyResult, ImageMediaType, LicenseCrypto, LicenseObject, MasterRef, MasterSummary, SealedKey,
  ServicePublicKeys, VerifyOptions,
} from '../crypto-port.js';
import { PasswordHasher } from '../passwords.js';
import { wasmCrypto, type WasmLicenseCrypto } from '../wasm-crypto.js';
import { blobFile, blobObject, type ObjectRef } from '../../storage/blobs.js';
import { unavailable } from '../../storage/unavailable.js';
import { WorkerPool } from './pool.js';
import type { RecycleOptions } from './recycle.js';

/** Where a worker reads `source` itself: its file or S3 object; undefined for any other source. */
function storedSource(source: AsyncIterable<Uint8Array>): { file: string } | { object: ObjectRef } | undefined {
  const file = blobFile(source);
  if (file !== undefined) return { file };
  const object = blobObject(source);
  return object === undefined ? undefined : { object };
}

/** `LicenseCrypto` with the heavy calls on the pool. */
export class PooledLicenseCrypto implements LicenseCrypto {
  constructor(private readonly local: WasmLicenseCrypto, readonly pool: WorkerPool, private readonly service: string) {}

  servicePublicKeys(): ServicePublicKeys {
    return this.local.servicePublicKeys();
  }

  async verifyMasterStream(source: AsyncIterable<Uint8Array>, options: VerifyOptions = {}): Promise<MasterSummary> {
    // An upload written to a file or an S3 object is read by the worker itself, as a copy's master is.
    const stored = storedSource(source);
    const limit = options.maxDecodedBytes === undefined ? {} : { maxDecodedBytes: options.maxDecodedBytes };
    if (stored !== undefined) {
      return await this.pool.run({ op: 'verify', ...stored, ...limit }, [], undefined, options.owner).result
        .catch((err: unknown) => { throw unavailable(err); }) as MasterSummary;
    }
    return await this.pool.run({ op: 'verify', ...limit }, [() => source], undefined, options.owner).result as MasterSummary;
  }

  streamLicenseCopy(source: AsyncIterable<Uint8Array>, master: MasterRef, license: LicenseObject,
    service: string): AsyncIterable<Uint8Array> {
    if (service !== this.service) {
      throw new IkiError('INVALID_STATE', 'license copies are signed for the service the keys were made for');
    }
    return this.copy(source, master, license);
  }

  /** Pieces arrive from the worker; each one taken is acknowledged, which lets it send another. */
  private async *copy(source: AsyncIterable<Uint8Array>, master: MasterRef, license: LicenseObject): AsyncGenerator<Uint8Array> {
    const arrived: Uint8Array[] = [];
    let wake: (() => void) | undefined;
    let ended = false;
    let failure: unknown;
    // A blob that is a file or an S3 object is read by the worker itself; any other source is pulled from here.
    const stored = storedSource(source);
    const spec = { op: 'copy', master, license, service: this.service, ...stored } as const;
    // The licensee owns the job: the pool caps and queues copies per account (schedule.ts).
    const job = this.pool.run(spec, stored === undefined ? [() => source] : [], (piece) => {
      arrived.push(piece);
      wake?.();
    }, license.licensee);
    job.result.then(() => { ended = true; wake?.(); }, (err: unknown) => { failure = err; ended = true; wake?.(); });
    try {
      for (;;) {
        const piece = arrived.shift();
        if (piece !== undefined) {
          yield piece;
          job.ack();
        } else if (ended) {
          // A file the worker could not read is an outage like any blob store's (503).
          if (failure !== undefined) throw unavailable(failure);
          return;
        } else {
          await new Promise<void>((resolve) => { wake = resolve; });
          wake = undefined;
        }
      }
    } finally {
      // The consumer stopped early (the client went away): stop the worker's job too.
      if (!ended) job.cancel();
    }
  }

  sealLicenseKey(master: MasterRef, licenseId: string, recipientPublicKey: Uint8Array): Promise<SealedKey> {
    return this.local.sealLicenseKey(master, licenseId, recipientPublicKey);
  }

  async identify(master: MasterRef, image: Uint8Array, mediaType: ImageMediaType,
    masterSource: () => AsyncIterable<Uint8Array>, options: IdentifyOptions): Promise<IdentifyResult> {
    // Stream 0 is unused; the master is stream 1, opened only if the blind read finds nothing.
    const none = () => { throw new Error('identify has no stream 0'); };
    const { owner, ...sent } = options;
    return await this.pool.run({ op: 'identify', master, image, mediaType, options: sent }, [none, masterSource], undefined, owner)
      .result as IdentifyResult;
  }

  wrapAccountSlot(accountId: string, sealedContentKey: SealedKey): Promise<Uint8Array> {
    return this.local.wrapAccountSlot(accountId, sealedContentKey);
  }

  unwrapAccountSlot(accountId: string, blob: Uint8Array, recipientPublicKey: Uint8Array): Promise<SealedKey> {
    return this.local.unwrapAccountSlot(accountId, blob, recipientPublicKey);
  }

  certifySigningKey(accountId: string, subjectPublicKey: Uint8Array, proof: Uint8Array,
    issuedMs: number, expiresMs: number): Promise<Uint8Array> {
    return this.local.certifySigningKey(accountId, subjectPublicKey, proof, issuedMs, expiresMs);
  }

  /** Stops the workers and frees the local keys. */
  async close(): Promise<void> {
    await this.pool.close();
    this.local.free();
  }
}

/** Argon2id on the pool's workers; the parameter check (`needsRehash`) is the base class's. */
export class PooledPasswordHasher extends PasswordHasher {
  constructor(private readonly hashing: PasswordHashing, private readonly pool: WorkerPool) {
    super(hashing);
  }

  override async hash(password: string): Promise<string> {
    return await this.pool.run({ op: 'hash', password, params: this.hashing }).result as string;
  }

  override async verify(password: string, encoded: string): Promise<boolean> {
    return await this.pool.run({ op: 'check', password, encoded }).result as boolean;
  }
}

/** Starts `workers` workers and the local instance for `service`. */
export async function pooledCrypto(root: RootSecret, service: string, workers: number,
  recycling?: RecycleOptions): Promise<PooledLicenseCrypto> {
  const pool = await WorkerPool.start(root, service, workers, recycling);
  try {
    return new PooledLicenseCrypto(await wasmCrypto(root, service), pool, service);
  } catch (err) {
    await pool.close();
    throw err;
  }
}

/**
 * What the container writer takes (container-write.ts; docs/format.md sections 1 to 7): the
 * entries, the signer JSON, the protection and the options, and the checks that refuse bad
 * arguments with a `TypeError`/`RangeError` before anything is written.
 */
import type { EntryInfo, Kind } from './container.js';
import type { ChunkDeflater } from './deflate-chunk.js';
import { checkFileDigester, type FileDigester } from './file-digest.js';
import { ContentKey, SigningKey } from './keys.js';
import { BatchPool } from './output-batches.js';
import { checkExternalSigner, type ExternalSigner } from './signer.js';
import {
  ARGON2_DEFAULT_M_KIB,
  ARGON2_DEFAULT_P,
  ARGON2_DEFAULT_T,
  MAX_CHUNK_SIZE_BYTES,
  MAX_ENTRY_SIZE_BYTES,
  MIN_CHUNK_SIZE_BYTES,
} from './limits.js';
import { checkByteSource, checkBytes, checkInteger, checkString, type ByteSource } from './streams.js';

/** The signer JSON (section 7.1): a claim, checked only through a certificate. */
export interface SignerInfo {
  kind: 'device' | 'account' | 'service';
  name?: string;
  account?: string;
  certificate?: string;
  service?: string;
}

/** One entry to write; `data` must yield exactly `size` bytes. */
export interface NewEntry {
  path: string;
  type: string;
  encoding: 'stored' | 'deflate' | 'rgba8';
  data: ByteSource;
  size: number;
  sha256?: string;
  meta?: EntryInfo['meta'];
}

/** Argon2id cost of a new password slot (section 3.1). */
export interface PasswordCost {
  mKib: number;
  t: number;
  p: number;
}

/** The cost of new password slots: 64 MiB, 3 passes, 1 lane. */
export const DEFAULT_PASSWORD_COST: Readonly<PasswordCost> = Object.freeze({
  mKib: ARGON2_DEFAULT_M_KIB,
  t: ARGON2_DEFAULT_T,
  p: ARGON2_DEFAULT_P,
});

/** Encryption: any non-empty mix of slots (1 to 64). */
export interface Protection {
  password?: string;
  recipients?: Uint8Array[];
  account?: { accountId: string; blob: Uint8Array };
  /** The content key; required with `account` (its blob wraps it), else random. */
  contentKey?: ContentKey;
  /** Argon2id cost of the password slot; only tests should lower it. */
  passwordCost?: PasswordCost;
}

/** Options of {@link writeContainer}: exactly one of `signingKey` and `externalSigner`. */
export interface WriteOptions {
  kind: Kind;
  /** A key held in WASM. */
  signingKey?: SigningKey;
  /** A key held elsewhere, which signs the message of docs/format.md section 7. */
  externalSigner?: ExternalSigner;
  signer: SignerInfo;
  meta: Record<string, unknown>;
  chunkSize?: number;
  createdMs?: number;
  deflateLevel?: number;
  protection?: Protection;
  /**
   * Every entry's `sha256` was computed by the caller from immutable sources (`Blob`s): the
   * writer does not hash the entries again. A source that changed anyway yields a file that
   * readers refuse (`HASH_MISMATCH`); leave it unset for anything mutable.
   */
  entryHashesTrusted?: boolean;
  /**
   * Where the chunks of `deflate` and `rgba8` entries are deflated (a pool of workers, see
   * deflate-chunk.ts); by default in the writer itself. The output is the same either way.
   */
  deflater?: ChunkDeflater;
  /**
   * Hashes the output for the signature elsewhere (file-digest.ts); with `externalSigner`
   * only. By default the writer hashes its own output.
   */
  fileDigest?: FileDigester;
  /**
   * With a `fileDigest` that passes its batches on: where the output's batches come from, so
   * that the consumer can give each one back once its sink is done with it (output-batches.ts).
   */
  batchPool?: BatchPool;
}

const ENCODINGS = new Set(['stored', 'deflate', 'rgba8']);
const SIGNER_KINDS = new Set(['device', 'account', 'service']);

/** Throws a `TypeError` unless `kind` is 'project' or 'model'. */
export function checkKind(kind: unknown, name: string): asserts kind is Kind {
  if (kind !== 'project' && kind !== 'model') throw new TypeError(`${name} must be 'project' or 'model'`);
}

/** The password's bytes: UTF-8 of its NFC form (docs/format.md section 3.1). */
export function passwordBytes(password: string): Uint8Array {
  return new TextEncoder().encode(password.normalize('NFC'));
}

function checkObject(value: unknown, name: string): asserts value is Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new TypeError(`${name} must be an object`);
}

export function checkEntry(entry: unknown, name: string, encrypted: boolean): asserts entry is NewEntry {
  checkObject(entry, name);
  checkString(entry.path, `${name}.path`);
  checkString(entry.type, `${name}.type`);
  if (!ENCODINGS.has(entry.encoding as string)) throw new TypeError(`${name}.encoding must be 'stored', 'deflate' or 'rgba8'`);
  checkByteSource(entry.data, `${name}.data`);
  checkInteger(entry.size, `${name}.size`, 0, MAX_ENTRY_SIZE_BYTES);
  if (entry.data instanceof Uint8Array && entry.data.length !== entry.size) {
    throw new RangeError(`${name}.data is ${entry.data.length} bytes but ${name}.size is ${entry.size}`);
  }
  if (entry.sha256 !== undefined && !/^[0-9a-f]{64}$/.test(entry.sha256 as string)) {
    throw new TypeError(`${name}.sha256 must be 64 lowercase hex digits`);
  }
  if (entry.sha256 === undefined && !encrypted) {
    throw new TypeError(`${name}.sha256 is required when the file is not encrypted (see hashEntry)`);
  }
  if (entry.meta !== undefined) checkObject(entry.meta, `${name}.meta`);
}

function checkSigner(signer: unknown, name: string): asserts signer is SignerInfo {
  checkObject(signer, name);
  if (!SIGNER_KINDS.has(signer.kind as string)) throw new TypeError(`${name}.kind must be 'device', 'account' or 'service'`);
  for (const field of ['name', 'account', 'certificate', 'service']) {
    if (signer[field] !== undefined) checkString(signer[field], `${name}.${field}`);
  }
}

function checkProtection(p: unknown, name: string): asserts p is Protection {
  checkObject(p, name);
  if (p.password !== undefined) checkString(p.password, `${name}.password`);
  if (p.recipients !== undefined) {
    if (!Array.isArray(p.recipients)) throw new TypeError(`${name}.recipients must be an array`);
    p.recipients.forEach((r, i) => checkBytes(r, `${name}.recipients[${i}]`, 32));
  }
  if (p.account !== undefined) {
    checkObject(p.account, `${name}.account`);
    checkString(p.account.accountId, `${name}.account.accountId`);
    checkBytes(p.account.blob, `${name}.account.blob`);
    if (p.contentKey === undefined) throw new TypeError(`${name}.contentKey is required with ${name}.account`);
  }
  if (p.contentKey !== undefined && !(p.contentKey instanceof ContentKey)) {
    throw new TypeError(`${name}.contentKey must be a ContentKey`);
  }
  if (p.passwordCost !== undefined) {
    checkObject(p.passwordCost, `${name}.passwordCost`);
    for (const field of ['mKib', 't', 'p']) checkInteger(p.passwordCost[field], `${name}.passwordCost.${field}`, 0, 2 ** 32 - 1);
  }
  if (p.password === undefined && (p.recipients ?? []).length === 0 && p.account === undefined) {
    throw new TypeError(`${name} needs a password, a recipient or an account`);
  }
}

export function checkWriteOptions(options: unknown): asserts options is WriteOptions {
  checkObject(options, 'options');
  checkKind(options.kind, 'options.kind');
  if ((options.signingKey === undefined) === (options.externalSigner === undefined)) {
    throw new TypeError('options needs exactly one of signingKey and externalSigner');
  }
  if (options.signingKey !== undefined && !(options.signingKey instanceof SigningKey)) {
    throw new TypeError('options.signingKey must be a SigningKey');
  }
  if (options.externalSigner !== undefined) checkExternalSigner(options.externalSigner, 'options.externalSigner');
  checkSigner(options.signer, 'options.signer');
  checkObject(options.meta, 'options.meta');
  if (options.chunkSize !== undefined) checkInteger(options.chunkSize, 'options.chunkSize', MIN_CHUNK_SIZE_BYTES, MAX_CHUNK_SIZE_BYTES);
  if (options.createdMs !== undefined) checkInteger(options.createdMs, 'options.createdMs', 0, Number.MAX_SAFE_INTEGER);
  if (options.deflateLevel !== undefined) checkInteger(options.deflateLevel, 'options.deflateLevel', 0, 10);
  if (options.protection !== undefined) checkProtection(options.protection, 'options.protection');
  if (options.batchPool !== undefined && !(options.batchPool instanceof BatchPool)) throw new TypeError('options.batchPool must be a BatchPool');
  if (options.fileDigest !== undefined) {
    checkFileDigester(options.fileDigest, 'options.fileDigest');
    if (options.externalSigner === undefined) throw new TypeError('options.fileDigest needs options.externalSigner');
  }
  if (options.deflater !== undefined) {
    const d = options.deflater as Partial<ChunkDeflater>;
    if (typeof d.deflate !== 'function' || typeof d.concurrency !== 'number') {
      throw new TypeError('options.deflater must have deflate() and concurrency');
    }
  }
}

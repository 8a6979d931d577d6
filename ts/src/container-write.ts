/**
 * Writing containers through WASM (docs/format.md sections 1 to 7): the
 * writer half of container.ts, which re-exports everything here.
 *
 * The manifest precedes the data, so every entry's size (and, for a file
 * that is not encrypted, its sha256) is known before the first byte is
 * written; {@link hashEntry} is the first pass that finds them. Output is a
 * pull-based `ReadableStream`: each pull feeds WASM one piece of at most
 * 64 KiB and hands on whatever the writer produced, so memory stays around
 * one chunk however large the entries are.
 *
 * The key that signs may be held outside WASM (`externalSigner`, e.g. a browser's
 * non-extractable WebCrypto key): at the end the writer hands it the 52-byte message of
 * section 7, checks the signature it returns strictly, and only then releases the last bytes.
 *
 * With a `fileDigest` (file-digest.ts: a second worker) the SHA-256 pass over the output that
 * the signature needs runs there instead of here: every output byte goes to it in order, and
 * its digest comes back at the end, checked to cover exactly the bytes written.
 *
 * With a `deflater` (a pool of workers, deflate-chunk.ts) the chunks of `deflate` and `rgba8`
 * entries are deflated there, a bounded number at a time, and the writer checks, seals and
 * signs them in order: the same bytes, spread over the cores.
 */
import type { WasmWriter, WasmWriterOptions } from '../../pkg/iki_wasm.js';
import type { EntryInfo, Kind } from './container.js';
import { ChunkFeed, DEFAULT_DEFLATE_LEVEL, type ChunkDeflater } from './deflate-chunk.js';
import { callWasm, fromWasmError } from './errors.js';
import { checkFileDigester, type FileDigester } from './file-digest.js';
import { ContentKey, SigningKey, handleOf } from './keys.js';
import { checkExternalSigner, type ExternalSigner } from './signer.js';
import {
  ARGON2_DEFAULT_M_KIB,
  ARGON2_DEFAULT_P,
  ARGON2_DEFAULT_T,
  DEFAULT_CHUNK_SIZE_BYTES,
  MAX_CHUNK_SIZE_BYTES,
  MAX_ENTRY_SIZE_BYTES,
  MIN_CHUNK_SIZE_BYTES,
} from './limits.js';
import { checkByteSource, checkBytes, checkInteger, checkString, pieces, type ByteSource } from './streams.js';
import { loadWasm, wasm } from './wasm.js';

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

function checkEntry(entry: unknown, name: string, encrypted: boolean): asserts entry is NewEntry {
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

function checkWriteOptions(options: unknown): asserts options is WriteOptions {
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

function manifestJson(entries: NewEntry[], meta: Record<string, unknown>): string {
  const list = entries.map(({ path, type, size, encoding, sha256, meta: m }) => ({
    path,
    type,
    size,
    encoding,
    ...(sha256 === undefined ? {} : { sha256 }),
    ...(m === undefined ? {} : { meta: m }),
  }));
  return JSON.stringify({ entries: list, meta });
}

function addSlots(o: WasmWriterOptions, p: Protection): void {
  if (p.contentKey !== undefined) o.setContentKey(handleOf(p.contentKey));
  if (p.password !== undefined) {
    const cost = p.passwordCost ?? DEFAULT_PASSWORD_COST;
    const bytes = passwordBytes(p.password);
    try {
      o.addPassword(bytes, cost.mKib, cost.t, cost.p);
    } finally {
      bytes.fill(0);
    }
  }
  for (const recipient of p.recipients ?? []) o.addRecipient(recipient);
  if (p.account !== undefined) o.addAccount(p.account.accountId, p.account.blob);
}

/** A new WASM writer for these options; its options handle is freed here. */
function startWriter(entries: NewEntry[], options: WriteOptions): WasmWriter {
  const signer = JSON.stringify(options.signer);
  const created = options.createdMs ?? Date.now();
  const { signingKey, externalSigner } = options;
  const o = callWasm(() => (signingKey !== undefined
    ? new (wasm().WasmWriterOptions)(options.kind, handleOf(signingKey), signer, created)
    : wasm().WasmWriterOptions.external(options.kind, (externalSigner as ExternalSigner).publicKey, signer, created)));
  try {
    return callWasm(() => {
      if (options.chunkSize !== undefined) o.setChunkSize(options.chunkSize);
      if (options.deflateLevel !== undefined) o.setDeflateLevel(options.deflateLevel);
      if (options.entryHashesTrusted === true) o.setEntryHashesTrusted(true);
      if (options.protection !== undefined) addSlots(o, options.protection);
      const writer = new (wasm().WasmWriter)(o, manifestJson(entries, options.meta));
      if (options.fileDigest !== undefined) writer.digestElsewhere();
      return writer;
    });
  } finally {
    o.free();
  }
}

/**
 * Streams a container out. Arguments are checked and the header, key slots
 * (Argon2id for a password slot runs here) and manifest are made before
 * this returns, so a bad manifest throws at once; entry data is read as the
 * stream is pulled. A failure errors the stream with an `IkiError`.
 */
export function writeContainer(entries: NewEntry[], options: WriteOptions): ReadableStream<Uint8Array> {
  checkWriteOptions(options);
  if (!Array.isArray(entries)) throw new TypeError('entries must be an array');
  const encrypted = options.protection !== undefined;
  entries.forEach((entry, i) => checkEntry(entry, `entries[${i}]`, encrypted));
  const writer = startWriter(entries, options);
  let next = 0;
  let source: AsyncIterator<Uint8Array> | undefined;
  let feed: ChunkFeed | undefined;
  let released = false;
  const release = (): void => {
    if (released) return;
    released = true;
    source?.return?.().catch(() => undefined);
    source = undefined;
    feed?.close();
    feed = undefined;
    if (!digested) options.fileDigest?.abandon?.();
    writer.free();
  };
  let digested = false;
  const { deflater } = options;
  const deflateOptions = { deflateLevel: options.deflateLevel ?? DEFAULT_DEFLATE_LEVEL,
    chunkSize: options.chunkSize ?? DEFAULT_CHUNK_SIZE_BYTES, encrypted };
  /** The next chunk of a `deflate`/`rgba8` entry from the deflater, or the entry's end. */
  const stepDeflated = async (entry: NewEntry, d: ChunkDeflater): Promise<'done'> => {
    feed ??= new ChunkFeed(entry.data, `entries[${next}].data`, callWasm(() => writer.chunkBytes(next)), d, deflateOptions);
    const chunk = await feed.next();
    callWasm(() => {
      if (chunk === undefined) writer.endEntry();
      else writer.writeDeflated(chunk.rawLength, chunk.rawSha256, chunk.data);
    });
    if (chunk === undefined) {
      feed = undefined;
      next += 1;
    }
    return 'done';
  };
  const step = async (): Promise<Uint8Array | 'done'> => {
    const entry = entries[next];
    if (entry === undefined) {
      if (options.fileDigest === undefined) return finish(writer, options.externalSigner);
      digested = true;
      return finishElsewhere(writer, options.externalSigner as ExternalSigner, options.fileDigest);
    }
    if (deflater !== undefined && entry.encoding !== 'stored') return stepDeflated(entry, deflater);
    // Pieces of one chunk: a whole chunk is encoded from the piece itself, without a copy
    // into the writer's buffer, and with one call across the boundary instead of sixteen.
    source ??= pieces(entry.data, `entries[${next}].data`, callWasm(() => writer.chunkBytes(next)) || undefined)[Symbol.asyncIterator]();
    const piece = await source.next();
    callWasm(() => {
      if (piece.done) writer.endEntry();
      else writer.write(piece.value);
    });
    if (piece.done) {
      source = undefined;
      next += 1;
    }
    return 'done';
  };
  return new ReadableStream<Uint8Array>(
    {
      async pull(controller) {
        try {
          for (;;) {
            const out = callWasm(() => writer.takeOutput());
            if (out.length > 0) {
              await options.fileDigest?.update(out);
              return controller.enqueue(out);
            }
            const last = await step();
            if (last !== 'done') {
              release();
              controller.enqueue(last);
              return controller.close();
            }
          }
        } catch (error) {
          release();
          throw fromWasmError(error);
        }
      },
      cancel() {
        release();
      },
    },
    { highWaterMark: 0 },
  );
}

/** SIGN: by the key in WASM, or by the external signer (its signature checked before release). */
async function finish(writer: WasmWriter, external: ExternalSigner | undefined): Promise<Uint8Array> {
  if (external === undefined) return callWasm(() => writer.finish());
  const head = callWasm(() => writer.finishExternal());
  const message = callWasm(() => writer.signatureMessage());
  const signature = await external.sign(message);
  if (!(signature instanceof Uint8Array)) throw new TypeError('options.externalSigner.sign must resolve to a Uint8Array');
  const last = callWasm(() => writer.attachSignature(signature));
  const out = new Uint8Array(head.length + last.length);
  out.set(head, 0);
  out.set(last, head.length);
  return out;
}

/** SIGN over a file digest computed elsewhere: the digester gets SIGN's prefix too, then signs. */
async function finishElsewhere(writer: WasmWriter, external: ExternalSigner, digester: FileDigester): Promise<Uint8Array> {
  const head = callWasm(() => writer.finishElsewhere());
  await digester.update(head);
  const { sha256, bytes } = await digester.digest();
  if (!(sha256 instanceof Uint8Array) || typeof bytes !== 'number') throw new TypeError('options.fileDigest.digest must resolve to { sha256, bytes }');
  callWasm(() => writer.supplyFileDigest(sha256, bytes));
  const signature = await external.sign(callWasm(() => writer.signatureMessage()));
  if (!(signature instanceof Uint8Array)) throw new TypeError('options.externalSigner.sign must resolve to a Uint8Array');
  const last = callWasm(() => writer.attachSignature(signature));
  const out = new Uint8Array(head.length + last.length);
  out.set(head, 0);
  out.set(last, head.length);
  return out;
}

/** Size and SHA-256 (lowercase hex) of a source, for an unencrypted entry. */
export async function hashEntry(data: ByteSource): Promise<{ size: number; sha256: string }> {
  checkByteSource(data, 'data');
  const { Sha256Hasher } = await loadWasm();
  const hasher = new Sha256Hasher();
  try {
    let size = 0;
    for await (const piece of pieces(data, 'data')) {
      callWasm(() => hasher.update(piece));
      size += piece.length;
    }
    const digest = callWasm(() => hasher.finish());
    return { size, sha256: Array.from(digest, (b) => b.toString(16).padStart(2, '0')).join('') };
  } finally {
    hasher.free();
  }
}

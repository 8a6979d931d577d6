/**
 * Saving a project file (SPEC "What the service does" 7; docs/format.md section 5.1): the
 * document snapshot and every asset, signed by the caller's key, optionally protected by a
 * password and/or the account. The same in browsers and Node.
 *
 * Streaming: assets are hashed first (the manifest names every entry's hash), unless their
 * digests are remembered (digests.ts: hashed while they were picked, so that the save reads
 * every asset once), then written through the container writer one piece at a time to a `WritableStream` (a file the user
 * picked) or into a `Blob` assembled part by part, so the whole file is never held at once.
 * Argon2id for a password slot runs when the writer starts; in a browser, call this inside a
 * Web Worker so the page never freezes (the browser modules do).
 *
 * The SHA-256 over the whole file that the signature needs may run elsewhere (`fileDigest`, a
 * second worker: file-digest.ts), so this thread only moves the bytes.
 *
 * Signing: the key may live outside WASM ({@link ExternalSigner}: a browser's WebCrypto key);
 * its claim (`device`, or `account` with the key service's certificate) is written as the
 * signer JSON, and for an account claim the file's creation time is placed inside the
 * certificate's validity.
 */
import { writeContainer, type NewEntry } from '../container-write.js';
import type { KeyServiceApi } from '../key-service.js';
import { ContentKey } from '../keys.js';
import { sealContentKeyForAccount } from '../player.js';
import { createdUnder, describeCertificate, type ExternalSigner, type SignerClaim } from '../signer.js';
import type { PasswordCost } from '../container-write.js';
import { checkInteger, checkString } from '../streams.js';
import { loadWasm } from '../wasm.js';
import { digestHex, planAssets, type PlannedAsset, type ProjectAsset } from './assets.js';
import { ONE_SHOT_HASH_BYTES, assetDigests, checkedBlobSource, type AssetDigests } from './digests.js';
import { IkiError } from '../errors.js';
import type { FileDigester } from '../file-digest.js';
import { BatchPool } from '../output-batches.js';
import { SNAPSHOT_PATH, SNAPSHOT_TYPE, snapshotBytes } from './snapshot.js';

/** Where a long operation stands: bytes `done` of `total` in the current `phase`. */
export interface ProjectProgress {
  phase: 'hashing' | 'deriving-key' | 'writing' | 'reading' | 'verifying';
  done: number;
  total: number;
}

/** Optional protection; both may be chosen together. */
export interface ProjectProtection {
  /** A password slot (Argon2id 64 MiB, 3 passes, 1 lane). */
  password?: string;
  /** An account slot for the account signed in to this key service (`POST /api/keys/wrap`). */
  account?: KeyServiceApi;
  /** Argon2id cost of the password slot; only tests should lower it. */
  passwordCost?: PasswordCost;
}

/** What {@link saveProject} takes. */
export interface SaveProjectOptions {
  /** The document: a JSON object, or its UTF-8 JSON bytes. */
  snapshot: unknown;
  assets: readonly ProjectAsset[];
  /** The key that signs, and its claim. */
  signer: ExternalSigner;
  protection?: ProjectProtection;
  /** Application name and version (`meta.app`). */
  app: string;
  /** `meta.name`. */
  name: string;
  /** `meta.canvas`. */
  canvas: { width: number; height: number };
  /** Where the file goes; without it the result carries a `Blob`. */
  output?: WritableStream<Uint8Array>;
  onProgress?: (progress: ProjectProgress) => void;
  /** Bytes per chunk (default 1 MiB). */
  chunkSize?: number;
  /** The clock (tests). */
  now?: () => number;
  /** Remembered digests of the assets (default: this realm's, `assetDigests`). */
  digests?: AssetDigests;
  /**
   * Hashes the file for its signature elsewhere (a second worker, file-digest.ts), for this one
   * save; by default the writer hashes it on this thread.
   */
  fileDigest?: FileDigester;
}

/** What was saved. */
export interface SavedProject {
  /** The file, when no `output` was given. */
  blob?: Blob;
  /** Its size in bytes. */
  bytes: number;
  /** Distinct assets stored (each content once). */
  assets: number;
  /** The signer JSON written. */
  claim: SignerClaim;
  /** HEAD's created_ms. */
  createdMs: number;
  encrypted: boolean;
}

/** Parts are gathered into a `Blob` every 8 MiB, so a browser can move them out of the page's memory. */
const BLOB_PART_BYTES = 8 * 1024 * 1024;

function checkCanvas(canvas: unknown): asserts canvas is { width: number; height: number } {
  const c = canvas as { width?: unknown; height?: unknown } | null;
  if (typeof c !== 'object' || c === null) throw new TypeError('canvas must be { width, height }');
  checkInteger(c.width, 'canvas.width', 1, Number.MAX_SAFE_INTEGER);
  checkInteger(c.height, 'canvas.height', 1, Number.MAX_SAFE_INTEGER);
}

/**
 * An account slot for the account signed in to `keyService` (docs/format.md 3.2, 8.3): a fresh
 * content key made in WASM, sealed to the service's X25519 key for that account and wrapped by
 * `POST /api/keys/wrap`. The caller passes `{ account: { accountId, blob }, contentKey }` as a
 * writer's protection and frees the key after writing.
 */
export async function prepareAccountSlot(keyService: KeyServiceApi): Promise<{ accountId: string; blob: Uint8Array; contentKey: ContentKey }> {
  const { x25519PublicKey } = await keyService.serviceKeys();
  const { accountId } = await keyService.me();
  await loadWasm();
  const contentKey = ContentKey.generate();
  try {
    const sealed = sealContentKeyForAccount(x25519PublicKey, accountId, contentKey);
    const wrapped = await keyService.wrap(sealed);
    return { accountId: wrapped.accountId, blob: wrapped.blob, contentKey };
  } catch (error) {
    contentKey.free();
    throw error;
  }
}

/** The file's `created_ms` and signer JSON. */
async function signing(signer: ExternalSigner, nowMs: number): Promise<{ claim: SignerClaim; createdMs: number }> {
  const claim = signer.claim ?? { kind: 'device' as const };
  if (claim.kind !== 'account' || claim.certificate === undefined) return { claim, createdMs: nowMs };
  return { claim, createdMs: createdUnder(await describeCertificate(claim.certificate), nowMs) };
}

/** Output gathered into pieces of this size before it reaches the sink: each write to a file is a round trip. */
const OUTPUT_BATCH_BYTES = 4 * 1024 * 1024;

/** Gathers small pieces into about {@link OUTPUT_BATCH_BYTES}. */
function batching(): TransformStream<Uint8Array, Uint8Array> {
  let parts: Uint8Array[] = [];
  let pending = 0;
  const flush = (controller: TransformStreamDefaultController<Uint8Array>) => {
    if (pending === 0) return;
    const out = new Uint8Array(pending);
    let at = 0;
    for (const part of parts) {
      out.set(part, at);
      at += part.length;
    }
    parts = [];
    pending = 0;
    controller.enqueue(out);
  };
  // Two batches may wait for the sink, so the file's digest and encryption go on while a
  // write is in flight (8 MiB at most).
  return new TransformStream<Uint8Array, Uint8Array>({
    transform(chunk, controller) {
      // A piece that is a batch already (the digest worker's, handed on: file-digest.ts) goes
      // on as it is, without a copy.
      if (pending === 0 && chunk.length >= OUTPUT_BATCH_BYTES) return controller.enqueue(chunk);
      parts.push(chunk);
      pending += chunk.length;
      if (pending >= OUTPUT_BATCH_BYTES) flush(controller);
    },
    flush,
  }, undefined, { highWaterMark: 2 });
}

/**
 * Whether `output` copies each chunk before its write resolves, so that a written batch's buffer
 * may be reused: a file of the File System Access API (`FileSystemWritableFileStream`, what the
 * project page writes to) does. Any other sink may keep the chunks it is given.
 */
function copiesChunks(output: WritableStream<Uint8Array>): boolean {
  const type = (globalThis as { FileSystemWritableFileStream?: abstract new () => WritableStream }).FileSystemWritableFileStream;
  return typeof type === 'function' && output instanceof type;
}

/** `output` behind a sink that gives each chunk back to `pool` once `output` has written it. */
function recycling(output: WritableStream<Uint8Array>, pool: BatchPool): WritableStream<Uint8Array> {
  const writer = output.getWriter();
  return new WritableStream<Uint8Array>({
    async write(chunk) {
      await writer.write(chunk);
      pool.give(chunk);
    },
    close: () => writer.close().finally(() => writer.releaseLock()),
    abort: (reason) => writer.abort(reason).finally(() => writer.releaseLock()),
  });
}

/** Counts the bytes written into `onProgress`. */
function counting(stream: ReadableStream<Uint8Array>, total: number, onProgress?: (p: ProjectProgress) => void): ReadableStream<Uint8Array> {
  let done = 0;
  return stream.pipeThrough(new TransformStream<Uint8Array, Uint8Array>({
    transform(chunk, controller) {
      done += chunk.length;
      onProgress?.({ phase: 'writing', done: Math.min(done, total), total });
      controller.enqueue(chunk);
    },
  }));
}

/** Gathers a stream into a Blob, a few MiB at a time. */
async function toBlob(stream: ReadableStream<Uint8Array>): Promise<{ blob: Blob; bytes: number }> {
  let blob = new Blob([]);
  let parts: Uint8Array[] = [];
  let pending = 0;
  let bytes = 0;
  for await (const part of stream as unknown as AsyncIterable<Uint8Array>) {
    parts.push(part);
    pending += part.length;
    bytes += part.length;
    if (pending >= BLOB_PART_BYTES) {
      blob = new Blob([blob, ...parts as BlobPart[]]);
      parts = [];
      pending = 0;
    }
  }
  return { blob: new Blob([blob, ...parts as BlobPart[]], { type: 'application/x-iki' }), bytes };
}

/**
 * Saves a project file: `snapshot.json` and each distinct asset at `assets/<sha256>`, the
 * original names in `meta.assetNames`, signed by `signer` with its claim. Argument errors are
 * `TypeError`/`RangeError`; a refused snapshot or asset a `ProjectError`; container failures
 * (`BAD_SIGNATURE` when the signer's signature does not verify) an `IkiError`. Nothing is
 * written to `output` before the assets were hashed and the key slots made; a failure later
 * aborts `output`.
 */
export async function saveProject(options: SaveProjectOptions): Promise<SavedProject> {
  if (typeof options !== 'object' || options === null) throw new TypeError('options must be an object');
  checkString(options.app, 'app');
  checkString(options.name, 'name');
  checkCanvas(options.canvas);
  const now = options.now ?? Date.now;
  const { claim, createdMs } = await signing(options.signer, now());
  const snapshot = snapshotBytes(options.snapshot);
  const { onProgress } = options;
  const assetBytes = options.assets.reduce((n, a) => n + (a.data instanceof Uint8Array ? a.data.length : a.data.size), 0);
  let hashed = 0;
  onProgress?.({ phase: 'hashing', done: 0, total: assetBytes });
  const digests = options.digests ?? assetDigests;
  const { entries: planned, names } = await planAssets(options.assets, (bytes) => {
    hashed += bytes;
    onProgress?.({ phase: 'hashing', done: hashed, total: assetBytes });
  }, digests);
  // A digest found by a File's identity only is checked on the bytes written, by the native
  // digest beside the writer (digests.ts), so the writer need not hash the entries again.
  const checks: Promise<void>[] = [];
  const checked = (a: PlannedAsset): a is PlannedAsset & { identity: Blob } => a.identity !== undefined && a.size <= ONE_SHOT_HASH_BYTES;
  const entries: NewEntry[] = [
    { path: SNAPSHOT_PATH, type: SNAPSHOT_TYPE, encoding: 'deflate', size: snapshot.length, data: snapshot, sha256: await digestHex(snapshot) },
    ...planned.map((a, i) => ({ path: a.path, type: a.type, encoding: a.encoding, size: a.size, sha256: a.sha256,
      data: checked(a) ? checkedBlobSource(a.identity, a.sha256, i + 1, checks) : a.open() })),
  ];
  const meta = {
    format: 'iki-project', version: 1, name: options.name, savedAt: new Date(createdMs).toISOString(),
    canvas: { width: options.canvas.width, height: options.canvas.height }, app: options.app, assetNames: names,
  };
  const protection = options.protection ?? {};
  const account = protection.account === undefined ? undefined : await prepareAccountSlot(protection.account);
  try {
    const encrypted = protection.password !== undefined || account !== undefined;
    if (protection.password !== undefined) onProgress?.({ phase: 'deriving-key', done: 0, total: 1 });
    const total = entries.reduce((n, e) => n + e.size, 0);
    // Batches written to a file that copies them are reused (output-batches.ts).
    const pool = options.output !== undefined && options.fileDigest?.passOn !== undefined && copiesChunks(options.output)
      ? new BatchPool() : undefined;
    const stream = counting(writeContainer(entries, {
      kind: 'project', externalSigner: options.signer, signer: claim, meta, createdMs,
      ...(options.fileDigest === undefined ? {} : { fileDigest: options.fileDigest }),
      ...(pool === undefined ? {} : { batchPool: pool }),
      // Blobs cannot change after they were hashed (the snapshot is this function's own copy):
      // one SHA-256 pass over the content instead of two. A digest found by a File's identity
      // only is checked as the entry is written.
      entryHashesTrusted: planned.every((a) => a.trusted || checked(a)),
      ...(options.chunkSize === undefined ? {} : { chunkSize: options.chunkSize }),
      ...(encrypted ? {
        protection: {
          ...(protection.password === undefined ? {} : { password: protection.password }),
          ...(protection.passwordCost === undefined ? {} : { passwordCost: protection.passwordCost }),
          ...(account === undefined ? {} : { account: { accountId: account.accountId, blob: account.blob }, contentKey: account.contentKey }),
        },
      } : {}),
    }), total, onProgress);
    const result = { assets: planned.length, claim, createdMs, encrypted };
    if (options.output === undefined) {
      const { blob, bytes } = await toBlob(stream);
      await Promise.all(checks);
      return { ...result, blob, bytes };
    }
    let bytes = 0;
    await stream.pipeThrough(batching()).pipeThrough(new TransformStream<Uint8Array, Uint8Array>({
      transform(chunk, controller) {
        bytes += chunk.length;
        controller.enqueue(chunk);
      },
      // The output is closed (kept) only once every check passed; a failed one aborts it.
      flush: async () => {
        await Promise.all(checks);
      },
    })).pipeTo(pool === undefined ? options.output : recycling(options.output, pool));
    return { ...result, bytes };
  } catch (error) {
    // A remembered digest was wrong (another file of the same name, size and time): forgotten,
    // so that saving again hashes the file.
    if (error instanceof IkiError && error.code === 'HASH_MISMATCH') for (const a of planned) if (a.identity !== undefined) digests.forget(a.identity);
    throw error;
  } finally {
    account?.contentKey.free();
  }
}

/**
 * Master export in the browser (SPEC "Export of a master: the seller, with the seller's editor;
 * the seller's signing key signs the file"; issue 12 item 1), as worker tasks: a dropped or
 * picked model folder is checked with the very checks `iki pack` makes (`../package/
 * model-plan.ts`, shared with the CLI), packed by the WASM writer into a model container
 * sealed to the service's X25519 key, signed by this browser's key registered with the
 * seller's account (device-key.ts; the certificate is carried in the signer JSON), and
 * uploaded with progress; the page's cancel aborts any step.
 *
 * Memory: files are `Blob`s read as streams when the writer reaches them; a texture is decoded
 * into WASM memory to hash its pixels for the manifest, which precedes the data, and kept there
 * for the writer up to a budget (`keepDecodedBytes`, 64 MiB; texture-source.ts), past which it
 * is decoded again when written, so at most the budget, one decoded texture and one chunk are held. Pixels and files are
 * hashed by the browser's native SHA-256 where they fit in one piece (native-digest.ts: several
 * times WASM's speed, off this worker's thread). The output goes to
 * a scratch file of the origin-private file system (a `Blob` where there is none: in
 * `make bench-export` a Blob grew the tab with the master's size, the file did not), is sent
 * from there with `XMLHttpRequest`, the one API that
 * reports upload progress (a streamed `fetch` body needs HTTP/2), and is deleted after the
 * upload, failed or cancelled ones too. It is encrypted to the service: nothing of the folder
 * is stored in the clear.
 *
 * With `deflate` (the page passes it), the chunks are deflated by up to
 * `navigator.hardwareConcurrency` - 1 deflate workers (at least one; deflate-pool.ts) while this worker's writer
 * checks, seals and signs them in order: the same master, spread over the cores, with a
 * bounded number of chunks in flight. A texture kept decoded starts deflating there while the
 * next textures are decoded and hashed (deflate-ahead.ts).
 */
import { writeContainer, type NewEntry } from '../container-write.js';
import { fetchRequest, keyServiceClient, type KeyServiceApi } from '../key-service.js';
import { PackageError } from '../package/errors.js';
import { BROWSER_KEEP_DECODED_BYTES, DecodedBudget } from '../package/texture-source.js';
import { textureEntry } from './export-texture.js';
import {
  modelFileType, modelMeta, pickModel3, planModel, RGBA8_TYPE, type ModelPlan,
} from '../package/model-plan.js';
import { createdUnder, describeCertificate, type ExternalSigner } from '../signer.js';
import { hashBlob } from '../native-digest.js';
import { loadWasm } from '../wasm.js';
import { DEFAULT_DEFLATE_LEVEL, type ChunkDeflater } from '../deflate-chunk.js';
import { DeflateAhead } from '../deflate-ahead.js';
import { DEFAULT_CHUNK_SIZE_BYTES } from '../limits.js';
import type { DeflateWorkersOption } from './deflate-pool.js';
import { DeviceKey } from './device-key.js';
import type { TaskContext } from './worker-rpc.js';

/** One file of the dropped folder: its path inside the folder (`/`-separated) and its content. */
export interface FolderFile { path: string; file: Blob }

/** A problem that stops the export, as `iki pack` would refuse the folder. */
export interface ExportProblem { code: string; message: string; path?: string }

/** One file that will be packed. */
export interface PlannedFile {
  path: string;
  role: 'model' | 'file' | 'texture';
  /** Bytes in the folder. */
  size: number;
  /** Stored type (`image/x-rgba8` for textures). */
  type: string;
  width?: number;
  height?: number;
}

/** What the page shows before packing. */
export interface ExportPreview {
  model3: string | null;
  name: string | null;
  files: PlannedFile[];
  /** Referenced files the folder does not have (each also a problem). */
  missing: string[];
  /** Files of the folder left out (not referenced). */
  ignored: string[];
  problems: ExportProblem[];
  /** Decoded bytes the master will hold (texture pixels count width × height × 4). */
  decodedBytes: number;
}

/** Progress of an export. */
export interface ExportProgress {
  phase: 'checking' | 'signing-key' | 'packing' | 'uploading' | 'checking-upload';
  done: number;
  total: number;
}

/** What the page hands the worker (a worker has no session of its own). */
export interface ExportArgs {
  files: FolderFile[];
  accessToken: string;
  accountId: string;
  /** The service's origin; the worker's own when omitted. */
  baseUrl?: string;
  /** `meta.name`; by default the model JSON's name. */
  name?: string;
  /** Bytes per chunk (default 1 MiB). */
  chunkSize?: number;
  /** Deflate workers to spread the chunks over (by default this worker deflates them). */
  deflate?: DeflateWorkersOption;
}

/** The master the service recorded (`POST /api/licenses/masters`). */
export interface ExportResult {
  master: Record<string, unknown>;
  bytes: number;
  signer: { kind: string; account?: string; fingerprint: string };
}

/** The folder's files by path, with the common top folder of a directory pick removed. */
export function folderIndex(files: readonly FolderFile[]): Map<string, Blob> {
  const index = new Map<string, Blob>();
  for (const f of files) index.set(f.path.replace(/^\/+/, ''), f.file);
  return index;
}

const problemOf = (err: unknown): ExportProblem => {
  if (err instanceof PackageError) return { code: err.code, message: err.message, ...(err.path === undefined ? {} : { path: err.path }) };
  const code = (err as { code?: unknown }).code;
  return { code: typeof code === 'string' ? code : 'ERROR', message: err instanceof Error ? err.message : String(err) };
};

interface Prepared {
  preview: ExportPreview;
  plan: ModelPlan | null;
  entries: NewEntry[];
  /** Frees the decoded textures the writer did not take. */
  dispose(): void;
}

/**
 * Runs `iki pack`'s checks over the folder and plans its entries (each file read once to hash
 * it), keeping up to `keepBytes` of decoded textures for the writer.
 */
async function prepare(files: readonly FolderFile[], name: string | undefined,
  context: Pick<TaskContext<ExportProgress>, 'signal' | 'progress'>, keepBytes: number, ahead?: DeflateAhead): Promise<Prepared> {
  await loadWasm();
  const index = folderIndex(files);
  const all = [...index.keys()].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  const preview: ExportPreview = { model3: null, name: null, files: [], missing: [], ignored: [], problems: [], decodedBytes: 0 };
  let plan: ModelPlan;
  try {
    const model3 = pickModel3(all.filter((p) => !p.includes('/')), 'the folder');
    plan = planModel(model3, await (index.get(model3) as Blob).text(), all, name);
  } catch (err) {
    preview.problems.push(problemOf(err));
    return { preview, plan: null, entries: [], dispose: () => {} };
  }
  Object.assign(preview, { model3: plan.model3, name: plan.name, missing: plan.missing, ignored: plan.ignored });
  for (const path of plan.missing) preview.problems.push({ code: 'MISSING_FILE', message: `${path} does not exist`, path });
  const entries: NewEntry[] = [];
  const kept: (() => void)[] = [];
  const dispose = (): void => kept.forEach((free) => free());
  const budget = new DecodedBudget(keepBytes);
  const total = [...plan.files, ...plan.textures].reduce((n, p) => n + (index.get(p)?.size ?? 0), 0);
  let done = 0;
  for (const path of [...plan.files, ...plan.textures]) {
    if (context.signal.aborted) dispose();
    context.signal.throwIfAborted();
    const blob = index.get(path);
    if (blob === undefined) continue;
    const texture = plan.textures.includes(path);
    try {
      if (texture) {
        const { entry, width, height, dispose: free } = await textureEntry(path, blob, budget, ahead);
        entries.push(entry);
        kept.push(free);
        preview.files.push({ path, role: 'texture', size: blob.size, type: RGBA8_TYPE, width, height });
        preview.decodedBytes += entry.size;
      } else {
        const { size, sha256 } = await hashBlob(blob);
        entries.push({ path, type: modelFileType(path), encoding: 'deflate', size, sha256, data: blob.stream() });
        preview.files.push({ path, role: path === plan.model3 ? 'model' : 'file', size, type: modelFileType(path) });
        preview.decodedBytes += size;
      }
    } catch (err) {
      preview.problems.push(problemOf(err));
    }
    done += blob.size;
    context.progress({ phase: 'checking', done, total });
  }
  return { preview, plan, entries, dispose };
}

/** The preview of a folder: what `iki pack` would pack, and why it would refuse. */
async function previewModel(args: { files: FolderFile[]; name?: string }, context: TaskContext<ExportProgress>): Promise<ExportPreview> {
  const { preview, dispose } = await prepare(args.files, args.name, context, 0);
  dispose();
  return preview;
}

function keyService(args: ExportArgs): KeyServiceApi {
  const token = args.accessToken;
  return keyServiceClient(fetchRequest(args.baseUrl ?? globalThis.location.origin, { token: () => token }));
}

/** Output is written in pieces of about this size (each write to a file is a round trip). */
const WRITE_BATCH_BYTES = 4 * 1024 * 1024;

/** Where the packed master waits for its upload. */
interface Scratch { file(): Promise<Blob>; dispose(): Promise<void> }

/**
 * Writes the container to a scratch file of the origin-private file system (disk-backed, so
 * the tab's memory stays flat whatever the master's size; the bytes are encrypted to the
 * service), or, where there is none, into a Blob a few MiB at a time. `dispose` deletes it.
 */
async function writeScratch(stream: ReadableStream<Uint8Array>, signal: AbortSignal, onBytes: (n: number) => void,
  kind: 'file' | 'blob'): Promise<Scratch> {
  let pending: Uint8Array[] = [];
  let size = 0;
  const flush = (): Uint8Array => {
    const out = new Uint8Array(size);
    let at = 0;
    for (const part of pending) {
      out.set(part, at);
      at += part.length;
    }
    pending = [];
    size = 0;
    return out;
  };
  const batched = stream.pipeThrough(new TransformStream<Uint8Array, Uint8Array>({
    transform(chunk, controller) {
      onBytes(chunk.length);
      pending.push(chunk);
      size += chunk.length;
      if (size >= WRITE_BATCH_BYTES) controller.enqueue(flush());
    },
    flush(controller) {
      if (size > 0) controller.enqueue(flush());
    },
  }));
  let root: FileSystemDirectoryHandle | undefined;
  try {
    if (kind === 'file') root = await navigator.storage.getDirectory();
  } catch {
    // No origin-private file system (or not allowed): the Blob below.
  }
  if (root !== undefined) {
    const dir = root;
    const name = `iki-export-${crypto.randomUUID()}.ikm`;
    const handle = await dir.getFileHandle(name, { create: true });
    const dispose = () => dir.removeEntry(name).catch(() => undefined);
    try {
      await batched.pipeTo(await handle.createWritable(), { signal });
    } catch (err) {
      await dispose();
      throw err;
    }
    return { file: () => handle.getFile(), dispose };
  }
  let blob = new Blob([]);
  const reader = batched.getReader();
  try {
    for (;;) {
      signal.throwIfAborted();
      const next = await reader.read();
      if (next.done) break;
      blob = new Blob([blob, next.value as BlobPart]);
    }
  } catch (err) {
    await reader.cancel().catch(() => undefined);
    throw err;
  }
  const done = new Blob([blob], { type: 'application/vnd.iki.model' });
  return { file: async () => done, dispose: async () => undefined };
}

/** An error answer of the service, with its code. */
export class UploadProblem extends Error {
  readonly code: string;
  readonly status: number;

  constructor(status: number, code: string, message: string) {
    super(message);
    this.name = 'UploadProblem';
    this.status = status;
    this.code = code;
  }
}

/** `POST /api/licenses/masters` with upload progress; `signal` aborts the request. */
function upload(args: ExportArgs, blob: Blob, context: TaskContext<ExportProgress>): Promise<Record<string, unknown>> {
  return new Promise((resolve, reject) => {
    const xhr = new XMLHttpRequest();
    const url = new URL('/api/licenses/masters', args.baseUrl ?? globalThis.location.origin);
    xhr.open('POST', url.href);
    xhr.setRequestHeader('authorization', `Bearer ${args.accessToken}`);
    xhr.setRequestHeader('content-type', 'application/vnd.iki.model');
    xhr.setRequestHeader('accept', 'application/json');
    xhr.responseType = 'text';
    const abort = () => xhr.abort();
    context.signal.addEventListener('abort', abort, { once: true });
    xhr.upload.addEventListener('progress', (e) => {
      context.progress({ phase: 'uploading', done: e.loaded, total: blob.size });
      if (e.loaded >= blob.size) context.progress({ phase: 'checking-upload', done: 0, total: 1 });
    });
    xhr.addEventListener('loadend', () => context.signal.removeEventListener('abort', abort));
    xhr.addEventListener('abort', () => reject(context.signal.reason ?? new DOMException('cancelled', 'AbortError')));
    xhr.addEventListener('error', () => reject(new UploadProblem(0, 'NETWORK', 'the upload was interrupted')));
    xhr.addEventListener('load', () => {
      let body: { error?: { code?: string; message?: string } } & Record<string, unknown> = {};
      try {
        body = JSON.parse(xhr.responseText) as typeof body;
      } catch {
        // Not JSON: reported by status below.
      }
      if (xhr.status >= 200 && xhr.status < 300) resolve(body);
      else reject(new UploadProblem(xhr.status, body.error?.code ?? 'HTTP_ERROR', body.error?.message ?? `the service answered ${xhr.status}`));
    });
    context.progress({ phase: 'uploading', done: 0, total: blob.size });
    xhr.send(blob);
  });
}

/** What {@link packModelFolder} needs besides the files. */
export interface PackFolderOptions {
  signer: ExternalSigner;
  /** HEAD's created_ms (inside the signer's certificate validity). */
  createdMs?: number;
  /** X25519 keys the master is sealed to (the service's). */
  recipients: Uint8Array[];
  name?: string;
  chunkSize?: number;
  /** Where the packed master waits: a scratch file of the origin-private file system (default), or a `Blob`. */
  scratch?: 'file' | 'blob';
  /** Where the chunks are deflated (deflate workers); by default in this worker. */
  deflater?: ChunkDeflater;
  /**
   * Decoded texture bytes kept in WASM memory between the hashing pass and the write, so those
   * textures are decoded once (default {@link BROWSER_KEEP_DECODED_BYTES}, 64 MiB; 0 decodes
   * every texture twice).
   */
  keepDecodedBytes?: number;
}

/**
 * Checks a model folder as `iki pack` does and packs it into a model container, signed by
 * `options.signer` and sealed to `options.recipients` (the part of an export before the upload;
 * `make bench-export` times it): `file()` is the packed master, `dispose()` deletes its scratch
 * file. Throws {@link PackageError} with the first problem.
 */
export async function packModelFolder(files: readonly FolderFile[], options: PackFolderOptions,
  context: Pick<TaskContext<ExportProgress>, 'signal' | 'progress'>): Promise<Scratch & { preview: ExportPreview }> {
  // With deflate workers, a kept texture's chunks start deflating while the next textures are
  // still decoded and hashed (deflate-ahead.ts).
  const ahead = options.deflater === undefined ? undefined : new DeflateAhead(options.deflater, {
    deflateLevel: DEFAULT_DEFLATE_LEVEL, chunkSize: options.chunkSize ?? DEFAULT_CHUNK_SIZE_BYTES, encrypted: true });
  try {
    const { preview, plan, entries, dispose } = await prepare(files, options.name, context,
      options.keepDecodedBytes ?? BROWSER_KEEP_DECODED_BYTES, ahead);
    try {
      return await packPrepared(preview, plan, entries, options, context);
    } finally {
      dispose();
    }
  } finally {
    ahead?.stop();
  }
}

async function packPrepared(preview: ExportPreview, plan: ModelPlan | null, entries: NewEntry[], options: PackFolderOptions,
  context: Pick<TaskContext<ExportProgress>, 'signal' | 'progress'>): Promise<Scratch & { preview: ExportPreview }> {
  const first = preview.problems[0];
  if (plan === null || first !== undefined) {
    throw new PackageError((first?.code ?? 'BAD_MODEL') as PackageError['code'], first?.message ?? 'the folder is not a model folder',
      first?.path);
  }
  const claim = options.signer.claim ?? { kind: 'device' as const };
  const total = entries.reduce((n, e) => n + e.size, 0);
  let written = 0;
  const stream = writeContainer(entries, {
    kind: 'model', externalSigner: options.signer, signer: claim, meta: modelMeta(plan),
    ...(options.createdMs === undefined ? {} : { createdMs: options.createdMs }),
    protection: { recipients: options.recipients }, entryHashesTrusted: true,
    ...(options.chunkSize === undefined ? {} : { chunkSize: options.chunkSize }),
    ...(options.deflater === undefined ? {} : { deflater: options.deflater }),
  });
  const scratch = await writeScratch(stream, context.signal, (n) => {
    written += n;
    context.progress({ phase: 'packing', done: Math.min(written, total), total });
  }, options.scratch ?? 'file');
  return { ...scratch, preview };
}

/** Checks, packs, signs, seals to the service and uploads one model folder (see the module comment). */
async function exportMaster(args: ExportArgs, context: TaskContext<ExportProgress>): Promise<ExportResult> {
  context.progress({ phase: 'signing-key', done: 0, total: 1 });
  const service = keyService(args);
  const { key } = await DeviceKey.registered(service, args.accountId);
  const signer = await key.signer(args.accountId);
  const claim = signer.claim ?? { kind: 'device' as const };
  if (claim.kind !== 'account' || claim.certificate === undefined) {
    throw new PackageError('BAD_MODEL', 'this browser\'s key is not registered with your account, so the service would refuse the master');
  }
  const createdMs = createdUnder(await describeCertificate(claim.certificate), Date.now());
  const { x25519PublicKey } = await service.serviceKeys();
  // Loaded only here: the pool's RPC (comlink) stays out of packModelFolder's imports.
  const pool = args.deflate === undefined ? undefined : new (await import('./deflate-pool.js')).WorkerDeflatePool(args.deflate);
  let packed: Awaited<ReturnType<typeof packModelFolder>>;
  try {
    await pool?.ready();
    packed = await packModelFolder(args.files, { signer, createdMs, recipients: [x25519PublicKey],
      ...(args.name === undefined ? {} : { name: args.name }), ...(args.chunkSize === undefined ? {} : { chunkSize: args.chunkSize }),
      ...(pool === undefined ? {} : { deflater: pool }) }, context);
  } finally {
    pool?.terminate();
  }
  let bytes = 0;
  let master: Record<string, unknown>;
  try {
    const file = await packed.file();
    bytes = file.size;
    master = await upload(args, file, context);
  } finally {
    await packed.dispose();
  }
  return { master, bytes,
    signer: { kind: claim.kind, ...(claim.account === undefined ? {} : { account: claim.account }), fingerprint: key.info().fingerprint } };
}

/** The tasks of the export worker (server/web/workers/export.ts exposes them). */
export const exportTasks = { previewModel, exportMaster };

/** Their types, for `WorkerClient<ExportTasks>`. */
export type ExportTasks = typeof exportTasks;

/**
 * Master file storage (task "Storage"): an upload is written to a temporary place, read back
 * for the complete check, and moved into place under the master id only after the check
 * succeeded. A failed or aborted upload leaves nothing behind. Three implementations:
 * `FsBlobStore` (default, `<dataDir>/masters/`), `PgBlobStore` (rows in PostgreSQL, for
 * several instances sharing one database) and `S3BlobStore` (objects in an S3 bucket,
 * `s3-blobs.ts`).
 */
import { createReadStream } from 'node:fs';
import { mkdir, open, readdir, rename, rm, stat, type FileHandle } from 'node:fs/promises';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import type { S3WireSettings } from '../s3-config.js';
import type { SqlQueryable } from './sql-db.js';
import { unavailable } from './unavailable.js';

/** One upload in progress. */
export interface BlobUpload {
  /** Appends bytes (in order). */
  write(chunk: Uint8Array): Promise<void>;
  /** Ends writing; afterwards `read` and `commit` may be called. */
  finish(): Promise<void>;
  /** Streams the written bytes back. */
  read(): AsyncIterable<Uint8Array>;
  /**
   * Moves the upload into place as blob `id`. `within`: the transaction recording the master
   * (`Repository.recordMaster`); a store in the same database commits inside it.
   */
  commit(id: string, within?: SqlQueryable): Promise<void>;
  /** Deletes whatever was written; safe to call more than once and after a failure. */
  abort(): Promise<void>;
}

/** Where verified masters live. */
export interface BlobStore {
  begin(): Promise<BlobUpload>;
  read(id: string): AsyncIterable<Uint8Array>;
  /** Deletes a stored blob (used when recording a committed upload failed). */
  remove(id: string): Promise<void>;
  /**
   * Removes leftovers of uploads interrupted by a crash (called at start): pending uploads of
   * this instance whose process is gone, and any pending upload older than the stale age.
   * Another live instance's uploads in a shared store are left alone.
   */
  sweep(): Promise<void>;
  /** Throws when the store cannot be used now (`/readyz`); stores checked otherwise lack it. */
  check?(): Promise<void>;
  /** The same check once at start, its error naming the reason for the operator (not a client). */
  open?(): Promise<void>;
  /** Releases connections (a store with a client of its own). */
  close?(): Promise<void>;
}

/** Who is writing pending uploads, and when a pending upload counts as abandoned. */
export interface PendingOwner {
  /** `[A-Za-z0-9_-]{1,64}` (storage-config.ts `instanceId`). */
  instanceId: string;
  pid: number;
  staleSeconds: number;
}

/** Owner for tests and single-process use: this process, a day. */
export const THIS_PROCESS: PendingOwner = { instanceId: 'local', pid: process.pid, staleSeconds: 24 * 3600 };

/**
 * Name of a pending upload: `<instance>.<pid>.<started ms>.<random>`, so a sweep can tell this
 * instance's from another's and a dead process's from a live one's, and knows the age.
 */
export function pendingName(owner: PendingOwner, nowMs = Date.now()): string {
  return `${owner.instanceId}.${owner.pid}.${nowMs}.${randomBytes(8).toString('hex')}`;
}

/** Whether the pending upload `name` (see `pendingName`) is abandoned; `mtimeMs` for old names. */
export function isAbandoned(name: string, owner: PendingOwner, nowMs: number, mtimeMs: number): boolean {
  const m = /^([A-Za-z0-9_-]{1,64})\.([0-9]{1,10})\.([0-9]{1,16})\.[0-9a-f]+$/.exec(name);
  const startedMs = m === null ? mtimeMs : Math.min(Number(m[3]), mtimeMs);
  if (nowMs - startedMs > owner.staleSeconds * 1000) return true;
  if (m === null || m[1] !== owner.instanceId) return false;
  const pid = Number(m[2]);
  return pid !== owner.pid && !processAlive(pid);
}

function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

const syncs = { files: 0, dirs: 0 };

/** fsyncs of blob files and of their directories made in this process (tests check they happen). */
export const blobSyncs = (): { files: number; dirs: number } => ({ ...syncs });

/** fsyncs a directory, so a rename or unlink in it survives power loss. */
export async function syncDir(dir: string): Promise<void> {
  const handle = await open(dir, 'r');
  try {
    await handle.sync();
    syncs.dirs += 1;
  } finally {
    await handle.close();
  }
}

/** Read size when streaming a stored file back. */
export const READ_CHUNK_BYTES = 1024 * 1024;
const SAFE_ID = /^[A-Za-z0-9_-]{1,128}$/;

/** Refuses a blob id outside `[A-Za-z0-9_-]{1,128}` (it becomes a file name or an object key). */
export function checkId(id: string): void {
  if (!SAFE_ID.test(id)) throw new RangeError('blob id must match [A-Za-z0-9_-]{1,128}');
}

/**
 * A blob read that is a whole file: `file` lets a worker thread (the copy's, `worker-pool/`)
 * read it itself, so the bytes never pass through the event loop. Iterating reads it here.
 */
export interface FileBacked extends AsyncIterable<Uint8Array> {
  readonly file: string;
}

/** The file behind `source`, when it is a `FileBacked` read. */
export function blobFile(source: AsyncIterable<Uint8Array>): string | undefined {
  const file = (source as Partial<FileBacked>).file;
  return typeof file === 'string' ? file : undefined;
}

/** An object of the S3 blob store, as a worker thread needs it to read the object itself. */
export interface ObjectRef {
  settings: S3WireSettings;
  key: string;
}

/**
 * A blob read that is a whole S3 object: `object` lets a worker thread read it itself with
 * ranged GETs (`s3-read.ts` `readObject`), as a `FileBacked` read's file. Iterating reads it here.
 */
export interface ObjectBacked extends AsyncIterable<Uint8Array> {
  readonly object: ObjectRef;
}

/** The object behind `source`, when it is an `ObjectBacked` read. */
export function blobObject(source: AsyncIterable<Uint8Array>): ObjectRef | undefined {
  const object = (source as Partial<ObjectBacked>).object;
  return typeof object === 'object' && object !== null ? object : undefined;
}

/** A stored file's bytes in `READ_CHUNK_BYTES` pieces; a store that cannot be reached is `STORAGE_UNAVAILABLE`. */
export async function* readStored(file: string): AsyncIterable<Uint8Array> {
  try {
    for await (const chunk of createReadStream(file, { highWaterMark: READ_CHUNK_BYTES })) {
      yield chunk as Buffer;
    }
  } catch (err) {
    throw unavailable(err);
  }
}

/** Masters as files in a directory; uploads go to `.incoming/` and are renamed into place. */
export class FsBlobStore implements BlobStore {
  private readonly incoming: string;

  constructor(private readonly dir: string, private readonly owner: PendingOwner = THIS_PROCESS) {
    this.incoming = join(dir, '.incoming');
  }

  async begin(): Promise<BlobUpload> {
    try {
      await mkdir(this.incoming, { recursive: true, mode: 0o700 });
      const temp = join(this.incoming, `${pendingName(this.owner)}.part`);
      const handle = await open(temp, 'wx', 0o600);
      return new FsUpload(handle, temp, (id) => this.path(id), this.dir);
    } catch (err) {
      throw unavailable(err);
    }
  }

  /** The blob's bytes; the result also names its file, which a worker thread may read itself. */
  read(id: string): FileBacked {
    const file = this.path(id);
    return { file, [Symbol.asyncIterator]: () => readStored(file)[Symbol.asyncIterator]() };
  }

  async remove(id: string): Promise<void> {
    await rm(this.path(id), { force: true }).catch((err: unknown) => { throw unavailable(err); });
    await syncDir(this.dir).catch(() => {});
  }

  async sweep(): Promise<void> {
    const names = await readdir(this.incoming).catch(() => [] as string[]);
    const now = Date.now();
    await Promise.all(names.map(async (name) => {
      const path = join(this.incoming, name);
      const info = await stat(path).catch(() => undefined);
      if (info === undefined) return;
      if (isAbandoned(name.replace(/\.part$/, ''), this.owner, now, info.mtimeMs)) await rm(path, { force: true });
    }));
  }

  private path(id: string): string {
    checkId(id);
    return join(this.dir, `${id}.ikm`);
  }
}

class FsUpload implements BlobUpload {
  private closed = false;

  constructor(private readonly handle: FileHandle, private readonly temp: string,
    private readonly target: (id: string) => string, private readonly dir: string) {}

  // A full, over-quota or read-only disk is `STORAGE_UNAVAILABLE` (unavailable.ts), not a 500.
  async write(chunk: Uint8Array): Promise<void> {
    await this.handle.write(chunk).catch((err: unknown) => { throw unavailable(err); });
  }

  async finish(): Promise<void> {
    try {
      await this.handle.sync();
      syncs.files += 1;
      await this.close();
    } catch (err) {
      throw unavailable(err);
    }
  }

  /** The written bytes; the result names the file, which the upload check's worker reads itself. */
  read(): FileBacked {
    const file = this.temp;
    return { file, [Symbol.asyncIterator]: () => readStored(file)[Symbol.asyncIterator]() };
  }

  /**
   * The file's bytes were fsynced by `finish`; after the rename the directory is fsynced too,
   * so the new name survives power loss before the upload is acknowledged.
   */
  async commit(id: string): Promise<void> {
    try {
      await this.close();
      await rename(this.temp, this.target(id));
      await syncDir(this.dir);
    } catch (err) {
      throw unavailable(err);
    }
  }

  async abort(): Promise<void> {
    await this.close().catch(() => {});
    await rm(this.temp, { force: true });
  }

  private async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.handle.close();
  }
}

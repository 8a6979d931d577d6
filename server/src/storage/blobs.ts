/**
 * Master file storage (task "Storage"): an upload is written to a temporary place, read back
 * for the complete check, and moved into place under the master id only after the check
 * succeeded. A failed or aborted upload leaves nothing behind. Two implementations:
 * `FsBlobStore` (default, `<dataDir>/masters/`) and `PgBlobStore` (rows in PostgreSQL, for
 * several instances sharing one database).
 */
import { createReadStream } from 'node:fs';
import { mkdir, open, readdir, rename, rm, type FileHandle } from 'node:fs/promises';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';

/** One upload in progress. */
export interface BlobUpload {
  /** Appends bytes (in order). */
  write(chunk: Uint8Array): Promise<void>;
  /** Ends writing; afterwards `read` and `commit` may be called. */
  finish(): Promise<void>;
  /** Streams the written bytes back. */
  read(): AsyncIterable<Uint8Array>;
  /** Moves the upload into place as blob `id`. */
  commit(id: string): Promise<void>;
  /** Deletes whatever was written; safe to call more than once and after a failure. */
  abort(): Promise<void>;
}

/** Where verified masters live. */
export interface BlobStore {
  begin(): Promise<BlobUpload>;
  read(id: string): AsyncIterable<Uint8Array>;
  /** Deletes a stored blob (used when recording a committed upload failed). */
  remove(id: string): Promise<void>;
  /** Removes leftovers of uploads interrupted by a crash (called at start). */
  sweep(): Promise<void>;
}

/** Read size when streaming a stored file back. */
export const READ_CHUNK_BYTES = 1024 * 1024;
const SAFE_ID = /^[A-Za-z0-9_-]{1,128}$/;

function checkId(id: string): void {
  if (!SAFE_ID.test(id)) throw new RangeError('blob id must match [A-Za-z0-9_-]{1,128}');
}

/** Masters as files in a directory; uploads go to `.incoming/` and are renamed into place. */
export class FsBlobStore implements BlobStore {
  private readonly incoming: string;

  constructor(private readonly dir: string) {
    this.incoming = join(dir, '.incoming');
  }

  async begin(): Promise<BlobUpload> {
    await mkdir(this.incoming, { recursive: true, mode: 0o700 });
    const temp = join(this.incoming, `${randomBytes(12).toString('hex')}.part`);
    const handle = await open(temp, 'wx', 0o600);
    return new FsUpload(handle, temp, (id) => this.path(id));
  }

  async *read(id: string): AsyncIterable<Uint8Array> {
    for await (const chunk of createReadStream(this.path(id), { highWaterMark: READ_CHUNK_BYTES })) {
      yield chunk as Buffer;
    }
  }

  async remove(id: string): Promise<void> {
    await rm(this.path(id), { force: true });
  }

  async sweep(): Promise<void> {
    const names = await readdir(this.incoming).catch(() => [] as string[]);
    await Promise.all(names.map((name) => rm(join(this.incoming, name), { force: true })));
  }

  private path(id: string): string {
    checkId(id);
    return join(this.dir, `${id}.ikm`);
  }
}

class FsUpload implements BlobUpload {
  private closed = false;

  constructor(private readonly handle: FileHandle, private readonly temp: string,
    private readonly target: (id: string) => string) {}

  async write(chunk: Uint8Array): Promise<void> {
    await this.handle.write(chunk);
  }

  async finish(): Promise<void> {
    await this.handle.sync();
    await this.close();
  }

  async *read(): AsyncIterable<Uint8Array> {
    for await (const chunk of createReadStream(this.temp, { highWaterMark: READ_CHUNK_BYTES })) {
      yield chunk as Buffer;
    }
  }

  async commit(id: string): Promise<void> {
    await this.close();
    await rename(this.temp, this.target(id));
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

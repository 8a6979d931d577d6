/**
 * Masters stored inside PostgreSQL (or PGlite): one row of `blob_chunks` per container chunk
 * (docs/format.md §1: the 12-byte magic and version first, then each `type length payload`).
 * Splitting on chunk boundaries keeps each row bounded by the largest chunk payload and lets
 * a reader stream a master back row by row, so memory stays around one chunk. The framer only
 * frames: whether the chunks are valid is the complete check's business. Uploads are written
 * under a temporary blob id and renamed to the master id in one statement on commit.
 */
import { ApiError } from '../errors.js';
import { isAbandoned, pendingName, THIS_PROCESS, type BlobStore, type BlobUpload, type PendingOwner } from './blobs.js';
import type { SqlDb, SqlQueryable } from './sql-db.js';

/** Magic (8) + major (2) + minor (2). */
const PREAMBLE_BYTES = 12;
/** type (4) + length (4). */
const CHUNK_HEADER_BYTES = 8;
/** Largest payload a valid file can hold: a DATA chunk at the 16 MiB chunk_size ceiling. */
export const MAX_FRAME_PAYLOAD_BYTES = 16 * 1024 * 1024 + 16 * 1024 + 89;
const UPLOAD_PREFIX = 'upload-';

/**
 * Splits a byte stream into the preamble and whole container chunks. Pieces are queued and
 * joined once per frame, so a large chunk arriving in small pieces is copied once.
 */
export class ContainerFramer {
  private pieces: Uint8Array[] = [];
  private queued = 0;
  private preambleDone = false;

  /** Adds bytes; returns every frame completed by them. */
  push(bytes: Uint8Array): Uint8Array[] {
    if (bytes.length > 0) {
      this.pieces.push(bytes);
      this.queued += bytes.length;
    }
    const frames: Uint8Array[] = [];
    for (let size = this.nextSize(); size !== undefined && this.queued >= size; size = this.nextSize()) {
      frames.push(this.take(size));
      this.preambleDone = true;
    }
    return frames;
  }

  /** The incomplete tail, if any (a truncated file; the check will refuse it). */
  rest(): Uint8Array | undefined {
    return this.queued === 0 ? undefined : this.take(this.queued);
  }

  private nextSize(): number | undefined {
    if (!this.preambleDone) return PREAMBLE_BYTES;
    if (this.queued < CHUNK_HEADER_BYTES) return undefined;
    const header = this.peek(CHUNK_HEADER_BYTES);
    const length = new DataView(header.buffer, header.byteOffset, header.byteLength).getUint32(4, true);
    if (length > MAX_FRAME_PAYLOAD_BYTES) {
      throw new ApiError('LIMIT_EXCEEDED', 'chunk payload exceeds its limit',
        { limit: 'chunk payload', value: length, max: MAX_FRAME_PAYLOAD_BYTES });
    }
    return CHUNK_HEADER_BYTES + length;
  }

  private peek(size: number): Uint8Array {
    const out = new Uint8Array(size);
    let filled = 0;
    for (const piece of this.pieces) {
      if (filled === size) break;
      const part = piece.subarray(0, size - filled);
      out.set(part, filled);
      filled += part.length;
    }
    return out;
  }

  private take(size: number): Uint8Array {
    const out = this.peek(size);
    let left = size;
    while (left > 0) {
      const first = this.pieces[0] as Uint8Array;
      if (first.length <= left) {
        this.pieces.shift();
        left -= first.length;
      } else {
        this.pieces[0] = first.subarray(left);
        left = 0;
      }
    }
    this.queued -= size;
    return out;
  }
}

async function* rows(db: SqlDb, blobId: string): AsyncIterable<Uint8Array> {
  for (let seq = 0; ; seq += 1) {
    const { rows: found } = await db.query<{ bytes: Uint8Array }>(
      'SELECT bytes FROM blob_chunks WHERE blob_id = $1 AND seq = $2', [blobId, seq]);
    const row = found[0];
    if (row === undefined) return;
    yield new Uint8Array(row.bytes);
  }
}

/** Masters as rows of `blob_chunks`. */
export class PgBlobStore implements BlobStore {
  constructor(private readonly db: SqlDb, private readonly owner: PendingOwner = THIS_PROCESS) {}

  async begin(): Promise<BlobUpload> {
    return new PgUpload(this.db, `${UPLOAD_PREFIX}${pendingName(this.owner)}`);
  }

  read(id: string): AsyncIterable<Uint8Array> {
    return rows(this.db, id);
  }

  async remove(id: string): Promise<void> {
    await this.db.query('DELETE FROM blob_chunks WHERE blob_id = $1', [id]);
  }

  /** Deletes the pending uploads `isAbandoned` judges abandoned (see `blobs.ts`). */
  async sweep(): Promise<void> {
    const { rows } = await this.db.query(`SELECT blob_id, extract(epoch FROM min(created_at)) * 1000 AS started
      FROM blob_chunks WHERE blob_id LIKE $1 GROUP BY blob_id`, [`${UPLOAD_PREFIX}%`]);
    const now = Date.now();
    for (const row of rows) {
      const id = String(row['blob_id']);
      if (isAbandoned(id.slice(UPLOAD_PREFIX.length), this.owner, now, Number(row['started']))) {
        await this.db.query('DELETE FROM blob_chunks WHERE blob_id = $1', [id]);
      }
    }
  }
}

class PgUpload implements BlobUpload {
  private readonly framer = new ContainerFramer();
  private seq = 0;

  constructor(private readonly db: SqlDb, private readonly blobId: string) {}

  async write(chunk: Uint8Array): Promise<void> {
    for (const frame of this.framer.push(chunk)) await this.insert(frame);
  }

  async finish(): Promise<void> {
    const rest = this.framer.rest();
    if (rest !== undefined) await this.insert(rest);
  }

  read(): AsyncIterable<Uint8Array> {
    return rows(this.db, this.blobId);
  }

  /** Inside `within` when given: the rename then commits, or rolls back, with the master's row. */
  async commit(id: string, within?: SqlQueryable): Promise<void> {
    await (within ?? this.db).query('UPDATE blob_chunks SET blob_id = $2 WHERE blob_id = $1', [this.blobId, id]);
  }

  async abort(): Promise<void> {
    await this.db.query('DELETE FROM blob_chunks WHERE blob_id = $1', [this.blobId]);
  }

  private async insert(bytes: Uint8Array): Promise<void> {
    await this.db.query('INSERT INTO blob_chunks (blob_id, seq, bytes) VALUES ($1, $2, $3)',
      [this.blobId, this.seq, bytes]);
    this.seq += 1;
  }
}

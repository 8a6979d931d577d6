/**
 * Master blob stores: files (temp file renamed into place) and PostgreSQL rows (one per
 * container chunk). Commit makes a blob readable; abort and failure leave nothing.
 */
import { mkdtemp, readdir, rm, writeFile, mkdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FsBlobStore, type BlobStore } from '../src/storage/blobs.js';
import { ContainerFramer, MAX_FRAME_PAYLOAD_BYTES, PgBlobStore } from '../src/storage/pg-blobs.js';
import type { SqlDb } from '../src/storage/sql-db.js';
import { fakeMaster } from './helpers/fake-crypto.js';
import { freshPglite } from './helpers/databases.js';

async function collect(source: AsyncIterable<Uint8Array>): Promise<Buffer> {
  const parts: Buffer[] = [];
  for await (const p of source) parts.push(Buffer.from(p));
  return Buffer.concat(parts);
}

function pieces(bytes: Buffer, size: number): Buffer[] {
  const out: Buffer[] = [];
  for (let i = 0; i < bytes.length; i += size) out.push(bytes.subarray(i, i + size));
  return out;
}

describe('ContainerFramer', () => {
  const file = fakeMaster({ name: 'F', signer: new Uint8Array(32), dataChunks: 4, chunkBytes: 777 });

  it.each([1, 7, 100, 100_000])('splits into the preamble and whole chunks whatever the piece size (%i)', (size) => {
    const framer = new ContainerFramer();
    const frames = pieces(file, size).flatMap((p) => framer.push(p));
    expect(framer.rest()).toBeUndefined();
    expect(frames.map((f) => f.length)).toEqual([12, 8 + JSON.stringify({ name: 'F', role: 'master' }).length, 785, 785, 785, 785, 8 + 101]);
    expect(Buffer.concat(frames)).toEqual(file);
  });

  it('keeps a truncated tail and refuses a length past the largest payload', () => {
    const framer = new ContainerFramer();
    framer.push(file.subarray(0, file.length - 3));
    expect(framer.rest()?.length).toBe(8 + 101 - 3);
    const big = Buffer.alloc(20);
    big.write('DATA', 12, 'ascii');
    big.writeUInt32LE(MAX_FRAME_PAYLOAD_BYTES, 16);
    expect(new ContainerFramer().push(big)).toHaveLength(1);
    big.writeUInt32LE(MAX_FRAME_PAYLOAD_BYTES + 1, 16);
    expect(() => new ContainerFramer().push(big)).toThrow(/exceeds its limit/);
  });
});

describe.each(['fs', 'postgres'])('%s blob store', (kind) => {
  let store: BlobStore;
  let dir: string;
  let db: SqlDb | undefined;
  const file = fakeMaster({ name: 'B', signer: new Uint8Array(32), dataChunks: 5, chunkBytes: 3000 });

  const leftovers = async (): Promise<number> => {
    if (db !== undefined) return Number((await db.query<{ n: number }>('SELECT count(*)::int AS n FROM blob_chunks')).rows[0]?.n);
    const names = await readdir(join(dir, 'masters'), { recursive: true }).catch(() => [] as string[]);
    return names.filter((n) => n.endsWith('.part') || n.endsWith('.ikm')).length;
  };

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'iki-blobs-'));
    if (kind === 'postgres') {
      db = await freshPglite();
      store = new PgBlobStore(db);
    } else {
      store = new FsBlobStore(join(dir, 'masters'));
    }
  });
  afterAll(async () => {
    await db?.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('reads back what was written, before and after commit', async () => {
    const upload = await store.begin();
    for (const p of pieces(file, 1000)) await upload.write(p);
    await upload.finish();
    expect(await collect(upload.read())).toEqual(file);
    await upload.commit('mst_a');
    expect(await collect(store.read('mst_a'))).toEqual(file);
    await store.remove('mst_a');
    expect(await leftovers()).toBe(0);
  });

  it('leaves nothing after an abort, also mid-write', async () => {
    const done = await store.begin();
    await done.write(file);
    await done.finish();
    await done.abort();
    const partial = await store.begin();
    await partial.write(file.subarray(0, 5000));
    await partial.abort();
    await partial.abort();
    expect(await leftovers()).toBe(0);
  });

  it('sweeps leftovers of interrupted uploads', async () => {
    if (db !== undefined) {
      await db.query(`INSERT INTO blob_chunks (blob_id, seq, bytes, created_at) VALUES ('upload-old', 0, '\\x00', now() - interval '2 days')`);
      await db.query(`INSERT INTO blob_chunks (blob_id, seq, bytes) VALUES ('upload-new', 0, '\\x00')`);
      await store.sweep();
      const { rows } = await db.query<{ blob_id: string }>('SELECT blob_id FROM blob_chunks');
      expect(rows.map((r) => r.blob_id)).toEqual(['upload-new']);
      await db.query('DELETE FROM blob_chunks');
    } else {
      await mkdir(join(dir, 'masters', '.incoming'), { recursive: true });
      await writeFile(join(dir, 'masters', '.incoming', 'crashed.part'), 'x');
      await store.sweep();
      expect(await leftovers()).toBe(0);
    }
  });

  it('refuses unsafe ids', async () => {
    if (kind !== 'fs') return;
    const upload = await store.begin();
    await upload.finish();
    await expect(upload.commit('../escape')).rejects.toThrow(RangeError);
    await upload.abort();
  });
});

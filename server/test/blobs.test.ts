/**
 * Master blob stores: files (temp file renamed into place) and PostgreSQL rows (one per
 * container chunk). Commit makes a blob readable; abort and failure leave nothing.
 */
import { spawnSync } from 'node:child_process';
import { mkdtemp, readdir, rm, writeFile, mkdir, utimes } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { blobSyncs, FsBlobStore, type BlobStore } from '../src/storage/blobs.js';
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
    const synced = blobSyncs();
    const upload = await store.begin();
    for (const p of pieces(file, 1000)) await upload.write(p);
    await upload.finish();
    expect(await collect(upload.read())).toEqual(file);
    await upload.commit('mst_a');
    if (kind === 'fs') {
      // Durable before acknowledged: the file's bytes, then its new name (the directory).
      expect(blobSyncs()).toEqual({ files: synced.files + 1, dirs: synced.dirs + 1 });
    }
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

  it('sweeps only abandoned pending uploads: a dead process of this instance, or older than the stale age', async () => {
    const deadPid = spawnSync('true').pid as number;
    const hour = 3600_000;
    const now = Date.now();
    // name -> age in ms; whether it must be swept.
    const cases: [string, number, boolean][] = [
      [`local.${deadPid}.${now}.aa`, 0, true],                 // this instance, its process died
      [`local.${process.ppid}.${now}.bb`, 0, false],           // this instance, another live process
      [`local.${process.pid}.${now}.cc`, 0, false],            // this very process
      [`other.${deadPid}.${now}.dd`, 0, false],                // another instance: its pids mean nothing here
      [`other.${deadPid}.${now - 25 * hour}.ee`, 25 * hour, true], // another instance, older than a day
      ['0123456789abcdef', 0, false],                          // an old-style name, recent
      ['fedcba9876543210', 25 * hour, true],                   // an old-style name, old
    ];
    const owner = { instanceId: 'local', pid: process.pid, staleSeconds: 24 * 3600 };
    let swept: BlobStore;
    if (db !== undefined) {
      for (const [name, age] of cases) {
        await db.query(`INSERT INTO blob_chunks (blob_id, seq, bytes, created_at)
          VALUES ($1, 0, '\\x00', now() - make_interval(secs => $2))`, [`upload-${name}`, age / 1000]);
      }
      swept = new PgBlobStore(db, owner);
      await swept.sweep();
      const { rows } = await db.query<{ blob_id: string }>('SELECT blob_id FROM blob_chunks ORDER BY blob_id');
      expect(rows.map((r) => r.blob_id.slice('upload-'.length)).sort())
        .toEqual(cases.filter((c) => !c[2]).map((c) => c[0]).sort());
      await db.query('DELETE FROM blob_chunks');
    } else {
      const incoming = join(dir, 'masters', '.incoming');
      await mkdir(incoming, { recursive: true });
      for (const [name, age] of cases) {
        await writeFile(join(incoming, `${name}.part`), 'x');
        const at = new Date(now - age);
        await utimes(join(incoming, `${name}.part`), at, at);
      }
      swept = new FsBlobStore(join(dir, 'masters'), owner);
      await swept.sweep();
      expect((await readdir(incoming)).map((n) => n.replace(/\.part$/, '')).sort())
        .toEqual(cases.filter((c) => !c[2]).map((c) => c[0]).sort());
      await rm(incoming, { recursive: true, force: true });
    }
  });

  it('names a pending upload after its instance, process and start', async () => {
    const upload = await store.begin();
    await upload.write(file.subarray(0, 100));
    if (db !== undefined) {
      const { rows } = await db.query<{ blob_id: string }>('SELECT DISTINCT blob_id FROM blob_chunks');
      expect(rows[0]?.blob_id).toMatch(new RegExp(`^upload-local\\.${process.pid}\\.[0-9]+\\.[0-9a-f]{16}$`));
    } else {
      expect(await readdir(join(dir, 'masters', '.incoming')))
        .toEqual([expect.stringMatching(new RegExp(`^local\\.${process.pid}\\.[0-9]+\\.[0-9a-f]{16}\\.part$`))]);
    }
    await upload.abort();
    expect(await leftovers()).toBe(0);
  });

  it('refuses unsafe ids', async () => {
    if (kind !== 'fs') return;
    const upload = await store.begin();
    await upload.finish();
    await expect(upload.commit('../escape')).rejects.toThrow(RangeError);
    await upload.abort();
  });
});

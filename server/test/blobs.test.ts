/**
 * Master blob stores: files (temp file renamed into place), PostgreSQL rows (one per
 * container chunk) and S3 objects (a pending object copied into place, on moto's S3 server).
 * Commit makes a blob readable; abort and failure leave nothing.
 */
import { spawnSync } from 'node:child_process';
import { CreateMultipartUploadCommand, PutObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import { mkdtemp, readdir, rm, writeFile, mkdir, utimes } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { blobSyncs, FsBlobStore, THIS_PROCESS, type BlobStore } from '../src/storage/blobs.js';
import { ContainerFramer, MAX_FRAME_PAYLOAD_BYTES, PgBlobStore } from '../src/storage/pg-blobs.js';
import type { SqlDb } from '../src/storage/sql-db.js';
import { fakeMaster } from './helpers/fake-crypto.js';
import { freshPglite } from './helpers/databases.js';
import { emptyBucket, freshBucket, keysIn, s3Endpoint, uploadsIn } from './helpers/s3.js';
import { S3BlobStore } from '../src/storage/s3-blobs.js';
import { pruneEvery } from '../src/storage/index.js';
import { MemoryRepository } from '../src/storage/memory-repository.js';

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

const kinds = ['fs', 'postgres', ...(s3Endpoint() === '' ? [] : ['s3'])];

describe.each(kinds)('%s blob store', (kind) => {
  let store: BlobStore;
  let dir: string;
  let db: SqlDb | undefined;
  let s3: { admin: S3Client; bucket: string; make(owner?: typeof THIS_PROCESS): S3BlobStore } | undefined;
  const file = fakeMaster({ name: 'B', signer: new Uint8Array(32), dataChunks: 5, chunkBytes: 3000 });

  const leftovers = async (): Promise<number> => {
    if (s3 !== undefined) return (await keysIn(s3.admin, s3.bucket)).length + (await uploadsIn(s3.admin, s3.bucket)).length;
    if (db !== undefined) return Number((await db.query<{ n: number }>('SELECT count(*)::int AS n FROM blob_chunks')).rows[0]?.n);
    const names = await readdir(join(dir, 'masters'), { recursive: true }).catch(() => [] as string[]);
    return names.filter((n) => n.endsWith('.part') || n.endsWith('.ikm')).length;
  };

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'iki-blobs-'));
    if (kind === 'postgres') {
      db = await freshPglite();
      store = new PgBlobStore(db);
    } else if (kind === 's3') {
      const { settings, admin } = await freshBucket();
      s3 = { admin, bucket: settings.bucket, make: (owner = THIS_PROCESS) => new S3BlobStore(settings, owner) };
      store = s3.make();
    } else {
      store = new FsBlobStore(join(dir, 'masters'));
    }
  });
  afterAll(async () => {
    await store?.close?.();
    s3?.admin.destroy();
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
    if (s3 !== undefined) {
      // An object's age is its LastModified, which cannot be set: the name's start time stands
      // in for the age (old-style names are never written to a bucket). The same cases also as
      // unfinished multipart uploads (a crash mid-upload leaves one).
      const named = cases.filter(([name, age]) => age === 0 || name.includes('.'));
      const { admin, bucket } = s3;
      for (const [name] of named) {
        await admin.send(new PutObjectCommand({ Bucket: bucket, Key: `iki/pending/${name}`, Body: 'x' }));
        await admin.send(new CreateMultipartUploadCommand({ Bucket: bucket, Key: `iki/pending/${name}` }));
      }
      swept = s3.make(owner);
      await swept.sweep();
      const kept = named.filter((c) => !c[2]).map((c) => `iki/pending/${c[0]}`).sort();
      expect(await keysIn(admin, bucket)).toEqual(kept);
      expect(await uploadsIn(admin, bucket)).toEqual(kept);
      await emptyBucket(admin, bucket);
    } else if (db !== undefined) {
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
    if (s3 !== undefined) {
      // Bytes below one part are sent as one PUT when the upload finishes.
      await upload.finish();
      expect(await keysIn(s3.admin, s3.bucket))
        .toEqual([expect.stringMatching(new RegExp(`^iki/pending/local\\.${process.pid}\\.[0-9]+\\.[0-9a-f]{16}$`))]);
    } else if (db !== undefined) {
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
    if (kind === 'postgres') return;
    const upload = await store.begin();
    await upload.finish();
    await expect(upload.commit('../escape')).rejects.toThrow(RangeError);
    await upload.abort();
  });
});

describe('the sweep of pending uploads', () => {
  it('runs hourly in a running instance too, so abandoned uploads do not wait for a restart', () => {
    vi.useFakeTimers();
    try {
      let sweeps = 0;
      const store: BlobStore = { begin: async () => { throw new Error('unused'); }, read: () => (async function* () {})(), remove: async () => {},
        sweep: async () => { sweeps += 1; } };
      const stop = pruneEvery(new MemoryRepository(), 0, store);
      vi.advanceTimersByTime(3600_000 - 1);
      expect(sweeps).toBe(0);
      vi.advanceTimersByTime(1);
      expect(sweeps).toBe(1);
      vi.advanceTimersByTime(3600_000);
      expect(sweeps).toBe(2);
      stop();
      vi.advanceTimersByTime(3600_000);
      expect(sweeps).toBe(2);
    } finally {
      vi.useRealTimers();
    }
  });
});

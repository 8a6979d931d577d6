/**
 * Identical masters stored once under concurrency (issue 16 item 6): "reference or store"
 * (`recordMaster`) and "delete the last reference" (`deleteMaster`) take one lock per content
 * (a transaction-scoped advisory lock on SQL), so many identical uploads at once store exactly
 * one blob, and a delete racing an identical upload never leaves a master over a removed blob.
 * On the repository (memory, PGlite, PostgreSQL) with a slow commit widening the window, and
 * end to end over HTTP (PGlite with files, PostgreSQL with `blob_chunks` rows, PostgreSQL with
 * an S3 bucket on moto's server), leaving no pending file, row or object behind.
 */
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config.js';
import { PgBlobStore } from '../src/storage/pg-blobs.js';
import { S3BlobStore } from '../src/storage/s3-blobs.js';
import type { Master } from '../src/storage/repository.js';
import { SqlRepository } from '../src/storage/sql-repository.js';
import { license, newUser, registerKey, startApp, type TestApp } from './helpers/app.js';
import { postgresServer, repositoryEngines, sqlEngines, type SqlStore, type Store } from './helpers/databases.js';
import { fakeMaster } from './helpers/fake-crypto.js';
import { freshBucket, keysIn, s3Endpoint } from './helpers/s3.js';

const T0 = new Date('2030-01-01T00:00:00.000Z');
const SHA = 'b'.repeat(64);
const QUOTA = 1e12;

const master = (id: string): Master => ({ id, sellerId: 'acct_seller', name: 'Haru', sha256: SHA, size: 10,
  entries: 3, textures: 1, signerPublicKey: 'k', createdAt: T0, textureBound: { maxSidePx: 64, maxPixels: 2048 } });

describe.each(repositoryEngines)('content lock on $name', (engine) => {
  let store: Store;
  const skip = engine.name === 'postgres' && postgresServer() === '';

  beforeAll(async () => {
    if (!skip) store = await engine.open();
  });
  afterAll(async () => {
    if (!skip) await store.close();
  });
  beforeEach(async () => {
    if (skip) return;
    await store.reset();
    await store.repo.createAccount({ id: 'acct_seller', email: 'seller@example.com', passwordHash: 'h', name: 's', createdAt: T0 });
  });

  it.skipIf(skip)('records 12 identical masters at once over exactly one stored blob', async () => {
    const commits: string[] = [];
    const recorded = await Promise.all(Array.from({ length: 12 }, (_, i) =>
      store.repo.recordMaster(master(`mst_${i}`), QUOTA, async (blobId) => {
        commits.push(blobId);
        // A slow rename: without the lock, every other upload would find no master meanwhile.
        await sleep(20);
      })));
    expect(commits).toHaveLength(1);
    const blob = commits[0] as string;
    for (const m of recorded) expect(m?.blobId ?? m?.id).toBe(blob);
    const stored = await Promise.all(recorded.map((m) => store.repo.findMaster(m?.id as string)));
    expect(stored.map((m) => m?.blobId ?? m?.id)).toEqual(Array(12).fill(blob));
  });

  it.skipIf(skip)('a delete racing an identical upload either keeps the blob for it or lets it store its own', async () => {
    const orders = new Set<string>();
    for (let round = 0; round < 16; round += 1) {
      const first = `mst_a${round}`;
      const second = `mst_b${round}`;
      await store.repo.recordMaster(master(first), QUOTA, async () => {});
      let committed: string | undefined;
      const [deleted, recorded] = await Promise.all([
        (async () => {
          await sleep(round % 4);
          return store.repo.deleteMaster(first, 'acct_seller');
        })(),
        store.repo.recordMaster(master(second), QUOTA, async (blobId) => {
          committed = blobId;
          await sleep(10);
        }),
      ]);
      expect(deleted.kind).toBe('deleted');
      const orphan = deleted.kind === 'deleted' ? deleted.orphanBlob : undefined;
      const blob = recorded?.blobId ?? recorded?.id;
      if (committed === undefined) {
        // The upload came first and shares the blob: the delete must not call it an orphan.
        expect(blob).toBe(first);
        expect(orphan).toBeUndefined();
        orders.add('upload first');
      } else {
        // The delete came first: its blob goes, and the upload stored its own.
        expect(orphan).toBe(first);
        expect(blob).toBe(second);
        orders.add('delete first');
      }
      expect((await store.repo.findMaster(second))?.blobId ?? second).toBe(blob);
      await store.repo.deleteMaster(second, 'acct_seller');
    }
    expect(orders.size).toBeGreaterThan(0);
  });

  it.skipIf(skip)('commits nothing over the quota, and a commit that fails records nothing', async () => {
    let commits = 0;
    expect(await store.repo.recordMaster(master('mst_big'), 5, async () => { commits += 1; })).toBeUndefined();
    await expect(store.repo.recordMaster(master('mst_x'), QUOTA, async () => { throw new Error('disk full'); }))
      .rejects.toThrow('disk full');
    expect(await store.repo.findMaster('mst_x')).toBeUndefined();
    expect(await store.repo.findMasterBySha256(SHA)).toBeUndefined();
    expect(commits).toBeLessThanOrEqual(1);
  });
});

/** Files in the master directory and its pending uploads, `blob_chunks` ids, or objects in the bucket. */
async function storedBlobs(engine: string, app: TestApp, store: SqlStore, bucket?: S3BlobStore): Promise<{ blobs: string[]; pending: string[] }> {
  if (bucket !== undefined) {
    const { client, settings } = bucket;
    return { blobs: (await keysIn(client, settings.bucket, 'iki/masters/')).map((k) => k.replace(/^iki\/masters\/(.*)\.ikm$/, '$1')),
      pending: await keysIn(client, settings.bucket, 'iki/pending/') };
  }
  if (engine === 'postgres') {
    const { rows } = await store.db.query<{ blob_id: string }>('SELECT DISTINCT blob_id FROM blob_chunks ORDER BY blob_id');
    const ids = rows.map((r) => r.blob_id);
    return { blobs: ids.filter((id) => !id.startsWith('upload-')), pending: ids.filter((id) => id.startsWith('upload-')) };
  }
  const dir = join(app.config.dataDir, 'masters');
  return { blobs: (await readdir(dir)).filter((n) => n.endsWith('.ikm')).map((n) => n.replace(/\.ikm$/, '')).sort(),
    pending: await readdir(join(dir, '.incoming')).catch(() => []) };
}

/** Each SQL engine with its usual blob store, and PostgreSQL with an S3 bucket. */
const racing = [...sqlEngines.map((engine) => ({ engine, s3: false })),
  ...sqlEngines.filter((e) => e.name === 'postgres').map((engine) => ({ engine, s3: true }))];

describe.each(racing)('identical uploads racing on $engine.name (S3: $s3)', ({ engine, s3 }) => {
  const skip = (engine.name === 'postgres' && postgresServer() === '') || (s3 && s3Endpoint() === '');
  const quotas = loadConfig({ IKI_CONCURRENT_UPLOADS_PER_ACCOUNT: '20' }, { publicUrl: 'http://iki.test', dataDir: '/nonexistent' }).quotas;

  async function open(): Promise<{ app: TestApp; store: SqlStore; bucket: S3BlobStore | undefined }> {
    const store = await engine.open();
    const bucket = s3 ? await freshBucket() : undefined;
    bucket?.admin.destroy();
    const s3Store = bucket === undefined ? undefined : new S3BlobStore(bucket.settings);
    const blobs = s3Store ?? (engine.name === 'postgres' ? new PgBlobStore(store.db) : undefined);
    const app = await startApp({ repo: new SqlRepository(store.db), config: { quotas }, ...(blobs === undefined ? {} : { blobs }) });
    return { app, store, bucket: s3Store };
  }

  it.skipIf(skip)('10 identical uploads at once: ten masters, one blob, nothing pending, every copy readable', async () => {
    const { app, store, bucket } = await open();
    try {
      const seller = await newUser(app, 'Seller');
      const buyer = await newUser(app, 'Buyer');
      const key = await registerKey(app, seller);
      const bytes = fakeMaster({ name: 'Same', signer: key.publicKey, dataChunks: 8, chunkBytes: 64 * 1024 });
      const answers = await Promise.all(Array.from({ length: 10 }, () => app.call('POST', '/api/licenses/masters',
        { token: seller.token, type: 'application/vnd.iki.model', body: bytes })));
      expect(answers.map((a) => a.status)).toEqual(Array(10).fill(201));
      const ids = answers.map((a) => a.body.masterId as string);
      expect(new Set(ids).size).toBe(10);
      const { blobs, pending } = await storedBlobs(engine.name, app, store, bucket);
      expect(pending).toEqual([]);
      expect(blobs).toHaveLength(1);
      expect(ids).toContain(blobs[0]);
      const { rows } = await store.db.query<{ blob: string }>('SELECT DISTINCT coalesce(blob_id, id) AS blob FROM masters');
      expect(rows.map((r) => r.blob)).toEqual(blobs);
      for (const masterId of ids) {
        const licenseId = await license(app, seller, masterId, buyer);
        const copy = await app.call('GET', `/api/licenses/${licenseId}/model`, { token: buyer.token });
        expect(copy.status).toBe(200);
        // The fake copy is a JSON line followed by the stored master's bytes.
        expect(copy.bytes.subarray(copy.bytes.indexOf(10) + 1).equals(bytes)).toBe(true);
      }
      expect(app.logs.filter((l) => l.level === 'error')).toEqual([]);
    } finally {
      await app.close();
      await bucket?.close();
      await store.close();
    }
  });

  it.skipIf(skip)('a delete racing an identical upload: the survivor serves byte-identical copies, no blob is left over', async () => {
    const { app, store, bucket } = await open();
    try {
      const buyer = await newUser(app, 'Buyer');
      for (let round = 0; round < 6; round += 1) {
        // A seller (and so a content) per round: the delete takes the content's last reference.
        const seller = await newUser(app, `Seller ${round}`);
        const key = await registerKey(app, seller);
        const bytes = fakeMaster({ name: 'Same', signer: key.publicKey, dataChunks: 8, chunkBytes: 64 * 1024 });
        const upload = () => app.call('POST', '/api/licenses/masters', { token: seller.token, type: 'application/vnd.iki.model', body: bytes });
        const first = await upload();
        expect(first.status).toBe(201);
        const [removed, added] = await Promise.all([
          app.call('DELETE', `/api/licenses/masters/${first.body.masterId as string}`, { token: seller.token }),
          upload(),
        ]);
        expect(removed.status).toBe(204);
        expect(added.status).toBe(201);
        const survivor = added.body.masterId as string;
        const { blobs, pending } = await storedBlobs(engine.name, app, store, bucket);
        expect(pending).toEqual([]);
        // Every stored blob is some master's, and every master's blob is stored.
        const { rows } = await store.db.query<{ blob: string }>('SELECT DISTINCT coalesce(blob_id, id) AS blob FROM masters ORDER BY 1');
        expect(blobs).toEqual(rows.map((r) => r.blob));
        expect(blobs).toHaveLength(round + 1);
        const licenseId = await license(app, seller, survivor, buyer);
        const one = await app.call('GET', `/api/licenses/${licenseId}/model`, { token: buyer.token });
        const two = await app.call('GET', `/api/licenses/${licenseId}/model`, { token: buyer.token });
        expect([one.status, two.status]).toEqual([200, 200]);
        expect(one.bytes.equals(two.bytes)).toBe(true);
        expect(one.bytes.subarray(one.bytes.indexOf(10) + 1).equals(bytes)).toBe(true);
      }
      expect(app.logs.filter((l) => l.level === 'error')).toEqual([]);
    } finally {
      await app.close();
      await bucket?.close();
      await store.close();
    }
  });
});

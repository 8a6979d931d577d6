/**
 * The worker pool (issue 13 item 1) with the real WebAssembly crypto: the pooled port checks
 * a master and copies it byte-identically to the in-thread port; a copy streams with
 * back-pressure (a stalled consumer stops the reading of the master, a consumer that goes away
 * closes it); the event loop stays free while a copy runs on a worker; Argon2id runs there
 * too; a stored master file, or a master in an S3 bucket, is read on the worker itself; a worker that dies is replaced and
 * its job fails instead of hanging.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { collect, loadWasm, SigningKey, toBase64Url } from '@iki/core';
import { createHash, randomBytes } from 'node:crypto';
import { RootSecret } from '../src/secrets.js';
import { blobFile, blobObject, FsBlobStore } from '../src/storage/blobs.js';
import { S3BlobStore } from '../src/storage/s3-blobs.js';
import { freshBucket, s3Endpoint, s3Settings } from './helpers/s3.js';
import type { LicenseObject, MasterRef } from '../src/services/crypto-port.js';
import { wasmCrypto, type WasmLicenseCrypto } from '../src/services/wasm-crypto.js';
import { PooledPasswordHasher, pooledCrypto, type PooledLicenseCrypto } from '../src/services/worker-pool/pooled-crypto.js';
import { TEST_HASHING } from './helpers/app.js';
import { buildModel, modelPackage, registrationProof } from './helpers/flow.js';

const SERVICE = 'http://iki.test';
const ACCOUNT = `acct_${'ab'.repeat(16)}`;
let dir: string;
let pooled: PooledLicenseCrypto;
let local: WasmLicenseCrypto;
let master: Uint8Array;
let ref: MasterRef;
const license: LicenseObject = { id: '0123456789abcdef', masterId: `mst_${'cd'.repeat(16)}`, licensee: `acct_${'ef'.repeat(16)}`,
  licenseeName: 'Ada', seller: ACCOUNT, issuedAt: 1_700_000_000_000 };

/** The master in 64 KiB pieces, counting what was read and whether the reader closed it. */
function source(bytes: Uint8Array, piece = 64 * 1024): { it: AsyncIterable<Uint8Array>; read: () => number; closed: () => boolean } {
  let read = 0;
  let closed = false;
  async function* gen() {
    try {
      for (let at = 0; at < bytes.length; at += piece) {
        const part = bytes.slice(at, at + piece);
        read += part.length;
        yield part;
      }
    } finally {
      closed = true;
    }
  }
  return { it: gen(), read: () => read, closed: () => closed };
}

beforeAll(async () => {
  await loadWasm();
  dir = await mkdtemp(join(tmpdir(), 'iki-pool-'));
  const rootBytes = randomBytes(32);
  const root = new RootSecret(rootBytes);
  pooled = await pooledCrypto(root, SERVICE, 2);
  local = await wasmCrypto(root, SERVICE);
  root.destroy();
  const key = SigningKey.generate();
  const certificate = await pooled.certifySigningKey(ACCOUNT, key.publicKey, registrationProof(key, ACCOUNT), Date.now(), 0);
  const pkg = await modelPackage(dir);
  // Incompressible bytes, so that the master is many pieces long (the package compresses well).
  pkg.files.set('noise.bin', new Uint8Array(randomBytes(8 * 1024 * 1024)));
  master = await buildModel(pkg, { key, signer: { kind: 'account', account: ACCOUNT, certificate: toBase64Url(certificate) },
    recipients: [pooled.servicePublicKeys().x25519] });
  ref = { id: license.masterId, sha256: new Uint8Array(createHash('sha256').update(master).digest()) };
}, 120_000);

afterAll(async () => {
  await pooled?.close();
  local?.free();
  await rm(dir, { recursive: true, force: true });
});

describe('the worker pool', () => {
  it('checks a master and copies it byte for byte as the in-thread port does', async () => {
    const summary = await pooled.verifyMasterStream(source(master).it);
    expect(summary).toMatchObject({ name: 'Haru', textures: 2, certifiedAccount: ACCOUNT });
    const [viaPool, inThread] = await Promise.all([
      collect(pooled.streamLicenseCopy(source(master).it, ref, license, SERVICE)),
      collect(local.streamLicenseCopy(source(master).it, ref, license, SERVICE)),
    ]);
    expect(viaPool.length).toBeGreaterThan(master.length / 2);
    expect(Buffer.from(viaPool).equals(Buffer.from(inThread))).toBe(true);
    // A broken master fails with the port's code, as in-thread.
    const broken = master.slice();
    broken[0] = 0;
    await expect(pooled.verifyMasterStream(source(broken).it)).rejects.toMatchObject({ code: 'BAD_MAGIC' });
  }, 60_000);

  it('streams with back-pressure: a stalled consumer stops the read, one that leaves closes it', async () => {
    const input = source(master);
    const copy = pooled.streamLicenseCopy(input.it, ref, license, SERVICE)[Symbol.asyncIterator]();
    expect((await copy.next()).done).toBe(false);
    // Wait until the read stands still for 300 ms (on a loaded machine the worker may still be
    // filling its window after the first pause), then check where it stopped.
    let stalledAt = input.read();
    for (let i = 0; i < 50; i += 1) {
      await new Promise((r) => setTimeout(r, 300));
      if (input.read() === stalledAt) break;
      stalledAt = input.read();
    }
    expect(input.read()).toBe(stalledAt);
    // The 1 MiB output window, a container chunk being copied and one input piece: not the file.
    expect(stalledAt).toBeLessThan(4 * 1024 * 1024);
    expect(master.length).toBeGreaterThan(8 * 1024 * 1024);
    await copy.return?.();
    await new Promise((r) => setTimeout(r, 100));
    expect(input.closed()).toBe(true);
    expect(pooled.pool.running()).toBe(0);
  }, 30_000);

  it('reads a stored master file on the worker itself, never through the event loop', async () => {
    const store = new FsBlobStore(join(dir, 'masters'));
    const upload = await store.begin();
    await upload.write(master);
    await upload.finish();
    await upload.commit('mst_file');
    const stored = store.read('mst_file');
    expect(blobFile(stored)).toBe(join(dir, 'masters', 'mst_file.ikm'));
    // The worker is handed the file: iterating the read here would throw.
    const untouched = { file: blobFile(stored), [Symbol.asyncIterator]: () => { throw new Error('read on the event loop'); } };
    const [viaFile, inThread] = await Promise.all([
      collect(pooled.streamLicenseCopy(untouched, ref, license, SERVICE)),
      collect(local.streamLicenseCopy(source(master).it, ref, license, SERVICE)),
    ]);
    expect(Buffer.from(viaFile).equals(Buffer.from(inThread))).toBe(true);
    // The upload check reads the same way.
    expect(await pooled.verifyMasterStream(untouched)).toMatchObject({ name: 'Haru', textures: 2, certifiedAccount: ACCOUNT });
    // A file that is gone fails the copy (no hang), and the pool goes on.
    await expect(collect(pooled.streamLicenseCopy(store.read('mst_gone'), ref, license, SERVICE))).rejects.toThrow(/ENOENT/);
    expect(pooled.pool.running()).toBe(0);
    expect(pooled.pool.healthy()).toBe(true);
  }, 60_000);

  it.skipIf(s3Endpoint() === '')('reads a master in an S3 bucket on the worker itself, with ranged GETs there', async () => {
    const { settings, admin } = await freshBucket();
    const store = new S3BlobStore({ ...settings, rangeBytes: 1024 * 1024 });
    try {
      const upload = await store.begin();
      await upload.write(master);
      await upload.finish();
      // The upload check: the worker reads the pending object itself.
      const pending = upload.read();
      expect(blobObject(pending)?.key).toMatch(/^iki\/pending\//);
      const unread = { object: blobObject(pending), [Symbol.asyncIterator]: () => { throw new Error('read on the event loop'); } };
      expect(await pooled.verifyMasterStream(unread))
        .toMatchObject({ name: 'Haru', textures: 2, certifiedAccount: ACCOUNT });
      await upload.commit('mst_s3');
      const untouched = { object: blobObject(store.read('mst_s3')), [Symbol.asyncIterator]: () => { throw new Error('read on the event loop'); } };
      const [viaObject, inThread] = await Promise.all([
        collect(pooled.streamLicenseCopy(untouched, ref, license, SERVICE)),
        collect(local.streamLicenseCopy(source(master).it, ref, license, SERVICE)),
      ]);
      expect(Buffer.from(viaObject).equals(Buffer.from(inThread))).toBe(true);
      // A missing object fails the copy (no hang); a store that cannot be reached is
      // STORAGE_UNAVAILABLE, also across the thread; the pool goes on.
      await expect(collect(pooled.streamLicenseCopy(store.read('mst_gone'), ref, license, SERVICE))).rejects.toThrow(/NoSuchKey|not exist/i);
      const closed = new S3BlobStore(s3Settings('http://127.0.0.1:1', settings.bucket));
      await expect(collect(pooled.streamLicenseCopy(closed.read('mst_s3'), ref, license, SERVICE)))
        .rejects.toMatchObject({ code: 'STORAGE_UNAVAILABLE', headers: { 'Retry-After': '5' } });
      await closed.close();
      expect(pooled.pool.running()).toBe(0);
      expect(pooled.pool.healthy()).toBe(true);
    } finally {
      await store.close();
      admin.destroy();
    }
  }, 60_000);

  it('keeps the event loop free while a copy runs on a worker', async () => {
    const busy = async (run: () => Promise<unknown>) => {
      const before = performance.eventLoopUtilization();
      await run();
      return performance.eventLoopUtilization(before).utilization;
    };
    const onPool = await busy(() => collect(pooled.streamLicenseCopy(source(master).it, ref, license, SERVICE)));
    const inThread = await busy(() => collect(local.streamLicenseCopy(source(master).it, ref, license, SERVICE)));
    expect(onPool).toBeLessThan(inThread * 0.5);
  }, 60_000);

  it('hashes and checks passwords on the workers', async () => {
    const hasher = new PooledPasswordHasher(TEST_HASHING, pooled.pool);
    const hash = await hasher.hash('correct horse');
    expect(hash).toMatch(/^\$argon2id\$v=19\$m=256,t=1,p=1\$/);
    expect(hasher.needsRehash(hash)).toBe(false);
    expect(await hasher.verify('correct horse', hash)).toBe(true);
    expect(await hasher.verify('wrong horse', hash)).toBe(false);
    expect(await hasher.verify('correct horse', 'not a hash')).toBe(false);
  });

  it('replaces a worker that dies and fails its job', async () => {
    const input = source(master);
    const copy = pooled.streamLicenseCopy(input.it, ref, license, SERVICE)[Symbol.asyncIterator]();
    await copy.next();
    const slots = (pooled.pool as unknown as { slots: { worker: { terminate(): Promise<number> }; jobs: Map<number, unknown> }[] }).slots;
    await slots.find((s) => s.jobs.size > 0)?.worker.terminate();
    await expect((async () => { for (;;) if ((await copy.next()).done) return; })()).rejects.toThrow(/worker/);
    const until = Date.now() + 10_000;
    while (!pooled.pool.healthy() && Date.now() < until) await new Promise((r) => setTimeout(r, 50));
    expect(pooled.pool.healthy()).toBe(true);
    expect(await pooled.verifyMasterStream(source(master).it)).toMatchObject({ name: 'Haru' });
  }, 30_000);
});

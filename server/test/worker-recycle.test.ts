/**
 * Workers give memory back (issue 28 item 5). WebAssembly memory never shrinks, so the pool
 * replaces a worker whose memory passed the limit once it is idle: the fresh worker starts
 * first (no gap: the pool stays healthy throughout), a job running on the old worker runs to
 * its end byte for byte, a job that arrives while the replacement starts runs on the old one
 * and the old one exits after it, no job fails, and the recycle is counted and logged. Small
 * limits here (a fresh worker holds ~1.3 MiB, a check of a 1 MiB master grows it to ~7 MiB).
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createHash, randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { collect, encodePng, loadWasm, SigningKey, toBase64Url } from '@iki/core';
import { loadConfig } from '../src/config.js';
import type { Logger } from '../src/logger.js';
import { Metrics } from '../src/ops/metrics.js';
import { RootSecret } from '../src/secrets.js';
import type { LicenseObject, MasterRef } from '../src/services/crypto-port.js';
import { wasmCrypto, type WasmLicenseCrypto } from '../src/services/wasm-crypto.js';
import { pooledCrypto, type PooledLicenseCrypto } from '../src/services/worker-pool/pooled-crypto.js';
import { buildModel, modelPackage, registrationProof } from './helpers/flow.js';

const SERVICE = 'http://iki.test';
const ACCOUNT = `acct_${'ab'.repeat(16)}`;
const MiB = 1024 * 1024;
/** The limit of these tests: above a fresh worker, below one that checked the master. */
const LIMIT = 4 * MiB;
const IDLE_MS = 50;
const license: LicenseObject = { id: '0123456789abcdef', masterId: `mst_${'cd'.repeat(16)}`, licensee: `acct_${'ef'.repeat(16)}`,
  licenseeName: 'Ada', seller: ACCOUNT, issuedAt: 1_700_000_000_000 };

let dir: string;
let rootBytes: Uint8Array;
let local: WasmLicenseCrypto;
let master: Uint8Array;
let ref: MasterRef;
let expectedCopy: Uint8Array;

/** The pool's slots, as the pool test reads them (no other way to see a retiring worker). */
type Slots = { ready: boolean; retiring: boolean; jobs: Map<number, unknown> }[];
const slotsOf = (p: PooledLicenseCrypto) => (p.pool as unknown as { slots: Slots }).slots;

async function* pieces(bytes: Uint8Array): AsyncGenerator<Uint8Array> {
  for (let at = 0; at < bytes.length; at += 64 * 1024) yield bytes.slice(at, at + 64 * 1024);
}

/** Waits (by turns of the event loop, calling `each` on every turn) until `done()`. */
async function until(done: () => boolean, each: () => void = () => {}, ms = 10_000): Promise<void> {
  const end = Date.now() + ms;
  for (;;) {
    each();
    if (done()) return;
    if (Date.now() > end) throw new Error('timed out');
    await new Promise((r) => setImmediate(r));
  }
}

function startPool(lines: string[]): Promise<PooledLicenseCrypto> {
  const logger: Logger = { info: (m, f) => lines.push(`${m} ${JSON.stringify(f)}`), warn: (m) => lines.push(m), error: (m) => lines.push(m) };
  return pooledCrypto(new RootSecret(rootBytes.slice()), SERVICE, 1, { recycleBytes: LIMIT, recycleIdleMs: IDLE_MS, logger });
}

beforeAll(async () => {
  await loadWasm();
  dir = await mkdtemp(join(tmpdir(), 'iki-recycle-'));
  rootBytes = new Uint8Array(randomBytes(32));
  local = await wasmCrypto(new RootSecret(rootBytes.slice()), SERVICE);
  const key = SigningKey.generate();
  const certificate = await local.certifySigningKey(ACCOUNT, key.publicKey, registrationProof(key, ACCOUNT), Date.now(), 0);
  const pkg = await modelPackage(dir);
  pkg.files.set('noise.bin', new Uint8Array(randomBytes(MiB)));
  master = await buildModel(pkg, { key, signer: { kind: 'account', account: ACCOUNT, certificate: toBase64Url(certificate) },
    recipients: [local.servicePublicKeys().x25519] });
  ref = { id: license.masterId, sha256: new Uint8Array(createHash('sha256').update(master).digest()) };
  expectedCopy = await collect(local.streamLicenseCopy(pieces(master), ref, license, SERVICE));
}, 60_000);

afterAll(async () => {
  local?.free();
  await rm(dir, { recursive: true, force: true });
});

describe('workers give memory back', () => {
  it('replaces a worker past its limit once idle, with a fresh one, after the job it ran meanwhile, with no gap', async () => {
    const lines: string[] = [];
    const pooled = await startPool(lines);
    try {
      const pool = pooled.pool;
      await until(() => (pool.memory()[0] ?? 0) > 0);
      const fresh = pool.memory()[0]!;
      expect(fresh).toBeLessThan(LIMIT);

      // A copy that stalls after its first piece keeps the worker busy.
      const copy = pooled.streamLicenseCopy(pieces(master), ref, license, SERVICE)[Symbol.asyncIterator]();
      const first = await copy.next();
      // A master check on the same worker grows its memory past the limit.
      expect(await pooled.verifyMasterStream(pieces(master))).toMatchObject({ name: 'Haru' });
      await until(() => pool.memory()[0]! > LIMIT);
      // Busy: not recycled, however long past the idle delay.
      await new Promise((r) => setTimeout(r, IDLE_MS * 6));
      expect(pool.recycles()).toBe(0);

      // The copy runs to its end on the old worker, byte for byte.
      const rest: Uint8Array[] = [first.value as Uint8Array];
      for (let n = await copy.next(); n.done !== true; n = await copy.next()) rest.push(n.value);
      expect(Buffer.concat(rest).equals(Buffer.from(expectedCopy))).toBe(true);

      // Idle now: replaced, and the pool never stops being healthy meanwhile.
      let gap = false;
      await until(() => pool.recycles() === 1 && slotsOf(pooled).length === 1, () => { if (!pool.healthy()) gap = true; });
      expect(gap).toBe(false);
      expect(pool.memory()[0]).toBeLessThan(LIMIT);
      expect(pool.memory()[0]).toBeLessThanOrEqual(fresh);
      expect(lines.filter((l) => l.startsWith('recycled a crypto worker past its memory limit'))).toHaveLength(1);
      const metrics = new Metrics(pool);
      const text = await metrics.registry.metrics();
      expect(text).toMatch(/^iki_worker_recycles_total 1$/m);
      expect(text).toMatch(new RegExp(`^iki_worker_wasm_memory_bytes ${pool.memory()[0]}$`, 'm'));

      // The fresh worker serves.
      expect(await pooled.verifyMasterStream(pieces(master))).toMatchObject({ name: 'Haru' });
    } finally {
      await pooled.close();
    }
  }, 30_000);

  it('runs a job that arrives while the replacement starts on the old worker, which exits after it', async () => {
    const pooled = await startPool([]);
    try {
      const pool = pooled.pool;
      await pooled.verifyMasterStream(pieces(master));
      // The replacement is starting: the old worker still serves alone and takes the copy.
      await until(() => slotsOf(pooled).length === 2 && !slotsOf(pooled)[1]!.ready);
      const copy = pooled.streamLicenseCopy(pieces(master), ref, license, SERVICE)[Symbol.asyncIterator]();
      const started = copy.next();
      await until(() => slotsOf(pooled)[0]!.jobs.size === 1);
      expect(slotsOf(pooled)[1]!.ready).toBe(false);
      const first = await started;
      // The replacement is up: the old one retires with its copy still running and takes no more.
      await until(() => pool.recycles() === 1);
      expect(slotsOf(pooled)).toHaveLength(2);
      expect(slotsOf(pooled)[0]!.retiring).toBe(true);
      expect(pool.healthy()).toBe(true);
      const checked = pooled.verifyMasterStream(pieces(master));
      expect(slotsOf(pooled)[1]!.jobs.size).toBe(1);
      expect(await checked).toMatchObject({ name: 'Haru' });
      // The old worker's copy still runs to its end, and then the old worker is gone.
      const rest: Uint8Array[] = [first.value as Uint8Array];
      for (let n = await copy.next(); n.done !== true; n = await copy.next()) rest.push(n.value);
      expect(Buffer.concat(rest).equals(Buffer.from(expectedCopy))).toBe(true);
      await until(() => slotsOf(pooled).length === 1);
      expect(slotsOf(pooled)[0]!.retiring).toBe(false);
    } finally {
      await pooled.close();
    }
  }, 30_000);

  it('after a large identify, the worker\'s WebAssembly memory is back to at most 64 MiB within a minute (the default limit)', async () => {
    const limit = loadConfig({}).ops.workerRecycleMb * MiB;
    expect(limit).toBe(64 * MiB);
    const pooled = await pooledCrypto(new RootSecret(rootBytes.slice()), SERVICE, 1, { recycleBytes: limit, recycleIdleMs: 500 });
    try {
      const pool = pooled.pool;
      await until(() => (pool.memory()[0] ?? 0) > 0);
      // A flat 4096 x 4096 leak: a few KiB of PNG that decodes to 64 MiB of pixels in WASM.
      const side = 4096;
      const leak = encodePng(side, side, new Uint8Array(side * side * 4).fill(0x80));
      const answer = await pooled.identify(ref, leak, 'image/png', () => pieces(master),
        { budgetMs: 20_000, bound: { maxSidePx: side, maxPixels: side * side }, issued: [] });
      expect(answer.found).toBe(false);
      await until(() => pool.memory()[0]! > limit);
      const grown = pool.memory()[0]!;
      const since = Date.now();
      await until(() => pool.recycles() === 1 && slotsOf(pooled).length === 1, () => {}, 60_000);
      expect(Date.now() - since).toBeLessThan(60_000);
      expect(pool.memory()[0]).toBeLessThanOrEqual(limit);
      expect(pool.memory()[0]).toBeLessThan(grown / 8);
    } finally {
      await pooled.close();
    }
  }, 90_000);

  it('collects garbage once per idle period after work, here and in the workers; a job in between restarts the wait', async () => {
    const pooled = await pooledCrypto(new RootSecret(rootBytes.slice()), SERVICE, 1, { recycleBytes: 64 * MiB, recycleIdleMs: 300 });
    try {
      const pool = pooled.pool;
      expect(pool.idleGcs()).toBe(0);
      await pooled.verifyMasterStream(pieces(master));
      // A second job before the delay passed: still none.
      await new Promise((r) => setTimeout(r, 100));
      await pooled.verifyMasterStream(pieces(master));
      expect(pool.idleGcs()).toBe(0);
      await until(() => pool.idleGcs() === 1);
      // Idle on: no second collection without new work.
      await new Promise((r) => setTimeout(r, 900));
      expect(pool.idleGcs()).toBe(1);
      // A full collection really ran on the main thread: an object that died while the pool
      // waited is gone (V8 clears a WeakRef only in a full collection, which an idle thread
      // that allocates nothing does not otherwise run).
      await pooled.verifyMasterStream(pieces(master));
      const weak = (() => new WeakRef({ dead: true }))();
      await new Promise((r) => setTimeout(r, 0));
      expect(weak.deref()).toBeDefined();
      await until(() => pool.idleGcs() === 2, () => {}, 5000);
      await new Promise((r) => setTimeout(r, 0));
      expect(weak.deref()).toBeUndefined();
    } finally {
      await pooled.close();
    }
  }, 30_000);

  it('reads IKI_WORKER_RECYCLE_MB (64 by default, 0 turns it off) and IKI_WORKER_RECYCLE_IDLE_SECONDS', () => {
    expect(loadConfig({}).ops).toMatchObject({ workerRecycleMb: 64, workerRecycleIdleSeconds: 10 });
    expect(loadConfig({ IKI_WORKER_RECYCLE_MB: '0' }).ops.workerRecycleMb).toBe(0);
    expect(loadConfig({ IKI_WORKER_RECYCLE_MB: '65536' }).ops.workerRecycleMb).toBe(65_536);
    expect(() => loadConfig({ IKI_WORKER_RECYCLE_MB: '65537' })).toThrow(/IKI_WORKER_RECYCLE_MB/);
    expect(() => loadConfig({ IKI_WORKER_RECYCLE_MB: '-1' })).toThrow(/IKI_WORKER_RECYCLE_MB/);
    expect(loadConfig({ IKI_WORKER_RECYCLE_IDLE_SECONDS: '3600' }).ops.workerRecycleIdleSeconds).toBe(3600);
    expect(() => loadConfig({ IKI_WORKER_RECYCLE_IDLE_SECONDS: '3601' })).toThrow(/IKI_WORKER_RECYCLE_IDLE_SECONDS/);
    expect(() => loadConfig({ IKI_WORKER_RECYCLE_IDLE_SECONDS: '1.5' })).toThrow(/IKI_WORKER_RECYCLE_IDLE_SECONDS/);
  });
});

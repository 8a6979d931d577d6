/**
 * Master uploads as an attacker tries them (issue 15 items 3 and 11), on PGlite and PostgreSQL
 * through HTTP: an unverified account or one without an active signing key is refused from the
 * request head, with the body unread and the connection closed, whether the client stalls or
 * pumps; the storage quota holds at and past its limit, mid-stream and under concurrency; at
 * most `concurrentPerAccount` uploads run at once (exactly 2 of 5); a foreign signer is refused
 * before the complete check and a wrong magic at the first bytes; a master name longer than 256
 * bytes is refused. Every refusal leaves no master, no blob and no running slot.
 */
import { request } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { QuotaLimits } from '../src/config.js';
import { QUOTA_DEFAULTS } from '../src/quota-config.js';
import { PgBlobStore } from '../src/storage/pg-blobs.js';
import { SqlRepository } from '../src/storage/sql-repository.js';
import { postgresServer, sqlEngines, type SqlStore } from './helpers/databases.js';
import { fakeCrypto, fakeMaster } from './helpers/fake-crypto.js';
import { newUser, registerKey, startApp, type DeviceKey, type TestApp, type User } from './helpers/app.js';
import { rawRequest } from './helpers/raw-http.js';

const engines = sqlEngines;

const MODEL = 'application/vnd.iki.model';
const GIB = 1024 ** 3;
/** Every fake master named with `n` characters has this size plus n. */
const size = (name: string) => fakeMaster({ name, signer: new Uint8Array(32) }).length;

describe.each(engines)('master uploads on $name', (engine) => {
  const skip = engine.name === 'postgres' && postgresServer() === '';
  let store: SqlStore;
  const apps: TestApp[] = [];
  const crypto = fakeCrypto();

  beforeAll(async () => {
    if (!skip) store = await engine.open();
  });
  afterAll(async () => {
    if (skip) return;
    await Promise.all(apps.map((a) => a.close()));
    await store.close();
  });

  async function app(uploads: Partial<QuotaLimits['uploads']> = {}): Promise<TestApp> {
    const started = await startApp({ repo: new SqlRepository(store.db), blobs: new PgBlobStore(store.db), crypto,
      config: { quotas: { ...QUOTA_DEFAULTS, uploads: { ...QUOTA_DEFAULTS.uploads, ...uploads } } } });
    apps.push(started);
    return started;
  }

  const count = async (sql: string, params: unknown[] = []) => Number((await store.db.query(sql, params)).rows[0]?.['n']);
  /** Masters of the seller, blob rows of uploads in progress, running upload slots. */
  const traces = async (seller: User) => ({
    masters: await count('SELECT count(*)::int AS n FROM masters WHERE seller_id = $1', [seller.accountId]),
    pending: await count("SELECT count(*)::int AS n FROM blob_chunks WHERE blob_id LIKE 'upload-%'"),
    running: await count(`SELECT count(*)::int AS n FROM usage_actions WHERE kind = 'upload' AND account_id = $1
      AND hold_until IS NOT NULL`, [seller.accountId]),
  });
  const nothing = { masters: 0, pending: 0, running: 0 };

  const upload = (a: TestApp, seller: User, body: Uint8Array) =>
    a.call('POST', '/api/licenses/masters', { token: seller.token, type: MODEL, body });
  const master = (key: DeviceKey, name = 'Haru') => fakeMaster({ name, signer: key.publicKey });
  const head = (seller: User, extra: Record<string, string>) => ({ method: 'POST', path: '/api/licenses/masters',
    headers: { authorization: `Bearer ${seller.token}`, 'content-type': MODEL, ...extra } });

  it.skipIf(skip)('refuses an unverified account from the request head, stalled or pumping, with the body unread', async () => {
    const a = await app();
    const seller = await newUser(a, 'Unverified', false);
    const magic = master({ publicKey: new Uint8Array(32) } as DeviceKey).subarray(0, 16);
    const stalled = await rawRequest(a.url, { ...head(seller, { 'content-length': String(GIB) }), first: magic });
    expect(stalled).toMatchObject({ status: 403, closed: true, body: { error: { code: 'EMAIL_NOT_VERIFIED' } } });
    expect(stalled.headers['connection']).toBe('close');
    const chunked = await rawRequest(a.url, { ...head(seller, { 'transfer-encoding': 'chunked' }),
      first: Buffer.concat([Buffer.from('10\r\n'), magic, Buffer.from('\r\n')]) });
    expect(chunked).toMatchObject({ status: 403, closed: true });
    // A client that keeps sending: the answer comes without the server reading on.
    const pumping = await rawRequest(a.url, { ...head(seller, { 'content-length': String(GIB) }), pump: 256 * 1024 * 1024 });
    expect(pumping).toMatchObject({ status: 403, closed: true });
    expect(pumping.sent).toBeLessThan(64 * 1024 * 1024);
    expect(await traces(seller)).toEqual(nothing);
    expect(crypto.calls.filter((c) => c === 'verifyMasterStream')).toHaveLength(0);
  });

  it.skipIf(skip)('refuses a verified account without an active signing key from the request head', async () => {
    const a = await app();
    const seller = await newUser(a, 'Keyless');
    const answer = await rawRequest(a.url, { ...head(seller, { 'content-length': String(GIB) }) });
    expect(answer).toMatchObject({ status: 403, closed: true, body: { error: { code: 'SIGNING_KEY_REQUIRED' } } });
    const key = await registerKey(a, seller);
    await a.call('POST', `/api/keys/signing/${key.b64}/revoke`, { token: seller.token });
    expect((await upload(a, seller, master(key))).body.error.code).toBe('SIGNING_KEY_REQUIRED');
    expect(await traces(seller)).toEqual(nothing);
  });

  it.skipIf(skip)('holds the storage quota at and past its limit, from the head and mid-stream', async () => {
    const s = size('Haru');
    const a = await app({ storageQuotaBytes: 2 * s });
    const seller = await newUser(a, 'Quota');
    const key = await registerKey(a, seller);
    expect((await upload(a, seller, master(key))).status).toBe(201);
    // One byte past what is left: refused from the declared length, unread.
    const past = await rawRequest(a.url, { ...head(seller, { 'content-length': String(s + 1) }), first: master(key).subarray(0, 12) });
    expect(past).toMatchObject({ status: 413, closed: true, body: { error: { code: 'STORAGE_QUOTA_EXCEEDED',
      details: { quotaBytes: 2 * s, usedBytes: s } } } });
    expect((await upload(a, seller, master(key))).status).toBe(201);
    expect((await upload(a, seller, master(key, 'H'))).body.error.code).toBe('STORAGE_QUOTA_EXCEEDED');
    expect(await traces(seller)).toEqual({ ...nothing, masters: 2 });

    // Without a declared length the count stops the body at the quota.
    const b = await app({ storageQuotaBytes: s - 1 });
    const other = await newUser(b, 'Stream');
    const otherKey = await registerKey(b, other);
    const streamed = await new Promise<{ status: number; code: string }>((resolve, reject) => {
      const req = request(`${b.url}/api/licenses/masters`, { method: 'POST', headers: {
        authorization: `Bearer ${other.token}`, 'content-type': MODEL, 'transfer-encoding': 'chunked' } }, (res) => {
        const parts: Buffer[] = [];
        res.on('data', (d: Buffer) => parts.push(d));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, code: JSON.parse(Buffer.concat(parts).toString()).error.code }));
      });
      req.on('error', reject);
      req.end(master(otherKey));
    });
    expect(streamed).toEqual({ status: 413, code: 'STORAGE_QUOTA_EXCEEDED' });
    expect(await traces(other)).toEqual(nothing);
  });

  it.skipIf(skip)('records exactly 2 of 4 concurrent uploads that only 2 fit the quota', async () => {
    const s = size('Haru');
    const a = await app({ storageQuotaBytes: 2 * s + Math.floor(s / 2), concurrentPerAccount: 4 });
    const seller = await newUser(a, 'Racer');
    const key = await registerKey(a, seller);
    const answers = await Promise.all(Array.from({ length: 4 }, () => upload(a, seller, master(key))));
    expect(answers.map((r) => r.status).sort()).toEqual([201, 201, 413, 413]);
    expect(answers.filter((r) => r.status === 413).every((r) => r.body.error.code === 'STORAGE_QUOTA_EXCEEDED')).toBe(true);
    expect(await traces(seller)).toEqual({ ...nothing, masters: 2 });
  });

  it.skipIf(skip)('runs exactly 2 of 5 concurrent uploads; the rest are 429 with Retry-After, unread', async () => {
    const a = await app({ concurrentPerAccount: 2 });
    const seller = await newUser(a, 'Busy');
    const key = await registerKey(a, seller);
    const body = master(key);
    const open = Array.from({ length: 5 }, () => {
      const req = request(`${a.url}/api/licenses/masters`, { method: 'POST', agent: false, headers: {
        authorization: `Bearer ${seller.token}`, 'content-type': MODEL, 'content-length': String(body.length) } });
      const answer = new Promise<{ status: number; body: any; headers: Record<string, unknown> }>((resolve) => {
        req.on('response', (res) => {
          const parts: Buffer[] = [];
          res.on('data', (d: Buffer) => parts.push(d));
          res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers,
            body: JSON.parse(Buffer.concat(parts).toString()) }));
        });
        req.on('error', () => resolve({ status: -1, body: undefined, headers: {} }));
      });
      req.write(body.subarray(0, 100));
      return { req, answer, status: undefined as number | undefined };
    });
    for (const o of open) void o.answer.then((r) => { o.status = r.status; });
    await expect.poll(() => open.filter((o) => o.status === 429).length, { timeout: 10_000 }).toBe(3);
    const refused = await Promise.all(open.filter((o) => o.status === 429).map((o) => o.answer));
    for (const r of refused) {
      expect(r.body.error).toMatchObject({ code: 'TOO_MANY_UPLOADS', details: { limit: 2 } });
      expect(Number(r.headers['retry-after'])).toBeGreaterThan(0);
    }
    expect((await traces(seller)).running).toBe(2);
    const admitted = open.filter((o) => o.status === undefined);
    for (const o of admitted) o.req.end(body.subarray(100));
    expect((await Promise.all(admitted.map((o) => o.answer))).map((r) => r.status)).toEqual([201, 201]);
    expect(await traces(seller)).toEqual({ ...nothing, masters: 2 });
    expect((await upload(a, seller, master(key))).status).toBe(201);
  });

  it.skipIf(skip)('refuses a foreign signer before the complete check and a wrong magic at the first bytes', async () => {
    const a = await app();
    const seller = await newUser(a, 'Honest');
    await registerKey(a, seller);
    const thief = await newUser(a, 'Thief');
    const foreign = await registerKey(a, thief);
    const checks = crypto.calls.filter((c) => c === 'verifyMasterStream').length;
    const answer = await upload(a, seller, master(foreign));
    expect(answer.status).toBe(422);
    expect(answer.body.error).toMatchObject({ code: 'SIGNER_NOT_SELLER', details: { publicKey: foreign.b64 } });
    expect(crypto.calls.filter((c) => c === 'verifyMasterStream')).toHaveLength(checks);
    const garbage = await rawRequest(a.url, { ...head(seller, { 'content-length': String(GIB) }), first: Buffer.from('GIF89a, or anything') });
    expect(garbage).toMatchObject({ status: 422, closed: true, body: { error: { code: 'BAD_MAGIC' } } });
    const project = Buffer.from(master(foreign).subarray(0, 12));
    project[3] = 0x49;
    expect((await upload(a, seller, project)).body.error.code).toBe('WRONG_KIND');
    expect(await traces(seller)).toEqual(nothing);
  });

  it.skipIf(skip)('caps master names at 256 bytes of UTF-8', async () => {
    const a = await app();
    const seller = await newUser(a, 'Namer');
    const key = await registerKey(a, seller);
    for (const name of ['n'.repeat(256), 'é'.repeat(128)]) {
      const ok = await upload(a, seller, master(key, name));
      expect(ok.status).toBe(201);
      expect(ok.body.name).toBe(name);
    }
    for (const [name, bytes] of [['n'.repeat(257), 257], [`${'é'.repeat(128)}n`, 257], ['x'.repeat(5000), 5000]] as const) {
      const refused = await upload(a, seller, master(key, name));
      expect(refused.status).toBe(422);
      expect(refused.body.error).toMatchObject({ code: 'MASTER_NAME_TOO_LONG', details: { bytes, maxBytes: 256 } });
    }
    expect(await traces(seller)).toEqual({ ...nothing, masters: 2 });
  });
});

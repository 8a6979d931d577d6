/**
 * Identify's limits through HTTP on PGlite and PostgreSQL (issue 15 item 2): requests per
 * seller within the window (the next is 429 IDENTIFY_RATE_LIMITED with Retry-After, before its
 * body is read; exactly 3 of 10 concurrent get through); the bound handed to the crypto port
 * is the master's largest texture capped at IKI_IDENTIFY_MAX_PIXELS; a master stored before
 * its bound was recorded has it read from the master once and recorded. The decoding itself,
 * bombs included, is tested against the real WebAssembly module in `identify-bomb.test.ts`.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { IdentifyLimits } from '../src/config.js';
import { QUOTA_DEFAULTS } from '../src/quota-config.js';
import { PgBlobStore } from '../src/storage/pg-blobs.js';
import { SqlRepository } from '../src/storage/sql-repository.js';
import { postgresServer, sqlEngines, type SqlStore } from './helpers/databases.js';
import { FAKE_TEXTURE_BOUND, fakeCrypto } from './helpers/fake-crypto.js';
import { newUser, registerKey, scenario, startApp, uploadMaster, type TestApp, type User } from './helpers/app.js';
import { rawRequest } from './helpers/raw-http.js';

const engines = sqlEngines;

describe.each(engines)('identify limits on $name', (engine) => {
  const skip = engine.name === 'postgres' && postgresServer() === '';
  let store: SqlStore;
  const apps: TestApp[] = [];
  const crypto = fakeCrypto();
  let clock = new Date('2030-01-01T00:00:00Z');

  beforeAll(async () => {
    if (!skip) store = await engine.open();
  });
  afterAll(async () => {
    if (skip) return;
    await Promise.all(apps.map((a) => a.close()));
    await store.close();
  });

  async function app(identify: Partial<IdentifyLimits>): Promise<TestApp> {
    const started = await startApp({ repo: new SqlRepository(store.db), blobs: new PgBlobStore(store.db), crypto,
      now: () => clock, config: { accessTokenTtlSeconds: 86_400,
        quotas: { ...QUOTA_DEFAULTS, identify: { ...QUOTA_DEFAULTS.identify, ...identify } } } });
    apps.push(started);
    return started;
  }

  const identify = (a: TestApp, seller: User, masterId: string, body = 'no mark here') =>
    a.call('POST', `/api/licenses/masters/${masterId}/identify`, { token: seller.token, type: 'image/png', body });
  const counted = async (seller: User) => Number((await store.db.query(
    "SELECT count(*)::int AS n FROM usage_actions WHERE kind = 'identify' AND account_id = $1", [seller.accountId])).rows[0]?.['n']);

  it.skipIf(skip)('refuses the request past the seller\'s limit with Retry-After, before reading its body', async () => {
    const a = await app({ perSeller: 3 });
    const { seller, masterId, licenseId } = await scenario(a);
    const start = clock;
    for (const minute of [0, 1, 2]) {
      clock = new Date(start.getTime() + minute * 60_000);
      expect((await identify(a, seller, masterId, `LIC:${licenseId}`)).body).toMatchObject({ found: true, licenseId });
    }
    clock = new Date(start.getTime() + 10 * 60_000);
    const refused = await rawRequest(a.url, { method: 'POST', path: `/api/licenses/masters/${masterId}/identify`,
      headers: { authorization: `Bearer ${seller.token}`, 'content-type': 'image/png', 'content-length': String(60 * 1024 * 1024) },
      first: Buffer.from([0x89, 0x50, 0x4e, 0x47]) });
    expect(refused).toMatchObject({ status: 429, closed: true, body: { error: { code: 'IDENTIFY_RATE_LIMITED',
      details: { limit: 3, windowSeconds: 3600, retryAfterSeconds: 50 * 60 } } } });
    expect(refused.headers['retry-after']).toBe(String(50 * 60));
    expect(await counted(seller)).toBe(3);
    // Another seller has a limit of its own; the window frees this one.
    const other = await newUser(a, 'Other');
    expect((await identify(a, other, await uploadMaster(a, other, await registerKey(a, other)))).status).toBe(200);
    clock = new Date(start.getTime() + 3600_000);
    expect((await identify(a, seller, masterId)).status).toBe(200);
    clock = new Date(start.getTime() + 3 * 3600_000);
  });

  it.skipIf(skip)('lets exactly 3 of 10 concurrent requests through', async () => {
    const a = await app({ perSeller: 3 });
    const { seller, masterId } = await scenario(a);
    const answers = await Promise.all(Array.from({ length: 10 }, () => identify(a, seller, masterId)));
    expect(answers.filter((r) => r.status === 200)).toHaveLength(3);
    expect(answers.filter((r) => r.status === 429)).toHaveLength(7);
    expect(await counted(seller)).toBe(3);
    clock = new Date(clock.getTime() + 3 * 3600_000);
  });

  it.skipIf(skip)('hands the crypto port the master\'s largest texture, capped by the pixel limit', async () => {
    const a = await app({ maxPixels: 1000 });
    const { seller, masterId } = await scenario(a);
    const before = crypto.calls.length;
    await identify(a, seller, masterId);
    expect(crypto.calls.slice(before)).toEqual([`identify ${FAKE_TEXTURE_BOUND.maxSidePx} 1000`]);
    const wide = await app({});
    const uncapped = await scenario(wide);
    expect((await identify(wide, uncapped.seller, uncapped.masterId)).status).toBe(200);
    expect(crypto.calls.at(-1)).toBe(`identify ${FAKE_TEXTURE_BOUND.maxSidePx} ${FAKE_TEXTURE_BOUND.maxPixels}`);
  });

  it.skipIf(skip)('answers "no mark" for a master without textures without decoding anything', async () => {
    const a = await app({});
    const { seller, masterId } = await scenario(a);
    await store.db.query('UPDATE masters SET texture_max_side = 0, texture_max_pixels = 0 WHERE id = $1', [masterId]);
    const before = crypto.calls.length;
    expect((await identify(a, seller, masterId, 'LIC:0123456789abcdef')).body).toEqual({ found: false });
    expect(crypto.calls.slice(before)).toEqual([]);
  });

  it.skipIf(skip)('reads the bound of a master stored before it was recorded, once, and records it', async () => {
    const a = await app({});
    const { seller, masterId } = await scenario(a);
    await store.db.query('UPDATE masters SET texture_max_side = NULL, texture_max_pixels = NULL WHERE id = $1', [masterId]);
    const checks = () => crypto.calls.filter((c) => c === 'verifyMasterStream').length;
    const before = checks();
    expect((await identify(a, seller, masterId)).status).toBe(200);
    expect(checks()).toBe(before + 1);
    const { rows } = await store.db.query('SELECT texture_max_side, texture_max_pixels::int AS p FROM masters WHERE id = $1', [masterId]);
    expect(rows[0]).toEqual({ texture_max_side: FAKE_TEXTURE_BOUND.maxSidePx, p: FAKE_TEXTURE_BOUND.maxPixels });
    expect((await identify(a, seller, masterId)).status).toBe(200);
    expect(checks()).toBe(before + 1);
  });
});

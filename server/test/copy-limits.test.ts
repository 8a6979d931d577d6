/**
 * License-copy download limits (issue 15 item 3, issue 13's per-license copy limits) through
 * HTTP on PGlite and PostgreSQL: downloads started per license and per licensee within the
 * window (the next is 429 COPY_RATE_LIMITED with Retry-After, exactly 5 of 12 concurrent get
 * through) and running at once (429 TOO_MANY_DOWNLOADS, exactly 2 of 6); a slot frees when its
 * download ends, when the client goes away, and by itself when its holder stops renewing it (a
 * crashed instance); a download that fails to start counts towards nothing.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CopyLimits } from '../src/config.js';
import { QUOTA_DEFAULTS } from '../src/quota-config.js';
import { HOLD_SECONDS } from '../src/services/usage-limits.js';
import { PgBlobStore } from '../src/storage/pg-blobs.js';
import { SqlRepository } from '../src/storage/sql-repository.js';
import { postgresServer, sqlEngines, type SqlStore } from './helpers/databases.js';
import { gatedCrypto } from './helpers/fake-crypto.js';
import { license, newUser, scenario, startApp, type TestApp } from './helpers/app.js';

const engines = sqlEngines;

describe.each(engines)('license-copy downloads on $name', (engine) => {
  const skip = engine.name === 'postgres' && postgresServer() === '';
  let store: SqlStore;
  const apps: TestApp[] = [];
  const { crypto, control } = gatedCrypto();
  let clock = new Date('2030-01-01T00:00:00Z');

  beforeAll(async () => {
    if (!skip) store = await engine.open();
  });
  afterAll(async () => {
    if (skip) return;
    control.release();
    await Promise.all(apps.map((a) => a.close()));
    await store.close();
  });

  async function app(copies: Partial<CopyLimits>): Promise<TestApp> {
    const started = await startApp({ repo: new SqlRepository(store.db), blobs: new PgBlobStore(store.db), crypto,
      now: () => clock, config: { accessTokenTtlSeconds: 10 * 86_400,
        quotas: { ...QUOTA_DEFAULTS, copies: { ...QUOTA_DEFAULTS.copies, ...copies } } } });
    apps.push(started);
    return started;
  }

  const download = (a: TestApp, token: string, licenseId: string, signal?: AbortSignal) =>
    fetch(`${a.url}/api/licenses/${licenseId}/model`, { headers: { authorization: `Bearer ${token}` }, ...(signal ? { signal } : {}) });
  const errorOf = async (r: Response) => ((await r.json()) as { error: Record<string, any> }).error;
  const count = async (sql: string, params: unknown[]) => Number((await store.db.query(sql, params)).rows[0]?.['n']);
  const running = (licenseId: string) => count(`SELECT count(*)::int AS n FROM usage_actions WHERE license_id = $1
    AND hold_until > $2`, [licenseId, clock]);
  const downloads = (licenseId: string) => count(`SELECT count(*)::int AS n FROM events WHERE license_id = $1
    AND kind = 'download'`, [licenseId]);

  it.skipIf(skip)('refuses the download past the per-license limit with Retry-After until the window frees it', async () => {
    const a = await app({ perLicense: 3 });
    const { buyer, licenseId } = await scenario(a);
    const start = clock;
    const first = await download(a, buyer.token, licenseId);
    const bytes = Buffer.from(await first.arrayBuffer());
    for (const minutes of [10, 20]) {
      clock = new Date(start.getTime() + minutes * 60_000);
      const again = await download(a, buyer.token, licenseId);
      expect(again.status).toBe(200);
      expect(Buffer.from(await again.arrayBuffer()).equals(bytes)).toBe(true);
    }
    clock = new Date(start.getTime() + 60 * 60_000);
    const refused = await download(a, buyer.token, licenseId);
    expect(refused.status).toBe(429);
    expect(refused.headers.get('retry-after')).toBe(String(23 * 3600));
    expect((await errorOf(refused))).toMatchObject({ code: 'COPY_RATE_LIMITED',
      details: { scope: 'license', limit: 3, windowSeconds: 86_400, retryAfterSeconds: 23 * 3600 } });
    expect(await downloads(licenseId)).toBe(3);
    clock = new Date(start.getTime() + 86_400_000);
    const later = await download(a, buyer.token, licenseId);
    expect(later.status).toBe(200);
    await later.arrayBuffer();
    clock = new Date(start.getTime() + 3 * 86_400_000);
  });

  it.skipIf(skip)('applies the per-licensee limit across licenses', async () => {
    const a = await app({ perLicense: 3, perUser: 4 });
    const { seller, buyer, masterId, licenseId } = await scenario(a);
    const second = await license(a, seller, masterId, buyer);
    for (const id of [licenseId, licenseId, licenseId, second]) expect((await download(a, buyer.token, id)).status).toBe(200);
    const refused = await download(a, buyer.token, second);
    expect(refused.status).toBe(429);
    expect((await errorOf(refused)).details).toMatchObject({ scope: 'user', limit: 4 });
    const other = await newUser(a, 'Other');
    const theirs = await license(a, seller, masterId, other);
    expect((await download(a, other.token, theirs)).status).toBe(200);
    clock = new Date(clock.getTime() + 2 * 86_400_000);
  });

  it.skipIf(skip)('lets exactly 5 of 12 concurrent downloads of one license through', async () => {
    const a = await app({ perLicense: 5, concurrentPerLicense: 100, concurrentPerUser: 100 });
    const { buyer, licenseId } = await scenario(a);
    const answers = await Promise.all(Array.from({ length: 12 }, async () => {
      const r = await download(a, buyer.token, licenseId);
      await r.arrayBuffer();
      return r.status;
    }));
    expect(answers.filter((s) => s === 200)).toHaveLength(5);
    expect(answers.filter((s) => s === 429)).toHaveLength(7);
    expect(await downloads(licenseId)).toBe(5);
    expect(await running(licenseId)).toBe(0);
    clock = new Date(clock.getTime() + 2 * 86_400_000);
  });

  it.skipIf(skip)('runs exactly 2 of 6 concurrent downloads of one license and frees a slot when one ends', async () => {
    const a = await app({ concurrentPerLicense: 2 });
    const { buyer, licenseId } = await scenario(a);
    control.hold();
    const answers = await Promise.all(Array.from({ length: 6 }, () => download(a, buyer.token, licenseId)));
    const refused = answers.filter((r) => r.status === 429);
    expect(answers.filter((r) => r.status === 200)).toHaveLength(2);
    expect(refused).toHaveLength(4);
    for (const r of refused) {
      expect(r.headers.get('retry-after')).toBe(String(HOLD_SECONDS));
      expect((await errorOf(r))).toMatchObject({ code: 'TOO_MANY_DOWNLOADS', details: { scope: 'license', limit: 2 } });
    }
    expect(await running(licenseId)).toBe(2);
    control.release();
    await Promise.all(answers.filter((r) => r.status === 200).map((r) => r.arrayBuffer()));
    await expect.poll(() => running(licenseId)).toBe(0);
    expect((await download(a, buyer.token, licenseId)).status).toBe(200);
    expect(await downloads(licenseId)).toBe(3);
  });

  it.skipIf(skip)('caps a licensee\'s running downloads across licenses; a client that goes away frees its slot', async () => {
    const a = await app({ concurrentPerUser: 2 });
    const { seller, buyer, masterId, licenseId } = await scenario(a);
    const others = [await license(a, seller, masterId, buyer), await license(a, seller, masterId, buyer)];
    control.hold();
    const aborts = [new AbortController(), new AbortController()];
    const held = [await download(a, buyer.token, licenseId, aborts[0]?.signal), await download(a, buyer.token, others[0] as string, aborts[1]?.signal)];
    expect(held.map((r) => r.status)).toEqual([200, 200]);
    const refused = await download(a, buyer.token, others[1] as string);
    expect(refused.status).toBe(429);
    expect((await errorOf(refused)).details).toMatchObject({ scope: 'user', limit: 2 });
    aborts[0]?.abort();
    await expect.poll(() => running(licenseId)).toBe(0);
    const next = await download(a, buyer.token, others[1] as string);
    control.release();
    expect(next.status).toBe(200);
    await Promise.all([next, held[1]].map((r) => r?.arrayBuffer()));
  });

  it.skipIf(skip)('frees the slot of a holder that stopped renewing it (a crashed instance) after the hold', async () => {
    const a = await app({ concurrentPerLicense: 1 });
    const { buyer, licenseId } = await scenario(a);
    control.hold();
    const stuck = await download(a, buyer.token, licenseId);
    expect(stuck.status).toBe(200);
    clock = new Date(clock.getTime() + (HOLD_SECONDS - 1) * 1000);
    expect((await download(a, buyer.token, licenseId)).status).toBe(429);
    clock = new Date(clock.getTime() + 1000);
    const after = await download(a, buyer.token, licenseId);
    control.release();
    expect(after.status).toBe(200);
    await Promise.all([stuck.arrayBuffer(), after.arrayBuffer()]);
  });

  it.skipIf(skip)('counts nothing for a download that fails to start', async () => {
    const a = await app({ perLicense: 1 });
    const { buyer, licenseId } = await scenario(a);
    control.failStart = true;
    const failed = await download(a, buyer.token, licenseId);
    control.failStart = false;
    expect(failed.status).toBe(500);
    expect((await errorOf(failed)).code).toBe('MASTER_MISMATCH');
    expect(await count('SELECT count(*)::int AS n FROM usage_actions WHERE license_id = $1', [licenseId])).toBe(0);
    const ok = await download(a, buyer.token, licenseId);
    expect(ok.status).toBe(200);
    await ok.arrayBuffer();
    expect((await download(a, buyer.token, licenseId)).status).toBe(429);
  });
});

/**
 * Key-release limits through HTTP on both SQL engines (SPEC "Limits": 20 per license and 120
 * per user per hour): the 21st release is 429 with Retry-After and RateLimit-* headers, the
 * per-user limit spans licenses, and exactly 20 of 50 concurrent requests succeed.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PgBlobStore } from '../src/storage/pg-blobs.js';
import type { SqlDb } from '../src/storage/sql-db.js';
import { SqlRepository } from '../src/storage/sql-repository.js';
import { freshPglite, freshPostgres, postgresServer } from './helpers/databases.js';
import { license, newUser, playerKey, scenario, startApp, type TestApp } from './helpers/app.js';

const engines = [
  { name: 'pglite', open: async () => { const db = await freshPglite(); return { db, close: () => db.close() }; } },
  { name: 'postgres', open: async () => { const pg = await freshPostgres(); return { db: pg.db, close: () => pg.drop() }; } },
];

describe.each(engines)('release limits on $name', (engine) => {
  const skip = engine.name === 'postgres' && postgresServer() === '';
  let app: TestApp;
  let store: { db: SqlDb; close(): Promise<void> };
  let clock = new Date('2030-01-01T00:00:00Z');

  beforeAll(async () => {
    if (skip) return;
    store = await engine.open();
    // Tokens live for a day here because this test moves the clock by hours.
    app = await startApp({ repo: new SqlRepository(store.db), blobs: new PgBlobStore(store.db), now: () => clock,
      config: { accessTokenTtlSeconds: 86_400 } });
  });
  afterAll(async () => {
    if (skip) return;
    await app.close();
    await store.close();
  });

  const release = (token: string, licenseId: string) =>
    app.call('POST', `/api/licenses/${licenseId}/key`, { token, json: { publicKey: playerKey() } });

  it.skipIf(skip)('refuses the 21st release within the hour with Retry-After', async () => {
    const { buyer, licenseId } = await scenario(app);
    const start = clock;
    for (let i = 0; i < 20; i += 1) {
      clock = new Date(start.getTime() + i * 60_000);
      const answer = await release(buyer.token, licenseId);
      expect(answer.status).toBe(200);
      expect(answer.headers.get('ratelimit-remaining')).toBe(String(19 - i));
    }
    clock = new Date(start.getTime() + 30 * 60_000);
    const refused = await release(buyer.token, licenseId);
    expect(refused.status).toBe(429);
    expect(refused.body.error).toMatchObject({ code: 'RATE_LIMITED', details: { scope: 'license', retryAfterSeconds: 1800 } });
    expect(refused.headers.get('retry-after')).toBe('1800');
    expect(refused.headers.get('ratelimit-limit')).toBe('20');
    expect(refused.headers.get('ratelimit-remaining')).toBe('0');
    expect(refused.headers.get('ratelimit-reset')).toBe('1800');
    const count = await app.call('GET', `/api/licenses/${licenseId}`, { token: buyer.token });
    expect(count.body.releaseCount).toBe(20);
    clock = new Date(start.getTime() + 3600_000);
    expect((await release(buyer.token, licenseId)).status).toBe(200);
    clock = new Date(start.getTime() + 2 * 3600_000);
  });

  it.skipIf(skip)('applies the per-user limit across licenses', async () => {
    const { seller, buyer, masterId } = await scenario(app);
    const ids = (await app.call('GET', '/api/licenses', { token: buyer.token })).body.licenses.map((l: { licenseId: string }) => l.licenseId);
    for (let i = 0; i < 6; i += 1) ids.push(await license(app, seller, masterId, buyer));
    const start = clock;
    let n = 0;
    for (const id of ids.slice(0, 6)) {
      for (let i = 0; i < 20; i += 1) {
        clock = new Date(start.getTime() + (n += 1) * 1000);
        expect((await release(buyer.token, id)).status).toBe(200);
      }
    }
    const refused = await release(buyer.token, ids[6]);
    expect(refused.status).toBe(429);
    expect(refused.body.error.details.scope).toBe('user');
    expect(refused.headers.get('ratelimit-limit')).toBe('120');
    expect(refused.headers.get('retry-after')).toBe(String(3600 - 119));
    const other = await newUser(app, 'Other');
    const otherLicense = await license(app, seller, masterId, other);
    expect((await release(other.token, otherLicense)).status).toBe(200);
    clock = new Date(start.getTime() + 3 * 3600_000);
  });

  it.skipIf(skip)('grants exactly 20 of 50 concurrent releases', async () => {
    const { buyer, licenseId } = await scenario(app);
    const answers = await Promise.all(Array.from({ length: 50 }, () => release(buyer.token, licenseId)));
    expect(answers.filter((a) => a.status === 200)).toHaveLength(20);
    expect(answers.filter((a) => a.status === 429)).toHaveLength(30);
    const counts = answers.filter((a) => a.status === 200).map((a) => a.body.releaseCount as number).sort((a, b) => a - b);
    expect(counts).toEqual(Array.from({ length: 20 }, (_, i) => i + 1));
    const stored = await app.call('GET', `/api/licenses/${licenseId}`, { token: buyer.token });
    expect(stored.body.releaseCount).toBe(20);
  });
});

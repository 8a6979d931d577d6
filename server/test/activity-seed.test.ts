/**
 * The seeded history of test/helpers/activity-seed.ts (50 licenses over 30 days, for the pages'
 * Chromium test) read back through the master's activity on PGlite: the API's totals are the
 * seeded ones, and the busiest license comes first.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PgBlobStore } from '../src/storage/pg-blobs.js';
import type { SqlDb } from '../src/storage/sql-db.js';
import { SqlRepository } from '../src/storage/sql-repository.js';
import { freshPglite } from './helpers/databases.js';
import { seedActivity } from './helpers/activity-seed.js';
import { license, newUser, scenario, startApp, type TestApp } from './helpers/app.js';

describe('seeded activity', () => {
  let db: SqlDb;
  let app: TestApp;
  const now = new Date('2033-01-31T00:00:00Z');

  beforeAll(async () => {
    db = await freshPglite();
    app = await startApp({ repo: new SqlRepository(db), blobs: new PgBlobStore(db), now: () => now });
  });
  afterAll(async () => {
    await app.close();
    await db.close();
  });

  it('writes 50 licenses x 30 days that the master activity reads back exactly', async () => {
    const { seller, masterId, licenseId } = await scenario(app);
    const buyer = await newUser(app, 'Buyer');
    const ids = [licenseId];
    while (ids.length < 50) ids.push(await license(app, seller, masterId, buyer));
    const totals = await seedActivity(db, { licenseIds: ids, now });
    // The seeding kept the client idle for longer than the server keeps a connection alive; the
    // first request after it may meet the closed connection (fetch does not retry it): one
    // throwaway request takes that.
    await app.call('GET', '/api/licenses', { token: seller.token }).catch(() => undefined);
    const answer = await app.call('GET', `/api/licenses/masters/${masterId}/activity?bucket=day&tz=UTC`
      + `&from=${new Date(now.getTime() - 30 * 86400_000).toISOString()}&to=${now.toISOString()}`, { token: seller.token });
    expect(answer.status).toBe(200);
    expect(answer.body.buckets).toHaveLength(30);
    expect(answer.body.licenses).toHaveLength(50);
    for (const l of answer.body.licenses as { licenseId: string; totals: Record<string, number>; releases: number[] }[]) {
      const seeded = totals.get(l.licenseId);
      expect(l.totals, l.licenseId).toMatchObject({ releases: seeded?.releases, downloads: seeded?.downloads,
        refusals: seeded?.refusals, addresses: seeded?.addresses, devices: seeded?.devices });
      expect(l.releases.reduce((a, b) => a + b, 0)).toBe(seeded?.releases);
    }
    const most = Math.max(...[...totals.values()].map((t) => t.releases));
    expect(answer.body.licenses[0].totals.releases).toBe(most);
    // The shared license (the second) is seen from many prefixes, the scripted one (the third) is regular.
    expect(totals.get(ids[1] as string)?.addresses).toBeGreaterThan(4);
  }, 120_000);
});

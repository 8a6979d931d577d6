/**
 * Activity per license and per master (issue 29 item 1) through HTTP on both SQL engines,
 * against hand-counted fixtures: releases recorded at chosen instants (the test's clock) and
 * read back by the hour and by the day in UTC, Asia/Tokyo (+09:00), America/St_Johns (-03:30,
 * a quarter hour that is 00:15 UTC falls in the previous local day) and across a daylight
 * saving change (America/New_York on 2030-11-03, a day of 25 hours).
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

/** Instants of the fixture's releases (UTC), chosen around boundaries. */
const RELEASES = [
  '2030-11-02T23:59:59Z', // Tokyo 11-03 08:59; St John's 11-02 20:29; UTC 11-02
  '2030-11-03T00:00:00Z', // UTC 11-03 00:00 (the hour's first instant)
  '2030-11-03T00:14:59Z', // the last second of the UTC quarter hour
  '2030-11-03T03:29:00Z',
  '2030-11-03T03:31:00Z',
  '2030-11-03T05:59:00Z', // New York: 01:59 EDT (first 1 o'clock)
  '2030-11-03T06:30:00Z', // New York: 01:30 EST (the second 1 o'clock)
  '2030-11-03T15:00:00Z', // Tokyo 11-04 00:00
];

describe.each(engines)('activity on $name', (engine) => {
  const skip = engine.name === 'postgres' && postgresServer() === '';
  let app: TestApp;
  let store: { db: SqlDb; close(): Promise<void> };
  let clock = new Date('2030-11-01T00:00:00Z');
  let fixture: Awaited<ReturnType<typeof scenario>>;

  beforeAll(async () => {
    if (skip) return;
    store = await engine.open();
    app = await startApp({ repo: new SqlRepository(store.db), blobs: new PgBlobStore(store.db), now: () => clock,
      config: { accessTokenTtlSeconds: 30 * 86_400, trustProxy: ['loopback'] } });
    fixture = await scenario(app);
    for (const [i, at] of RELEASES.entries()) {
      clock = new Date(at);
      const answer = await app.call('POST', `/api/licenses/${fixture.licenseId}/key`, { token: fixture.buyer.token,
        json: { publicKey: playerKey() },
        headers: { 'x-forwarded-for': i % 2 === 0 ? '192.0.2.7' : '198.51.100.9', 'x-iki-device': 'AAAAAAAAAAAAAAAAAAAAAA' } });
      expect(answer.status).toBe(200);
    }
    clock = new Date('2030-11-10T00:00:00Z');
  }, 60_000);
  afterAll(async () => {
    if (skip) return;
    await app.close();
    await store.close();
  });

  const activity = (query: string, token = fixture.seller.token) =>
    app.call('GET', `/api/licenses/${fixture.licenseId}/activity?${query}`, { token });
  const nonZero = (series: { start: string; releases: number }[]) =>
    series.filter((p) => p.releases > 0).map((p) => [p.start, p.releases]);

  it.skipIf(skip)('counts releases per UTC day and hour', async () => {
    const day = await activity('bucket=day&tz=UTC&from=2030-11-02T00:00:00Z&to=2030-11-05T00:00:00Z');
    expect(day.status).toBe(200);
    expect(day.body).toMatchObject({ licenseId: fixture.licenseId, masterId: fixture.masterId, bucket: 'day', timeZone: 'UTC',
      from: '2030-11-02T00:00:00+00:00', to: '2030-11-05T00:00:00+00:00',
      limits: { perLicense: { count: 20, windowSeconds: 3600 }, perAccount: { count: 120, windowSeconds: 3600 } } });
    expect(day.body.series.map((p: { start: string }) => p.start)).toEqual(
      ['2030-11-02T00:00:00+00:00', '2030-11-03T00:00:00+00:00', '2030-11-04T00:00:00+00:00']);
    expect(nonZero(day.body.series)).toEqual([['2030-11-02T00:00:00+00:00', 1], ['2030-11-03T00:00:00+00:00', 7]]);
    const hour = await activity('bucket=hour&tz=UTC&from=2030-11-02T23:00:00Z&to=2030-11-03T04:00:00Z');
    expect(nonZero(hour.body.series)).toEqual([
      ['2030-11-02T23:00:00+00:00', 1], ['2030-11-03T00:00:00+00:00', 2], ['2030-11-03T03:00:00+00:00', 2]]);
    expect(hour.body.series).toHaveLength(5);
  });

  it.skipIf(skip)('groups by the day and hour of Asia/Tokyo', async () => {
    const day = await activity('bucket=day&tz=Asia/Tokyo&from=2030-11-02T00:00:00%2B09:00&to=2030-11-05T00:00:00%2B09:00');
    expect(day.status).toBe(200);
    expect(day.body.from).toBe('2030-11-02T00:00:00+09:00');
    // 08:59, 09:00, 09:14, 12:29, 12:31, 14:59, 15:30 on 11-03; 00:00 on 11-04.
    expect(nonZero(day.body.series)).toEqual([['2030-11-03T00:00:00+09:00', 7], ['2030-11-04T00:00:00+09:00', 1]]);
    const hour = await activity('bucket=hour&tz=Asia/Tokyo&from=2030-11-03T08:00:00%2B09:00&to=2030-11-03T10:00:00%2B09:00');
    expect(nonZero(hour.body.series)).toEqual([['2030-11-03T08:00:00+09:00', 1], ['2030-11-03T09:00:00+09:00', 2]]);
  });

  it.skipIf(skip)('groups by the half-hour-offset hours and days of America/St_Johns', async () => {
    // St John's is -02:30 (daylight time) until 2030-11-03 02:00 local (04:30 UTC), then -03:30.
    const day = await activity('bucket=day&tz=America/St_Johns&from=2030-11-02T00:00:00Z&to=2030-11-05T00:00:00Z');
    expect(day.body.from).toBe('2030-11-01T00:00:00-02:30');
    // Local: 21:29, 21:30, 21:44 on 11-02; 00:59, 01:01, 02:29 (-03:30 now), 03:00, 11:30 on 11-03.
    expect(nonZero(day.body.series)).toEqual([['2030-11-02T00:00:00-02:30', 3], ['2030-11-03T00:00:00-02:30', 5]]);
    const hour = await activity('bucket=hour&tz=America/St_Johns&from=2030-11-02T23:30:00Z&to=2030-11-03T04:30:00Z');
    expect(nonZero(hour.body.series)).toEqual([
      ['2030-11-02T21:00:00-02:30', 3], ['2030-11-03T00:00:00-02:30', 1], ['2030-11-03T01:00:00-02:30', 1]]);
  });

  it.skipIf(skip)('gives a daylight saving day its 25 hours (America/New_York)', async () => {
    const hour = await activity('bucket=hour&tz=America/New_York&from=2030-11-03T04:00:00Z&to=2030-11-03T08:00:00Z');
    // 00:00 EDT, 01:00 EDT, 01:00 EST, 02:00 EST: the repeated local hour is two buckets.
    expect(hour.body.series.map((p: { start: string }) => p.start)).toEqual([
      '2030-11-03T00:00:00-04:00', '2030-11-03T01:00:00-04:00', '2030-11-03T01:00:00-05:00', '2030-11-03T02:00:00-05:00']);
    expect(nonZero(hour.body.series)).toEqual([['2030-11-03T01:00:00-04:00', 1], ['2030-11-03T01:00:00-05:00', 1]]);
    const day = await activity('bucket=day&tz=America/New_York&from=2030-11-03T04:00:00Z&to=2030-11-04T05:00:00Z');
    expect(day.body.series.map((p: { start: string }) => p.start)).toEqual(['2030-11-03T00:00:00-04:00']);
    expect(day.body.to).toBe('2030-11-04T00:00:00-05:00');
    // 01:59 EDT, 01:30 EST, 10:00 EST (03:29Z and 03:31Z are 11-02 local).
    expect(nonZero(day.body.series)).toEqual([['2030-11-03T00:00:00-04:00', 3]]);
  });

  it.skipIf(skip)('counts distinct address prefixes and devices', async () => {
    const day = await activity('bucket=day&tz=UTC&from=2030-11-03T00:00:00Z&to=2030-11-04T00:00:00Z');
    expect(day.body.series[0]).toMatchObject({ releases: 7, addresses: 2, devices: 1 });
  });

  it.skipIf(skip)('shows the buyer their own license and no one else any', async () => {
    expect((await activity('bucket=day', fixture.buyer.token)).status).toBe(200);
    const stranger = await newUser(app, 'Stranger');
    const refused = await activity('bucket=day', stranger.token);
    expect(refused.status).toBe(404);
    expect(refused.body.error.code).toBe('LICENSE_NOT_FOUND');
    const master = await app.call('GET', `/api/licenses/masters/${fixture.masterId}/activity`, { token: fixture.buyer.token });
    expect(master.status).toBe(404);
    expect(master.body.error.code).toBe('MASTER_NOT_FOUND');
  });

  it.skipIf(skip)('lets a seller API key read with masters:read / licenses:read, and no other seller', async () => {
    const key = async (token: string, scopes: string[]) => (await app.call('POST', '/api/api-keys', { token,
      json: { name: 'shop', scopes } })).body.secret as string;
    const reader = await key(fixture.seller.token, ['masters:read', 'licenses:read']);
    const masterPath = `/api/licenses/masters/${fixture.masterId}/activity`;
    expect((await app.call('GET', masterPath, { token: reader })).status).toBe(200);
    expect((await activity('bucket=day', reader)).status).toBe(200);
    expect((await app.call('GET', '/api/seller/flags', { token: reader })).status).toBe(200);
    const writer = await key(fixture.seller.token, ['webhooks:write']);
    for (const path of [masterPath, `/api/licenses/${fixture.licenseId}/activity`, '/api/seller/flags']) {
      const refused = await app.call('GET', path, { token: writer });
      expect(refused.status, path).toBe(403);
      expect(refused.body.error.code, path).toBe('INSUFFICIENT_SCOPE');
    }
    const rival = await newUser(app, 'Rival');
    const rivalKey = await key(rival.token, ['masters:read', 'licenses:read']);
    expect((await app.call('GET', masterPath, { token: rivalKey })).body.error.code).toBe('MASTER_NOT_FOUND');
    expect((await activity('bucket=day', rivalKey)).body.error.code).toBe('LICENSE_NOT_FOUND');
    expect((await app.call('GET', masterPath, { token: rival.token })).body.error.code).toBe('MASTER_NOT_FOUND');
  });

  it.skipIf(skip)('summarises a master: licenses by releases, a sparkline each', async () => {
    const other = await newUser(app, 'Other');
    const quiet = await license(app, fixture.seller, fixture.masterId, other);
    const answer = await app.call('GET', `/api/licenses/masters/${fixture.masterId}/activity?bucket=day&tz=Asia/Tokyo`
      + '&from=2030-11-02T00:00:00%2B09:00&to=2030-11-05T00:00:00%2B09:00', { token: fixture.seller.token });
    expect(answer.status).toBe(200);
    expect(answer.body).toMatchObject({ masterId: fixture.masterId, bucket: 'day', timeZone: 'Asia/Tokyo', truncated: false,
      buckets: ['2030-11-02T00:00:00+09:00', '2030-11-03T00:00:00+09:00', '2030-11-04T00:00:00+09:00'] });
    expect(answer.body.licenses).toEqual([
      { licenseId: fixture.licenseId, label: null, state: 'active', openFlags: 0, releases: [0, 7, 1],
        totals: { releases: 8, downloads: 0, resumes: 0, refusals: 0, addresses: 2, devices: 1 } },
      { licenseId: quiet, label: null, state: 'active', openFlags: 0, releases: [0, 0, 0],
        totals: { releases: 0, downloads: 0, resumes: 0, refusals: 0, addresses: 0, devices: 0 } },
    ]);
  });

  it.skipIf(skip)('refuses bad ranges, buckets and zones with VALIDATION_FAILED', async () => {
    for (const query of ['bucket=week', 'tz=Mars/Olympus', 'tz=UTC%2B3', 'tz=%3C%2B03%3E-3', 'from=yesterday',
      'from=2030-11-02T00:00:00', 'bucket=hour&from=2030-11-01T00:00:00Z&to=2030-11-15T00:00:01Z',
      'bucket=day&from=2030-08-01T00:00:00Z&to=2030-11-01T00:00:00Z', 'from=2030-11-03T00:00:00Z&to=2030-11-03T00:00:00Z',
      'tz=UTC&tz=UTC']) {
      const answer = await activity(query);
      expect(answer.status, query).toBe(400);
      expect(answer.body.error.code, query).toBe('VALIDATION_FAILED');
    }
    // At the limits: 14 days by the hour, 90 by the day.
    expect((await activity('bucket=hour&from=2030-11-01T00:00:00Z&to=2030-11-15T00:00:00Z')).status).toBe(200);
    expect((await activity('bucket=day&from=2030-08-02T00:00:00Z&to=2030-10-31T00:00:00Z')).status).toBe(200);
  });
});

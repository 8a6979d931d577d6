/**
 * Key releases recorded in groups (storage/sql-release.ts, issue 28 item 1): on PGlite and on
 * PostgreSQL, releases that arrive together are recorded in one statement, one call of
 * `iki_release` per release in order, and each call must count every release before it as
 * separate statements would. Concurrent releases of one license with a limit of 3 must grant
 * exactly 3 (releases 1, 2, 3) and refuse the rest, with a group of more than one having run;
 * a group whose statement fails must leave nothing behind and record its releases one by one,
 * and a group that meets an outage must answer it to every caller at once.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PgBlobStore } from '../src/storage/pg-blobs.js';
import type { SqlDb } from '../src/storage/sql-db.js';
import { SqlRepository } from '../src/storage/sql-repository.js';
import { storageUnavailable } from '../src/storage/unavailable.js';
import { license, newUser, playerKey, scenario, startApp, type TestApp } from './helpers/app.js';
import { freshPglite, freshPostgres, postgresServer } from './helpers/databases.js';

const engines = [
  { name: 'PGlite', skip: false, open: async () => {
    const db = await freshPglite();
    return { db, drop: () => db.close() };
  } },
  { name: 'PostgreSQL', skip: postgresServer() === '', open: async () => {
    const pg = await freshPostgres();
    return { db: pg.db, drop: () => pg.drop() };
  } },
];

/** The group statement, told apart from the one-release statements by its JSON argument. */
const isGroup = (text: string): boolean => text.includes('jsonb_array_elements');

describe.each(engines)('key releases recorded in groups on $name', (engine) => {
  let app: TestApp;
  let drop: () => Promise<void> = async () => {};
  /** Sizes of the group statements run, and how the next ones must fail (a plain error or an outage). */
  const groups: number[] = [];
  let failGroups: 'error' | 'outage' | undefined;

  beforeAll(async () => {
    if (engine.skip) return;
    const { db, drop: close } = await engine.open();
    drop = close;
    const watched: SqlDb = { ...db,
      query: (text, params, name) => {
        if (isGroup(text)) {
          groups.push((JSON.parse(String(params?.[0])) as unknown[]).length);
          if (failGroups === 'error') return Promise.reject(new Error('group statement refused by the test'));
          if (failGroups === 'outage') return Promise.reject(storageUnavailable('test'));
        }
        return db.query(text, params, name);
      } };
    app = await startApp({ repo: new SqlRepository(watched), blobs: new PgBlobStore(watched),
      config: { releaseLimits: { perLicense: 3, perUser: 1000, windowSeconds: 3600 } } });
  }, 120_000);
  afterAll(async () => {
    await app?.close();
    await drop();
  });

  const release = (token: string, licenseId: string) =>
    app.call('POST', `/api/licenses/${licenseId}/key`, { token, json: { publicKey: playerKey() } });

  /** Granted releases written for `licenseId` (one event each). */
  const recorded = async (licenseId: string): Promise<number> =>
    (await app.repo.listEvents(licenseId, { limit: 100, before: undefined })).filter((e) => e.kind === 'release').length;

  it.skipIf(engine.skip)('counts each release of a group after the ones before it: 3 of 8 granted on a limit of 3', async () => {
    const { buyer, licenseId } = await scenario(app);
    groups.length = 0;
    const answers = await Promise.all(Array.from({ length: 8 }, () => release(buyer.token, licenseId)));
    expect(Math.max(0, ...groups)).toBeGreaterThan(1);
    expect(answers.map((a) => a.status).sort()).toEqual([200, 200, 200, 429, 429, 429, 429, 429]);
    const granted = answers.filter((a) => a.status === 200).map((a) => a.body.releaseCount as number);
    expect(granted.sort()).toEqual([1, 2, 3]);
    for (const refused of answers.filter((a) => a.status === 429)) expect(refused.body.error.code).toBe('RATE_LIMITED');
    expect(await recorded(licenseId)).toBe(3);
  }, 60_000);

  /** Six buyers release their own licenses at once while group statements fail as `mode` says. */
  async function sixAtOnce(prefix: string, mode: 'error' | 'outage') {
    const { seller, masterId } = await scenario(app);
    const buyers = await Promise.all(Array.from({ length: 6 }, (_, i) => newUser(app, `${prefix}${i}`)));
    const licenses: string[] = [];
    for (const buyer of buyers) licenses.push(await license(app, seller, masterId, buyer));
    groups.length = 0;
    failGroups = mode;
    try {
      return { licenses, answers: await Promise.all(buyers.map((b, i) => release(b.token, licenses[i]!))) };
    } finally {
      failGroups = undefined;
    }
  }

  it.skipIf(engine.skip)('records a failed group one release at a time, each once', async () => {
    const { licenses, answers } = await sixAtOnce('Grouped', 'error');
    expect(Math.max(0, ...groups)).toBeGreaterThan(1);
    expect(answers.map((a) => [a.status, a.body.releaseCount])).toEqual(licenses.map(() => [200, 1]));
    for (const licenseId of licenses) expect(await recorded(licenseId)).toBe(1);
  }, 60_000);

  it.skipIf(engine.skip)('answers an outage of a group to all its callers at once, without retrying each', async () => {
    const { licenses, answers } = await sixAtOnce('Outage', 'outage');
    const grouped = groups.filter((n) => n > 1).reduce((sum, n) => sum + n, 0);
    expect(grouped).toBeGreaterThan(1);
    // Those in a failed group got the outage; a release that went alone was recorded.
    const refused = answers.filter((a) => a.status === 503);
    expect(refused).toHaveLength(grouped);
    for (const a of refused) expect([a.body.error.code, a.headers.get('retry-after')]).toEqual(['STORAGE_UNAVAILABLE', '5']);
    let total = 0;
    for (const licenseId of licenses) total += await recorded(licenseId);
    expect(total).toBe(licenses.length - grouped);
  }, 60_000);
});

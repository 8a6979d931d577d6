/**
 * Flags (issue 29 item 3) on both SQL engines: each rule at its threshold (no flag) and just
 * past it (a flag), once per license, rule and window however often and by however many
 * sweepers; the seller's list and dismissal, nobody else's; and the `license.flagged` webhook
 * event delivered with the flag. Releases go through the real release statement
 * (`iki_release`, migration 45) with the test's clock, addresses through `X-Forwarded-For`
 * behind a trusted loopback proxy.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FLAG_DEFAULTS, type FlagSettings } from '../src/activity-config.js';
import { FlagSweeper } from '../src/services/flags-sweep.js';
import { WebhookDeliverer } from '../src/services/webhook-delivery.js';
import { PgBlobStore } from '../src/storage/pg-blobs.js';
import { SqlRepository } from '../src/storage/sql-repository.js';
import { sqlEngines, postgresServer, type SqlStore } from './helpers/databases.js';
import { captureLogger, license, newUser, playerKey, scenario, startApp, type TestApp, type User } from './helpers/app.js';
import { receiver, type Receiver } from './helpers/webhook-receiver.js';

const SETTINGS: FlagSettings = { ...FLAG_DEFAULTS, windowSeconds: 86_400, rateLimitHits: 2, maxAddresses: 2, maxDevices: 2,
  scriptedMinReleases: 5, scriptedMaxCv: 0.1 };
const DAY = 86_400_000;
/** Five release times (ms into the day) whose gaps vary a lot: 1 h, 2 h, 30 min, 3.5 h. */
const HOURS = [0, 1, 3, 3.5, 7].map((h) => h * 3600_000) as [number, number, number, number, number];

describe.each(sqlEngines)('flags on $name', (engine) => {
  const skip = engine.name === 'postgres' && postgresServer() === '';
  let store: SqlStore;
  let app: TestApp;
  let hook: Receiver;
  let base: Awaited<ReturnType<typeof scenario>>;
  // Each test has a day of its own (one flag window), from midnight UTC.
  let day = Date.parse('2031-05-01T00:00:00Z');
  let clock = new Date(day);
  const now = () => clock;
  const sweeper = () => new FlagSweeper({ repo: app.repo, now, settings: SETTINGS, logger: captureLogger([]) });

  beforeAll(async () => {
    if (skip) return;
    store = await engine.open();
    app = await startApp({ repo: new SqlRepository(store.db), blobs: new PgBlobStore(store.db), now,
      config: { accessTokenTtlSeconds: 365 * 86_400, trustProxy: ['loopback'],
        releaseLimits: { perLicense: 3, perUser: 1000, windowSeconds: 3600 },
        webhooks: { allowPrivate: true, timeoutMs: 2000, pollMs: 20, retryHours: 72 } } });
    base = await scenario(app);
    hook = await receiver();
  }, 60_000);
  afterAll(async () => {
    if (skip) return;
    await hook.close();
    await app.close();
    await store.close();
  });

  /** A fresh license of the fixture's master for a new buyer, at the start of a new day. */
  const fresh = async (): Promise<{ buyer: User; licenseId: string }> => {
    day += 2 * DAY;
    clock = new Date(day);
    const buyer = await newUser(app, 'Buyer');
    return { buyer, licenseId: await license(app, base.seller, base.masterId, buyer) };
  };
  /** A key release at `at` ms after the day's start, from `ip` with `device`. */
  const release = async (who: { buyer: User; licenseId: string }, at: number, ip = '192.0.2.1',
    device = 'AAAAAAAAAAAAAAAAAAAAAA') => {
    clock = new Date(day + at);
    return (await app.call('POST', `/api/licenses/${who.licenseId}/key`, { token: who.buyer.token,
      json: { publicKey: playerKey() }, headers: { 'x-forwarded-for': ip, 'x-iki-device': device } })).status;
  };
  const flagsOf = async (licenseId: string) =>
    (await app.call('GET', `/api/licenses/${licenseId}/activity?bucket=day&from=${new Date(day).toISOString()}`
      + `&to=${new Date(day + DAY).toISOString()}`, { token: base.seller.token })).body.flags as
      { id: string; rule: string; value: number; threshold: number; state: string; windowStart: string; windowEnd: string }[];

  it.skipIf(skip)('rate_limit: one refusal is not a flag, the second is', async () => {
    const who = await fresh();
    for (let i = 0; i < 3; i += 1) expect(await release(who, i * 60_000)).toBe(200);
    expect(await release(who, 4 * 60_000)).toBe(429);
    expect(await sweeper().sweep()).toBe(0);
    expect(await release(who, 5 * 60_000)).toBe(429);
    expect(await sweeper().sweep()).toBe(1);
    expect(await flagsOf(who.licenseId)).toMatchObject([{ rule: 'rate_limit', value: 2, threshold: 2, state: 'open',
      windowStart: new Date(day).toISOString(), windowEnd: new Date(day + DAY).toISOString() }]);
  });

  it.skipIf(skip)('addresses: two prefixes are not a flag, a third is (one /24 counts once)', async () => {
    const who = await fresh();
    // Irregular times (HOURS), so that five releases do not look scripted.
    expect(await release(who, HOURS[0], '192.0.2.1')).toBe(200);
    expect(await release(who, HOURS[1], '192.0.2.200')).toBe(200);
    expect(await release(who, HOURS[2], '2001:db8:1:2::1')).toBe(200);
    expect(await release(who, HOURS[3], '2001:db8:1:ffff::9')).toBe(200);
    expect(await sweeper().sweep()).toBe(0);
    expect(await release(who, HOURS[4], '::ffff:198.51.100.7')).toBe(200);
    expect(await sweeper().sweep()).toBe(1);
    expect(await flagsOf(who.licenseId)).toMatchObject([{ rule: 'addresses', value: 3, threshold: 2 }]);
  });

  it.skipIf(skip)('devices: two are not a flag, a third is; a malformed id is ignored', async () => {
    const who = await fresh();
    expect(await release(who, HOURS[0], '192.0.2.1', 'dev1dev1dev1dev1dev1de')).toBe(200);
    expect(await release(who, HOURS[1], '192.0.2.1', 'dev2dev2dev2dev2dev2de')).toBe(200);
    expect(await release(who, HOURS[2], '192.0.2.1', 'not a device id')).toBe(200);
    expect(await release(who, HOURS[3], '192.0.2.1', 'dev1dev1dev1dev1dev1de+')).toBe(200);
    expect(await sweeper().sweep()).toBe(0);
    expect(await release(who, HOURS[4], '192.0.2.1', 'dev3dev3dev3dev3dev3de')).toBe(200);
    expect(await sweeper().sweep()).toBe(1);
    expect(await flagsOf(who.licenseId)).toMatchObject([{ rule: 'devices', value: 3, threshold: 2 }]);
  });

  it.skipIf(skip)('scripted: gaps varying by exactly the threshold are not a flag, by less are', async () => {
    // Gaps 90, 110, 90, 110 minutes: mean 100, standard deviation 10, CV 0.1 (not below 0.1).
    const even = await fresh();
    let t = 0;
    for (const gap of [0, 90, 110, 90, 110]) expect(await release(even, (t += gap) * 60_000)).toBe(200);
    expect(await sweeper().sweep()).toBe(0);
    // Gaps 91, 109, 91, 109: CV 0.09.
    const timer = await fresh();
    t = 0;
    for (const gap of [0, 91, 109, 91, 109]) expect(await release(timer, (t += gap) * 60_000)).toBe(200);
    expect(await sweeper().sweep()).toBe(1);
    expect(await flagsOf(timer.licenseId)).toMatchObject([{ rule: 'scripted', value: 0.09, threshold: 0.1 }]);
    // Four releases, however regular, are too few to tell.
    const few = await fresh();
    for (let i = 0; i < 4; i += 1) expect(await release(few, i * 3600_000)).toBe(200);
    expect(await sweeper().sweep()).toBe(0);
  });

  it.skipIf(skip)('raises a flag once per window with two sweepers, again in the next window', async () => {
    const who = await fresh();
    for (const [i, ip] of ['192.0.2.1', '198.51.100.1', '203.0.113.1'].entries()) expect(await release(who, i * 60_000, ip)).toBe(200);
    const [a, b] = [sweeper(), sweeper()];
    const raised = await Promise.all([a.sweep(), b.sweep(), a.sweep()]);
    expect(raised.reduce((x, y) => x + y, 0)).toBe(1);
    expect(await sweeper().sweep()).toBe(0);
    day += DAY;
    for (const [i, ip] of ['192.0.2.1', '198.51.100.1', '203.0.113.1'].entries()) expect(await release(who, i * 60_000, ip)).toBe(200);
    expect(await a.sweep()).toBe(1);
    const { rows } = await store.db.query<{ n: number }>(`SELECT count(*)::int AS n FROM events
      WHERE license_id = $1 AND kind = 'flag'`, [who.licenseId]);
    expect(rows[0]?.n).toBe(2);
  });

  it.skipIf(skip)('lists the seller\'s flags, lets only the seller dismiss, sends license.flagged', async () => {
    const made = await app.call('POST', '/api/webhooks', { token: base.seller.token,
      json: { url: hook.url, events: ['license.flagged'] } });
    expect(made.status, JSON.stringify(made.body)).toBe(201);
    const who = await fresh();
    for (const [i, ip] of ['192.0.2.1', '198.51.100.1', '203.0.113.1'].entries()) expect(await release(who, i * 60_000, ip)).toBe(200);
    expect(await sweeper().sweep()).toBe(1);
    const [flag] = await flagsOf(who.licenseId);
    const open = await app.call('GET', '/api/seller/flags', { token: base.seller.token });
    expect(open.status).toBe(200);
    expect(open.body.flags[0]).toMatchObject({ id: flag?.id, licenseId: who.licenseId, masterId: base.masterId, rule: 'addresses' });
    // The buyer sees the flag on their own license, and cannot dismiss it; a stranger cannot either.
    expect((await flagsOf(who.licenseId)).map((f) => f.id)).toContain(flag?.id);
    const stranger = await newUser(app, 'Stranger');
    expect((await app.call('GET', '/api/seller/flags', { token: stranger.token })).body.flags).toEqual([]);
    for (const token of [who.buyer.token, stranger.token]) {
      const refused = await app.call('POST', `/api/licenses/${who.licenseId}/flags/${flag?.id}/dismiss`, { token });
      expect(refused.status).toBe(404);
      expect(refused.body.error.code).toBe('FLAG_NOT_FOUND');
    }
    const dismissed = await app.call('POST', `/api/licenses/${who.licenseId}/flags/${flag?.id}/dismiss`, { token: base.seller.token });
    expect(dismissed.status).toBe(200);
    expect(dismissed.body.flag).toMatchObject({ id: flag?.id, state: 'dismissed' });
    const again = await app.call('POST', `/api/licenses/${who.licenseId}/flags/${flag?.id}/dismiss`, { token: base.seller.token });
    expect(again.body.flag.dismissedAt).toBe(dismissed.body.flag.dismissedAt);
    const lists = async (state: string) => (await app.call('GET', `/api/seller/flags?state=${state}`,
      { token: base.seller.token })).body.flags.map((f: { id: string }) => f.id);
    expect(await lists('open')).not.toContain(flag?.id);
    expect(await lists('dismissed')).toContain(flag?.id);
    expect(await lists('all')).toContain(flag?.id);
    expect((await app.call('GET', '/api/seller/flags?state=closed', { token: base.seller.token })).status).toBe(400);
    // The webhook: one license.flagged delivery carrying the flag.
    const deliverer = new WebhookDeliverer({ repo: app.repo, now, logger: captureLogger([]),
      settings: { allowPrivate: true, timeoutMs: 2000, pollMs: 20, retryHours: 72 } });
    await deliverer.runOnce();
    const got = hook.got.filter((g) => g.type === 'license.flagged');
    expect(got).toHaveLength(1);
    const body = JSON.parse(got[0]?.body ?? '{}');
    expect(body.data).toMatchObject({ licenseId: who.licenseId, masterId: base.masterId,
      details: { flag: { id: flag?.id, rule: 'addresses', value: 3, threshold: 2 } } });
  });
});

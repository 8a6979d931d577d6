/**
 * The two webhook events no successful request writes (issue 26 item 4), through the real app
 * on PGlite and PostgreSQL with two instances on one database and a real receiver on
 * 127.0.0.1: `license.expired`, written by the delivery loop's poll once a license reaches its
 * `expiresAt` (not a millisecond before, once per license however many instances poll, none for
 * a revoked license), and `rate_limit.exceeded`, written when a key release is refused by the
 * per-license limit, at most once per license per window however many refusals come at once,
 * and when a copy download is refused by its rate (the limiter the copy route calls, on the
 * app's repository: a real copy is minutes of watermarking per test run).
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { captureLogger, license, newUser, playerKey, registerKey, uploadMaster, type TestApp, type User } from './helpers/app.js';
import { postgresServer, sqlEngines } from './helpers/databases.js';
import { twoInstances, type TwoInstances } from './helpers/two-instances.js';
import { receiver, type Receiver } from './helpers/webhook-receiver.js';
import { secretBox } from '../src/services/secret-box.js';
import { WebhookDeliverer } from '../src/services/webhook-delivery.js';
import { UsageLimiter } from '../src/services/usage-limits.js';
import { QUOTA_DEFAULTS } from '../src/quota-config.js';
import type { WebhookSettings } from '../src/webhook-config.js';

const SETTINGS: WebhookSettings = { allowPrivate: true, timeoutMs: 2000, pollMs: 20, retryHours: 72 };
const WINDOW_SECONDS = 3600;

describe.each(sqlEngines)('license.expired and rate_limit.exceeded on $name', (engine) => {
  const skip = engine.name === 'postgres' && postgresServer() === '';
  let two: TwoInstances;
  let app: TestApp;
  let seller: User;
  let buyer: User;
  let masterId: string;
  let hook: Receiver;
  let clock = new Date('2031-05-01T00:00:00Z');
  const now = () => clock;
  const poll = async (rounds = 2) => {
    const [a, b] = [two.a, two.b].map((x) => new WebhookDeliverer({ repo: x.repo, now, secrets: secretBox(x.root), logger: captureLogger([]), settings: SETTINGS }));
    for (let i = 0; i < rounds; i += 1) await Promise.all([a?.runOnce(), b?.runOnce(), a?.runOnce(), b?.runOnce()]);
  };
  const bodies = (type: string) => hook.got.filter((g) => g.type === type).map((g) => JSON.parse(g.body) as {
    id: string; type: string; createdAt: string; data: { masterId: string; licenseId: string; actorId: string; details: Record<string, unknown> } });

  beforeAll(async () => {
    if (skip) return;
    // Tokens outlive the test's clock moves (an hour at a time).
    two = await twoInstances(engine.name, now, { webhooks: SETTINGS, accessTokenTtlSeconds: 7 * 86_400,
      releaseLimits: { perLicense: 2, perUser: 1000, windowSeconds: WINDOW_SECONDS } });
    app = two.a;
    seller = await newUser(app, 'Seller');
    buyer = await newUser(app, 'Buyer');
    masterId = await uploadMaster(app, seller, await registerKey(app, seller));
    hook = await receiver();
    const made = await app.call('POST', '/api/webhooks', { token: seller.token,
      json: { url: hook.url, events: ['license.expired', 'rate_limit.exceeded'] } });
    expect(made.status, JSON.stringify(made.body)).toBe(201);
  });
  afterAll(async () => {
    if (skip) return;
    await hook.close();
    await two.close();
  });
  beforeEach(() => {
    if (skip) return;
    hook.got.length = 0;
  });

  it.skipIf(skip)('emits license.expired once per license when it reaches expiresAt, never for a revoked one', async () => {
    const expiresAt = new Date(clock.getTime() + 60_000);
    const create = async () => {
      const answer = await app.call('POST', `/api/licenses/masters/${masterId}/licenses`, { token: seller.token,
        json: { accountId: buyer.accountId, expiresAt: expiresAt.toISOString() } });
      expect(answer.status, JSON.stringify(answer.body)).toBe(201);
      return answer.body.licenseId as string;
    };
    const [first, second, revoked] = [await create(), await create(), await create()];
    expect((await app.call('POST', `/api/licenses/${revoked}/revoke`, { token: seller.token, json: {} })).status).toBe(200);
    await license(app, seller, masterId, buyer); // never expires

    clock = new Date(expiresAt.getTime() - 1);
    await poll();
    expect(bodies('license.expired')).toHaveLength(0);

    // At expiresAt, two instances polling at once: one event per license, each with the date.
    clock = expiresAt;
    await poll(3);
    const expired = bodies('license.expired');
    expect(expired.map((e) => e.data.licenseId).sort()).toEqual([first, second].sort());
    for (const e of expired) {
      expect(e).toMatchObject({ id: expect.stringMatching(/^evt_[0-9a-f]{32}$/), createdAt: expiresAt.toISOString(),
        data: { masterId, actorId: 'system', details: { expiresAt: expiresAt.toISOString() } } });
    }
    // The seller's history shows the expiry; later polls write nothing more.
    const history = await app.call('GET', `/api/licenses/${first}/events`, { token: seller.token });
    expect(history.status, JSON.stringify(history.body)).toBe(200);
    expect(history.body.events.filter((e: { kind: string }) => e.kind === 'expire')).toHaveLength(1);
    clock = new Date(expiresAt.getTime() + 3_600_000);
    await poll();
    expect(bodies('license.expired')).toHaveLength(2);
  });

  it.skipIf(skip)('emits rate_limit.exceeded when a key release is refused, at most once per license per window', async () => {
    const id = await license(app, seller, masterId, buyer);
    const other = await license(app, seller, masterId, buyer);
    const release = (lic: string) =>
      app.call('POST', `/api/licenses/${lic}/key`, { token: buyer.token, json: { publicKey: playerKey() } });
    for (let i = 0; i < 2; i += 1) expect((await release(id)).status).toBe(200);
    await poll();
    expect(bodies('rate_limit.exceeded')).toHaveLength(0);

    // Ten refusals at once: one event.
    const refused = await Promise.all(Array.from({ length: 10 }, () => release(id)));
    expect(refused.map((r) => r.status)).toEqual(Array(10).fill(429));
    await poll();
    const events = bodies('rate_limit.exceeded');
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({ data: { masterId, licenseId: id, actorId: buyer.accountId,
      details: { limit: 'key_release', scope: 'license', windowSeconds: WINDOW_SECONDS, retryAt: expect.any(String) } } });

    // Another license has a window of its own.
    for (let i = 0; i < 3; i += 1) await release(other);
    await poll();
    expect(bodies('rate_limit.exceeded').map((e) => e.data.licenseId).sort()).toEqual([id, other].sort());

    // Just inside the window: still none; a window later, refused again: one more.
    const start = clock.getTime();
    clock = new Date(start + WINDOW_SECONDS * 1000 - 1);
    expect((await release(id)).status).toBe(429);
    await poll();
    expect(bodies('rate_limit.exceeded')).toHaveLength(2);
    clock = new Date(start + WINDOW_SECONDS * 1000);
    // The sliding window has freed the first releases by now; use them up again, then be refused.
    let status = 200;
    for (let i = 0; i < 4 && status === 200; i += 1) status = (await release(id)).status;
    expect(status).toBe(429);
    await poll();
    expect(bodies('rate_limit.exceeded').filter((e) => e.data.licenseId === id)).toHaveLength(2);
  });

  it.skipIf(skip)('emits rate_limit.exceeded when a copy download is refused by its rate, not when it is admitted', async () => {
    const id = await license(app, seller, masterId, buyer);
    const copies = { ...QUOTA_DEFAULTS.copies, perLicense: 1, windowSeconds: 600 };
    const limiter = new UsageLimiter({ repo: app.repo, now, limits: { ...QUOTA_DEFAULTS, copies } });
    const progress = () => ({ sentTo: 0, complete: true });
    const slot = await limiter.startCopy(buyer.accountId, id, 'etag-1', undefined, progress);
    await slot.release();
    await poll();
    expect(bodies('rate_limit.exceeded')).toHaveLength(0);
    for (let i = 0; i < 3; i += 1) {
      await expect(limiter.startCopy(buyer.accountId, id, 'etag-1', undefined, progress)).rejects.toMatchObject({ code: 'COPY_RATE_LIMITED' });
    }
    await poll();
    expect(bodies('rate_limit.exceeded').map((e) => e.data)).toEqual([{ masterId, licenseId: id, actorId: buyer.accountId,
      details: { limit: 'copy', scope: 'license', windowSeconds: 600, retryAt: expect.any(String) } }]);
  });
});

/**
 * Signed webhooks (issue 26 item 4) through the real app on PGlite and PostgreSQL, with a real
 * receiver on 127.0.0.1 (the development opt-in allows loopback) and two instances on one
 * database: endpoints (secret shown once, scope, refusals), the outbox written with each change
 * in its transaction, delivery signed as @iki/core verifies it, two instances delivering each
 * event once, the retry schedule on an injected clock (exponential, past 24 hours, then failed
 * and the endpoint disabled), resend with the same event id, and the SSRF guard on a name
 * resolving to loopback without the opt-in (no request reaches the receiver).
 */
import { verifyWebhookSignature } from '@iki/core';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { captureLogger, license, newUser, playerKey, registerKey, uploadMaster, type LogLine, type TestApp, type User } from './helpers/app.js';
import { postgresServer, sqlEngines } from './helpers/databases.js';
import { twoInstances, type TwoInstances } from './helpers/two-instances.js';
import { receiver, type Receiver } from './helpers/webhook-receiver.js';
import { secretBox } from '../src/services/secret-box.js';
import { retryDelayMs, WebhookDeliverer } from '../src/services/webhook-delivery.js';
import type { WebhookSettings } from '../src/webhook-config.js';
import { WebhookService } from '../src/services/webhooks.js';

const SETTINGS: WebhookSettings = { allowPrivate: true, timeoutMs: 2000, pollMs: 20, retryHours: 72 };

describe.each(sqlEngines)('webhooks on $name', (engine) => {
  const skip = engine.name === 'postgres' && postgresServer() === '';
  let two: TwoInstances;
  let app: TestApp;
  let seller: User;
  let buyer: User;
  let masterId: string;
  let hook: Receiver;
  let clock = new Date('2031-03-01T00:00:00Z');
  const now = () => clock;
  const logs: LogLine[] = [];
  const deliverer = (which: TestApp, settings: Partial<WebhookSettings> = {}) =>
    new WebhookDeliverer({ repo: which.repo, now, secrets: secretBox(which.root), logger: captureLogger(logs), settings: { ...SETTINGS, ...settings } });

  beforeAll(async () => {
    if (skip) return;
    two = await twoInstances(engine.name, now, { webhooks: SETTINGS });
    app = two.a;
    seller = await newUser(app, 'Seller');
    buyer = await newUser(app, 'Buyer');
    masterId = await uploadMaster(app, seller, await registerKey(app, seller));
    hook = await receiver();
  });
  afterAll(async () => {
    if (skip) return;
    await hook.close();
    await two.close();
  });
  beforeEach(async () => {
    if (skip) return;
    hook.got.length = 0;
    hook.status.code = 200;
    for (const w of (await app.call('GET', '/api/webhooks', { token: seller.token })).body.webhooks) {
      await app.call('DELETE', `/api/webhooks/${w.webhookId}`, { token: seller.token });
    }
  });

  const register = async (events: string[], url = hook.url) => {
    const made = await app.call('POST', '/api/webhooks', { token: seller.token, json: { url, events } });
    expect(made.status, JSON.stringify(made.body)).toBe(201);
    return made.body as { webhookId: string; secret: string };
  };
  const deliveries = async (id: string) =>
    (await app.call('GET', `/api/webhooks/${id}/deliveries`, { token: seller.token })).body.deliveries as {
      deliveryId: string; eventId: string; type: string; state: string; attempts: number; nextAttemptAt: string | null;
      lastStatus: number | null; lastError: string | null }[];

  it.skipIf(skip)('shows the secret once, needs webhooks:write from an API key, refuses bad and private URLs', async () => {
    const made = await register(['license.created']);
    expect(made.secret).toMatch(/^whsec_[A-Za-z0-9_-]{43}$/);
    const listed = (await app.call('GET', '/api/webhooks', { token: seller.token })).body.webhooks;
    expect(listed).toHaveLength(1);
    expect(JSON.stringify(listed)).not.toContain(made.secret);
    // Another seller sees none of it.
    expect((await app.call('GET', `/api/webhooks/${made.webhookId}/deliveries`, { token: buyer.token })).body.error.code)
      .toBe('WEBHOOK_NOT_FOUND');
    const narrow = (await app.call('POST', '/api/api-keys', { token: seller.token, json: { name: 'ro', scopes: ['licenses:read'] } })).body;
    expect((await app.call('GET', '/api/webhooks', { token: narrow.secret })).body.error.code).toBe('INSUFFICIENT_SCOPE');
    const wide = (await app.call('POST', '/api/api-keys', { token: seller.token, json: { name: 'hooks', scopes: ['webhooks:write'] } })).body;
    expect((await app.call('GET', '/api/webhooks', { token: wide.secret })).status).toBe(200);
    // Without IKI_WEBHOOK_ALLOW_PRIVATE, literals in private ranges are refused at once (names on every delivery).
    const strict = new WebhookService({ repo: app.repo, now, allowPrivate: false, secrets: secretBox(app.root) });
    for (const url of ['http://127.0.0.1/x', 'http://10.1.2.3/x', 'http://169.254.169.254/latest', 'http://[::1]/x',
      'http://[::ffff:127.0.0.1]/x', 'ftp://example.com/x', 'https://user:pw@example.com/x']) {
      await expect(strict.create(seller.accountId, url, ['license.created']), url).rejects.toMatchObject({ code: 'VALIDATION_FAILED' });
    }
    for (const url of ['ftp://example.com/x', 'https://user:pw@example.com/x']) {
      expect((await app.call('POST', '/api/webhooks', { token: seller.token, json: { url, events: ['license.created'] } })).body.error.code)
        .toBe('VALIDATION_FAILED');
    }
    expect((await app.call('POST', '/api/webhooks', { token: seller.token, json: { url: hook.url, events: ['license.nope'] } }))
      .body.error.code).toBe('VALIDATION_FAILED');
  });

  it.skipIf(skip)('writes the outbox with each change, delivers it signed, and two instances deliver each event once', async () => {
    const endpoint = await register(['license.created', 'license.suspended', 'license.reinstated', 'license.revoked', 'key.released']);
    const ids: string[] = [];
    for (let i = 0; i < 12; i += 1) ids.push(await license(app, seller, masterId, buyer));
    const first = ids[0] as string;
    expect((await app.call('POST', `/api/licenses/${first}/suspend`, { token: seller.token, json: {} })).status).toBe(200);
    expect((await app.call('POST', `/api/licenses/${first}/reinstate`, { token: seller.token, json: {} })).status).toBe(200);
    expect((await app.call('POST', `/api/licenses/${first}/key`, { token: buyer.token, json: { publicKey: playerKey() } })).status).toBe(200);
    expect((await app.call('POST', `/api/licenses/${first}/revoke`, { token: seller.token, json: {} })).status).toBe(200);
    // A refused change writes nothing: reinstating a revoked license.
    expect((await app.call('POST', `/api/licenses/${first}/reinstate`, { token: seller.token, json: {} })).status).toBe(409);
    const queued = await deliveries(endpoint.webhookId);
    expect(queued).toHaveLength(16);
    expect(queued.every((d) => d.state === 'pending' && d.attempts === 0)).toBe(true);
    expect(hook.got).toHaveLength(0);

    // Two instances poll at once, several times: every event reaches the receiver exactly once.
    const [a, b] = [deliverer(two.a), deliverer(two.b)];
    for (let round = 0; round < 3; round += 1) await Promise.all([a.runOnce(), b.runOnce(), a.runOnce(), b.runOnce()]);
    const eventIds = hook.got.map((g) => g.eventId);
    expect(eventIds).toHaveLength(16);
    expect(new Set(eventIds).size).toBe(16);
    expect(hook.got.filter((g) => g.type === 'license.created')).toHaveLength(12);
    expect(hook.got.map((g) => g.type).filter((t) => t !== 'license.created').sort())
      .toEqual(['key.released', 'license.reinstated', 'license.revoked', 'license.suspended']);
    for (const g of hook.got) {
      const verdict = await verifyWebhookSignature(endpoint.secret, g.signature, g.body, { now: clock });
      expect(verdict, g.signature).toMatchObject({ valid: true });
      expect((await verifyWebhookSignature('whsec_other', g.signature, g.body, { now: clock })).valid).toBe(false);
    }
    const created = JSON.parse(hook.got.find((g) => g.type === 'license.created')?.body ?? '{}');
    expect(created).toMatchObject({ id: expect.stringMatching(/^evt_[0-9a-f]{32}$/), createdAt: clock.toISOString(),
      data: { masterId, actorId: seller.accountId, details: { licensee: buyer.accountId } } });
    const after = await deliveries(endpoint.webhookId);
    expect(after.every((d) => d.state === 'delivered' && d.attempts === 1 && d.lastStatus === 200)).toBe(true);

    // Resend: the same event id again, once.
    const one = after[0] as (typeof after)[number];
    expect((await app.call('POST', `/api/webhooks/${endpoint.webhookId}/deliveries/${one.deliveryId}/resend`, { token: seller.token }))
      .body).toMatchObject({ state: 'pending', eventId: one.eventId });
    await Promise.all([a.runOnce(), b.runOnce()]);
    expect(hook.got.filter((g) => g.eventId === one.eventId)).toHaveLength(2);
    expect(hook.got).toHaveLength(17);
    expect((await app.call('POST', `/api/webhooks/${endpoint.webhookId}/deliveries/999999/resend`, { token: seller.token })).body.error.code)
      .toBe('WEBHOOK_DELIVERY_NOT_FOUND');
  });

  it.skipIf(skip)('only subscribed types are queued; a disabled endpoint gets nothing', async () => {
    const endpoint = await register(['license.revoked']);
    await license(app, seller, masterId, buyer);
    expect(await deliveries(endpoint.webhookId)).toHaveLength(0);
    const disabled = await app.call('POST', `/api/webhooks/${endpoint.webhookId}/disable`, { token: seller.token });
    expect(disabled.body).toMatchObject({ enabled: false, disabledReason: 'disabled by the seller', disabledReasonCode: 'seller' });
    const id = await license(app, seller, masterId, buyer);
    await app.call('POST', `/api/licenses/${id}/revoke`, { token: seller.token, json: {} });
    expect(await deliveries(endpoint.webhookId)).toHaveLength(0);
  });

  it.skipIf(skip)('without the opt-in, a name resolving to loopback is refused on delivery and nothing reaches the receiver', async () => {
    const endpoint = await register(['license.created'], hook.url.replace('127.0.0.1', 'localhost'));
    await license(app, seller, masterId, buyer);
    expect(await deliverer(app, { allowPrivate: false }).runOnce()).toBe(1);
    const [d] = await deliveries(endpoint.webhookId);
    expect(d).toMatchObject({ state: 'pending', attempts: 1, lastError: 'refused_destination', lastStatus: null });
    expect(hook.got).toHaveLength(0);
  });
  it.skipIf(skip)('retries with exponential backoff past 24 hours, then gives up and disables the endpoint', async () => {
    const start = clock;
    const endpoint = await register(['license.created']);
    await license(app, seller, masterId, buyer);
    hook.status.code = 500;
    const told: { to: string; url: string; reason: string }[] = [];
    const w = new WebhookDeliverer({ repo: app.repo, now, secrets: secretBox(app.root), logger: captureLogger(logs), settings: SETTINGS, mailer: {
      sendVerification: async () => {}, sendWebhookDisabled: async (to, url, reason) => { told.push({ to, url, reason }); } } });
    const times: number[] = [];
    // Tokens expire as the clock runs for days: the log is read from the storage.
    const log = () => app.repo.webhooks.listDeliveries(endpoint.webhookId, 10);
    for (let guard = 0; guard < 40; guard += 1) {
      const [d] = await log();
      if (d === undefined || d.state !== 'pending') break;
      // A moment before it is due, nothing is claimed.
      clock = new Date(d.nextAttemptAt.getTime() - 1);
      expect(await w.runOnce()).toBe(0);
      clock = d.nextAttemptAt;
      expect(await w.runOnce()).toBe(1);
      times.push(clock.getTime() - start.getTime());
    }
    // Attempts at 0, then 1, 2, 4, ... minutes apart (at most 6 h), until 72 hours after the event.
    const gaps = times.slice(1).map((t, i) => t - (times[i] as number));
    expect(gaps.slice(0, 4)).toEqual([60_000, 120_000, 240_000, 480_000]);
    gaps.forEach((g, i) => expect(g).toBe(retryDelayMs(i + 1)));
    expect(times.filter((t) => t < 24 * 3600_000).length).toBeGreaterThan(5);
    expect(times.some((t) => t >= 24 * 3600_000)).toBe(true);
    expect(times.at(-1)).toBeGreaterThanOrEqual(72 * 3600_000);
    expect(hook.got).toHaveLength(times.length);
    const [last] = (await app.services.webhooks.deliveries(seller.accountId, endpoint.webhookId));
    expect(last).toMatchObject({ state: 'failed', attempts: times.length, lastStatus: 500, lastError: 'http_status', nextAttemptAt: null });
    const [state] = await app.services.webhooks.list(seller.accountId);
    expect(state).toMatchObject({ enabled: false, disabledReason: `every delivery failed since ${start.toISOString().replace('.000Z', 'Z')}`,
      disabledReasonCode: 'failing' });
    expect(logs.some((l) => l.message.includes('webhook endpoint disabled') && l.fields['webhookId'] === endpoint.webhookId)).toBe(true);
    // The seller is told, once.
    expect(told).toEqual([{ to: seller.email, url: hook.url, reason: state?.disabledReason }]);
    // Enabling again starts a new run.
    expect(await app.services.webhooks.setEnabled(seller.accountId, endpoint.webhookId, true))
      .toMatchObject({ enabled: true, failingSince: null, disabledReasonCode: null });
  });

});

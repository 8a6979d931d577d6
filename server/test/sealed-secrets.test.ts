/**
 * Stored webhook and shop secrets are sealed under the root secret (docs/format.md §8.5): the
 * box itself (round trip, bound to its row, to its key, tamper-evident, never printed), the
 * database after the API made an endpoint and a shop (no secret in any column, on PGlite and
 * PostgreSQL), the start's pass that seals rows written before sealing (once, idempotent),
 * and a delivery whose secret does not open (fails with a reason, logs no value).
 */
import { randomBytes } from 'node:crypto';
import { inspect } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RootSecret } from '../src/secrets.js';
import { SEALED_PREFIX, SealedSecretError, SecretBox, secretBox } from '../src/services/secret-box.js';
import { WebhookDeliverer } from '../src/services/webhook-delivery.js';
import { sealStoredSecrets } from '../src/storage/sealed-secrets.js';
import { SqlRepository } from '../src/storage/sql-repository.js';
import { captureLogger, license, newUser, registerKey, startApp, uploadMaster, type LogLine, type TestApp, type User } from './helpers/app.js';
import { postgresServer, sqlEngines, type SqlStore } from './helpers/databases.js';

const place = { table: 'webhook_endpoints', id: 'we_000000000000000000000001' } as const;

describe('SecretBox', () => {
  const box = new SecretBox(randomBytes(32));

  it('opens what it sealed, and the stored text neither holds nor reveals the secret', () => {
    const secret = `whsec_${randomBytes(32).toString('base64url')}`;
    const stored = box.seal(secret, place);
    expect(stored.startsWith(SEALED_PREFIX)).toBe(true);
    expect(stored).not.toContain(secret);
    expect(box.open(stored, place)).toBe(secret);
    // A fresh nonce each time: sealing twice gives two texts.
    expect(box.seal(secret, place)).not.toBe(stored);
  });

  it('refuses a value moved to another row, another key, or damaged', () => {
    const stored = box.seal('whsec_moved', place);
    expect(() => box.open(stored, { table: 'webhook_endpoints', id: 'we_000000000000000000000002' })).toThrow(SealedSecretError);
    expect(() => box.open(stored, { table: 'shop_connections', id: place.id })).toThrow(SealedSecretError);
    expect(() => new SecretBox(randomBytes(32)).open(stored, place)).toThrow(SealedSecretError);
    const raw = Buffer.from(stored.slice(SEALED_PREFIX.length), 'base64url');
    raw[raw.length - 1] = raw[raw.length - 1]! ^ 1;
    expect(() => box.open(SEALED_PREFIX + raw.toString('base64url'), place)).toThrow(SealedSecretError);
    expect(() => box.open(`${SEALED_PREFIX}AAAA`, place)).toThrow(SealedSecretError);
    expect(() => box.open(SEALED_PREFIX + 'A'.repeat(8000), place)).toThrow(SealedSecretError);
    // The error names the row, never the value.
    try {
      box.open(stored, { table: 'webhook_endpoints', id: 'we_x' });
    } catch (err) {
      expect(String(err)).toContain('webhook_endpoints/we_x');
      expect(String(err)).not.toContain('whsec_moved');
    }
  });

  it('keeps an unset secret empty, reads a plain legacy value as it is, and never prints its key', () => {
    expect(box.seal('', place)).toBe('');
    expect(box.open('whsec_legacy', place)).toBe('whsec_legacy');
    expect(() => box.seal('x'.repeat(4097), place)).toThrow(RangeError);
    const key = randomBytes(32);
    const shown = new SecretBox(key);
    for (const text of [String(shown), JSON.stringify({ shown }), inspect(shown)]) {
      expect(text).not.toContain(key.toString('hex'));
      expect(text).not.toContain(key.toString('base64'));
      expect(text).toContain('redacted');
    }
  });

  it('derives its key from the root secret: one root opens, another does not', () => {
    const bytes = randomBytes(32);
    const stored = secretBox(new RootSecret(bytes)).seal('whsec_root', place);
    expect(secretBox(new RootSecret(bytes)).open(stored, place)).toBe('whsec_root');
    expect(() => secretBox(new RootSecret(randomBytes(32))).open(stored, place)).toThrow(SealedSecretError);
  });
});

describe.each(sqlEngines)('stored secrets on $name', (engine) => {
  const skip = engine.name === 'postgres' && postgresServer() === '';
  let store: SqlStore;
  let app: TestApp;
  let seller: User;
  let masterId: string;

  beforeAll(async () => {
    if (skip) return;
    store = await engine.open();
    app = await startApp({ repo: new SqlRepository(store.db), config: { webhooks: { allowPrivate: true, timeoutMs: 2000, pollMs: 20, retryHours: 72 } } });
    seller = await newUser(app, 'Seller');
    masterId = await uploadMaster(app, seller, await registerKey(app, seller));
  });
  afterAll(async () => {
    if (skip) return;
    await app.close();
    await store.close();
  });

  /** Every row of both tables as text: whatever column a secret could sit in. */
  const dump = async () => (await store.db.query(
    `SELECT to_jsonb(w)::text AS t FROM webhook_endpoints w UNION ALL SELECT to_jsonb(s)::text FROM shop_connections s`))
    .rows.map((r) => String(r['t'])).join('\n');

  it.skipIf(skip)('the API stores no webhook secret, Stripe secret or Gumroad token as it is', async () => {
    const hook = await app.call('POST', '/api/webhooks', { token: seller.token, json: { url: 'http://127.0.0.1:9/hook', events: ['license.created'] } });
    expect(hook.status, JSON.stringify(hook.body)).toBe(201);
    const stripeSecret = `whsec_${randomBytes(24).toString('base64url')}`;
    const stripe = await app.call('POST', '/api/shops', { token: seller.token,
      json: { kind: 'stripe', signingSecret: stripeSecret, products: { price_1Sealed: masterId } } });
    expect(stripe.status, JSON.stringify(stripe.body)).toBe(201);
    const gumroad = await app.call('POST', '/api/shops', { token: seller.token, json: { kind: 'gumroad', products: { sealed: masterId } } });
    expect(gumroad.status, JSON.stringify(gumroad.body)).toBe(201);
    const token = String(gumroad.body.endpointPath).split('/').pop()!;
    const rolled = `whsec_${randomBytes(24).toString('base64url')}`;
    expect((await app.call('POST', `/api/shops/${stripe.body.shopId}/signing-secret`, { token: seller.token, json: { signingSecret: rolled } })).status)
      .toBeLessThan(300);

    const text = await dump();
    for (const secret of [hook.body.secret as string, stripeSecret, rolled, token]) {
      expect(secret.length).toBeGreaterThan(20);
      expect(text).not.toContain(secret);
    }
    const { rows } = await store.db.query(`SELECT secret FROM webhook_endpoints UNION ALL SELECT secret FROM shop_connections`);
    for (const r of rows) expect(String(r['secret']).startsWith(SEALED_PREFIX)).toBe(true);
  });

  it.skipIf(skip)('the start seals rows written before sealing, once, and they still open', async () => {
    const plainHook = `whsec_${randomBytes(24).toString('base64url')}`;
    const plainShop = `whsec_${randomBytes(24).toString('base64url')}`;
    await store.db.query(`INSERT INTO webhook_endpoints (id, seller_id, url, events, secret, created_at)
      VALUES ('we_0000000000000000000000aa', $1, 'http://127.0.0.1:9/old', ARRAY['license.created']::text[], $2, now())`, [seller.accountId, plainHook]);
    await store.db.query(`INSERT INTO shop_connections (id, seller_id, kind, secret, products, on_refund, created_at)
      VALUES ('shop_0000000000000000000000aa', $1, 'stripe', $2, $3, 'suspend', now())`,
    [seller.accountId, plainShop, JSON.stringify({ price_old: masterId })]);
    const box = secretBox(app.root);
    expect(await sealStoredSecrets(store.db, box)).toEqual({ webhook_endpoints: 1, shop_connections: 1 });
    expect(await sealStoredSecrets(store.db, box)).toEqual({ webhook_endpoints: 0, shop_connections: 0 });
    const text = await dump();
    expect(text).not.toContain(plainHook);
    expect(text).not.toContain(plainShop);
    const hook = (await store.db.query(`SELECT secret FROM webhook_endpoints WHERE id = 'we_0000000000000000000000aa'`)).rows[0]!;
    expect(box.open(String(hook['secret']), { table: 'webhook_endpoints', id: 'we_0000000000000000000000aa' })).toBe(plainHook);
    const shop = (await store.db.query(`SELECT secret FROM shop_connections WHERE id = 'shop_0000000000000000000000aa'`)).rows[0]!;
    expect(box.open(String(shop['secret']), { table: 'shop_connections', id: 'shop_0000000000000000000000aa' })).toBe(plainShop);
  });

  it.skipIf(skip)('a delivery whose secret does not open fails with a reason and logs no value', async () => {
    const made = await app.call('POST', '/api/webhooks', { token: seller.token, json: { url: 'http://127.0.0.1:9/moved', events: ['license.created'] } });
    expect(made.status).toBe(201);
    // Another row's sealed value copied into this one does not open here.
    await store.db.query(`UPDATE webhook_endpoints SET secret = (SELECT secret FROM webhook_endpoints WHERE id = 'we_0000000000000000000000aa') WHERE id = $1`,
      [made.body.webhookId]);
    await store.db.query(`UPDATE webhook_endpoints SET disabled_at = now() WHERE id <> $1`, [made.body.webhookId]);
    const buyer = await newUser(app, 'Buyer');
    await license(app, seller, masterId, buyer);
    const logs: LogLine[] = [];
    const deliverer = new WebhookDeliverer({ repo: app.repo, now: () => new Date(Date.now() + 1000), secrets: secretBox(app.root),
      logger: captureLogger(logs), settings: { allowPrivate: true, timeoutMs: 2000, pollMs: 20, retryHours: 72 } });
    await deliverer.runOnce();
    const log = (await app.call('GET', `/api/webhooks/${made.body.webhookId}/deliveries`, { token: seller.token })).body;
    expect(log.deliveries[0]).toMatchObject({ state: 'pending', attempts: 1, lastError: 'secret_unavailable' });
    const warned = logs.filter((l) => l.message.includes('does not open'));
    expect(warned).toHaveLength(1);
    expect(JSON.stringify(logs)).not.toContain(SEALED_PREFIX);
  });
});

/**
 * The license lifecycle (issue 26 item 3) through the real app on PGlite and PostgreSQL:
 * expiry at its boundary (the key release, checked inside `iki_release`, and the copy are
 * granted a millisecond before expiresAt and refused with LICENSE_EXPIRED from it on; the buyer
 * sees the date); suspend and reinstate (reversible, idempotent, LICENSE_SUSPENDED meanwhile);
 * revoke is final (neither suspended nor reinstated afterwards); every change is in the
 * history with who made it, the seller's session or which API key.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newUser, playerKey, registerKey, startApp, uploadMaster, type TestApp, type User } from './helpers/app.js';
import { postgresServer, sqlEngines, type SqlStore } from './helpers/databases.js';
import { SqlRepository } from '../src/storage/sql-repository.js';

describe.each(sqlEngines)('license lifecycle on $name', (engine) => {
  const skip = engine.name === 'postgres' && postgresServer() === '';
  let store: SqlStore;
  let app: TestApp;
  let seller: User;
  let buyer: User;
  let stranger: User;
  let masterId: string;
  let apiKey: { apiKeyId: string; secret: string };
  let clock = new Date('2030-01-01T00:00:00Z');

  beforeAll(async () => {
    if (skip) return;
    store = await engine.open();
    app = await startApp({ repo: new SqlRepository(store.db), now: () => clock });
    seller = await newUser(app, 'Seller');
    buyer = await newUser(app, 'Buyer');
    stranger = await newUser(app, 'Stranger');
    masterId = await uploadMaster(app, seller, await registerKey(app, seller));
    apiKey = (await app.call('POST', '/api/api-keys', { token: seller.token, json: { name: 'shop', scopes: ['licenses:write', 'licenses:read'] } })).body;
  });
  afterAll(async () => {
    if (skip) return;
    await app.close();
    await store.close();
  });

  const release = (id: string) => app.call('POST', `/api/licenses/${id}/key`, { token: buyer.token, json: { publicKey: playerKey() } });
  const copy = (id: string) => app.call('GET', `/api/licenses/${id}/model`, { token: buyer.token });
  const create = async (json: Record<string, unknown>): Promise<string> => {
    const made = await app.call('POST', `/api/licenses/masters/${masterId}/licenses`, { token: apiKey.secret,
      json: { accountId: buyer.accountId, ...json } });
    expect(made.status, JSON.stringify(made.body)).toBe(201);
    return made.body.licenseId as string;
  };

  it.skipIf(skip)('issues copies and keys until expiresAt and refuses both with LICENSE_EXPIRED from it on; the buyer sees the date', async () => {
    const start = clock.getTime();
    const expiresAt = new Date(start + 60_000).toISOString();
    // An expiry that is not in the future is refused; nothing is made.
    expect((await app.call('POST', `/api/licenses/masters/${masterId}/licenses`, { token: seller.token,
      json: { accountId: buyer.accountId, expiresAt: new Date(start).toISOString() } })).body.error.code).toBe('VALIDATION_FAILED');
    const id = await create({ expiresAt });
    const seen = await app.call('GET', '/api/licenses', { token: buyer.token });
    expect(seen.body.licenses.find((l: { licenseId: string }) => l.licenseId === id)).toMatchObject({ expiresAt, state: 'active' });

    clock = new Date(start + 59_999);
    expect((await release(id)).status).toBe(200);
    expect((await copy(id)).status).toBe(200);

    clock = new Date(start + 60_000);
    for (const answer of [await release(id), await copy(id)]) {
      expect(answer.status).toBe(403);
      expect(answer.body.error).toMatchObject({ code: 'LICENSE_EXPIRED', details: { expiresAt } });
    }
    expect((await app.call('GET', `/api/licenses/${id}`, { token: buyer.token })).body).toMatchObject({ state: 'expired', expiresAt, releaseCount: 1 });
    expect((await app.call('GET', '/api/seller/licenses?state=expired', { token: apiKey.secret })).body.licenses
      .map((l: { licenseId: string }) => l.licenseId)).toEqual([id]);
    clock = new Date(start + 120_000);
  });

  it.skipIf(skip)('suspends and reinstates (idempotent, reversible), revocation is final, and the history names who did each', async () => {
    const id = await create({ externalRef: 'order-7' });
    const change = (what: string, token: string, json?: unknown) =>
      app.call('POST', `/api/licenses/${id}/${what}`, { token, ...(json === undefined ? {} : { json }) });

    const suspended = await change('suspend', apiKey.secret, { reason: 'refund requested' });
    expect(suspended.status).toBe(200);
    expect(suspended.body).toMatchObject({ state: 'suspended', suspendedAt: clock.toISOString() });
    for (const answer of [await release(id), await copy(id)]) expect(answer.body.error.code).toBe('LICENSE_SUSPENDED');
    expect((await app.call('GET', `/api/licenses/${id}`, { token: buyer.token })).body).toMatchObject({ state: 'suspended' });
    const firstTime = suspended.body.suspendedAt as string;
    clock = new Date(clock.getTime() + 1000);
    expect((await change('suspend', seller.token)).body.suspendedAt).toBe(firstTime);
    expect((await change('suspend', buyer.token)).body.error.code).toBe('FORBIDDEN');
    expect((await change('reinstate', stranger.token)).body.error.code).toBe('LICENSE_NOT_FOUND');

    const reinstated = await change('reinstate', seller.token);
    expect(reinstated.body).toMatchObject({ state: 'active', suspendedAt: null });
    expect((await change('reinstate', seller.token)).status).toBe(200);
    expect((await release(id)).status).toBe(200);

    expect((await change('suspend', seller.token)).body.state).toBe('suspended');
    const revoked = await change('revoke', apiKey.secret, { reason: 'chargeback' });
    expect(revoked.body).toMatchObject({ state: 'revoked' });
    for (const what of ['reinstate', 'suspend']) {
      const refused = await change(what, seller.token);
      expect(refused.status, what).toBe(409);
      expect(refused.body.error).toMatchObject({ code: 'LICENSE_STATE_CONFLICT', details: { state: 'revoked' } });
    }
    expect((await release(id)).body.error.code).toBe('LICENSE_REVOKED');

    const history = await app.call('GET', `/api/licenses/${id}/events`, { token: seller.token });
    const changes = (history.body.events as { kind: string; actorId: string; details: Record<string, unknown> }[])
      .filter((e) => e.kind !== 'release').reverse();
    expect(changes.map((e) => [e.kind, e.actorId, e.details['apiKeyId'] ?? null, e.details['reason'] ?? null])).toEqual([
      ['license_created', seller.accountId, apiKey.apiKeyId, null],
      ['suspend', seller.accountId, apiKey.apiKeyId, 'refund requested'],
      ['reinstate', seller.accountId, null, null],
      ['suspend', seller.accountId, null, null],
      ['revoke', seller.accountId, apiKey.apiKeyId, 'chargeback'],
    ]);
    expect(changes[0]?.details['externalRef']).toBe('order-7');
  });
});

describe('license lifecycle in the memory repository', () => {
  it('refuses the key release of a suspended or expired license as the SQL statement does', async () => {
    let clock = new Date('2030-01-01T00:00:00Z');
    const app = await startApp({ now: () => clock });
    try {
      const seller = await newUser(app, 'Seller');
      const buyer = await newUser(app, 'Buyer');
      const masterId = await uploadMaster(app, seller, await registerKey(app, seller));
      const expiresAt = new Date(clock.getTime() + 1000).toISOString();
      const made = await app.call('POST', `/api/licenses/masters/${masterId}/licenses`, { token: seller.token,
        json: { accountId: buyer.accountId, expiresAt } });
      const id = made.body.licenseId as string;
      const release = () => app.call('POST', `/api/licenses/${id}/key`, { token: buyer.token, json: { publicKey: playerKey() } });
      await app.call('POST', `/api/licenses/${id}/suspend`, { token: seller.token });
      expect((await release()).body.error.code).toBe('LICENSE_SUSPENDED');
      await app.call('POST', `/api/licenses/${id}/reinstate`, { token: seller.token });
      clock = new Date(clock.getTime() + 999);
      expect((await release()).status).toBe(200);
      clock = new Date(clock.getTime() + 1);
      expect((await release()).body.error.code).toBe('LICENSE_EXPIRED');
    } finally {
      await app.close();
    }
  });
});

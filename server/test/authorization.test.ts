/**
 * The authorization matrix of every endpoint that needs a caller: no token, a wrong token
 * (garbage, another service's, expired), another seller, another buyer, a revoked license and
 * a missing resource. Each refusal must also leave the state unchanged.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TokenService } from '../src/services/tokens.js';
import { fakeMaster } from './helpers/fake-crypto.js';
import { newUser, playerKey, registerKey, scenario, startApp, type TestApp, type User } from './helpers/app.js';

let app: TestApp;
let s: Awaited<ReturnType<typeof scenario>>;
let otherSeller: User;
let otherBuyer: User;
let revokedId: string;

interface Case { name: string; method: string; path: () => string; json?: () => unknown; body?: () => Buffer; type?: string }

const cases: Case[] = [
  { name: 'me', method: 'GET', path: () => '/api/me' },
  { name: 'list masters', method: 'GET', path: () => '/api/licenses/masters' },
  { name: 'upload master', method: 'POST', path: () => '/api/licenses/masters', type: 'application/vnd.iki.model',
    body: () => fakeMaster({ name: 'X', signer: s.key.publicKey }) },
  { name: 'get master', method: 'GET', path: () => `/api/licenses/masters/${s.masterId}` },
  { name: 'master licenses', method: 'GET', path: () => `/api/licenses/masters/${s.masterId}/licenses` },
  { name: 'create license', method: 'POST', path: () => `/api/licenses/masters/${s.masterId}/licenses`, json: () => ({ accountId: s.buyer.accountId }) },
  { name: 'identify', method: 'POST', path: () => `/api/licenses/masters/${s.masterId}/identify`, type: 'image/png', body: () => Buffer.from('png') },
  { name: 'my licenses', method: 'GET', path: () => '/api/licenses' },
  { name: 'get license', method: 'GET', path: () => `/api/licenses/${s.licenseId}` },
  { name: 'events', method: 'GET', path: () => `/api/licenses/${s.licenseId}/events` },
  { name: 'model', method: 'GET', path: () => `/api/licenses/${s.licenseId}/model` },
  { name: 'key', method: 'POST', path: () => `/api/licenses/${s.licenseId}/key`, json: () => ({ publicKey: playerKey() }) },
  { name: 'revoke', method: 'POST', path: () => `/api/licenses/${s.licenseId}/revoke` },
  { name: 'register key', method: 'POST', path: () => '/api/keys/signing', json: () => ({ publicKey: s.key.b64, proof: 'A'.repeat(86) }) },
  { name: 'revoke key', method: 'POST', path: () => `/api/keys/signing/${s.key.b64}/revoke` },
  { name: 'wrap', method: 'POST', path: () => '/api/keys/wrap', json: () => ({ ephemeralPublicKey: playerKey(), nonce: 'A'.repeat(32), sealedKey: 'A'.repeat(64) }) },
  { name: 'unwrap', method: 'POST', path: () => '/api/keys/unwrap', json: () => ({ accountId: s.buyer.accountId, blob: 'AQID', publicKey: playerKey() }) },
];

const call = (c: Case, token?: string) => app.call(c.method, c.path(), {
  ...(token === undefined ? {} : { token }), ...(c.json === undefined ? {} : { json: c.json() }),
  ...(c.body === undefined ? {} : { body: c.body(), type: c.type as string }),
});

async function snapshot() {
  const license = await app.repo.findLicense(s.licenseId);
  const masters = await app.repo.listMastersBySeller(s.seller.accountId);
  const key = await app.repo.findSigningKey(s.key.b64);
  const events = await app.repo.listEvents(s.licenseId, { limit: 1000, before: undefined });
  return { license, masters, key, events: events.length };
}

beforeAll(async () => {
  app = await startApp();
  s = await scenario(app);
  otherSeller = await newUser(app, 'Other seller');
  await registerKey(app, otherSeller);
  otherBuyer = await newUser(app, 'Other buyer');
  const revoked = await app.call('POST', `/api/licenses/masters/${s.masterId}/licenses`, { token: s.seller.token, json: { accountId: s.buyer.accountId } });
  revokedId = revoked.body.licenseId;
  await app.call('POST', `/api/licenses/${revokedId}/revoke`, { token: s.seller.token });
});
afterAll(async () => {
  await app.close();
});

describe('without a valid token', () => {
  const foreign = new TokenService({ issuer: 'http://iki.test', ttlSeconds: 900, seed: randomBytes(32), oidc: undefined, now: () => new Date() });
  const expiredIssuer = () => new TokenService({ issuer: 'http://iki.test', ttlSeconds: 60, seed: randomBytes(32), oidc: undefined,
    now: () => new Date(Date.now() - 3600_000) });

  it.each(cases)('$name: no token, garbage, a foreign-key token and an expired token are 401', async (c) => {
    const before = await snapshot();
    const none = await call(c);
    expect(none.status).toBe(401);
    expect(none.body.error.code).toBe('UNAUTHENTICATED');
    expect(none.headers.get('www-authenticate')).toContain('Bearer');
    expect((await call(c, 'not-a-jwt')).status).toBe(401);
    expect((await call(c, (await foreign.issue(s.seller.accountId, 'no-such-session0')).accessToken)).status).toBe(401);
    expect((await call(c, (await expiredIssuer().issue(s.seller.accountId, 'no-such-session0')).accessToken)).status).toBe(401);
    expect(await snapshot()).toEqual(before);
  });

  it('a valid token of a deleted or unknown account is 401', async () => {
    const tokens = new TokenService({ issuer: 'http://iki.test', ttlSeconds: 900, seed: app.root.accessTokenSeed(),
      oidc: undefined, now: () => new Date() });
    const token = await tokens.issue('acct_00000000000000000000000000000000', 'no-such-session0');
    expect((await app.call('GET', '/api/me', { token: token.accessToken })).status).toBe(401);
  });
});

describe('another seller and another buyer', () => {
  const sellerOnly = ['get master', 'master licenses', 'create license', 'identify'];
  const licenseRoutes = ['get license', 'events', 'model', 'key', 'revoke'];

  it.each(cases.filter((c) => sellerOnly.includes(c.name)))('$name: other accounts are told the master does not exist', async (c) => {
    const before = await snapshot();
    for (const user of [otherSeller, otherBuyer, s.buyer]) {
      const answer = await call(c, user.token);
      expect(answer.status).toBe(404);
      expect(answer.body.error.code).toBe('MASTER_NOT_FOUND');
    }
    expect(await snapshot()).toEqual(before);
  });

  it.each(cases.filter((c) => licenseRoutes.includes(c.name)))('$name: strangers are told the license does not exist', async (c) => {
    const before = await snapshot();
    for (const user of [otherSeller, otherBuyer]) {
      const answer = await call(c, user.token);
      expect(answer.status).toBe(404);
      expect(answer.body.error.code).toBe('LICENSE_NOT_FOUND');
    }
    expect(await snapshot()).toEqual(before);
  });

  it('the seller may not download copies or take keys; the buyer may not revoke', async () => {
    const before = await snapshot();
    for (const name of ['model', 'key']) {
      const answer = await call(cases.find((c) => c.name === name) as Case, s.seller.token);
      expect(answer.status).toBe(403);
      expect(answer.body.error.code).toBe('FORBIDDEN');
    }
    const revoke = await call(cases.find((c) => c.name === 'revoke') as Case, s.buyer.token);
    expect(revoke.body.error.code).toBe('FORBIDDEN');
    expect(await snapshot()).toEqual(before);
  });

  it('another account cannot revoke a key or unwrap a slot it is not named in', async () => {
    const before = await snapshot();
    expect((await call(cases.find((c) => c.name === 'revoke key') as Case, otherSeller.token)).status).toBe(404);
    expect((await call(cases.find((c) => c.name === 'unwrap') as Case, otherBuyer.token)).status).toBe(403);
    expect(await snapshot()).toEqual(before);
  });

  it('a master signed by another seller\'s key is refused and leaves nothing', async () => {
    const before = await snapshot();
    const answer = await app.call('POST', '/api/licenses/masters', { token: otherSeller.token, type: 'application/vnd.iki.model',
      body: fakeMaster({ name: 'Stolen', signer: s.key.publicKey }) });
    expect(answer.status).toBe(422);
    expect(answer.body.error.code).toBe('SIGNER_NOT_SELLER');
    expect(await app.repo.listMastersBySeller(otherSeller.accountId)).toEqual([]);
    expect(await snapshot()).toEqual(before);
  });
});

describe('revoked and missing', () => {
  it('a revoked license gives no copy and no key, and counts nothing', async () => {
    for (const path of [`/api/licenses/${revokedId}/model`, `/api/licenses/${revokedId}/key`]) {
      const answer = await app.call(path.endsWith('key') ? 'POST' : 'GET', path,
        { token: s.buyer.token, ...(path.endsWith('key') ? { json: { publicKey: playerKey() } } : {}) });
      expect(answer.status).toBe(403);
      expect(answer.body.error.code).toBe('LICENSE_REVOKED');
    }
    expect((await app.repo.findLicense(revokedId))?.releaseCount).toBe(0);
  });

  it.each([
    ['GET', '/api/licenses/ffffffffffffffff', 'LICENSE_NOT_FOUND'],
    ['GET', '/api/licenses/not-a-license-id', 'LICENSE_NOT_FOUND'],
    ['POST', '/api/licenses/ffffffffffffffff/revoke', 'LICENSE_NOT_FOUND'],
    ['GET', '/api/licenses/ffffffffffffffff/model', 'LICENSE_NOT_FOUND'],
    ['GET', `/api/licenses/masters/mst_${'0'.repeat(32)}`, 'MASTER_NOT_FOUND'],
    ['GET', `/api/licenses/masters/mst_${'0'.repeat(32)}/licenses`, 'MASTER_NOT_FOUND'],
    ['GET', '/api/licenses/masters/bad', 'MASTER_NOT_FOUND'],
    ['GET', `/api/keys/signing/${'A'.repeat(43)}`, 'SIGNING_KEY_NOT_FOUND'],
    ['GET', '/api/keys/signing/short', 'SIGNING_KEY_NOT_FOUND'],
  ])('%s %s is %s', async (method, path, code) => {
    const answer = await app.call(method, path, { token: s.seller.token });
    expect(answer.status).toBe(404);
    expect(answer.body.error.code).toBe(code);
  });

  it('a license for a missing account is refused', async () => {
    const answer = await app.call('POST', `/api/licenses/masters/${s.masterId}/licenses`, { token: s.seller.token,
      json: { accountId: `acct_${'0'.repeat(32)}` } });
    expect(answer.status).toBe(404);
    expect(answer.body.error.code).toBe('ACCOUNT_NOT_FOUND');
  });
  it('key release, decided in its one statement: a key taken before changes no refusal, an ended session is refused first', async () => {
    const key = cases.find((c) => c.name === 'key') as Case;
    const session = await app.services.sessions.open(s.buyer.accountId, 'test');
    expect((await call(key, session.accessToken)).status).toBe(200);
    // The service now keeps this license's master in memory: the refusals are the same.
    expect((await call(key, s.seller.token)).body.error.code).toBe('FORBIDDEN');
    expect((await call(key, otherBuyer.token)).body.error.code).toBe('LICENSE_NOT_FOUND');
    expect((await call(key, (await newUser(app, 'Unverified', false)).token)).body.error.code).toBe('EMAIL_NOT_VERIFIED');
    const before = await snapshot();
    await app.services.sessions.revoke(s.buyer.accountId, session.sessionId);
    for (const path of [`/api/licenses/${s.licenseId}/key`, `/api/licenses/${'f'.repeat(16)}/key`]) {
      const ended = await app.call('POST', path, { token: session.accessToken, json: { publicKey: playerKey() } });
      expect(ended.status).toBe(401);
      expect(ended.body.error.code).toBe('UNAUTHENTICATED');
    }
    expect(await snapshot()).toEqual(before);
    expect((await call(key, s.buyer.token)).status).toBe(200);
  });
});

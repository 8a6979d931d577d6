/**
 * End to end through the real app on an ephemeral port: one test per endpoint, in-memory
 * repository, file blob store, the test-only crypto fake.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fakeCrypto } from './helpers/fake-crypto.js';
import {
  newUser, playerKey, proofFor, deviceKey, registerKey, scenario, signUpCookie, startApp, uploadMaster, type TestApp,
} from './helpers/app.js';

let app: TestApp;
const crypto = fakeCrypto();

beforeAll(async () => {
  // Every user here signs up from 127.0.0.1 within the hour: far more than the per-client mail
  // limit, which test/verification-mail.test.ts checks.
  app = await startApp({ crypto, config: { mailLimits: { perAddress: 3, perIp: 1000, windowSeconds: 3600 } } });
});
afterAll(async () => {
  await app.close();
});

describe('accounts', () => {
  it('POST /api/accounts starts a pending sign-up, logs a verification link and answers every address alike', async () => {
    const answer = await app.call('POST', '/api/accounts', { json: { email: 'Ada@Example.com', password: 'correct horse battery', name: 'Ada' } });
    expect(answer.status).toBe(202);
    expect(answer.body).toEqual({ status: 'verification-sent' });
    const line = app.logs.find((l) => l.fields['to'] === 'ada@example.com');
    expect(String(line?.fields['link'])).toMatch(/^http:\/\/iki\.test\/verify-email\?token=[A-Za-z0-9_-]{43}$/);
    expect(await app.repo.findAccountByEmail('ada@example.com')).toBeUndefined();
    const token = new URL(String(line?.fields['link'])).searchParams.get('token');
    const verified = await app.call('POST', '/api/accounts/verify', { json: { token }, headers: { cookie: signUpCookie(answer) } });
    expect(verified.body).toMatchObject({ email: 'ada@example.com', name: 'Ada', emailVerified: true });
    expect(verified.body.accountId).toMatch(/^acct_[0-9a-f]{32}$/);
    const again = await app.call('POST', '/api/accounts', { json: { email: 'ada@example.com', password: 'another password', name: 'Ada 2' } });
    expect([again.status, again.body]).toEqual([202, answer.body]);
  });

  it('POST /api/accounts/verify verifies once', async () => {
    const signedUp = await app.call('POST', '/api/accounts', { json: { email: 'bob@example.com', password: 'correct horse battery', name: 'Bob' } });
    const link = String(app.logs.find((l) => l.fields['to'] === 'bob@example.com')?.fields['link']);
    const token = new URL(link).searchParams.get('token');
    const cookie = signUpCookie(signedUp);
    const answer = await app.call('POST', '/api/accounts/verify', { json: { token }, headers: { cookie } });
    expect(answer.status).toBe(200);
    expect(answer.body.emailVerified).toBe(true);
    // The proof cookie is spent with the link.
    expect(answer.headers.getSetCookie()).toEqual(['iki_sign_up=; Path=/api/accounts/verify; Max-Age=0; HttpOnly; Secure; SameSite=Strict']);
    const reused = await app.call('POST', '/api/accounts/verify', { json: { token }, headers: { cookie } });
    expect(reused.status).toBe(400);
    expect(reused.body.error.code).toBe('VERIFICATION_INVALID');
  });

  it('POST /api/accounts/verification sends a new link to an unverified account and answers every address alike', async () => {
    const signedUp = await app.call('POST', '/api/accounts', { json: { email: 'dora@example.com', password: 'correct horse battery', name: 'Dora' } });
    const answer = await app.call('POST', '/api/accounts/verification', { json: { email: 'Dora@example.com' } });
    expect(answer.status).toBe(202);
    expect(answer.body).toEqual({ status: 'sent-if-unverified' });
    const unknown = await app.call('POST', '/api/accounts/verification', { json: { email: 'nobody@example.com' } });
    expect([unknown.status, unknown.body]).toEqual([202, answer.body]);
    await app.services.accounts.settled();
    const links = app.logs.filter((l) => l.fields['to'] === 'dora@example.com').map((l) => String(l.fields['link']));
    expect(links).toHaveLength(2);
    const token = new URL(links[1] as string).searchParams.get('token');
    expect((await app.call('POST', '/api/accounts/verify', { json: { token }, headers: { cookie: signUpCookie(signedUp) } })).body.emailVerified).toBe(true);
    const bad = await app.call('POST', '/api/accounts/verification', { json: { email: 'dora@example.com', extra: 1 } });
    expect(bad.body.error.code).toBe('VALIDATION_FAILED');
  });

  it('POST /api/sessions signs in and GET /api/me answers with the account', async () => {
    const user = await newUser(app, 'Cleo');
    const wrong = await app.call('POST', '/api/sessions', { json: { email: user.email, password: 'wrong password!' } });
    expect(wrong.status).toBe(401);
    expect(wrong.body.error.code).toBe('INVALID_CREDENTIALS');
    const unknown = await app.call('POST', '/api/sessions', { json: { email: 'nobody@example.com', password: 'wrong password!' } });
    expect(unknown.body.error.code).toBe('INVALID_CREDENTIALS');
    const me = await app.call('GET', '/api/me', { token: user.token });
    expect(me.status).toBe(200);
    expect(me.body).toMatchObject({ accountId: user.accountId, email: user.email, emailVerified: true });
  });
});

describe('keys', () => {
  it('GET /api/keys/service lists the service public keys', async () => {
    const answer = await app.call('GET', '/api/keys/service');
    expect(answer.status).toBe(200);
    expect(answer.body.service).toBe('http://iki.test');
    for (const field of ['x25519PublicKey', 'licenseSigningPublicKey', 'certificatePublicKey']) {
      expect(answer.body[field]).toMatch(/^[A-Za-z0-9_-]{43}$/);
    }
  });

  it('POST /api/keys/signing registers a key with a certificate, needs proof and a verified address', async () => {
    const user = await newUser(app, 'Dora');
    const key = deviceKey();
    const bad = await app.call('POST', '/api/keys/signing', { token: user.token,
      json: { publicKey: key.b64, proof: proofFor(deviceKey(), user.accountId) } });
    expect(bad.body.error.code).toBe('BAD_SIGNATURE');
    const json = { publicKey: key.b64, proof: proofFor(key, user.accountId), name: 'laptop' };
    const answer = await app.call('POST', '/api/keys/signing', { token: user.token, json });
    expect(answer.status).toBe(201);
    expect(answer.body).toMatchObject({ publicKey: key.b64, accountId: user.accountId, status: 'active', name: 'laptop' });
    expect(answer.body.certificate).toMatch(/^[A-Za-z0-9_-]+$/);
    expect((await app.call('POST', '/api/keys/signing', { token: user.token, json })).status).toBe(200);
    const other = await newUser(app, 'Eve');
    const taken = await app.call('POST', '/api/keys/signing', { token: other.token,
      json: { publicKey: key.b64, proof: proofFor(key, other.accountId) } });
    expect(taken.body.error.code).toBe('SIGNING_KEY_TAKEN');
    const unverified = await newUser(app, 'Fay', false);
    const k2 = deviceKey();
    const refused = await app.call('POST', '/api/keys/signing', { token: unverified.token,
      json: { publicKey: k2.b64, proof: proofFor(k2, unverified.accountId) } });
    expect(refused.status).toBe(403);
    expect(refused.body.error.code).toBe('EMAIL_NOT_VERIFIED');
  });

  it('GET /api/keys/signing/{publicKey} and POST .../revoke', async () => {
    const user = await newUser(app, 'Gus');
    const key = await registerKey(app, user);
    const status = await app.call('GET', `/api/keys/signing/${key.b64}`);
    expect(status.body).toMatchObject({ status: 'active', accountId: user.accountId, revokedAt: null });
    const revoked = await app.call('POST', `/api/keys/signing/${key.b64}/revoke`, { token: user.token });
    expect(revoked.status).toBe(200);
    expect(revoked.body.status).toBe('revoked');
    const again = await app.call('POST', `/api/keys/signing/${key.b64}/revoke`, { token: user.token });
    expect(again.body.revokedAt).toBe(revoked.body.revokedAt);
    expect((await app.call('GET', `/api/keys/signing/${key.b64}`)).body.status).toBe('revoked');
    expect((await app.call('GET', `/api/keys/signing/${deviceKey().b64}`)).status).toBe(404);
  });

  it('GET /api/keys/signing lists the caller\'s keys only, revoked ones included', async () => {
    const user = await newUser(app, 'Lux');
    const other = await newUser(app, 'Max');
    const first = await registerKey(app, user);
    const second = await registerKey(app, user);
    await registerKey(app, other);
    await app.call('POST', `/api/keys/signing/${first.b64}/revoke`, { token: user.token });
    const listed = await app.call('GET', '/api/keys/signing', { token: user.token });
    expect(listed.status).toBe(200);
    expect(listed.body.keys.map((k: { publicKey: string; status: string }) => [k.publicKey, k.status]).sort())
      .toEqual([[first.b64, 'revoked'], [second.b64, 'active']].sort());
    expect((await app.call('GET', '/api/keys/signing')).status).toBe(401);
  });

  it('POST /api/keys/wrap and /api/keys/unwrap work for the named account only', async () => {
    const user = await newUser(app, 'Hal');
    const other = await newUser(app, 'Ivy');
    const sealed = { ephemeralPublicKey: playerKey(), nonce: 'A'.repeat(32), sealedKey: 'B'.repeat(64) };
    const wrapped = await app.call('POST', '/api/keys/wrap', { token: user.token, json: sealed });
    expect(wrapped.status).toBe(200);
    expect(wrapped.body.accountId).toBe(user.accountId);
    const json = { accountId: user.accountId, blob: wrapped.body.blob, publicKey: playerKey() };
    const opened = await app.call('POST', '/api/keys/unwrap', { token: user.token, json });
    expect(opened.status).toBe(200);
    expect(opened.body.sealedKey).toMatch(/^[A-Za-z0-9_-]{64}$/);
    const stranger = await app.call('POST', '/api/keys/unwrap', { token: other.token, json });
    expect(stranger.status).toBe(403);
    const tampered = await app.call('POST', '/api/keys/unwrap', { token: user.token, json: { ...json, blob: 'AAAA' } });
    expect(tampered.body.error.code).toBe('DECRYPT_FAILED');
  });
});

describe('masters and licenses', () => {
  it('POST /api/licenses/masters stores a checked master signed by the seller', async () => {
    const seller = await newUser(app, 'Jo');
    const key = await registerKey(app, seller);
    const masterId = await uploadMaster(app, seller, key, 'Hiyori');
    const list = await app.call('GET', '/api/licenses/masters', { token: seller.token });
    expect(list.body.masters).toEqual([expect.objectContaining({ masterId, name: 'Hiyori', licenseCount: 0, signerPublicKey: key.b64 })]);
    expect(list.body.masters[0].sha256).toMatch(/^[0-9a-f]{64}$/);
  });

  it('GET /api/licenses/masters/{masterId} answers the seller only', async () => {
    const { seller, buyer, masterId } = await scenario(app);
    expect((await app.call('GET', `/api/licenses/masters/${masterId}`, { token: seller.token })).body.masterId).toBe(masterId);
    expect((await app.call('GET', `/api/licenses/masters/${masterId}`, { token: buyer.token })).status).toBe(404);
  });

  it('POST /api/licenses/masters/{masterId}/licenses by account id or verified e-mail', async () => {
    const { seller, masterId } = await scenario(app);
    const buyer = await newUser(app, 'Kim');
    const byEmail = await app.call('POST', `/api/licenses/masters/${masterId}/licenses`, { token: seller.token, json: { email: buyer.email.toUpperCase() } });
    expect(byEmail.status).toBe(201);
    expect(byEmail.body).toMatchObject({ masterId, licensee: { accountId: buyer.accountId, name: 'Kim' }, revokedAt: null, releaseCount: 0 });
    expect(byEmail.body.licenseId).toMatch(/^[0-9a-f]{16}$/);
    expect(byEmail.headers.get('location')).toBe(`/api/licenses/${byEmail.body.licenseId}`);
    const unverified = await newUser(app, 'Lou', false);
    const refused = await app.call('POST', `/api/licenses/masters/${masterId}/licenses`, { token: seller.token, json: { email: unverified.email } });
    expect(refused.body.error.code).toBe('ACCOUNT_NOT_FOUND');
    const byId = await app.call('POST', `/api/licenses/masters/${masterId}/licenses`, { token: seller.token, json: { accountId: unverified.accountId } });
    expect(byId.status).toBe(201);
  });

  it('GET /api/licenses/masters/{masterId}/licenses lists licenses with counts', async () => {
    const { seller, masterId, licenseId } = await scenario(app);
    const answer = await app.call('GET', `/api/licenses/masters/${masterId}/licenses`, { token: seller.token });
    expect(answer.body.licenses).toEqual([expect.objectContaining({ licenseId, releaseCount: 0, revokedAt: null })]);
  });

  it('GET /api/licenses lists the buyer\'s licenses and GET /api/licenses/{licenseId} one', async () => {
    const { buyer, seller, licenseId, masterId } = await scenario(app);
    const list = await app.call('GET', '/api/licenses', { token: buyer.token });
    expect(list.body.licenses).toEqual([expect.objectContaining({ licenseId, masterId, masterName: 'Haru',
      seller: { accountId: seller.accountId, name: 'Seller' } })]);
    const one = await app.call('GET', `/api/licenses/${licenseId}`, { token: seller.token });
    expect(one.body.licenseId).toBe(licenseId);
  });

  it('GET /api/licenses/{licenseId}/model streams the license copy to the licensee', async () => {
    const { buyer, licenseId, masterId } = await scenario(app);
    const answer = await app.call('GET', `/api/licenses/${licenseId}/model`, { token: buyer.token });
    expect(answer.status).toBe(200);
    expect(answer.headers.get('content-type')).toBe('application/vnd.iki.model');
    expect(answer.headers.get('content-disposition')).toBe('attachment; filename="Haru.ikm"; filename*=UTF-8\'\'Haru.ikm');
    const header = JSON.parse(answer.bytes.toString('utf8').split('\n')[0] as string);
    expect(header).toMatchObject({ master: masterId, service: 'http://iki.test',
      license: { id: licenseId, licensee: buyer.accountId, licenseeName: 'Buyer' } });
    const events = await app.call('GET', `/api/licenses/${licenseId}/events`, { token: buyer.token });
    expect(events.body.events[0].kind).toBe('download');
  });

  it('names a download with a non-ASCII model name safely', async () => {
    const seller = await newUser(app, 'Uma');
    const buyer = await newUser(app, 'Vic');
    const key = await registerKey(app, seller);
    const masterId = await uploadMaster(app, seller, key, 'ハル "v2"/x');
    const created = await app.call('POST', `/api/licenses/masters/${masterId}/licenses`, { token: seller.token, json: { accountId: buyer.accountId } });
    const answer = await app.call('GET', `/api/licenses/${created.body.licenseId}/model`, { token: buyer.token });
    expect(answer.status).toBe(200);
    expect(answer.headers.get('content-disposition')).toBe(
      `attachment; filename="__ _v2__x.ikm"; filename*=UTF-8''${encodeURIComponent('ハル _v2__x.ikm')}`);
  });

  it('POST /api/licenses/{licenseId}/key releases the sealed key with rate-limit headers', async () => {
    const { buyer, licenseId } = await scenario(app);
    const answer = await app.call('POST', `/api/licenses/${licenseId}/key`, { token: buyer.token, json: { publicKey: playerKey() } });
    expect(answer.status).toBe(200);
    expect(answer.body).toMatchObject({ licenseId, releaseCount: 1, algorithm: 'X25519-HKDF-SHA256-XChaCha20Poly1305' });
    expect(answer.body.sealedKey).toMatch(/^[A-Za-z0-9_-]{64}$/);
    expect(answer.body.nonce).toMatch(/^[A-Za-z0-9_-]{32}$/);
    expect(answer.headers.get('ratelimit-limit')).toBe('20');
    expect(answer.headers.get('ratelimit-remaining')).toBe('19');
    expect(answer.headers.get('ratelimit-reset')).toBe('3600');
    expect(answer.headers.get('ratelimit-policy')).toContain('120;w=3600');
    const weak = await app.call('POST', `/api/licenses/${licenseId}/key`, { token: buyer.token, json: { publicKey: 'A'.repeat(43) } });
    expect(weak.status).toBe(400);
    expect(weak.body.error.code).toBe('WEAK_KEY');
    expect((await app.call('GET', `/api/licenses/${licenseId}`, { token: buyer.token })).body.releaseCount).toBe(1);
  });

  it('POST /api/licenses/{licenseId}/revoke revokes idempotently and stops copies and keys', async () => {
    const { seller, buyer, licenseId } = await scenario(app);
    const first = await app.call('POST', `/api/licenses/${licenseId}/revoke`, { token: seller.token, json: { reason: 'leaked' } });
    expect(first.status).toBe(200);
    expect(first.body.revokedAt).not.toBeNull();
    const second = await app.call('POST', `/api/licenses/${licenseId}/revoke`, { token: seller.token });
    expect(second.body.revokedAt).toBe(first.body.revokedAt);
    const key = await app.call('POST', `/api/licenses/${licenseId}/key`, { token: buyer.token, json: { publicKey: playerKey() } });
    expect(key.status).toBe(403);
    expect(key.body.error.code).toBe('LICENSE_REVOKED');
    expect((await app.call('GET', `/api/licenses/${licenseId}/model`, { token: buyer.token })).body.error.code).toBe('LICENSE_REVOKED');
  });

  it('GET /api/licenses/{licenseId}/events pages the history', async () => {
    const { seller, buyer, licenseId } = await scenario(app);
    for (let i = 0; i < 3; i += 1) {
      await app.call('POST', `/api/licenses/${licenseId}/key`, { token: buyer.token, json: { publicKey: playerKey() } });
    }
    const page = await app.call('GET', `/api/licenses/${licenseId}/events?limit=2`, { token: seller.token });
    expect(page.body.events.map((e: { kind: string }) => e.kind)).toEqual(['release', 'release']);
    const rest = await app.call('GET', `/api/licenses/${licenseId}/events?limit=10&before=${page.body.nextBefore}`, { token: seller.token });
    expect(rest.body.events.map((e: { kind: string }) => e.kind)).toEqual(['release', 'license_created']);
    expect(rest.body.nextBefore).toBeNull();
    expect((await app.call('GET', `/api/licenses/${licenseId}/events?limit=0`, { token: seller.token })).status).toBe(400);
  });

  it('POST /api/licenses/masters/{masterId}/identify names the license of a leaked texture', async () => {
    const { seller, masterId, licenseId } = await scenario(app);
    const hit = await app.call('POST', `/api/licenses/masters/${masterId}/identify`, { token: seller.token,
      type: 'image/png', body: Buffer.from(`\x89PNG....LIC:${licenseId}....`, 'latin1') });
    expect(hit.status).toBe(200);
    expect(hit.body).toMatchObject({ found: true, licenseId, confidence: 0.97, license: { licenseId } });
    const miss = await app.call('POST', `/api/licenses/masters/${masterId}/identify`, { token: seller.token,
      type: 'image/webp', body: Buffer.from('RIFF....WEBP') });
    expect(miss.body).toEqual({ found: false, confidence: 0.1, method: 'blind', reason: 'no_matching_texture', texturesTried: 0, match: 'decoded', mixed: false, candidates: [] });
    const events = await app.call('GET', `/api/licenses/${licenseId}/events`, { token: seller.token });
    expect(events.body.events[0]).toMatchObject({ kind: 'identify', details: { found: true } });
  });

  it('GET /api/openapi.json serves the document', async () => {
    const answer = await app.call('GET', '/api/openapi.json');
    expect(answer.status).toBe(200);
    expect(answer.body.openapi).toBe('3.1.0');
  });

  it('answers unknown routes and methods with the error body', async () => {
    const missing = await app.call('GET', '/api/nope');
    expect(missing.status).toBe(404);
    expect(missing.body.error).toMatchObject({ code: 'NOT_FOUND', requestId: missing.headers.get('x-request-id') });
    expect((await app.call('DELETE', '/api/licenses')).status).toBe(405);
  });
});

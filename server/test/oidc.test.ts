/**
 * Tokens from an external OpenID Connect issuer, verified against its JWKS served by a local
 * HTTP server on an ephemeral port; the caller is mirrored into an account.
 */
import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { exportJWK, generateKeyPair, SignJWT, type CryptoKey, type JWK } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApp, type TestApp } from './helpers/app.js';

let jwksServer: Server;
let app: TestApp;
let privateKey: CryptoKey;
let strangerKey: CryptoKey;
let jwksHits = 0;
const ISSUER = 'https://idp.example';

async function idToken(claims: Record<string, unknown>, key = privateKey, issuer = ISSUER, expiresIn = '5m'): Promise<string> {
  return new SignJWT(claims).setProtectedHeader({ alg: 'ES256', kid: 'k1' }).setIssuer(issuer)
    .setAudience('iki').setSubject(String(claims['sub'] ?? 'user-1')).setIssuedAt().setExpirationTime(expiresIn).sign(key);
}

beforeAll(async () => {
  const pair = await generateKeyPair('ES256');
  privateKey = pair.privateKey;
  strangerKey = (await generateKeyPair('ES256')).privateKey;
  const jwk: JWK = { ...(await exportJWK(pair.publicKey)), kid: 'k1', alg: 'ES256', use: 'sig' };
  jwksServer = createServer((_req, res) => {
    jwksHits += 1;
    res.setHeader('content-type', 'application/json');
    res.end(JSON.stringify({ keys: [jwk] }));
  }).listen(0, '127.0.0.1');
  await once(jwksServer, 'listening');
  const jwksUrl = `http://127.0.0.1:${(jwksServer.address() as AddressInfo).port}/jwks.json`;
  app = await startApp({ config: { oidc: { issuer: ISSUER, jwksUrl, audience: 'iki' } } });
});
afterAll(async () => {
  await app.close();
  jwksServer.close();
});

describe('external OpenID Connect tokens', () => {
  it('accepts a valid token and mirrors the account once', async () => {
    const token = await idToken({ sub: 'user-1', email: 'Ext@Example.com', email_verified: true, name: 'External' });
    const me = await app.call('GET', '/api/me', { token });
    expect(me.status).toBe(200);
    expect(me.body).toMatchObject({ email: 'ext@example.com', emailVerified: true, name: 'External' });
    const again = await app.call('GET', '/api/me', { token: await idToken({ sub: 'user-1', email: 'ext@example.com', email_verified: true, name: 'Renamed' }) });
    expect(again.body.accountId).toBe(me.body.accountId);
    expect(again.body.name).toBe('Renamed');
    expect(jwksHits).toBeGreaterThan(0);
  });

  it('finds a verified external account by e-mail, as license creation does', async () => {
    const token = await idToken({ sub: 'buyer-9', email: 'buyer9@example.com', email_verified: true });
    const me = await app.call('GET', '/api/me', { token });
    const found = await app.repo.findAccountByEmail('buyer9@example.com');
    expect(found?.id).toBe(me.body.accountId);
    expect(found?.emailVerified).toBe(true);
  });

  it.each([
    ['a key not in the JWKS', () => idToken({ sub: 'x' }, strangerKey)],
    ['another issuer', () => idToken({ sub: 'x' }, privateKey, 'https://evil.example')],
    ['an expired token', () => idToken({ sub: 'x' }, privateKey, ISSUER, '-1m')],
    ['a wrong audience', async () => new SignJWT({}).setProtectedHeader({ alg: 'ES256', kid: 'k1' }).setIssuer(ISSUER)
      .setAudience('other').setSubject('x').setIssuedAt().setExpirationTime('5m').sign(privateKey)],
  ])('refuses %s', async (_name, make) => {
    const answer = await app.call('GET', '/api/me', { token: await make() });
    expect(answer.status).toBe(401);
    expect(answer.body.error.code).toBe('UNAUTHENTICATED');
  });

  it('keeps accepting built-in tokens', async () => {
    const created = await app.call('POST', '/api/accounts', { json: { email: 'local@example.com', password: 'correct horse battery', name: 'L' } });
    const session = await app.call('POST', '/api/sessions', { json: { email: 'local@example.com', password: 'correct horse battery' } });
    expect((await app.call('GET', '/api/me', { token: session.body.accessToken })).body.accountId).toBe(created.body.accountId);
  });
});

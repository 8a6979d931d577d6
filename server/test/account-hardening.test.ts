/**
 * Issue 15 items 4, 9, 12, 13 and 15 against the real app on PGlite and PostgreSQL (item 14,
 * the root key file's mode, is in config-secrets.test.ts; item 5 in account-hijack.test.ts):
 * the OIDC audience is mandatory and `azp` must match it, a global cap bounds the mail anyone
 * can make the service send, links are never written to an https service's log unless allowed
 * and then at their own level, a proxy with trust off is warned about once, HSTS over https,
 * and the public signing-key view carries no device name.
 */
import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { exportJWK, generateKeyPair, SignJWT, type CryptoKey } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigError, loadConfig, type AccountSettings } from '../src/config.js';
import { jsonLogger } from '../src/logger.js';
import { logMailer } from '../src/services/mailer.js';
import { FORWARDED_FOR_WARNING } from '../src/routes/proxy-warning.js';
import { newUser, registerKey, startApp, type TestApp } from './helpers/app.js';
import { postgresServer, repositoryEngines, type Store } from './helpers/databases.js';

const engines = repositoryEngines.filter((e) => e.name !== 'memory');
const SETTINGS: AccountSettings = { sessionIdleSeconds: 86400, sessionMaxSeconds: 86400 * 30, passwordResetTtlSeconds: 3600,
  mailsTotal: 1000, licensesPerSellerPerHour: 200, allowLogMail: false };

describe('configuration', () => {
  it('refuses an OIDC issuer without an audience (item 4)', () => {
    const env = { IKI_OIDC_ISSUER: 'https://idp.example', IKI_OIDC_JWKS_URL: 'https://idp.example/jwks' };
    expect(() => loadConfig(env)).toThrow(/IKI_OIDC_AUDIENCE is required with IKI_OIDC_ISSUER/);
    expect(loadConfig({ ...env, IKI_OIDC_AUDIENCE: 'iki' }).oidc?.audience).toBe('iki');
  });

  it('refuses an https service without SMTP unless IKI_ALLOW_LOG_MAIL=1 (item 12)', () => {
    try {
      loadConfig({ IKI_PUBLIC_URL: 'https://iki.example' });
      expect.unreachable();
    } catch (err) {
      expect(err).toBeInstanceOf(ConfigError);
      expect((err as ConfigError).problems).toEqual([expect.stringMatching(/needs IKI_SMTP_URL .* IKI_ALLOW_LOG_MAIL=1/)]);
    }
    expect(loadConfig({ IKI_PUBLIC_URL: 'https://iki.example', IKI_ALLOW_LOG_MAIL: '1' }).accountSettings.allowLogMail).toBe(true);
    expect(loadConfig({ IKI_PUBLIC_URL: 'http://localhost:8080' }).mail).toBeUndefined();
    expect(() => loadConfig({ IKI_ALLOW_LOG_MAIL: 'yes' })).toThrow(/IKI_ALLOW_LOG_MAIL must be 1 or 0/);
  });

  it('writes a logged link at a level of its own (item 12)', async () => {
    const lines: string[] = [];
    await logMailer(jsonLogger((l) => lines.push(l))).sendVerification('ada@example.com', 'http://x/verify-email?token=abc');
    expect(JSON.parse(lines[0] as string)).toMatchObject({ level: 'link', to: 'ada@example.com', link: 'http://x/verify-email?token=abc' });
  });
});

describe.each(engines)('hardening on $name', (engine) => {
  const skip = engine.name === 'postgres' && postgresServer() === '';
  let store: Store;
  const apps: TestApp[] = [];
  let jwks: Server;
  let idpKey: CryptoKey;
  let jwksUrl = '';

  beforeAll(async () => {
    if (skip) return;
    store = await engine.open();
    const pair = await generateKeyPair('ES256');
    idpKey = pair.privateKey;
    const jwk = { ...(await exportJWK(pair.publicKey)), kid: 'k1', alg: 'ES256', use: 'sig' };
    jwks = createServer((_req, res) => {
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify({ keys: [jwk] }));
    }).listen(0, '127.0.0.1');
    await once(jwks, 'listening');
    jwksUrl = `http://127.0.0.1:${(jwks.address() as AddressInfo).port}/jwks`;
  });
  afterAll(async () => {
    if (skip) return;
    for (const app of apps) await app.close();
    jwks.close();
    await store.close();
  });
  const open = async (config: NonNullable<Parameters<typeof startApp>[0]>['config'] = {}) => {
    const app = await startApp({ repo: store.repo, config });
    apps.push(app);
    return app;
  };

  it.skipIf(skip)('an issuer\'s token made for another client is refused: aud and azp must name this service (item 4)', async () => {
    const app = await open({ oidc: { issuer: 'https://idp.example', jwksUrl, audience: 'iki' } });
    const token = (claims: Record<string, unknown>, audience?: string) => {
      const jwt = new SignJWT({ email: 'x@example.com', email_verified: true, ...claims }).setProtectedHeader({ alg: 'ES256', kid: 'k1' })
        .setIssuer('https://idp.example').setSubject('user-azp').setIssuedAt().setExpirationTime('5m');
      return (audience === undefined ? jwt : jwt.setAudience(audience)).sign(idpKey);
    };
    const before = await store.repo.findAccountByEmail('x@example.com');
    for (const [label, jwt] of [['no aud', await token({})], ['another client\'s aud', await token({}, 'other-app')],
      ['aud ok but azp another client', await token({ azp: 'other-app' }, 'iki')]] as const) {
      const answer = await app.call('GET', '/api/me', { token: jwt });
      expect([answer.status, answer.body.error.code], label).toEqual([401, 'UNAUTHENTICATED']);
    }
    expect(await store.repo.findAccountByEmail('x@example.com')).toEqual(before);
    expect((await app.call('GET', '/api/me', { token: await token({ azp: 'iki' }, 'iki') })).status).toBe(200);
  });

  it.skipIf(skip)('a global cap bounds the mail requests of everyone together (item 9)', async () => {
    const app = await open({ accountSettings: { ...SETTINGS, mailsTotal: 3 } });
    const ask = (i: number) => app.call('POST', '/api/accounts/password-reset', { json: { email: `cap${i}-${engine.name}@example.com` } });
    for (let i = 0; i < 3; i += 1) expect((await ask(i)).status).toBe(202);
    const refused = await ask(3);
    expect([refused.status, refused.body.error.code]).toEqual([429, 'MAIL_THROTTLED']);
    const signUp = await app.call('POST', '/api/accounts', { json: { email: `cap9-${engine.name}@example.com`, password: 'long enough pw', name: 'C' } });
    expect(signUp.status).toBe(429);
    expect(await store.repo.findPendingSignUp(`cap9-${engine.name}@example.com`, new Date())).toBeUndefined();
  });

  it.skipIf(skip)('warns once, loudly, about X-Forwarded-For while trust is off; not when trusted (item 13)', async () => {
    const app = await open();
    for (let i = 0; i < 3; i += 1) await app.call('GET', '/api/keys/service', { headers: { 'x-forwarded-for': `203.0.113.${i}` } });
    expect(app.logs.filter((l) => l.message === FORWARDED_FOR_WARNING).map((l) => l.level)).toEqual(['warn']);
    const trusted = await open({ trustProxy: ['loopback'] });
    await trusted.call('GET', '/api/keys/service', { headers: { 'x-forwarded-for': '203.0.113.9' } });
    expect(trusted.logs.filter((l) => l.message === FORWARDED_FOR_WARNING)).toEqual([]);
  });

  it.skipIf(skip)('sends HSTS over https only, and the public key status shows no device name (item 15)', async () => {
    const https = await open({ publicUrl: 'https://iki.test', accountSettings: { ...SETTINGS, allowLogMail: true } });
    const plain = await open();
    expect((await https.call('GET', '/api/keys/service')).headers.get('strict-transport-security')).toBe('max-age=31536000');
    expect((await plain.call('GET', '/api/keys/service')).headers.get('strict-transport-security')).toBeNull();
    const seller = await newUser(plain, 'Keyholder');
    const key = await registerKey(plain, seller);
    const status = await plain.call('GET', `/api/keys/signing/${key.b64}`);
    expect(status.body).toEqual({ publicKey: key.b64, accountId: seller.accountId, status: 'active',
      createdAt: expect.any(String), revokedAt: null });
    expect(JSON.stringify(status.body)).not.toContain('laptop');
    // The owner still sees the name in their own list.
    expect((await plain.call('GET', '/api/keys/signing', { token: seller.token })).body.keys[0].name).toBe('laptop');
  });
});

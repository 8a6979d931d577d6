/**
 * Sign-in throttling: failed sign-ins are counted per normalised e-mail address and per client
 * address over a sliding window, on the in-memory fake, PGlite and PostgreSQL. A full limit is
 * refused with SIGN_IN_THROTTLED and Retry-After before the account is looked up or any hash
 * is spent; exactly `limit` of many concurrent guesses are answered INVALID_CREDENTIALS; the
 * address is stored only as its HMAC under a key derived from the root secret, and expired
 * failures are swept.
 */
import { createHash, createHmac, randomBytes } from 'node:crypto';
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import type { SignInLimits } from '../src/config.js';
import { ApiError } from '../src/errors.js';
import { silentLogger } from '../src/logger.js';
import { AccountService } from '../src/services/accounts.js';
import { SessionService } from '../src/services/sessions.js';
import { PasswordHasher } from '../src/services/passwords.js';
import { TokenService } from '../src/services/tokens.js';
import { MemoryRepository } from '../src/storage/memory-repository.js';
import type { SignInAttempt } from '../src/storage/repository.js';
import type { SqlDb } from '../src/storage/sql-db.js';
import { postgresServer, repositoryEngines, type Store } from './helpers/databases.js';
import { newUser, startApp, TEST_HASHING, type Answer, type TestApp } from './helpers/app.js';

const sha256 = (text: string) => createHash('sha256').update(text, 'utf8').digest('hex');
const T0 = new Date('2030-01-01T00:00:00.000Z');
const at = (seconds: number) => new Date(T0.getTime() + seconds * 1000);
const PASSWORD = 'correct horse battery';
const WRONG = 'not the password';

const engines = repositoryEngines;

const attempt = (address: string, clientIp: string, now: Date, limits: Partial<SignInAttempt> = {}): SignInAttempt =>
  ({ addressHash: sha256(address), clientIp, now, windowSeconds: 900, perAddress: 3, perIp: 5, ...limits });

describe.each(engines)('sign-in failures in the repository on $name', (engine) => {
  const skip = engine.name === 'postgres' && postgresServer() === '';
  let store: Store;

  beforeAll(async () => {
    if (!skip) store = await engine.open();
  });
  afterAll(async () => {
    if (!skip) await store.close();
  });
  beforeEach(async () => {
    if (!skip) await store.reset();
  });

  it.skipIf(skip)('refuses at the address limit and frees a slot when the oldest failure ages out', async () => {
    const { repo } = store;
    for (const t of [0, 10, 20]) expect((await repo.tryRecordSignInFailure(attempt('a@example.com', '192.0.2.1', at(t)))).kind).toBe('recorded');
    expect(await repo.tryRecordSignInFailure(attempt('a@example.com', '192.0.2.2', at(30))))
      .toEqual({ kind: 'throttled', scope: 'address', retryAt: at(900) });
    expect((await repo.tryRecordSignInFailure(attempt('a@example.com', '192.0.2.1', at(899)))).kind).toBe('throttled');
    // The window is (now - 900 s, now]: the failure at t = 0 no longer counts at t = 900.
    expect((await repo.tryRecordSignInFailure(attempt('a@example.com', '192.0.2.1', at(900)))).kind).toBe('recorded');
    expect(await repo.tryRecordSignInFailure(attempt('a@example.com', '192.0.2.1', at(901))))
      .toEqual({ kind: 'throttled', scope: 'address', retryAt: at(910) });
    expect((await repo.tryRecordSignInFailure(attempt('b@example.com', '192.0.2.9', at(901)))).kind).toBe('recorded');
  });

  it.skipIf(skip)('withdraws one failure and nothing else', async () => {
    const { repo } = store;
    const ids: string[] = [];
    for (const t of [0, 1, 2]) {
      const outcome = await repo.tryRecordSignInFailure(attempt('a@example.com', '192.0.2.1', at(t)));
      if (outcome.kind !== 'recorded') throw new Error('not recorded');
      ids.push(outcome.failureId);
    }
    expect(new Set(ids).size).toBe(3);
    await repo.withdrawSignInFailure(ids[2] as string);
    expect((await repo.tryRecordSignInFailure(attempt('a@example.com', '192.0.2.1', at(3)))).kind).toBe('recorded');
    expect((await repo.tryRecordSignInFailure(attempt('a@example.com', '192.0.2.1', at(4)))).kind).toBe('throttled');
    await repo.withdrawSignInFailure('999999');
    expect((await repo.tryRecordSignInFailure(attempt('a@example.com', '192.0.2.1', at(5)))).kind).toBe('throttled');
  });

  it.skipIf(skip)('counts a client across addresses and names the later retry when both limits are full', async () => {
    const { repo } = store;
    for (let i = 0; i < 5; i += 1) {
      expect((await repo.tryRecordSignInFailure(attempt(`u${i}@example.com`, '2001:db8::1', at(i * 60)))).kind).toBe('recorded');
    }
    expect(await repo.tryRecordSignInFailure(attempt('u9@example.com', '2001:db8::1', at(300))))
      .toEqual({ kind: 'throttled', scope: 'ip', retryAt: at(900) });
    expect((await repo.tryRecordSignInFailure(attempt('u9@example.com', '2001:db8::2', at(300)))).kind).toBe('recorded');
    // u9 now has 1 failure; two more from other clients fill its limit, whose slot frees at 1200.
    for (const ip of ['2001:db8::3', '2001:db8::4']) await repo.tryRecordSignInFailure(attempt('u9@example.com', ip, at(400)));
    expect(await repo.tryRecordSignInFailure(attempt('u9@example.com', '2001:db8::1', at(500))))
      .toEqual({ kind: 'throttled', scope: 'address', retryAt: at(1200) });
  });

  it.skipIf(skip)('records exactly the limit of 30 concurrent attempts', async () => {
    const { repo } = store;
    const outcomes = await Promise.all(Array.from({ length: 30 }, (_, i) =>
      repo.tryRecordSignInFailure(attempt('a@example.com', `198.51.100.${i}`, at(0), { perAddress: 10, perIp: 50 }))));
    expect(outcomes.filter((o) => o.kind === 'recorded')).toHaveLength(10);
    expect(outcomes.filter((o) => o.kind === 'throttled')).toHaveLength(20);
    const byClient = await Promise.all(Array.from({ length: 30 }, (_, i) =>
      repo.tryRecordSignInFailure(attempt(`c${i}@example.com`, '198.51.100.200', at(1), { perAddress: 10, perIp: 7 }))));
    expect(byClient.filter((o) => o.kind === 'recorded')).toHaveLength(7);
  });

  it.skipIf(skip || engine.name === 'memory')('stores the address only as the given hash and sweeps expired failures', async () => {
    const { repo } = store;
    const db = store.db as SqlDb;
    await repo.tryRecordSignInFailure(attempt('secret.person@example.com', '192.0.2.7', at(0)));
    const { rows } = await db.query('SELECT * FROM sign_in_failures');
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ address_hash: sha256('secret.person@example.com'), client_ip: '192.0.2.7' });
    expect(JSON.stringify(rows)).not.toContain('secret.person');
    expect(Object.keys(rows[0] as object).sort()).toEqual(['address_hash', 'client_ip', 'failed_at', 'id']);
    const wide = { perAddress: 10_000, perIp: 10_000 };
    for (let i = 0; i < 249; i += 1) await repo.tryRecordSignInFailure(attempt(`old${i}@example.com`, `10.0.${i >> 8}.${i & 255}`, at(1), wide));
    const count = async () => Number((await db.query('SELECT count(*)::int AS n FROM sign_in_failures')).rows[0]?.['n']);
    expect(await count()).toBe(250);
    // Each new failure deletes at most 100 expired ones, oldest first.
    await repo.tryRecordSignInFailure(attempt('new1@example.com', '192.0.2.8', at(1000), wide));
    expect(await count()).toBe(151);
    await repo.tryRecordSignInFailure(attempt('new2@example.com', '192.0.2.8', at(1000), wide));
    await repo.tryRecordSignInFailure(attempt('new3@example.com', '192.0.2.8', at(1000), wide));
    expect(await count()).toBe(3);
  });
});

describe('sign-in limits in the account service', () => {
  let now = T0;
  const limits: SignInLimits = { perAddress: 10, perIp: 50, windowSeconds: 900 };

  async function world(overrides: Partial<SignInLimits> = {}) {
    const repo = new MemoryRepository();
    const hasher = new PasswordHasher(TEST_HASHING);
    const tokens = new TokenService({ issuer: 'http://iki.test', ttlSeconds: 900, seed: randomBytes(32), oidc: undefined, now: () => now });
    const links: string[] = [];
    const accounts = new AccountService({ repo, hasher, tokens, mailsTotal: 1000,
    sessions: new SessionService({ repo, tokens, now: () => now, lifetime: { idleSeconds: 86400, maxSeconds: 86400 * 30 }, reuseGraceSeconds: 10 }), now: () => now, publicUrl: 'http://iki.test',
      verificationTtlSeconds: 3600, signInLimits: { ...limits, ...overrides }, addressKey: randomBytes(32),
      mailLimits: { perAddress: 3, perIp: 20, windowSeconds: 3600 }, mailAddressKey: randomBytes(32), logger: silentLogger,
      mailer: { async sendVerification(_to, link) { links.push(link); } } });
    await accounts.signUp({ email: 'ada@example.com', password: PASSWORD, name: 'Ada' }, '192.0.2.1', 'the browser');
    await accounts.verifyEmail(new URL(links.at(-1) as string).searchParams.get('token') as string, { proof: 'the browser' });
    return { repo, hasher, accounts };
  }

  const refusal = async (p: Promise<unknown>) => p.then(() => ({ code: 'resolved' }), (e: unknown) => (e instanceof ApiError
    ? { code: e.code, details: e.details, headers: e.headers } : { code: String(e) }));

  beforeEach(() => {
    now = T0;
  });

  it('answers the 10th wrong password INVALID_CREDENTIALS and refuses the 11th attempt, right or wrong, unhashed', async () => {
    const w = await world();
    for (let i = 0; i < 10; i += 1) {
      now = at(i * 10);
      expect((await refusal(w.accounts.signIn('ada@example.com', WRONG, '192.0.2.1'))).code).toBe('INVALID_CREDENTIALS');
    }
    const verify = vi.spyOn(w.hasher, 'verify');
    const hash = vi.spyOn(w.hasher, 'hash');
    const lookUp = vi.spyOn(w.repo, 'findAccountByEmail');
    now = at(100);
    expect(await refusal(w.accounts.signIn('ada@example.com', WRONG, '192.0.2.1'))).toMatchObject({ code: 'SIGN_IN_THROTTLED' });
    // Another client, a different spelling of the address and the right password change nothing.
    expect(await refusal(w.accounts.signIn(' ADA@Example.com', PASSWORD, '192.0.2.99'))).toMatchObject({
      code: 'SIGN_IN_THROTTLED', details: { retryAfterSeconds: 800 }, headers: { 'Retry-After': '800' } });
    expect(verify).not.toHaveBeenCalled();
    expect(hash).not.toHaveBeenCalled();
    expect(lookUp).not.toHaveBeenCalled();
  });

  it('frees the address when its failures leave the window, and rounds Retry-After up', async () => {
    const w = await world();
    for (let i = 0; i < 10; i += 1) {
      now = at(i * 60);
      await refusal(w.accounts.signIn('ada@example.com', WRONG, '192.0.2.1'));
    }
    now = new Date(at(600).getTime() + 500);
    // The failure at t = 0 leaves the window at t = 900: 299.5 s from now, told as 300.
    expect(await refusal(w.accounts.signIn('ada@example.com', PASSWORD, '192.0.2.1')))
      .toMatchObject({ code: 'SIGN_IN_THROTTLED', headers: { 'Retry-After': '300' } });
    now = new Date(at(900).getTime() - 1);
    expect(await refusal(w.accounts.signIn('ada@example.com', PASSWORD, '192.0.2.1')))
      .toMatchObject({ code: 'SIGN_IN_THROTTLED', headers: { 'Retry-After': '1' } });
    now = at(900);
    expect((await w.accounts.signIn('ada@example.com', PASSWORD, '192.0.2.1')).accountId).toMatch(/^acct_/);
    // The success is not counted: nine failures (t = 60 to 540) remain, so one more guess fits.
    expect((await refusal(w.accounts.signIn('ada@example.com', WRONG, '192.0.2.1'))).code).toBe('INVALID_CREDENTIALS');
    expect((await refusal(w.accounts.signIn('ada@example.com', PASSWORD, '192.0.2.1'))).code).toBe('SIGN_IN_THROTTLED');
  });

  it('limits one client across many addresses, known or not, and a success resets nothing', async () => {
    const w = await world({ perIp: 12 });
    for (let i = 0; i < 11; i += 1) {
      expect((await refusal(w.accounts.signIn(`user${i}@example.com`, WRONG, '203.0.113.5'))).code).toBe('INVALID_CREDENTIALS');
    }
    await w.accounts.signIn('ada@example.com', PASSWORD, '203.0.113.5');
    expect((await refusal(w.accounts.signIn('ada@example.com', WRONG, '203.0.113.5'))).code).toBe('INVALID_CREDENTIALS');
    expect((await refusal(w.accounts.signIn('ada@example.com', PASSWORD, '203.0.113.5'))).code).toBe('SIGN_IN_THROTTLED');
    expect((await refusal(w.accounts.signIn('user99@example.com', WRONG, '203.0.113.5'))).code).toBe('SIGN_IN_THROTTLED');
    expect((await w.accounts.signIn('ada@example.com', PASSWORD, '203.0.113.6')).accountId).toMatch(/^acct_/);
  });

  it('counts an unknown address like a known one', async () => {
    const w = await world({ perAddress: 2 });
    const seen: unknown[] = [];
    for (const email of ['ada@example.com', 'nobody@example.com']) {
      for (let i = 0; i < 2; i += 1) await refusal(w.accounts.signIn(email, WRONG, `192.0.2.${i}`));
      seen.push(await refusal(w.accounts.signIn(email, WRONG, '192.0.2.50')));
    }
    expect(seen[0]).toMatchObject({ code: 'SIGN_IN_THROTTLED' });
    expect(seen[1]).toEqual(seen[0]);
  });
});

describe.each(engines)('sign-in limits through HTTP on $name', (engine) => {
  const skip = engine.name === 'postgres' && postgresServer() === '';
  let app: TestApp;
  let store: Store;
  let clock = T0;

  beforeAll(async () => {
    if (skip) return;
    store = await engine.open();
    app = await startApp({ repo: store.repo, now: () => clock });
  });
  afterAll(async () => {
    if (skip) return;
    await app.close();
    await store.close();
  });
  beforeEach(() => {
    // Every test starts a day later, so no failure of an earlier test (all from 127.0.0.1) counts.
    clock = new Date(clock.getTime() + 86_400_000);
  });

  const signIn = (email: string, password: string, headers: Record<string, string> = {}) =>
    app.call('POST', '/api/sessions', { json: { email, password }, headers });
  const refusedAlike = (answer: Answer) => {
    expect(answer.status).toBe(429);
    expect(answer.headers.get('retry-after')).toBe('900');
    expect(answer.body).toEqual({ error: { code: 'SIGN_IN_THROTTLED', message: 'too many failed sign-in attempts; try again later',
      details: { retryAfterSeconds: 900 }, requestId: answer.headers.get('x-request-id') } });
  };

  it.skipIf(skip)('throttles successful sign-ins too, per address and per client, at the limit and just past it (issue 22 item 9)', async () => {
    const limited = await startApp({ repo: store.repo, now: () => clock,
      config: { signInLimits: { perAddress: 10, perIp: 50, windowSeconds: 900, attemptsPerAddress: 3, attemptsPerIp: 5 } } });
    try {
      const [ada, bob] = [await newUser(limited, 'Often'), await newUser(limited, 'Other')];
      clock = new Date(clock.getTime() + 900_000);
      const right = (user: { email: string }) => limited.call('POST', '/api/sessions', { json: { email: user.email, password: PASSWORD } });
      // Per address: the third right password in the window signs in, the fourth is refused before any hash.
      for (let i = 0; i < 3; i += 1) expect((await right(ada)).status).toBe(201);
      const fourth = await right(ada);
      expect([fourth.status, fourth.body.error.code, fourth.body.accessToken]).toEqual([429, 'SIGN_IN_THROTTLED', undefined]);
      // Per client: two more for another address fill this client's five; the sixth is refused.
      for (let i = 0; i < 2; i += 1) expect((await right(bob)).status).toBe(201);
      expect((await right(bob)).status).toBe(429);
      // The window passes: both sign in again.
      clock = new Date(clock.getTime() + 900_000);
      expect((await right(ada)).status).toBe(201);
      expect((await right(bob)).status).toBe(201);
    } finally {
      await limited.close();
    }
  });

  it.skipIf(skip)('a sign-in deletes ended sessions, revoked and expired ones (issue 22 item 9)', async () => {
    const user = await newUser(app, 'Pruned');
    const cli = (await app.call('POST', '/api/sessions', { json: { email: user.email, password: PASSWORD, refreshTokenIn: 'body' } })).body;
    const other = (await app.call('POST', '/api/sessions', { json: { email: user.email, password: PASSWORD, refreshTokenIn: 'body' } })).body;
    expect((await app.call('POST', '/api/sessions/sign-out', { json: { refreshToken: cli.refreshToken } })).status).toBe(200);
    expect((await store.repo.findSession(cli.sessionId))?.revokedAt).toBeInstanceOf(Date);
    expect((await signIn(user.email, PASSWORD)).status).toBe(201);
    expect(await store.repo.findSession(cli.sessionId)).toBeUndefined();
    expect(await store.repo.findSession(other.sessionId)).toBeDefined();
    // Thirty idle days later (the default idle lifetime), the other one has expired: the next sign-in deletes it.
    clock = new Date(clock.getTime() + 31 * 86_400_000);
    expect((await signIn(user.email, PASSWORD)).status).toBe(201);
    expect(await store.repo.findSession(other.sessionId)).toBeUndefined();
  });

  it.skipIf(skip)('answers exactly 10 of 30 concurrent wrong sign-ins INVALID_CREDENTIALS and the rest 429', async () => {
    const user = await newUser(app, 'Target');
    const answers = await Promise.all(Array.from({ length: 30 }, () => signIn(user.email, WRONG)));
    const wrong = answers.filter((a) => a.status === 401);
    expect(wrong).toHaveLength(10);
    for (const a of wrong) expect(a.body.error.code).toBe('INVALID_CREDENTIALS');
    const refused = answers.filter((a) => a.status === 429);
    expect(refused).toHaveLength(20);
    for (const a of refused) refusedAlike(a);
    refusedAlike(await signIn(user.email.toUpperCase(), PASSWORD));
    // An address without an account gets the very same answers.
    const ghost = await Promise.all(Array.from({ length: 11 }, () => signIn('ghost@example.com', WRONG)));
    expect(ghost.filter((a) => a.status === 401)).toHaveLength(10);
    refusedAlike(ghost.find((a) => a.status === 429) as Answer);
  });

  it.skipIf(skip || engine.name === 'memory')('stores the normalised address keyed-hashed and the client address as given', async () => {
    await signIn('Mixed.Case@Example.COM', WRONG);
    const { rows } = await (store.db as SqlDb).query(`SELECT address_hash, client_ip FROM sign_in_failures WHERE failed_at = $1
      ORDER BY client_ip`, [clock]);
    const key = app.root.signInAddressKey();
    const expected = createHmac('sha256', key).update('mixed.case@example.com').digest('hex');
    // The failure, and the attempt every sign-in records under keys of its own (issue 22 item 9).
    const attempt = createHmac('sha256', key).update('attempt\0mixed.case@example.com').digest('hex');
    expect(rows).toEqual([{ address_hash: expected, client_ip: '127.0.0.1' }, { address_hash: attempt, client_ip: 'attempt:127.0.0.1' }]);
    // Not the plain SHA-256: a copy of the table alone confirms no guessed address.
    expect(expected).not.toBe(sha256('mixed.case@example.com'));
  });

  it.skipIf(skip)('honours X-Forwarded-For from a trusted proxy (IKI_TRUST_PROXY=loopback)', async () => {
    const proxied = await startApp({ repo: store.repo, now: () => clock, config: { trustProxy: ['loopback'] } });
    try {
      const via = (i: number) => proxied.call('POST', '/api/sessions',
        { json: { email: `proxied${i}@example.com`, password: WRONG }, headers: { 'x-forwarded-for': `198.51.100.${i % 2}` } });
      const answers: Answer[] = [];
      for (let i = 0; i < 101; i += 1) answers.push(await via(i));
      // Two clients behind the proxy, 50 failures each: the 101st attempt is the first refused.
      expect(answers.slice(0, 100).every((a) => a.status === 401)).toBe(true);
      refusedAlike(answers[100] as Answer);
    } finally {
      await proxied.close();
    }
  });

  it.skipIf(skip)('counts IPv6 clients by /64: fresh addresses of one subnet share a count', async () => {
    const proxied = await startApp({ repo: store.repo, now: () => clock, config: { trustProxy: ['loopback'] } });
    try {
      const answers: Answer[] = [];
      for (let i = 0; i < 51; i += 1) {
        answers.push(await proxied.call('POST', '/api/sessions', { json: { email: `v6-${i}@example.com`, password: WRONG },
          headers: { 'x-forwarded-for': `2001:db8:7:7::${(i + 1).toString(16)}` } }));
      }
      expect(answers.slice(0, 50).every((a) => a.status === 401)).toBe(true);
      refusedAlike(answers[50] as Answer);
      const other = await proxied.call('POST', '/api/sessions', { json: { email: 'v6-other@example.com', password: WRONG },
        headers: { 'x-forwarded-for': '2001:db8:7:8::1' } });
      expect(other.status).toBe(401);
    } finally {
      await proxied.close();
    }
  });

  it.skipIf(skip)('ignores X-Forwarded-For: the per-client limit holds for the TCP peer', async () => {
    const answers: Answer[] = [];
    for (let i = 0; i < 51; i += 1) {
      answers.push(await signIn(`spray${i}@example.com`, WRONG, { 'x-forwarded-for': `203.0.113.${i}` }));
    }
    expect(answers.slice(0, 50).every((a) => a.status === 401)).toBe(true);
    refusedAlike(answers[50] as Answer);
  });
});

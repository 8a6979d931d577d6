/**
 * Verification e-mail: resending the link and the mail limits shared by sign-up and resend, on
 * the in-memory fake, PGlite and PostgreSQL. A resend for an unverified account issues a new
 * link that replaces the old one; unknown and verified addresses get the same 202 and no mail.
 * Requests are counted per keyed address and per client over a sliding window; a full limit is
 * MAIL_THROTTLED with Retry-After, before any account is looked up or created; exactly `limit`
 * of many concurrent requests pass; the records hold no clear address and expired ones go.
 */
import { createHash, createHmac, randomBytes } from 'node:crypto';
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import type { MailLimits } from '../src/config.js';
import { ApiError } from '../src/errors.js';
import { AccountService } from '../src/services/accounts.js';
import { SessionService } from '../src/services/sessions.js';
import type { Mailer } from '../src/services/mailer.js';
import { PasswordHasher } from '../src/services/passwords.js';
import { TokenService } from '../src/services/tokens.js';
import { MemoryRepository } from '../src/storage/memory-repository.js';
import type { MailRequest } from '../src/storage/repository.js';
import type { SqlDb } from '../src/storage/sql-db.js';
import { postgresServer, repositoryEngines, type Store } from './helpers/databases.js';
import { captureLogger, newUser, signUpCookie, startApp, TEST_HASHING, type Answer, type LogLine, type TestApp } from './helpers/app.js';

const sha256 = (text: string) => createHash('sha256').update(text, 'utf8').digest('hex');
const T0 = new Date('2030-01-01T00:00:00.000Z');
const at = (seconds: number) => new Date(T0.getTime() + seconds * 1000);
const PASSWORD = 'correct horse battery';
/** The sign-up proof of the browser these sign-ups come from (issue 22 item 3). */
const BROWSER = 'proof-of-the-signing-up-browser';
const tokenOf = (link: string | undefined) => new URL(String(link)).searchParams.get('token') as string;

const engines = repositoryEngines;

const request = (address: string, clientIp: string, now: Date, limits: Partial<MailRequest> = {}): MailRequest =>
  ({ addressHash: sha256(address), clientIp, now, windowSeconds: 3600, perAddress: 3, perIp: 5, ...limits });

const account = (id: string, email: string) => ({ id, email, passwordHash: 'x', name: id, createdAt: T0 });

describe.each(engines)('mail requests and verification tokens in the repository on $name', (engine) => {
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

  it.skipIf(skip)('refuses at the address limit, frees a slot when the oldest request ages out, and counts an unlimited address', async () => {
    const { repo } = store;
    for (const t of [0, 10, 20]) expect(await repo.tryRecordMailRequest(request('a@example.com', `192.0.2.${t}`, at(t)))).toEqual({ kind: 'recorded' });
    expect(await repo.tryRecordMailRequest(request('a@example.com', '192.0.2.99', at(30))))
      .toEqual({ kind: 'throttled', scope: 'address', retryAt: at(3600) });
    // A sign-up (no address limit) still passes and is counted: at t = 3600 the request at 0 has
    // left the window but 10, 20 and 40 fill it, so the next slot frees at 10 + 3600.
    expect(await repo.tryRecordMailRequest(request('a@example.com', '192.0.2.99', at(40), { perAddress: Infinity })))
      .toEqual({ kind: 'recorded' });
    expect(await repo.tryRecordMailRequest(request('a@example.com', '192.0.2.98', at(3600))))
      .toEqual({ kind: 'throttled', scope: 'address', retryAt: at(3610) });
    expect(await repo.tryRecordMailRequest(request('a@example.com', '192.0.2.98', at(3610)))).toEqual({ kind: 'recorded' });
  });

  it.skipIf(skip)('refuses at the client limit across addresses and names the later retry when both are full', async () => {
    const { repo } = store;
    for (let i = 0; i < 5; i += 1) {
      expect((await repo.tryRecordMailRequest(request(`u${i}@example.com`, '2001:db8::1', at(i * 60)))).kind).toBe('recorded');
    }
    expect(await repo.tryRecordMailRequest(request('u9@example.com', '2001:db8::1', at(300), { perAddress: Infinity })))
      .toEqual({ kind: 'throttled', scope: 'ip', retryAt: at(3600) });
    for (const ip of ['2001:db8::2', '2001:db8::3', '2001:db8::4']) await repo.tryRecordMailRequest(request('z@example.com', ip, at(400)));
    // Both limits full: the client's frees at 3600, the address's at 4000; the later is told.
    expect(await repo.tryRecordMailRequest(request('z@example.com', '2001:db8::1', at(500))))
      .toEqual({ kind: 'throttled', scope: 'address', retryAt: at(4000) });
  });

  it.skipIf(skip)('records exactly the limit of 30 concurrent requests', async () => {
    const { repo } = store;
    const byAddress = await Promise.all(Array.from({ length: 30 }, (_, i) =>
      repo.tryRecordMailRequest(request('a@example.com', `198.51.100.${i}`, at(0), { perAddress: 3, perIp: 20 }))));
    expect(byAddress.filter((o) => o.kind === 'recorded')).toHaveLength(3);
    const byClient = await Promise.all(Array.from({ length: 30 }, (_, i) =>
      repo.tryRecordMailRequest(request(`c${i}@example.com`, '198.51.100.200', at(1), { perAddress: Infinity, perIp: 20 }))));
    expect(byClient.filter((o) => o.kind === 'recorded')).toHaveLength(20);
    expect(byClient.filter((o) => o.kind === 'throttled')).toHaveLength(10);
  });

  it.skipIf(skip || engine.name === 'memory')('stores the address only as the given hash and sweeps expired requests', async () => {
    const { repo } = store;
    const db = store.db as SqlDb;
    await repo.tryRecordMailRequest(request('secret.person@example.com', '192.0.2.7', at(0)));
    const { rows } = await db.query('SELECT * FROM mail_requests');
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ address_hash: sha256('secret.person@example.com'), client_ip: '192.0.2.7' });
    expect(JSON.stringify(rows)).not.toContain('secret.person');
    expect(Object.keys(rows[0] as object).sort()).toEqual(['address_hash', 'client_ip', 'id', 'requested_at']);
    const wide = { perAddress: 10_000, perIp: 10_000 };
    for (let i = 0; i < 249; i += 1) await repo.tryRecordMailRequest(request(`old${i}@example.com`, `10.0.${i >> 8}.${i & 255}`, at(1), wide));
    const count = async () => Number((await db.query('SELECT count(*)::int AS n FROM mail_requests')).rows[0]?.['n']);
    expect(await count()).toBe(250);
    // Each new request deletes at most 100 expired ones, oldest first; sign-in failures are untouched.
    await repo.tryRecordSignInFailure({ ...request('x@example.com', '192.0.2.8', at(0)), windowSeconds: 900 });
    await repo.tryRecordMailRequest(request('new1@example.com', '192.0.2.8', at(4000), wide));
    expect(await count()).toBe(151);
    await repo.tryRecordMailRequest(request('new2@example.com', '192.0.2.8', at(4000), wide));
    await repo.tryRecordMailRequest(request('new3@example.com', '192.0.2.8', at(4000), wide));
    expect(await count()).toBe(3);
    expect((await db.query('SELECT * FROM sign_in_failures')).rows).toHaveLength(1);
  });

  it.skipIf(skip)('keeps one outstanding verification token per account, the newest', async () => {
    const { repo } = store;
    await repo.createAccount(account('acct_a', 'a@example.com'));
    await repo.createAccount(account('acct_b', 'b@example.com'));
    await repo.saveVerificationToken('a1', 'acct_a', at(3600));
    await repo.saveVerificationToken('b1', 'acct_b', at(3600));
    await repo.saveVerificationToken('a2', 'acct_a', at(3600));
    expect(await repo.consumeVerificationToken('a1', at(1))).toBeUndefined();
    expect(await repo.consumeVerificationToken('b1', at(1))).toBe('acct_b');
    expect(await repo.consumeVerificationToken('a2', at(1))).toBe('acct_a');
    // Concurrent replacements leave exactly one of them.
    await repo.createAccount(account('acct_c', 'c@example.com'));
    await Promise.all(Array.from({ length: 10 }, (_, i) => repo.saveVerificationToken(`c${i}`, 'acct_c', at(3600))));
    const usable = [];
    for (let i = 0; i < 10; i += 1) if (await repo.consumeVerificationToken(`c${i}`, at(1)) !== undefined) usable.push(i);
    expect(usable).toHaveLength(1);
  });
});

describe('resend and mail limits in the account service', () => {
  let now = T0;
  const limits: MailLimits = { perAddress: 3, perIp: 20, windowSeconds: 3600 };

  async function world(overrides: Partial<MailLimits> = {}, mailer?: Mailer) {
    const repo = new MemoryRepository();
    const hasher = new PasswordHasher(TEST_HASHING);
    const tokens = new TokenService({ issuer: 'http://iki.test', ttlSeconds: 900, seed: randomBytes(32), oidc: undefined, now: () => now });
    const mails: { to: string; link: string }[] = [];
    const logs: LogLine[] = [];
    const accounts = new AccountService({ repo, hasher, tokens, mailsTotal: 1000,
    sessions: new SessionService({ repo, tokens, now: () => now, lifetime: { idleSeconds: 86400, maxSeconds: 86400 * 30 }, reuseGraceSeconds: 10 }), now: () => now, publicUrl: 'http://iki.test',
      verificationTtlSeconds: 24 * 3600, signInLimits: { perAddress: 10, perIp: 50, windowSeconds: 900 },
      addressKey: randomBytes(32), mailLimits: { ...limits, ...overrides }, mailAddressKey: randomBytes(32),
      logger: captureLogger(logs), mailer: mailer ?? { async sendVerification(to, link) { mails.push({ to, link }); } } });
    const signUp = (email: string, ip = '192.0.2.1') => accounts.signUp({ email, password: PASSWORD, name: 'Ada' }, ip, BROWSER);
    const resend = async (email: string, ip = '192.0.2.1') => {
      await accounts.resendVerification(email, ip);
      await accounts.settled();
    };
    return { repo, hasher, accounts, mails, logs, signUp, resend };
  }

  const outcome = async (p: Promise<unknown>) => p.then(() => ({ code: 'resolved' }), (e: unknown) => (e instanceof ApiError
    ? { code: e.code, details: e.details, headers: e.headers } : { code: String(e) }));

  beforeEach(() => {
    now = T0;
  });

  it('sends an unverified account a new link that verifies, and the old link no longer works', async () => {
    const w = await world();
    await w.signUp('ada@example.com');
    now = at(60);
    await w.resend(' ADA@Example.com ');
    expect(w.mails.map((m) => m.to)).toEqual(['ada@example.com', 'ada@example.com']);
    const [first, second] = w.mails.map((m) => tokenOf(m.link));
    expect(second).not.toBe(first);
    expect(await outcome(w.accounts.verifyEmail(first as string, { proof: BROWSER }))).toMatchObject({ code: 'VERIFICATION_INVALID' });
    expect((await w.accounts.verifyEmail(second as string, { proof: BROWSER })).emailVerified).toBe(true);
  });

  it('answers an unknown, a verified and an external address alike, with no mail and the same work', async () => {
    const w = await world();
    await w.signUp('done@example.com');
    await w.accounts.verifyEmail(tokenOf(w.mails[0]?.link), { proof: BROWSER });
    await w.repo.upsertExternalAccount({ issuer: 'https://idp', subject: 's', email: 'ext@example.com', emailVerified: false,
      name: 'Ext' }, 'acct_ext', T0);
    const lookUp = vi.spyOn(w.repo, 'findLocalAccountByEmail');
    const save = vi.spyOn(w.repo, 'saveVerificationToken');
    for (const email of ['nobody@example.com', 'done@example.com', 'ext@example.com']) {
      expect(await w.accounts.resendVerification(email, '192.0.2.1')).toBeUndefined();
    }
    await w.accounts.settled();
    expect(w.mails).toHaveLength(1);
    expect(lookUp).toHaveBeenCalledTimes(3);
    expect(save).not.toHaveBeenCalled();
  });

  it('allows 3 mails per address in the window, sign-up included, and frees a slot as the oldest ages out', async () => {
    const w = await world();
    await w.signUp('ada@example.com');
    now = at(600);
    await w.resend('ada@example.com');
    now = at(1200);
    await w.resend('ada@example.com');
    now = new Date(at(1800).getTime() + 500);
    // The sign-up at t = 0 leaves the window at t = 3600: 1799.5 s from now, told as 1800.
    expect(await outcome(w.resend('ada@example.com'))).toEqual({ code: 'MAIL_THROTTLED',
      details: { retryAfterSeconds: 1800 }, headers: { 'Retry-After': '1800' } });
    now = new Date(at(3600).getTime() - 1);
    expect(await outcome(w.resend('ada@example.com', '192.0.2.77'))).toMatchObject({ headers: { 'Retry-After': '1' } });
    expect(w.mails).toHaveLength(3);
    now = at(3600);
    await w.resend('ada@example.com');
    expect(w.mails).toHaveLength(4);
    expect(await outcome(w.resend('ada@example.com'))).toMatchObject({ code: 'MAIL_THROTTLED', headers: { 'Retry-After': '600' } });
  });

  it('counts an unknown address like a known one, and never keeps its owner from signing up', async () => {
    const w = await world();
    const seen: unknown[] = [];
    await w.signUp('ada@example.com');
    await w.resend('ada@example.com');
    await w.resend('ada@example.com');
    seen.push(await outcome(w.resend('ada@example.com')));
    for (let i = 0; i < 3; i += 1) await w.resend('later@example.com');
    seen.push(await outcome(w.resend('later@example.com')));
    expect(seen[0]).toMatchObject({ code: 'MAIL_THROTTLED', headers: { 'Retry-After': '3600' } });
    expect(seen[1]).toEqual(seen[0]);
    // The address's allowance is spent by strangers, yet its owner's sign-up goes through and mails.
    expect(await w.signUp('later@example.com')).toEqual({ status: 'verification-sent' });
    expect(w.mails.map((m) => m.to)).toEqual(['ada@example.com', 'ada@example.com', 'ada@example.com', 'later@example.com']);
  });

  it('allows 20 sign-ups and resends per client, then refuses a sign-up before any hash or account', async () => {
    const w = await world();
    for (let i = 0; i < 10; i += 1) await w.signUp(`user${i}@example.com`, '203.0.113.5');
    for (let i = 0; i < 10; i += 1) await w.resend(`user${i}@example.com`, '203.0.113.5');
    const hash = vi.spyOn(w.hasher, 'hash');
    const create = vi.spyOn(w.repo, 'savePendingSignUp');
    expect(await outcome(w.signUp('user20@example.com', '203.0.113.5'))).toEqual({ code: 'MAIL_THROTTLED',
      details: { retryAfterSeconds: 3600 }, headers: { 'Retry-After': '3600' } });
    expect(await outcome(w.resend('user0@example.com', '203.0.113.5'))).toMatchObject({ code: 'MAIL_THROTTLED' });
    expect(hash).not.toHaveBeenCalled();
    expect(create).not.toHaveBeenCalled();
    expect(await w.repo.findAccountByEmail('user20@example.com')).toBeUndefined();
    expect(w.mails).toHaveLength(20);
    expect(await w.signUp('user20@example.com', '203.0.113.6')).toEqual({ status: 'verification-sent' });
  });

  it('counts a sign-up of a taken address, which answers alike and sends nothing', async () => {
    const w = await world({ perIp: 2 });
    await w.signUp('ada@example.com');
    await w.accounts.verifyEmail(tokenOf(w.mails[0]?.link), { proof: BROWSER });
    expect(await outcome(w.signUp('ada@example.com'))).toEqual({ code: 'resolved' });
    expect(await outcome(w.signUp('bob@example.com'))).toMatchObject({ code: 'MAIL_THROTTLED' });
    expect(w.mails).toHaveLength(1);
  });

  it('answers before the message goes out, and logs a failed send without the link', async () => {
    let release: () => void = () => {};
    const gate = new Promise<void>((resolve) => { release = resolve; });
    let calls = 0;
    const w = await world({}, { async sendVerification() {
      calls += 1;
      if (calls === 1) return;
      await gate;
      throw new Error('mail server gone');
    } });
    await w.signUp('ada@example.com');
    await w.accounts.resendVerification('ada@example.com', '192.0.2.1');
    const settled = w.accounts.settled();
    release();
    await settled;
    expect(calls).toBe(2);
    const failure = w.logs.find((l) => l.level === 'error');
    expect(failure?.message).toBe('e-mail not sent');
    expect(failure?.fields['kind']).toBe('resend');
    expect(JSON.stringify(failure?.fields)).not.toContain('token=');
  });
});

describe.each(engines)('resend and mail limits through HTTP on $name', (engine) => {
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
    // Every test starts a day later, so no request of an earlier test (all from 127.0.0.1) counts.
    clock = new Date(clock.getTime() + 86_400_000);
  });

  const resend = (email: string) => app.call('POST', '/api/accounts/verification', { json: { email } });
  const linksTo = async (email: string) => {
    await app.services.accounts.settled();
    return app.logs.filter((l) => l.fields['to'] === email).map((l) => String(l.fields['link']));
  };
  const accepted = (answer: Answer) => {
    expect(answer.status).toBe(202);
    expect(answer.body).toEqual({ status: 'sent-if-unverified' });
  };
  const throttled = (answer: Answer, seconds: number) => {
    expect(answer.status).toBe(429);
    expect(answer.headers.get('retry-after')).toBe(String(seconds));
    expect(answer.body).toEqual({ error: { code: 'MAIL_THROTTLED', message: 'too many verification e-mails requested; try again later',
      details: { retryAfterSeconds: seconds }, requestId: answer.headers.get('x-request-id') } });
  };

  it.skipIf(skip)('answers 202 alike for unverified, verified and unknown addresses; only the first gets a new link', async () => {
    const waiting = `wait-${randomBytes(3).toString('hex')}@example.com`;
    const signedUp = await app.call('POST', '/api/accounts', { json: { email: waiting, password: PASSWORD, name: 'Wait' } });
    expect(signedUp.status).toBe(202);
    const verified = await newUser(app, 'Done');
    const answers = [await resend(waiting.toUpperCase()), await resend(verified.email), await resend('nobody@example.com')];
    for (const a of answers) accepted(a);
    const [old, fresh] = await linksTo(waiting);
    expect(fresh).toMatch(/^http:\/\/iki\.test\/verify-email\?token=[A-Za-z0-9_-]{43}$/);
    expect(await linksTo(verified.email)).toHaveLength(1);
    expect(await linksTo('nobody@example.com')).toHaveLength(0);
    const stale = await app.call('POST', '/api/accounts/verify', { json: { token: tokenOf(old) } });
    expect(stale.body.error.code).toBe('VERIFICATION_INVALID');
    const ok = await app.call('POST', '/api/accounts/verify', { json: { token: tokenOf(fresh) }, headers: { cookie: signUpCookie(signedUp) } });
    expect(ok.body).toMatchObject({ email: waiting, emailVerified: true });
    accepted(await resend(waiting));
    expect(await linksTo(waiting)).toHaveLength(2);
  });

  it.skipIf(skip)('lets exactly 3 of 30 concurrent resends for one address through, known or not', async () => {
    const email = `many-${randomBytes(3).toString('hex')}@example.com`;
    expect((await app.call('POST', '/api/accounts', { json: { email, password: PASSWORD, name: 'Many' } })).status).toBe(202);
    const answers = await Promise.all(Array.from({ length: 30 }, () => resend(email)));
    expect(answers.filter((a) => a.status === 202)).toHaveLength(2);
    for (const a of answers.filter((x) => x.status !== 202)) throttled(a, 3600);
    expect(await linksTo(email)).toHaveLength(3);
    const ghost = await Promise.all(Array.from({ length: 30 }, () => resend('ghost@example.com')));
    expect(ghost.filter((a) => a.status === 202)).toHaveLength(3);
    throttled(ghost.find((a) => a.status === 429) as Answer, 3600);
  });

  it.skipIf(skip)('refuses sign-ups and resends from one client past 20 with 429, before the account exists', async () => {
    const answers: Answer[] = [];
    for (let i = 0; i < 10; i += 1) answers.push(await resend(`spray${i}@example.com`));
    const emails = Array.from({ length: 15 }, (_, i) => `burst${i}-${randomBytes(2).toString('hex')}@example.com`);
    const signUps = await Promise.all(emails.map((email) => app.call('POST', '/api/accounts',
      { json: { email, password: PASSWORD, name: 'Burst' } })));
    expect(signUps.filter((a) => a.status === 202)).toHaveLength(10);
    const refused = emails.filter((_, i) => signUps[i]?.status === 429);
    expect(refused).toHaveLength(5);
    for (const a of signUps.filter((x) => x.status === 429)) throttled(a, 3600);
    for (const email of refused) expect(await store.repo.findAccountByEmail(email), email).toBeUndefined();
    throttled(await resend('spray0@example.com'), 3600);
    throttled(await resend('someone-else@example.com'), 3600);
  });

  it.skipIf(skip || engine.name === 'memory')('stores the normalised address keyed-hashed under its own key', async () => {
    await resend('Mixed.Case@Example.COM');
    // The global cap's row ('(all)') is the second; this one is the request's own.
    const { rows } = await (store.db as SqlDb).query("SELECT * FROM mail_requests WHERE requested_at = $1 AND client_ip <> '(all)'", [clock]);
    const expected = createHmac('sha256', app.root.mailAddressKey()).update('mixed.case@example.com').digest('hex');
    expect(rows).toEqual([{ id: expect.anything(), address_hash: expected, client_ip: '127.0.0.1', requested_at: clock }]);
    expect(JSON.stringify(rows).toLowerCase()).not.toContain('mixed.case');
    // Neither the plain SHA-256 nor the sign-in records' value for the same address.
    expect(expected).not.toBe(sha256('mixed.case@example.com'));
    expect(expected).not.toBe(createHmac('sha256', app.root.signInAddressKey()).update('mixed.case@example.com').digest('hex'));
  });
});

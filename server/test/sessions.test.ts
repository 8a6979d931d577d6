/**
 * Sessions, password change and reset (issue 14 items 1-2) through the real app on PGlite and
 * PostgreSQL: the refresh cookie's attributes and its CSRF guard, refresh, sign-out and "sign
 * out everywhere" ending access tokens at once, the session list, password change with the old
 * password, and reset by a single-use, expiring, rate-limited link that answers alike for every
 * address and ends every session; a password change ends an outstanding reset link (issue 22
 * item 11) and a sign-out form from another site clears no cookie (item 7).
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { linkToken, newUser, startApp, type Answer, type TestApp, type User } from './helpers/app.js';
import { postgresServer, repositoryEngines, type Store } from './helpers/databases.js';

const PASSWORD = 'correct horse battery';
const engines = repositoryEngines.filter((e) => e.name !== 'memory');

describe.each(engines)('sessions on $name', (engine) => {
  const skip = engine.name === 'postgres' && postgresServer() === '';
  let app: TestApp;
  let store: Store;
  let clock = new Date('2030-01-01T00:00:00Z');

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
    clock = new Date(clock.getTime() + 86_400_000);
  });

  const cookieOf = (answer: Answer): string => {
    const set = answer.headers.getSetCookie().find((c) => c.startsWith('iki_refresh=')) ?? '';
    return set.split(';')[0] ?? '';
  };
  const browserSignIn = (user: User) => app.call('POST', '/api/sessions', {
    json: { email: user.email, password: PASSWORD }, headers: { 'user-agent': 'Chromium on a test' } });
  const refresh = (cookie: string, header = true) => app.call('POST', '/api/sessions/refresh', {
    headers: { cookie, ...(header ? { 'x-iki-session': '1' } : {}) } });

  it.skipIf(skip)('a browser sign-in sets an HttpOnly, Secure, SameSite=Strict cookie and never shows the refresh token', async () => {
    const user = await newUser(app, 'Cookie');
    const answer = await browserSignIn(user);
    expect(answer.status).toBe(201);
    expect(answer.body.refreshToken).toBeUndefined();
    expect(answer.body).toMatchObject({ tokenType: 'Bearer', expiresIn: 900, accountId: user.accountId });
    const [set, hint] = answer.headers.getSetCookie();
    expect(set).toMatch(/^iki_refresh=[A-Za-z0-9_-]{43}; Path=\/api\/sessions; Max-Age=2592000; HttpOnly; Secure; SameSite=Strict$/);
    // The companion cookie the pages read: no secret, the same lifetime.
    expect(hint).toBe('iki_session=1; Path=/; Max-Age=2592000; Secure; SameSite=Strict');
    const again = await refresh(cookieOf(answer));
    expect(again.status).toBe(200);
    expect(again.body).toMatchObject({ accountId: user.accountId, email: user.email, emailVerified: true, sessionId: answer.body.sessionId });
    expect((await app.call('GET', '/api/me', { token: again.body.accessToken })).status).toBe(200);
  });

  it.skipIf(skip)('the cookie alone, without X-Iki-Session (a cross-site request), refreshes and ends nothing', async () => {
    const user = await newUser(app, 'Csrf');
    const signedIn = await browserSignIn(user);
    const cookie = cookieOf(signedIn);
    const before = await app.call('GET', '/api/sessions', { token: signedIn.body.accessToken });
    clock = new Date(clock.getTime() + 60_000);
    const forged = await refresh(cookie, false);
    expect([forged.status, forged.body.error.code]).toEqual([401, 'UNAUTHENTICATED']);
    expect(forged.body.accessToken).toBeUndefined();
    const out = await app.call('POST', '/api/sessions/sign-out', { headers: { cookie } });
    expect(out.status).toBe(200);
    // Issue 22 item 7: nor does it clear the cookies (a page would look signed out while the session lives).
    expect(out.headers.getSetCookie()).toEqual([]);
    // Nothing changed: the session is still there, unused, and still refreshes with the header.
    expect(await app.call('GET', '/api/sessions', { token: signedIn.body.accessToken }).then((a) => a.body)).toEqual(before.body);
    expect((await refresh(cookie)).status).toBe(200);
  });

  it.skipIf(skip)('sign-out ends the session on the service: its access token and its refresh token stop at once', async () => {
    const user = await newUser(app, 'Out');
    const signedIn = await browserSignIn(user);
    const cookie = cookieOf(signedIn);
    const out = await app.call('POST', '/api/sessions/sign-out', { headers: { cookie, 'x-iki-session': '1' } });
    expect(out.status).toBe(200);
    const [cleared, hint] = out.headers.getSetCookie();
    expect(cleared).toMatch(/^iki_refresh=; Path=\/api\/sessions; Max-Age=0;/);
    expect(hint).toBe('iki_session=; Path=/; Max-Age=0; Secure; SameSite=Strict');
    expect((await app.call('GET', '/api/me', { token: signedIn.body.accessToken })).status).toBe(401);
    expect((await refresh(cookie)).status).toBe(401);
    // The other session of the account (the helper's) goes on.
    expect((await app.call('GET', '/api/me', { token: user.token })).status).toBe(200);
  });

  it.skipIf(skip)('lists sessions with device and last use; one ends another; sign out everywhere ends all', async () => {
    const user = await newUser(app, 'Many');
    const browser = await browserSignIn(user);
    clock = new Date(clock.getTime() + 120_000);
    const cli = await app.call('POST', '/api/sessions', { json: { email: user.email, password: PASSWORD, device: 'iki CLI on box', refreshTokenIn: 'body' } });
    expect(cli.body.refreshToken).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(cli.headers.get('set-cookie')).toBeNull();
    clock = new Date(clock.getTime() + 60_000);
    expect((await app.call('POST', '/api/sessions/refresh', { json: { refreshToken: cli.body.refreshToken } })).status).toBe(200);
    const list = await app.call('GET', '/api/sessions', { token: browser.body.accessToken });
    const sessions = list.body.sessions as { sessionId: string; device: string; lastUsedAt: string; current: boolean }[];
    // Most recently used first; the helper's sign-in and the browser's were at one instant.
    expect(sessions[0]?.device).toBe('iki CLI on box');
    expect(sessions.map((s) => s.device).sort()).toEqual(['Chromium on a test', 'iki CLI on box', 'node']);
    // A browser's User-Agent is listed as what a person recognises.
    const firefox = await app.call('POST', '/api/sessions', { json: { email: user.email, password: PASSWORD },
      headers: { 'user-agent': 'Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0' } });
    const listed = await app.call('GET', '/api/sessions', { token: firefox.body.accessToken });
    expect(listed.body.sessions.find((s: { current: boolean }) => s.current).device).toBe('Firefox on Linux');
    await app.call('POST', `/api/sessions/${firefox.body.sessionId}/revoke`, { token: firefox.body.accessToken });
    expect(sessions[0]?.lastUsedAt).toBe(clock.toISOString());
    expect(sessions.find((s) => s.current)?.sessionId).toBe(browser.body.sessionId);
    // Another account cannot end this one's session, and learns nothing from trying.
    const other = await newUser(app, 'Other');
    const foreign = await app.call('POST', `/api/sessions/${cli.body.sessionId}/revoke`, { token: other.token });
    expect([foreign.status, foreign.body.error.code]).toEqual([404, 'SESSION_NOT_FOUND']);
    expect((await app.call('GET', '/api/me', { token: cli.body.accessToken })).status).toBe(200);
    expect((await app.call('POST', `/api/sessions/${cli.body.sessionId}/revoke`, { token: browser.body.accessToken })).status).toBe(200);
    expect((await app.call('GET', '/api/me', { token: cli.body.accessToken })).status).toBe(401);
    const all = await app.call('POST', '/api/sessions/revoke-all', { token: browser.body.accessToken });
    expect(all.body).toEqual({ revoked: 2 });
    for (const token of [browser.body.accessToken, user.token]) expect((await app.call('GET', '/api/me', { token })).status).toBe(401);
    expect((await refresh(cookieOf(browser))).status).toBe(401);
  });

  it.skipIf(skip)('a session ends when unused for its idle time', async () => {
    const user = await newUser(app, 'Idle');
    const cli = await app.call('POST', '/api/sessions', { json: { email: user.email, password: PASSWORD, refreshTokenIn: 'body' } });
    clock = new Date(clock.getTime() + 30 * 86_400_000 + 1000);
    expect((await app.call('POST', '/api/sessions/refresh', { json: { refreshToken: cli.body.refreshToken } })).status).toBe(401);
  });

  it.skipIf(skip)('a password change ends an outstanding reset link (issue 22 item 11)', async () => {
    const user = await newUser(app, 'Reset Then Change');
    // Someone with the mailbox asked for a reset link; the owner changes the password meanwhile.
    expect((await app.call('POST', '/api/accounts/password-reset', { json: { email: user.email } })).status).toBe(202);
    await app.services.accounts.settled();
    const token = linkToken(app.logs, user.email);
    const changed = await app.call('POST', '/api/me/password', { token: user.token, json: { currentPassword: PASSWORD, newPassword: 'changed password 2' } });
    expect(changed.status).toBe(200);
    const late = await app.call('POST', '/api/accounts/password-reset/complete', { json: { token, password: 'reset after change 3' } });
    expect([late.status, late.body.error.code]).toEqual([400, 'VERIFICATION_INVALID']);
    expect((await app.call('POST', '/api/sessions', { json: { email: user.email, password: 'changed password 2' } })).status).toBe(201);
    expect((await app.call('POST', '/api/sessions', { json: { email: user.email, password: 'reset after change 3' } })).status).toBe(401);
  });

  it.skipIf(skip)('a password change needs the current password and ends every other session', async () => {
    const user = await newUser(app, 'Change');
    const other = await browserSignIn(user);
    const wrong = await app.call('POST', '/api/me/password', { token: user.token, json: { currentPassword: 'not it at all', newPassword: 'brand new password 1' } });
    expect([wrong.status, wrong.body.error.code]).toEqual([401, 'INVALID_CREDENTIALS']);
    expect((await app.call('GET', '/api/me', { token: other.body.accessToken })).status).toBe(200);
    expect((await app.call('POST', '/api/sessions', { json: { email: user.email, password: PASSWORD } })).status).toBe(201);
    const changed = await app.call('POST', '/api/me/password', { token: user.token, json: { currentPassword: PASSWORD, newPassword: 'brand new password 1' } });
    expect(changed.body).toEqual({ status: 'password-changed' });
    expect((await app.call('GET', '/api/me', { token: user.token })).status).toBe(200);
    expect((await app.call('GET', '/api/me', { token: other.body.accessToken })).status).toBe(401);
    expect((await app.call('POST', '/api/sessions', { json: { email: user.email, password: PASSWORD } })).status).toBe(401);
    expect((await app.call('POST', '/api/sessions', { json: { email: user.email, password: 'brand new password 1' } })).status).toBe(201);
  });

  it.skipIf(skip)('reset: same answer for every address; the mailed link works once, sets the password and ends every session', async () => {
    const user = await newUser(app, 'Reset');
    const ask = (email: string) => app.call('POST', '/api/accounts/password-reset', { json: { email } });
    const answers = [await ask(user.email), await ask(`nobody-${randomBytes(3).toString('hex')}@example.com`)];
    for (const a of answers) expect([a.status, a.body]).toEqual([202, { status: 'sent-if-account' }]);
    await app.services.accounts.settled();
    const line = app.logs.filter((l) => l.fields['to'] === user.email).at(-1);
    expect(String(line?.fields['link'])).toMatch(/^http:\/\/iki\.test\/reset-password\?token=[A-Za-z0-9_-]{43}$/);
    const token = linkToken(app.logs, user.email);
    const complete = (password: string, t = token) => app.call('POST', '/api/accounts/password-reset/complete', { json: { token: t, password } });
    expect((await complete('reset password 4567')).body).toEqual({ status: 'password-changed' });
    expect((await app.call('GET', '/api/me', { token: user.token })).status).toBe(401);
    expect((await app.call('POST', '/api/sessions', { json: { email: user.email, password: 'reset password 4567' } })).status).toBe(201);
    // Single use: the same link again is refused and changes nothing.
    const again = await complete('attacker password 1');
    expect([again.status, again.body.error.code]).toEqual([400, 'VERIFICATION_INVALID']);
    expect((await app.call('POST', '/api/sessions', { json: { email: user.email, password: 'reset password 4567' } })).status).toBe(201);
  });

  it.skipIf(skip)('reset: an expired link is refused; requests are limited like verification mail', async () => {
    const user = await newUser(app, 'Late');
    const ask = () => app.call('POST', '/api/accounts/password-reset', { json: { email: user.email } });
    expect((await ask()).status).toBe(202);
    await app.services.accounts.settled();
    const token = linkToken(app.logs, user.email);
    clock = new Date(clock.getTime() + 3600_000 + 1000);
    const late = await app.call('POST', '/api/accounts/password-reset/complete', { json: { token, password: 'too late password' } });
    expect(late.body.error.code).toBe('VERIFICATION_INVALID');
    expect((await app.call('POST', '/api/sessions', { json: { email: user.email, password: PASSWORD } })).status).toBe(201);
    // Three mail requests per address per hour: the fourth is refused with Retry-After.
    await ask();
    await ask();
    await ask();
    const refused = await ask();
    expect([refused.status, refused.body.error.code]).toEqual([429, 'MAIL_THROTTLED']);
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
  });
});

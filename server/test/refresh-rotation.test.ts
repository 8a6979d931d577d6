/**
 * Issue 22 item 8 through the real app on memory, PGlite and PostgreSQL: every refresh replaces
 * the refresh token, and a replaced token used again (a stolen copy, RFC 9700 §4.14.2) ends the
 * whole session: the thief's copy, the owner's newest token and every access token of it. A
 * replaced token used within the grace period (tabs refreshing at once) refreshes without a new
 * token and ends nothing; the grace is checked at its limit and just past it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newUser, startApp, type Answer, type TestApp, type User } from './helpers/app.js';
import { postgresServer, repositoryEngines, type Store } from './helpers/databases.js';

const PASSWORD = 'correct horse battery';
const GRACE_SECONDS = 10;

describe.each(repositoryEngines)('refresh-token rotation on $name', (engine) => {
  const skip = engine.name === 'postgres' && postgresServer() === '';
  let app: TestApp;
  let store: Store;
  let clock = new Date('2030-01-01T00:00:00Z');
  const tick = (seconds: number) => { clock = new Date(clock.getTime() + seconds * 1000); };

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

  const cliSignIn = async (user: User) => (await app.call('POST', '/api/sessions', {
    json: { email: user.email, password: PASSWORD, refreshTokenIn: 'body' } })).body;
  const refresh = (refreshToken: string) => app.call('POST', '/api/sessions/refresh', { json: { refreshToken } });
  const me = async (token: string) => (await app.call('GET', '/api/me', { token })).status;
  const cookieOf = (answer: Answer) => (answer.headers.getSetCookie().find((c) => c.startsWith('iki_refresh=')) ?? '').split(';')[0] ?? '';

  it.skipIf(skip)('each refresh gives a new refresh token; the old one, used again, ends the whole session', async () => {
    const user = await newUser(app, 'Rotate');
    const signedIn = await cliSignIn(user);
    tick(60);
    const first = await refresh(signedIn.refreshToken);
    expect(first.status).toBe(200);
    expect(first.body.refreshToken).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(first.body.refreshToken).not.toBe(signedIn.refreshToken);
    tick(60);
    const second = await refresh(first.body.refreshToken);
    expect(second.body.refreshToken).not.toBe(first.body.refreshToken);
    // The attack: a copy of the first token is replayed after its owner moved on.
    tick(60);
    const replay = await refresh(signedIn.refreshToken);
    expect([replay.status, replay.body.error.code]).toEqual([401, 'UNAUTHENTICATED']);
    expect(replay.body.accessToken).toBeUndefined();
    // The whole family has ended: the newest token and every access token of the session.
    expect((await refresh(second.body.refreshToken)).status).toBe(401);
    for (const token of [signedIn.accessToken, first.body.accessToken, second.body.accessToken]) expect(await me(token)).toBe(401);
    // The account's other session (the helper's) goes on.
    expect(await me(user.token)).toBe(200);
  });

  it.skipIf(skip)('a replaced token within the grace refreshes without a new token; at the grace\'s end it ends the session', async () => {
    const user = await newUser(app, 'Tabs');
    const signedIn = await cliSignIn(user);
    const rotated = await refresh(signedIn.refreshToken);
    // A second tab with the same (now replaced) token, just before the grace ends.
    tick(GRACE_SECONDS - 1);
    const late = await refresh(signedIn.refreshToken);
    expect(late.status).toBe(200);
    expect(late.body.refreshToken).toBeUndefined();
    expect(await me(late.body.accessToken)).toBe(200);
    expect((await refresh(rotated.body.refreshToken)).status).toBe(200);
    // Another session: the same replay at exactly the grace's end is reuse.
    const other = await cliSignIn(user);
    const next = await refresh(other.refreshToken);
    tick(GRACE_SECONDS);
    expect((await refresh(other.refreshToken)).status).toBe(401);
    expect((await refresh(next.body.refreshToken)).status).toBe(401);
  });

  it.skipIf(skip)('a browser\'s cookie is replaced on refresh; a replayed old cookie ends the session and clears the cookie', async () => {
    const user = await newUser(app, 'Cookie Rotate');
    const signedIn = await app.call('POST', '/api/sessions', { json: { email: user.email, password: PASSWORD } });
    const old = cookieOf(signedIn);
    const refreshed = await app.call('POST', '/api/sessions/refresh', { headers: { cookie: old, 'x-iki-session': '1' } });
    const fresh = cookieOf(refreshed);
    expect(fresh).toMatch(/^iki_refresh=[A-Za-z0-9_-]{43}$/);
    expect(fresh).not.toBe(old);
    expect(refreshed.body.refreshToken).toBeUndefined();
    tick(GRACE_SECONDS + 1);
    const replay = await app.call('POST', '/api/sessions/refresh', { headers: { cookie: old, 'x-iki-session': '1' } });
    expect(replay.status).toBe(401);
    expect(replay.headers.getSetCookie()[0]).toMatch(/^iki_refresh=; Path=\/api\/sessions; Max-Age=0;/);
    expect((await app.call('POST', '/api/sessions/refresh', { headers: { cookie: fresh, 'x-iki-session': '1' } })).status).toBe(401);
  });
});

/**
 * Session routes (issue 14 item 1): sign in, refresh, sign out, list and revoke sessions.
 *
 * Browsers get the refresh token as a cookie `iki_refresh` with `HttpOnly; Secure;
 * SameSite=Strict; Path=/api/sessions`: page scripts never read it, every tab of the origin
 * shares it, and the browser sends it only to the refresh and sign-out routes. Those routes
 * act on the cookie only when the request also carries `X-Iki-Session: 1`, a header no other
 * site can make a browser send here (it needs a CORS preflight this service never grants), so
 * with SameSite=Strict a cross-site page can neither refresh nor end a session (CSRF). Programs
 * ask for the token in the body (`refreshTokenIn: "body"`) and send it back in the body.
 */
import type { Request, Response } from 'express';
import { ApiError } from '../errors.js';
import type { AccountService } from '../services/accounts.js';
import type { OpenedSession, RefreshedSession, SessionService } from '../services/sessions.js';
import { refreshBody, signInBody, type RefreshInput, type SignInInput } from '../schemas/requests.js';
import { validate } from '../schemas/validate.js';
import { clientIp, cookieValue } from './accounts.js';
import { callerOf, param, readJson, requireJson, sessionOf, type RouteDef } from './http.js';

/** The refresh cookie's name. */
export const REFRESH_COOKIE = 'iki_refresh';
/**
 * A companion cookie that only says "this browser may hold a session" (value `1`, no secret),
 * readable by the pages so that a signed-out page does not ask for a refresh it cannot get
 * (each refused probe is a 401 in the browser's console). It follows the refresh cookie: set
 * with it, for as long, and cleared with it. It grants nothing; the refresh cookie decides.
 */
export const SESSION_HINT_COOKIE = 'iki_session';
/** The header that lets a request act on the refresh cookie. */
export const SESSION_HEADER = 'x-iki-session';
const COOKIE_PATH = '/api/sessions';
const SESSION_ID = /^[A-Za-z0-9_-]{16}$/;

function setCookie(res: Response, value: string, maxAgeSeconds: number): void {
  res.append('Set-Cookie', `${REFRESH_COOKIE}=${value}; Path=${COOKIE_PATH}; Max-Age=${maxAgeSeconds}; HttpOnly; Secure; SameSite=Strict`);
  res.append('Set-Cookie', `${SESSION_HINT_COOKIE}=${value === '' ? '' : '1'}; Path=/; Max-Age=${maxAgeSeconds}; Secure; SameSite=Strict`);
}

/** The refresh cookie's value, when the request has a well-formed one. */
const cookieToken = (req: Request): string | undefined => cookieValue(req, REFRESH_COOKIE);

/** The refresh token of the body, or of the cookie when the request may use it; else undefined. */
async function refreshTokenOf(req: Request, jsonLimit: number): Promise<string | undefined> {
  const body = await readJson(req, jsonLimit);
  const input = body === undefined ? {} : validate<RefreshInput>(refreshBody, body);
  if (input.refreshToken !== undefined) return input.refreshToken;
  if (req.get(SESSION_HEADER) !== '1') return undefined;
  return cookieToken(req);
}

/**
 * The access-token answer, with the refresh token in the cookie or (asked for) in the body. A
 * refresh within the reuse grace has no new refresh token: the cookie and the body keep theirs.
 */
function answer(res: Response, session: OpenedSession | RefreshedSession, inBody: boolean, email?: string): Record<string, unknown> {
  const { refreshToken } = session;
  if (!inBody && refreshToken !== undefined) setCookie(res, refreshToken, session.refreshMaxAgeSeconds);
  return {
    accessToken: session.accessToken, tokenType: 'Bearer', expiresIn: session.expiresIn, accountId: session.accountId,
    sessionId: session.sessionId, refreshExpiresAt: session.refreshExpiresAt.toISOString(),
    ...(inBody && refreshToken !== undefined ? { refreshToken } : {}), ...(email === undefined ? {} : { email }),
  };
}

/** The session routes. */
export function sessionRoutes(accounts: AccountService, sessions: SessionService, jsonLimit: number): RouteDef[] {
  return [
    {
      method: 'post', path: '/api/sessions', auth: false,
      async handler(req, res) {
        const input = validate<SignInInput>(signInBody, await requireJson(req, jsonLimit));
        const session = await accounts.signIn(input.email, input.password, clientIp(req), input.device ?? req.get('user-agent') ?? '');
        res.status(201).json(answer(res, session, input.refreshTokenIn === 'body'));
      },
    },
    {
      method: 'post', path: '/api/sessions/refresh', auth: false,
      async handler(req, res) {
        const token = await refreshTokenOf(req, jsonLimit);
        if (token === undefined) {
          throw new ApiError('UNAUTHENTICATED', 'no session: sign in (a browser sends the session cookie with X-Iki-Session: 1)');
        }
        const fromBody = cookieToken(req) !== token;
        const session = await sessions.refresh(token).catch((err: unknown) => {
          if (!fromBody) setCookie(res, '', 0);
          throw err;
        });
        const me = await accounts.me(session.accountId);
        res.json({ ...answer(res, session, fromBody, me.email), name: me.name, emailVerified: me.emailVerified });
      },
    },
    {
      method: 'post', path: '/api/sessions/sign-out', auth: false,
      async handler(req, res) {
        const token = await refreshTokenOf(req, jsonLimit);
        if (token !== undefined) await sessions.signOut(token);
        // Issue 22 item 7: only a request that may act on the cookie clears it. A cross-site
        // form cannot send the header, so it cannot sign a page out while the session lives on.
        if (req.get(SESSION_HEADER) === '1') setCookie(res, '', 0);
        res.json({ status: 'signed-out' });
      },
    },
    {
      method: 'get', path: '/api/sessions', auth: true, allowUnverified: true,
      async handler(_req, res) {
        res.json({ sessions: await sessions.list(callerOf(res), sessionOf(res)) });
      },
    },
    {
      method: 'post', path: '/api/sessions/revoke-all', auth: true, allowUnverified: true,
      async handler(_req, res) {
        const revoked = await sessions.revokeAll(callerOf(res));
        setCookie(res, '', 0);
        res.json({ revoked });
      },
    },
    {
      method: 'post', path: '/api/sessions/{sessionId}/revoke', auth: true, allowUnverified: true,
      async handler(req, res) {
        await sessions.revoke(callerOf(res), param(req, 'sessionId', SESSION_ID, 'SESSION_NOT_FOUND'));
        res.json({ status: 'revoked' });
      },
    },
  ];
}

/**
 * The signed-in session of the browser, shared by its tabs, and the API client that uses it
 * (issue 14 item 1).
 *
 * Where things live: the refresh token in the service's `iki_refresh` cookie (`HttpOnly;
 * Secure; SameSite=Strict; Path=/api/sessions`), which no script can read and every tab of the
 * origin shares; the short access token (15 minutes) in this module's memory only, never in
 * any storage. A page that loads asks the service for an access token with the cookie (this
 * module does it before any page code runs, with top-level await, so `currentSession()` is
 * ready when pages start), and refreshes it silently a minute before it expires and after a
 * 401, but only while the service's companion cookie `iki_session=1` (no secret, readable by
 * scripts, set and cleared with the refresh cookie) says a session may exist: a signed-out
 * page sends no request that can only be refused. Requests that use the cookie carry `X-Iki-Session: 1`, which no other site can make a
 * browser send, so no cross-site page can refresh or end the session.
 *
 * Signing out ends the session on the service (its access tokens stop working at once) and
 * tells the other tabs over a `BroadcastChannel`; "sign out everywhere" ends every session of
 * the account. In a Web Worker there is no document and no session: a worker gets the token
 * from the page that starts its work.
 */
import { ApiClient, ApiProblem, problemFrom } from './api.js';
import type { AccountAnswer, RefreshAnswer, SessionAnswer } from './api-types.js';

/** This browser's session as the page sees it. */
export interface Session {
  token: string;
  accountId: string;
  sessionId?: string;
  /** Milliseconds since the epoch. */
  expiresAt: number;
  email?: string;
  name?: string;
  emailVerified?: boolean;
}

const CHANNEL = 'iki.session';
/** Refresh this long before the access token expires. */
const EARLY_MS = 60_000;
const HEADERS = { accept: 'application/json', 'x-iki-session': '1' } as const;

let current: Session | null = null;
let timer: ReturnType<typeof setTimeout> | undefined;
let inFlight: Promise<Session | null> | null = null;
const listeners = new Set<(session: Session | null) => void>();
const inPage = typeof document !== 'undefined';
const channel = inPage && typeof BroadcastChannel !== 'undefined' ? new BroadcastChannel(CHANNEL) : null;

/** Whether the service's companion cookie says this browser may hold a session. */
function maybeSignedIn(): boolean {
  return inPage && /(?:^|;\s*)iki_session=1(?:;|$)/.test(document.cookie);
}

function set(session: Session | null): void {
  current = session;
  if (timer !== undefined) clearTimeout(timer);
  timer = undefined;
  if (session !== null && inPage) {
    timer = setTimeout(() => void refreshSession(), Math.max(5_000, session.expiresAt - Date.now() - EARLY_MS));
  }
  for (const listener of listeners) listener(session);
}

/** Calls `listener` whenever this tab's session changes (signed in, refreshed, ended). */
export function onSessionChange(listener: (session: Session | null) => void): () => void {
  listeners.add(listener);
  return () => listeners.delete(listener);
}

async function post(path: string, json?: unknown): Promise<Response> {
  return fetch(path, {
    method: 'POST', credentials: 'same-origin', cache: 'no-store', signal: AbortSignal.timeout(10_000),
    headers: json === undefined ? HEADERS : { ...HEADERS, 'content-type': 'application/json' },
    body: json === undefined ? undefined : JSON.stringify(json),
  });
}

/**
 * A new access token from the session cookie; null (and signed out) when the session ended.
 * Concurrent callers share one request. A network failure keeps the current state.
 */
export function refreshSession(): Promise<Session | null> {
  if (inPage && !maybeSignedIn()) {
    // No session cookie to refresh with (signed out, or it expired): nothing to ask.
    if (current !== null) set(null);
    return Promise.resolve(null);
  }
  inFlight ??= (async () => {
    try {
      const response = await post('/api/sessions/refresh');
      if (!response.ok) {
        // Read the refusal to its end, so the connection is free again (an unread body keeps it
        // busy, and the page never goes network-idle).
        await response.arrayBuffer().catch(() => undefined);
        set(null);
        return null;
      }
      const a = (await response.json()) as RefreshAnswer;
      set({ token: a.accessToken, accountId: a.accountId, sessionId: a.sessionId, email: a.email, name: a.name,
        emailVerified: a.emailVerified, expiresAt: Date.now() + a.expiresIn * 1000 });
      return current;
    } catch {
      return current;
    } finally {
      inFlight = null;
    }
  })();
  return inFlight;
}

/** The current session, or null when signed out. */
export function currentSession(): Session | null {
  return current;
}

/** Keeps a sign-in's answer as this tab's session and tells the other tabs. */
export function saveSession(answer: SessionAnswer, email: string): Session {
  set({ token: answer.accessToken, accountId: answer.accountId, sessionId: answer.sessionId, email, emailVerified: true,
    expiresAt: Date.now() + answer.expiresIn * 1000 });
  channel?.postMessage('signed-in');
  return current as Session;
}

/**
 * Signs in: the service sets the session cookie, this tab keeps the access token, and the
 * other tabs pick the session up. Rejects with the API's problem (wrong password, throttled).
 */
export async function signIn(email: string, password: string): Promise<Session> {
  let response: Response;
  try {
    response = await post('/api/sessions', { email, password });
  } catch {
    throw ApiProblem.network();
  }
  if (!response.ok) throw await problemFrom(response);
  return saveSession((await response.json()) as SessionAnswer, email.trim().toLowerCase());
}

/** A POST whose answer is JSON, with this origin's cookies; rejects with the API's problem. */
async function postJson<T>(path: string, json: unknown): Promise<T> {
  let response: Response;
  try {
    response = await post(path, json);
  } catch {
    throw ApiProblem.network();
  }
  if (!response.ok) throw await problemFrom(response);
  return (await response.json()) as T;
}

/**
 * Signs up. The service answers with a cookie that proves this browser typed the password
 * (issue 22 item 3), so the link completes here with it; opened elsewhere it asks for one.
 */
export async function signUp(input: { name: string; email: string; password: string }): Promise<void> {
  await postJson('/api/accounts', input);
}

/**
 * Uses a verification link's token, with this browser's sign-up cookie when it has one, or
 * with a `password` the person at the link chose (after `SIGN_UP_PASSWORD_REQUIRED`).
 */
export async function verifyEmail(token: string, password?: string): Promise<AccountAnswer> {
  return postJson<AccountAnswer>('/api/accounts/verify', password === undefined ? { token } : { token, password });
}

/** Ends this browser's session on the service and in every tab. */
export async function signOut(): Promise<void> {
  set(null);
  channel?.postMessage('signed-out');
  try {
    await post('/api/sessions/sign-out');
  } catch {
    // Offline: the cookie stays, but the page forgot the token; the next sign-out ends it.
  }
}

/** Ends every session of the account, on every device ("sign out everywhere"). */
export async function signOutEverywhere(): Promise<number> {
  const answer = await sessionApi.call<{ revoked: number }>('/api/sessions/revoke-all', { method: 'POST' });
  set(null);
  channel?.postMessage('signed-out');
  return answer.revoked;
}

/** The access token of this tab's session, or null. */
export function sessionToken(): string | null {
  return current?.token ?? null;
}

/**
 * The API with this browser's session: a 401 answer refreshes the access token once and
 * retries; when the session has ended the tab is signed out.
 */
export const sessionApi = new ApiClient({
  token: sessionToken,
  refresh: async () => (await refreshSession()) !== null,
  onUnauthorized: () => set(null),
});

if (channel !== null) {
  channel.onmessage = (event: MessageEvent) => {
    if (event.data === 'signed-out') set(null);
    else if (event.data === 'signed-in') void refreshSession();
  };
}
if (inPage) await refreshSession();

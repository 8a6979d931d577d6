/**
 * The signed-in session of a browser tab, and the API client that uses it.
 *
 * Where the access token lives: in `sessionStorage`, under one key, and nowhere else. It is
 * per tab, gone when the tab closes, never sent by the browser on its own (so no cross-site
 * request can use it, unlike a cookie without CSRF protection), and it expires with the token
 * itself (15 minutes by default). `sessionStorage` rather than a variable only because the
 * pages are separate documents; nothing else is ever stored in the browser. Where there is
 * no `sessionStorage` (a Web Worker) there is no session: a worker gets the token from the
 * page that starts its work.
 */
import { ApiClient } from './api.js';
import type { SessionAnswer } from './api-types.js';

const SESSION_KEY = 'iki.session';

/** This tab's session. */
export interface Session {
  token: string;
  accountId: string;
  /** Milliseconds since the epoch. */
  expiresAt: number;
  email?: string;
}

function storage(): Storage | null {
  try {
    return typeof sessionStorage === 'undefined' ? null : sessionStorage;
  } catch {
    // Storage blocked (for example by browser settings): signed out.
    return null;
  }
}

/** The current session, or null when signed out or expired (an expired one is forgotten). */
export function currentSession(): Session | null {
  const store = storage();
  try {
    const raw = store?.getItem(SESSION_KEY) ?? null;
    if (raw === null) return null;
    const value = JSON.parse(raw) as Partial<Session> | null;
    if (typeof value?.token !== 'string' || typeof value.expiresAt !== 'number' || value.expiresAt <= Date.now()) {
      store?.removeItem(SESSION_KEY);
      return null;
    }
    return value as Session;
  } catch {
    return null;
  }
}

/** Keeps the answer of `POST /api/sessions` for this tab. */
export function saveSession(answer: SessionAnswer, email: string): Session {
  const value: Session = { token: answer.accessToken, accountId: answer.accountId, email,
    expiresAt: Date.now() + answer.expiresIn * 1000 };
  storage()?.setItem(SESSION_KEY, JSON.stringify(value));
  return value;
}

/** Forgets this tab's session. */
export function signOut(): void {
  storage()?.removeItem(SESSION_KEY);
}

/** The access token of this tab's session, or null. */
export function sessionToken(): string | null {
  return currentSession()?.token ?? null;
}

/** The API with this tab's session: a 401 answer signs the tab out. */
export const sessionApi = new ApiClient({ token: sessionToken, onUnauthorized: signOut });

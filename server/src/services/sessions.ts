/**
 * Sessions (issue 14 item 1): a sign-in opens a session with a refresh token; the short access
 * token (`tokens.ts`) names the session in `sid`, and every request checks that the session is
 * still active, so signing out, "sign out everywhere", a password change or a reset stops every
 * access token of the sessions they end at once, not when the token expires.
 *
 * The refresh token is 32 random bytes; only its SHA-256 is stored, so a copy of the database
 * opens no session. It travels either in an `HttpOnly; Secure; SameSite=Strict` cookie scoped
 * to `/api/sessions` (browsers: page scripts never see it, every tab of the origin shares it)
 * or in the JSON body (the CLI, which keeps it in a mode-0600 file). A session lasts
 * `idleSeconds` unused and `maxSeconds` at most; each refresh records its last use and replaces
 * the refresh token (rotation; reuse of a replaced one ends the session, issue 22 item 8).
 */
import { createHash, randomBytes } from 'node:crypto';
import { ApiError } from '../errors.js';
import type { Repository, SessionLifetime, SessionRecord } from '../storage/repository.js';
import type { TokenService } from './tokens.js';

/** A session as its account sees it in the list. */
export interface SessionView {
  sessionId: string;
  device: string;
  createdAt: string;
  lastUsedAt: string;
  expiresAt: string;
  /** The session the listing request came from. */
  current: boolean;
}

/** What a sign-in or a refresh hands the client. */
export interface OpenedSession {
  accessToken: string;
  expiresIn: number;
  accountId: string;
  sessionId: string;
  refreshToken: string;
  /** When the session ends unless used. */
  refreshExpiresAt: Date;
  /** Seconds from now to `refreshExpiresAt` (the cookie's Max-Age). */
  refreshMaxAgeSeconds: number;
}

/**
 * What a refresh hands the client: a new refresh token (the one used is retired), or none when
 * the token used was retired within the grace period (another tab's refresh replaced it a
 * moment ago; that tab's answer carries the new one).
 */
export type RefreshedSession = Omit<OpenedSession, 'refreshToken'> & { refreshToken: string | undefined };

/** Dependencies of the session service. */
export interface SessionDeps {
  repo: Repository;
  tokens: TokenService;
  now: () => Date;
  lifetime: SessionLifetime;
  /** How long a retired refresh token still refreshes without ending the session (IKI_REFRESH_REUSE_GRACE_SECONDS). */
  reuseGraceSeconds: number;
}

/** Ended sessions deleted per sign-in. */
export const PRUNE_BATCH = 20;

/** The longest device description kept. */
export const MAX_DEVICE_CHARS = 200;

const sha256Hex = (text: string): string => createHash('sha256').update(text, 'utf8').digest('hex');
const ended = (): ApiError => new ApiError('UNAUTHENTICATED', 'the session has ended; sign in again');

/**
 * "Chrome on Linux" for a browser's User-Agent (what a person recognises in the session list);
 * anything else (the CLI's own name, an unknown agent) as given.
 */
export function describeUserAgent(agent: string): string {
  if (!agent.startsWith('Mozilla/')) return agent;
  const browser = /Edg\//.test(agent) ? 'Edge' : /Firefox\//.test(agent) ? 'Firefox' : /Chromium\//.test(agent) ? 'Chromium'
    : /Chrome\//.test(agent) ? 'Chrome' : /Safari\//.test(agent) ? 'Safari' : 'A browser';
  const system = /Android/.test(agent) ? 'Android' : /iPhone|iPad/.test(agent) ? 'iOS' : /Windows/.test(agent) ? 'Windows'
    : /Mac OS X/.test(agent) ? 'macOS' : /CrOS/.test(agent) ? 'ChromeOS' : /Linux/.test(agent) ? 'Linux' : 'an unknown system';
  return `${browser} on ${system}`;
}

/** A printable, bounded device description. */
export function deviceName(raw: string | undefined): string {
  // eslint-disable-next-line no-control-regex
  const clean = describeUserAgent((raw ?? '').replace(/[\u0000-\u001f\u007f]/g, ' ').trim()).slice(0, MAX_DEVICE_CHARS);
  return clean === '' ? 'unknown device' : clean;
}

/** Opening, refreshing, listing and ending sessions. */
export class SessionService {
  constructor(private readonly deps: SessionDeps) {}

  /** A new session for a signed-in account. */
  async open(accountId: string, device: string): Promise<OpenedSession> {
    const { repo, now, lifetime } = this.deps;
    const at = now();
    const sessionId = randomBytes(12).toString('base64url');
    const refreshToken = randomBytes(32).toString('base64url');
    const expiresAt = new Date(at.getTime() + Math.min(lifetime.idleSeconds, lifetime.maxSeconds) * 1000);
    await repo.createSession({ id: sessionId, accountId, device: deviceName(device), createdAt: at, lastUsedAt: at, expiresAt },
      sha256Hex(refreshToken));
    // Issue 22 item 9: ended sessions are not kept; each sign-in deletes a few, so the table
    // holds about the live ones (a batch larger than one keeps up with any sign-in rate).
    await repo.pruneSessions(at, PRUNE_BATCH);
    return this.answer(accountId, sessionId, refreshToken, expiresAt);
  }

  /**
   * A new access token and a new refresh token for the session of `refreshToken`, which is
   * retired; `UNAUTHENTICATED` once the session ended. Refresh-token rotation (issue 22 item 8,
   * RFC 9700 §4.14.2): a retired token used again means two parties hold copies, and the
   * service cannot tell which is the thief, so the whole session ends, for both. Browsers share
   * one cookie among tabs, and two tabs may refresh at once with the same token: a retired
   * token used within `reuseGraceSeconds` of its retirement gets an access token and no new
   * refresh token (the other tab's answer set the new cookie), which leaves a thief that window.
   */
  async refresh(refreshToken: string): Promise<RefreshedSession> {
    const next = randomBytes(32).toString('base64url');
    const outcome = await this.deps.repo.rotateSession(sha256Hex(refreshToken), sha256Hex(next), this.deps.now(), this.deps.lifetime,
      this.deps.reuseGraceSeconds);
    if (!('session' in outcome)) throw ended();
    const { session } = outcome;
    const opened = await this.answer(session.accountId, session.id, next, session.expiresAt);
    return outcome.kind === 'rotated' ? opened : { ...opened, refreshToken: undefined };
  }

  /** Ends the session of `refreshToken` (nothing when it already ended). */
  async signOut(refreshToken: string): Promise<void> {
    const session = await this.deps.repo.useSession(sha256Hex(refreshToken), this.deps.now(), this.deps.lifetime);
    if (session !== undefined) await this.deps.repo.revokeSession(session.id, session.accountId, this.deps.now());
  }

  /** Throws `UNAUTHENTICATED` unless session `id` of `accountId` is active. */
  async check(id: string, accountId: string): Promise<void> {
    const session = await this.deps.repo.findSession(id);
    if (session?.accountId !== accountId || session.revokedAt !== undefined || session.expiresAt <= this.deps.now()) {
      throw ended();
    }
  }

  /** The account's active sessions, most recently used first. */
  async list(accountId: string, currentId: string | undefined): Promise<SessionView[]> {
    return (await this.deps.repo.listSessions(accountId, this.deps.now())).map((s) => view(s, currentId));
  }

  /** Ends one of the account's sessions; `SESSION_NOT_FOUND` when it has no such active one. */
  async revoke(accountId: string, id: string): Promise<void> {
    if (!(await this.deps.repo.revokeSession(id, accountId, this.deps.now()))) {
      throw new ApiError('SESSION_NOT_FOUND', 'no such active session of yours');
    }
  }

  /** Ends every session of the account ("sign out everywhere"), or every one but `exceptId`. */
  async revokeAll(accountId: string, exceptId?: string): Promise<number> {
    return this.deps.repo.revokeSessions(accountId, this.deps.now(), exceptId);
  }

  private async answer(accountId: string, sessionId: string, refreshToken: string, refreshExpiresAt: Date): Promise<OpenedSession> {
    const issued = await this.deps.tokens.issue(accountId, sessionId);
    const refreshMaxAgeSeconds = Math.max(0, Math.floor((refreshExpiresAt.getTime() - this.deps.now().getTime()) / 1000));
    return { ...issued, accountId, sessionId, refreshToken, refreshExpiresAt, refreshMaxAgeSeconds };
  }
}

function view(s: SessionRecord, currentId: string | undefined): SessionView {
  return {
    sessionId: s.id, device: s.device, createdAt: s.createdAt.toISOString(), lastUsedAt: s.lastUsedAt.toISOString(),
    expiresAt: s.expiresAt.toISOString(), current: s.id === currentId,
  };
}

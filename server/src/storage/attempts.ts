/**
 * What the limiters are asked (releases, sign-ins, mail, usage) and what they answer, shared by
 * both repositories; `repository.ts` re-exports them with the `Repository` interface.
 */
import type { ClientMark } from './activity-records.js';

/** A key release request for the sliding-window limiter. */
export interface ReleaseAttempt {
  licenseId: string;
  accountId: string;
  /**
   * The session the caller's access token names, checked in the same statement (active, of
   * `accountId`), with the account's verified address: the release route authenticates no
   * further. Undefined: the caller was authenticated already (an external token), and
   * neither is checked.
   */
  sessionId?: string | undefined;
  now: Date;
  windowSeconds: number;
  perLicense: number;
  perUser: number;
  /** The caller's address prefix hash and device, counted with a granted release (issue 29). */
  mark?: ClientMark | undefined;
}

/** State of one limit after an attempt. */
export interface LimitState {
  limit: number;
  /** Releases counted in the window, including this one when it was granted. */
  used: number;
  /** When the oldest counted release leaves the window (now + window when none). */
  resetAt: Date;
}

/** Outcome of `tryRecordRelease`. */
export type ReleaseOutcome =
  | { kind: 'granted'; releaseCount: number; perLicense: LimitState; perUser: LimitState }
  | { kind: 'limited'; scope: 'license' | 'user'; retryAt: Date; perLicense: LimitState; perUser: LimitState }
  | { kind: 'not_found' }
  | { kind: 'revoked' }
  /** Suspended by its seller, or past its `expiresAt` (issue 26 item 3). */
  | { kind: 'suspended' }
  | { kind: 'expired' }
  /** The session ended (or the account is gone): the caller is not authenticated. */
  | { kind: 'unauthenticated' }
  /** The account's address is not verified. */
  | { kind: 'unverified' };

/**
 * One event counted per address and per client over a sliding window: a failed sign-in or a
 * request for a verification e-mail. The address is never stored in clear.
 */
export interface ThrottleAttempt {
  /**
   * HMAC-SHA256 (lowercase hex) of the normalised e-mail address under a key derived from the
   * root secret; the address is never stored.
   */
  addressHash: string;
  /** The client address as Express reports it, stored as given. */
  clientIp: string;
  now: Date;
  windowSeconds: number;
  /** `Infinity` counts the address without limiting it. */
  perAddress: number;
  perIp: number;
}

/** The refusal of a throttled attempt: which limit is full and when a slot frees. */
export interface Throttled { kind: 'throttled'; scope: 'address' | 'ip'; retryAt: Date }

/**
 * A sign-in for the failure limiter. The attempt is recorded as a failure before the password
 * is checked and withdrawn when it was right, so concurrent guesses are counted one after the
 * other instead of all passing a count taken before any of them failed.
 */
export type SignInAttempt = ThrottleAttempt;

/** Outcome of `tryRecordSignInFailure`. */
export type SignInOutcome = { kind: 'recorded'; failureId: string } | Throttled;

/**
 * A sign-up or a resend for the verification-mail limiter, recorded before the account is
 * looked up or created, so it counts alike for an address with or without an account.
 */
export type MailRequest = ThrottleAttempt;

/** Outcome of `tryRecordMailRequest`. */
export type MailOutcome = { kind: 'recorded' } | Throttled;

/** What a usage action is: a master upload, a license-copy download, an identify request. */
export type UsageKind = 'upload' | 'copy' | 'identify';

/**
 * One usage action to admit against its limits (`services/usage-limits.ts`): how many of its
 * kind the account (and, for a copy, the license) started within the window, and how many are
 * running now. A limit of `Infinity` does not apply.
 */
export interface UsageAttempt {
  kind: UsageKind;
  accountId: string;
  /** The license of a copy download; the per-license limits apply only with one. */
  licenseId: string | undefined;
  now: Date;
  /** Actions started within this many seconds before `now` count towards the rates. */
  windowSeconds: number;
  ratePerAccount: number;
  ratePerLicense: number;
  concurrentPerAccount: number;
  concurrentPerLicense: number;
  /**
   * Until when a started action holds a running slot unless renewed (`renewUsage`) or finished
   * (`finishUsage`): a process that dies mid-transfer frees its slots when they lapse. Undefined
   * for an action that runs at once and holds no slot (identify).
   */
  holdUntil: Date | undefined;
  /**
   * A copy download asked for with a `Range` that starts after the first byte (`from`), of the
   * copy whose ETag is `etag`: it continues a cut download when one was recorded (see
   * `usage-window.ts` `resumeParent`), and counts as a download otherwise.
   */
  resume?: { etag: string; from: number };
  /** The ETag of the copy a download sends, recorded with it so that a resume can name it. */
  etag?: string;
}

/** How far a copy download got: the byte after the last one sent, and whether that was the copy's end. */
export interface UsageProgress {
  sentTo: number;
  complete: boolean;
}

/** Outcome of `tryStartUsage`: the action's id, or which limit refused it and until when. */
export type UsageOutcome =
  | { kind: 'started'; id: string; resumed?: boolean }
  | { kind: 'limited'; reason: 'rate' | 'concurrency'; scope: 'account' | 'license'; limit: number; retryAt: Date };

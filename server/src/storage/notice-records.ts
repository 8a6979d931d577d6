/**
 * The two webhook events no successful request writes (issue 26 item 4), as one part of the
 * `Repository` (`repo.notices`). Each writes an ordinary history event (`expire`,
 * `rate_limited`), so migration 35's trigger (or the memory fake's fan-out) queues its
 * deliveries in the same transaction, and each is bounded so that nothing floods a seller's
 * endpoint: one `license.expired` per license ever, one `rate_limit.exceeded` per license per
 * window of the limit that refused.
 */

/** The actor of an `expire` event: no person made it. */
export const SYSTEM_ACTOR = 'system';

/** A refusal by a rate limit, as `rateLimited` records it. */
export interface RateLimitRefusal {
  licenseId: string;
  /** The licensee who was refused. */
  actorId: string;
  now: Date;
  /** Which limit: the key release's or the copy download's. */
  limit: 'key_release' | 'copy';
  /** Whose count was full: the license's or the licensee's. */
  scope: 'license' | 'user';
  /** The limit's window; no second event for the license within it. */
  windowSeconds: number;
  retryAt: Date;
}

/** The notice records. */
export interface NoticeRecords {
  /**
   * Writes the `expire` event of at most `limit` licenses whose `expiresAt` is at or before
   * `now` and that have none yet (a revoked license is marked but gets none: revocation was
   * its last word), each once however many instances call this at once; returns how many
   * licenses it marked.
   */
  noticeExpired(now: Date, limit: number): Promise<number>;
  /**
   * Writes a `rate_limited` event for the license unless one was written within
   * `windowSeconds` before `now`; true when it wrote one.
   */
  rateLimited(refusal: RateLimitRefusal): Promise<boolean>;
}

/**
 * Flags on licenses (issue 29 item 3), as one part of the `Repository` (`repo.flags`): a flag
 * says that in one window a license hit a rate limit, was released to more address prefixes or
 * devices than a threshold, or was released at intervals regular enough to be scripted
 * (services/flags.ts decides). At most one flag per (license, rule, window start), whoever
 * raises it and however often: the unique key is the guard, so two instances sweeping at once
 * raise it once. Raising one writes the license's `flag` event in the same statement, which
 * the webhook trigger turns into `license.flagged` (migration 47).
 */

/** The flag rules. */
export const FLAG_RULES = ['rate_limit', 'addresses', 'devices', 'scripted'] as const;
/** One rule of `FLAG_RULES`. */
export type FlagRule = (typeof FLAG_RULES)[number];

/** A stored flag. */
export interface FlagRecord {
  /** `fl_` + 24 hex digits. */
  id: string;
  licenseId: string;
  masterId: string;
  sellerId: string;
  rule: FlagRule;
  raisedAt: Date;
  windowStart: Date;
  windowEnd: Date;
  /** What was measured (a count, or for `scripted` the coefficient of variation). */
  value: number;
  /** What it was measured against. */
  threshold: number;
  dismissedAt: Date | undefined;
  /** A paging cursor: later flags have larger ones (decimal string). */
  seq: string;
}

/** Input of `raise`. */
export type NewFlag = Omit<FlagRecord, 'masterId' | 'sellerId' | 'dismissedAt' | 'seq'>;

/** Which flags `list` returns: of one license or of one seller's masters, newest first. */
export interface FlagQuery {
  licenseId?: string | undefined;
  sellerId?: string | undefined;
  state: 'open' | 'dismissed' | 'all';
  limit: number;
  /** Only flags with a smaller `seq`. */
  before: string | undefined;
}

/** The flag records. */
export interface FlagRecords {
  /**
   * Raises the flag unless its license already has one of its rule for its window start, with
   * the `flag` event (actor `system`); the flag when it was raised now, else undefined.
   */
  raise(flag: NewFlag): Promise<FlagRecord | undefined>;
  list(query: FlagQuery): Promise<FlagRecord[]>;
  /** Open flags per license of `licenseIds` (absent: none). */
  openCounts(licenseIds: readonly string[]): Promise<Map<string, number>>;
  /**
   * Dismisses the flag of `licenseId` when the license's master is `sellerId`'s (idempotent:
   * the first dismissal time stays); undefined when there is no such flag of theirs.
   */
  dismiss(licenseId: string, flagId: string, sellerId: string, now: Date): Promise<FlagRecord | undefined>;
  /** Deletes flags whose window ended before `before` (retention); how many went. */
  prune(before: Date): Promise<number>;
}

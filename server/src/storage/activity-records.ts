/**
 * Activity per license (issue 29 item 1), as one part of the `Repository` (`repo.activity`):
 * counters per license and quarter hour of key releases, copy downloads (counted and
 * resumed) and refusals by reason, with the distinct address prefixes (a keyed hash, never the
 * address: services/activity-address.ts) and player devices behind them. Key releases and
 * their refusals are counted by the release statement itself (migration 45); downloads and
 * the refusals of a download through `record`. Reads group the quarter hours into the hours
 * or days of a time zone, in SQL.
 */
import type { ACTIVITY_KINDS } from './migrations-activity.js';

/** What one `record` counts. */
export type ActivityKind = (typeof ACTIVITY_KINDS)[number];

/** Why a release or download was refused, as counted. */
export const REFUSAL_REASONS = ['rate_limited', 'revoked', 'expired', 'suspended', 'not_licensee'] as const;
/** One reason of `REFUSAL_REASONS`. */
export type RefusalReason = (typeof REFUSAL_REASONS)[number];

/** Who a release or download came from, as far as the service may tell: both optional. */
export interface ClientMark {
  /** The 16-byte keyed hash of the client's address prefix (services/activity-address.ts). */
  addrHash?: Uint8Array | undefined;
  /** The player's device id for the license (`X-Iki-Device`, 22 base64url characters), when valid. */
  deviceId?: string | undefined;
}

/** The size of a bucket. */
export type Bucket = 'hour' | 'day';

/** A time range of buckets in a time zone (an IANA name the database knows). */
export interface BucketQuery {
  from: Date;
  to: Date;
  bucket: Bucket;
  timeZone: string;
}

/** An instant with its wall-clock time and offset in the query's time zone. */
export interface ZonedTime {
  at: Date;
  /** `YYYY-MM-DDTHH:MM:SS` in the zone. */
  local: string;
  /** The zone's offset from UTC at that instant, in seconds. */
  offsetSeconds: number;
}

/**
 * The buckets of a query: `from` moved back to its bucket's start, `to` forward to the next
 * bucket start (unless it is one), and every bucket start in between, in order.
 */
export interface BucketRange {
  from: ZonedTime;
  to: ZonedTime;
  starts: ZonedTime[];
}

/** The counts of one bucket (or of a whole range). */
export interface ActivityCounts {
  releases: number;
  downloads: number;
  resumes: number;
  refusals: Record<RefusalReason, number>;
  /** Distinct address prefixes. */
  addresses: number;
  /** Distinct player devices. */
  devices: number;
}

/** One license's line of a master's activity. */
export interface LicenseActivity {
  licenseId: string;
  /** The address the seller licensed the buyer by, when they licensed by e-mail; else undefined. */
  licenseeEmail: string | undefined;
  revokedAt: Date | undefined;
  suspendedAt: Date | undefined;
  expiresAt: Date | undefined;
  /** Over the whole range; `refusals` summed over the reasons. */
  totals: Omit<ActivityCounts, 'refusals'> & { refusals: number };
  /** Releases per bucket start (epoch milliseconds); absent: none. */
  releases: Map<number, number>;
}

/** What a flag window holds to be looked at: any one of these reached. */
export interface WindowThresholds {
  rateLimited: number;
  /** More distinct address prefixes than this. */
  addresses: number;
  /** More distinct devices than this. */
  devices: number;
  /** This many releases (the gaps of which are then measured). */
  releases: number;
}

/** One license's counts over a flag window. */
export interface WindowMeasure {
  licenseId: string;
  releases: number;
  rateLimited: number;
  addresses: number;
  devices: number;
  /**
   * The coefficient of variation (population standard deviation / mean) of the gaps between
   * its recorded key releases in the window, when it had at least `releases` of them and the
   * mean gap is not zero; else undefined.
   */
  gapCv: number | undefined;
}

/** The activity records. */
export interface ActivityRecords {
  /** Counts one event of `kind` for an existing license at `at`, with its client when known. */
  record(licenseId: string, at: Date, kind: ActivityKind, mark?: ClientMark): Promise<void>;
  /** The buckets of `query`; throws `RangeError` for a time zone the database does not know. */
  buckets(query: BucketQuery): Promise<BucketRange>;
  /**
   * The license's counts per bucket start (epoch milliseconds) within the range, which must be
   * one `buckets` answered (aligned); buckets without activity are absent.
   */
  licenseSeries(licenseId: string, range: BucketQuery): Promise<Map<number, ActivityCounts>>;
  /**
   * The master's licenses with their activity in the range, by releases (most first; then
   * oldest license first), at most `max` of them, and how many licenses the master has.
   */
  masterSummary(masterId: string, range: BucketQuery, max: number): Promise<{ licenses: LicenseActivity[]; total: number }>;
  /**
   * The licenses whose counts in the window [`start`, `end`) reach one of `thresholds`, at
   * most `max` (the busiest by releases first), for the flag sweeper.
   */
  measureWindow(start: Date, end: Date, thresholds: WindowThresholds, max: number): Promise<WindowMeasure[]>;
  /** Deletes the counters of quarter hours before `before` (retention); how many rows went. */
  prune(before: Date): Promise<number>;
}

/** Zero counts. */
export function emptyCounts(): ActivityCounts {
  return { releases: 0, downloads: 0, resumes: 0, addresses: 0, devices: 0,
    refusals: { rate_limited: 0, revoked: 0, expired: 0, suspended: 0, not_licensee: 0 } };
}

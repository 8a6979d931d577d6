/**
 * Issue 29's activity API as the pages call it (the shapes of the OpenAPI document's
 * `MasterActivity`, `LicenseActivity` and `LicenseFlag`), and the periods the pages offer.
 * Every period is asked in the browser's own time zone (`tz`), so the service's buckets start
 * at this person's midnights and hours and the plots and tables label them with `Intl`.
 */
import { sessionApi } from '@iki/core/browser';

/** Counts per bucket: hours up to 14 days, days up to 90 (the service refuses more). */
export type Bucket = 'hour' | 'day';
export type LicenseStateName = 'active' | 'suspended' | 'revoked' | 'expired';
/** Why a key release was refused. */
export const REFUSAL_REASONS = ['rate_limited', 'revoked', 'expired', 'suspended', 'not_licensee'] as const;
export type RefusalReason = (typeof REFUSAL_REASONS)[number];

/** A flag on a license: a rule's value past its threshold in a window. */
export interface LicenseFlag {
  id: string;
  rule: 'rate_limit' | 'addresses' | 'devices' | 'scripted' | string;
  raisedAt: string;
  windowStart: string;
  windowEnd: string;
  value: number;
  threshold: number;
  state: 'open' | 'dismissed';
  dismissedAt: string | null;
  /** In the seller's list of flags (GET /api/seller/flags). */
  licenseId?: string;
  masterId?: string;
}

/** One license in a master's activity: totals over the period and releases per bucket. */
export interface LicenseActivityRow {
  licenseId: string;
  label: string | null;
  state: LicenseStateName;
  totals: { releases: number; downloads: number; resumes: number; refusals: number; addresses: number; devices: number };
  releases: number[];
  openFlags: number;
}

/** GET /api/licenses/masters/{id}/activity (beside the master's other calls). */
export interface MasterActivity {
  masterId: string;
  from: string;
  to: string;
  bucket: Bucket;
  timeZone: string;
  buckets: string[];
  licenses: LicenseActivityRow[];
  truncated: boolean;
}

/** One bucket of a license's timeline. */
export interface SeriesPoint {
  start: string;
  releases: number;
  downloads: number;
  resumes: number;
  refusals: Record<RefusalReason, number>;
  addresses: number;
  devices: number;
}

/** A release limit: at most `count` in `windowSeconds`. */
export interface ReleaseLimit { count: number; windowSeconds: number }

/** GET /api/licenses/{id}/activity. */
export interface LicenseActivity {
  licenseId: string;
  masterId: string;
  from: string;
  to: string;
  bucket: Bucket;
  timeZone: string;
  limits: { perLicense: ReleaseLimit; perAccount: ReleaseLimit };
  series: SeriesPoint[];
  flags: LicenseFlag[];
}

/** The periods offered, by their message key. */
export const PERIODS = {
  day: { bucket: 'hour', days: 1 },
  week: { bucket: 'hour', days: 7 },
  month: { bucket: 'day', days: 30 },
  quarter: { bucket: 'day', days: 90 },
} as const satisfies Record<string, { bucket: Bucket; days: number }>;
export type Period = keyof typeof PERIODS;

/** The browser's IANA time zone (what the plots are labelled in). */
export function browserTimeZone(): string {
  return Intl.DateTimeFormat().resolvedOptions().timeZone || 'UTC';
}

/**
 * The query of `period` ending now: hour periods start on the hour, day periods at local
 * midnight, so the first bucket is whole.
 */
export function periodQuery(period: Period, now = new Date()): string {
  const { bucket, days } = PERIODS[period];
  // A local day of 25 hours (daylight saving ending) could take `days` midnights past the
  // service's limit of `days` × 24 hours: then `from` is cut to it, and the service moves it back
  // to the start of its day bucket.
  const from = bucket === 'day'
    ? new Date(Math.max(new Date(now.getFullYear(), now.getMonth(), now.getDate() - days + 1).getTime(), now.getTime() - days * 86_400_000))
    : new Date(Math.floor(now.getTime() / 3_600_000) * 3_600_000 - (days * 24 - 1) * 3_600_000);
  return new URLSearchParams({ from: from.toISOString(), to: now.toISOString(), bucket, tz: browserTimeZone() }).toString();
}

export function masterActivity(masterId: string, period: Period): Promise<MasterActivity> {
  return sessionApi.call<MasterActivity>(`/api/licenses/masters/${encodeURIComponent(masterId)}/activity?${periodQuery(period)}`);
}

export function licenseActivity(licenseId: string, period: Period): Promise<LicenseActivity> {
  return sessionApi.call<LicenseActivity>(`/api/licenses/${encodeURIComponent(licenseId)}/activity?${periodQuery(period)}`);
}

/** One page of the seller's flags. */
export function sellerFlags(state: 'open' | 'dismissed' | 'all', cursor?: string): Promise<{ flags: LicenseFlag[]; next: string | null }> {
  const query = new URLSearchParams({ state, ...(cursor === undefined ? {} : { cursor }) });
  return sessionApi.call(`/api/seller/flags?${query.toString()}`);
}

export function dismissFlag(licenseId: string, flagId: string): Promise<{ flag: LicenseFlag }> {
  return sessionApi.call(`/api/licenses/${encodeURIComponent(licenseId)}/flags/${encodeURIComponent(flagId)}/dismiss`, { method: 'POST' });
}

/** All refusals of a bucket. */
export function refusalTotal(point: SeriesPoint): number {
  return REFUSAL_REASONS.reduce((sum, reason) => sum + (point.refusals[reason] ?? 0), 0);
}

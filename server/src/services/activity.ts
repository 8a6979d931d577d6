/**
 * Activity per license and per master (issue 29 items 1 and 4; HTTP contract in
 * docs/activity.md and the OpenAPI document): counts per hour or day of a time zone of key
 * releases, copy downloads, refusals by reason, distinct address prefixes and devices.
 *
 * Who may see what: a license's activity is its seller's and its licensee's (the buyer sees
 * what the seller sees of their own license, nothing of anyone else's); anyone else is told it
 * does not exist, as for the license itself. A master's activity is its seller's. A buyer's
 * e-mail is shown to the seller only where the license was made by that address (issue 22
 * item 6), as in the license views.
 */
import { ApiError } from '../errors.js';
import type { ReleaseLimits } from '../config.js';
import type { Repository } from '../storage/repository.js';
import { licenseState, type LicenseState } from '../storage/seller-records.js';
import {
  emptyCounts, type ActivityCounts, type Bucket, type BucketQuery, type BucketRange, type ZonedTime,
} from '../storage/activity-records.js';
import { flagView, type FlagView } from './flags-view.js';

/** Longest range per bucket, in days (longer is `VALIDATION_FAILED`). */
export const MAX_RANGE_DAYS: Record<Bucket, number> = { hour: 14, day: 90 };
/** Licenses in one master's answer at most (the busiest; `truncated` says when there were more). */
export const MAX_MASTER_LICENSES = 200;
/** Longest time zone name taken (the longest IANA name is 32 characters). */
const MAX_ZONE_CHARS = 64;
/** An IANA zone name: `UTC`, or Area/Location[/Sub] (no POSIX rules such as `UTC+3` or `<+03>-3`). */
const ZONE = /^(?:UTC|[A-Za-z][A-Za-z_-]*(?:\/[A-Za-z0-9_+-]+){1,2})$/;
/** An ISO-8601 instant with seconds optional and an offset or Z required. */
const INSTANT = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(?::\d{2}(?:\.\d{1,9})?)?(?:Z|[+-]\d{2}:\d{2})$/;

/** Dependencies of the activity service. */
export interface ActivityDeps {
  repo: Repository;
  now: () => Date;
  limits: ReleaseLimits;
}

/** The query of an activity request as it arrived (query-string values). */
export type RawActivityQuery = Record<string, unknown>;

/** One bucket of a license's timeline. */
export type SeriesPoint = { start: string } & ActivityCounts;

/** A license's activity. */
export interface LicenseActivityView {
  licenseId: string;
  masterId: string;
  from: string;
  to: string;
  bucket: Bucket;
  timeZone: string;
  limits: { perLicense: { count: number; windowSeconds: number }; perAccount: { count: number; windowSeconds: number } };
  series: SeriesPoint[];
  flags: FlagView[];
}

/** One license's line of a master's activity. */
export interface MasterLicenseLine {
  licenseId: string;
  label: string | null;
  state: LicenseState;
  totals: { releases: number; downloads: number; resumes: number; refusals: number; addresses: number; devices: number };
  releases: number[];
  openFlags: number;
}

/** A master's activity. */
export interface MasterActivityView {
  masterId: string;
  from: string;
  to: string;
  bucket: Bucket;
  timeZone: string;
  buckets: string[];
  licenses: MasterLicenseLine[];
  truncated: boolean;
}

const invalid = (message: string, details?: Record<string, unknown>): ApiError =>
  new ApiError('VALIDATION_FAILED', message, details);

/** `2026-11-01T00:00:00+09:00`: the wall clock in the zone with its offset (`Z` never: the contract shows offsets). */
export function isoInZone(t: ZonedTime): string {
  const sign = t.offsetSeconds < 0 ? '-' : '+';
  const abs = Math.abs(t.offsetSeconds);
  const hh = String(Math.floor(abs / 3600)).padStart(2, '0');
  const mm = String(Math.floor((abs % 3600) / 60)).padStart(2, '0');
  return `${t.local}${sign}${hh}:${mm}`;
}

function one(raw: RawActivityQuery, name: string): string | undefined {
  const v = raw[name];
  if (v === undefined) return undefined;
  if (typeof v !== 'string' || v.length > 64) throw invalid(`${name} must be given once, at most 64 characters`, { field: name });
  return v;
}

function instant(raw: RawActivityQuery, name: string): Date | undefined {
  const v = one(raw, name);
  if (v === undefined) return undefined;
  const t = INSTANT.test(v) ? new Date(v) : undefined;
  if (t === undefined || Number.isNaN(t.getTime())) throw invalid(`${name} must be an ISO-8601 time with an offset`, { field: name });
  return t;
}

/**
 * The query: `bucket` (`hour` or `day`, default `day`), `tz` (an IANA name, default `UTC`),
 * `to` (default now) and `from` (default 2 days before `to` by the hour, 30 days by the day);
 * `from` before `to`, and the range at most `MAX_RANGE_DAYS` of its bucket.
 */
export function parseActivityQuery(raw: RawActivityQuery, now: Date): BucketQuery {
  const bucketText = one(raw, 'bucket') ?? 'day';
  if (bucketText !== 'hour' && bucketText !== 'day') throw invalid('bucket must be hour or day', { field: 'bucket' });
  const bucket: Bucket = bucketText;
  const timeZone = one(raw, 'tz') ?? 'UTC';
  if (timeZone.length > MAX_ZONE_CHARS || !ZONE.test(timeZone)) throw invalid('tz must be an IANA time zone name', { field: 'tz' });
  const to = instant(raw, 'to') ?? now;
  const from = instant(raw, 'from') ?? new Date(to.getTime() - (bucket === 'hour' ? 2 : 30) * 86400_000);
  if (from.getTime() >= to.getTime()) throw invalid('from must be before to', { field: 'from' });
  const maxDays = MAX_RANGE_DAYS[bucket];
  if (to.getTime() - from.getTime() > maxDays * 86400_000) {
    throw invalid(`a range by the ${bucket} is at most ${maxDays} days`, { field: 'from', maxDays });
  }
  return { from, to, bucket, timeZone };
}

/** Activity reads for sellers and buyers. */
export class ActivityService {
  constructor(private readonly deps: ActivityDeps) {}

  /** The buckets of a query, or `VALIDATION_FAILED` for a zone the database does not know. */
  private async range(q: BucketQuery): Promise<{ range: BucketRange; aligned: BucketQuery }> {
    try {
      const range = await this.deps.repo.activity.buckets(q);
      return { range, aligned: { ...q, from: range.from.at, to: range.to.at } };
    } catch (err) {
      if (err instanceof RangeError) throw invalid('tz must be an IANA time zone name', { field: 'tz' });
      throw err;
    }
  }

  /** A license's timeline, for its seller or licensee. */
  async license(callerId: string, licenseId: string, raw: RawActivityQuery): Promise<LicenseActivityView> {
    const found = await this.deps.repo.findLicenseAndMaster(licenseId);
    if (found === undefined || (found.license.licenseeId !== callerId && found.master.sellerId !== callerId)) {
      throw new ApiError('LICENSE_NOT_FOUND', 'no such license');
    }
    const q = parseActivityQuery(raw, this.deps.now());
    const { range, aligned } = await this.range(q);
    const counts = await this.deps.repo.activity.licenseSeries(licenseId, aligned);
    const flags = await this.deps.repo.flags.list({ licenseId, state: 'all', limit: 100, before: undefined });
    const { perLicense, perUser, windowSeconds } = this.deps.limits;
    return {
      licenseId, masterId: found.master.id, from: isoInZone(range.from), to: isoInZone(range.to), bucket: q.bucket,
      timeZone: q.timeZone,
      limits: { perLicense: { count: perLicense, windowSeconds }, perAccount: { count: perUser, windowSeconds } },
      series: range.starts.map((s) => ({ start: isoInZone(s), ...(counts.get(s.at.getTime()) ?? emptyCounts()) })),
      flags: flags.map(flagView),
    };
  }

  /** A master's licenses with their releases per bucket, busiest first, for its seller. */
  async master(callerId: string, masterId: string, raw: RawActivityQuery): Promise<MasterActivityView> {
    const master = await this.deps.repo.findMaster(masterId);
    if (master === undefined || master.sellerId !== callerId) throw new ApiError('MASTER_NOT_FOUND', 'no such master');
    const q = parseActivityQuery(raw, this.deps.now());
    const { range, aligned } = await this.range(q);
    const { licenses, total } = await this.deps.repo.activity.masterSummary(masterId, aligned, MAX_MASTER_LICENSES);
    const open = await this.deps.repo.flags.openCounts(licenses.map((l) => l.licenseId));
    const now = this.deps.now();
    return {
      masterId, from: isoInZone(range.from), to: isoInZone(range.to), bucket: q.bucket, timeZone: q.timeZone,
      buckets: range.starts.map(isoInZone),
      licenses: licenses.map((l) => ({
        licenseId: l.licenseId, label: l.licenseeEmail ?? null, state: licenseState(l, now), totals: l.totals,
        releases: range.starts.map((s) => l.releases.get(s.at.getTime()) ?? 0), openFlags: open.get(l.licenseId) ?? 0,
      })),
      truncated: total > licenses.length,
    };
  }
}

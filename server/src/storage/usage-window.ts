/**
 * The arithmetic of the usage limits (uploads, license copies, identify), shared by both
 * repository implementations so they decide alike. An action counts towards a rate while it
 * started less than the window ago, and towards concurrency while it holds a running slot
 * (`holdUntil` after now). A full rate frees its next slot when the (used - limit + 1)-th
 * oldest start leaves the window; a full concurrency limit at the latest when the
 * (running - limit + 1)-th earliest slot lapses (sooner, when a transfer finishes).
 */
import type { UsageAttempt, UsageOutcome, UsageProgress } from './repository.js';
import { windowStart } from './window.js';

/** One recorded action, as the limiter reads it. */
export interface UsageRow {
  /** Its id; absent only for rows made up by tests of the arithmetic. */
  id?: string;
  /** The account that started it; absent in tests of the arithmetic. */
  accountId?: string;
  licenseId: string | undefined;
  startedAt: Date;
  holdUntil: Date | undefined;
  /** A resumed download (a `Range` request continuing a cut one); false when absent. */
  resumed?: boolean;
  /** The download a resume continues (its `id`). */
  parentId?: string;
  /** The ETag of the copy a download sent. */
  etag?: string;
  /** How far a download (with its resumes) got: the byte after the last one sent. */
  sentTo?: number;
  /** Whether a download (or one of its resumes) sent the copy's last byte. */
  complete?: boolean;
}

/**
 * Resumes allowed per counted download (issue 22 item 5): a client cut four times in one
 * download still gets its copy, and a download makes the service produce the copy at most
 * five times.
 */
export const RESUMES_PER_DOWNLOAD = 4;

/**
 * The download a resume attempt continues (issue 22 item 5), or undefined when it continues
 * none and so counts as a download like any other: a download of the same license by the same
 * account, counted within the window, of the copy with the same ETag, that was cut (it never
 * sent the copy's last byte) after reaching at least the resume's first byte, and that was
 * resumed fewer than `RESUMES_PER_DOWNLOAD` times. So asking for `bytes=1-` after a whole
 * download, or with no download at all, is a download.
 */
export function resumeParent(attempt: UsageAttempt, byLicense: readonly UsageRow[]): UsageRow | undefined {
  const resume = attempt.resume;
  if (resume === undefined || resume.from <= 0) return undefined;
  const since = windowStart(attempt).getTime();
  const resumes = (id: string | undefined) => byLicense.filter((r) => r.parentId !== undefined && r.parentId === id).length;
  return byLicense.find((r) => r.resumed !== true && r.accountId === attempt.accountId && r.startedAt.getTime() > since
    && r.etag === resume.etag && r.complete !== true && (r.sentTo ?? 0) >= resume.from
    && resumes(r.id) < RESUMES_PER_DOWNLOAD);
}

type Limited = Extract<UsageOutcome, { kind: 'limited' }>;

function rateRefusal(rows: readonly UsageRow[], limit: number, attempt: UsageAttempt,
  scope: Limited['scope']): Limited | undefined {
  const since = windowStart(attempt).getTime();
  const starts = rows.map((r) => r.startedAt.getTime()).filter((t) => t > since).sort((a, b) => a - b);
  if (starts.length < limit) return undefined;
  const oldest = starts[starts.length - limit] ?? since;
  return { kind: 'limited', reason: 'rate', scope, limit, retryAt: new Date(oldest + attempt.windowSeconds * 1000) };
}

function concurrencyRefusal(rows: readonly UsageRow[], limit: number, attempt: UsageAttempt,
  scope: Limited['scope']): Limited | undefined {
  const now = attempt.now.getTime();
  const holds = rows.map((r) => r.holdUntil?.getTime() ?? 0).filter((t) => t > now).sort((a, b) => a - b);
  if (holds.length < limit) return undefined;
  return { kind: 'limited', reason: 'concurrency', scope, limit, retryAt: new Date(holds[holds.length - limit] ?? now) };
}

/**
 * Decides an attempt from the recorded actions of its kind that belong to its account
 * (`byAccount`) and to its license (`byLicense`, empty without one), any of them started in
 * the window or running. Returns the refusal whose retry time is latest (an earlier retry
 * would still be refused), or undefined when the action fits every limit.
 */
export function usageRefusal(attempt: UsageAttempt, byAccount: readonly UsageRow[],
  byLicense: readonly UsageRow[]): Limited | undefined {
  // Running downloads hold slots whether resumed or not. A resume is bounded by its download
  // (`resumeParent`) and counts, per account, against RESUMES_PER_DOWNLOAD times the account's
  // download rate; anything else counts against both download rates.
  const resume = resumeParent(attempt, byLicense) !== undefined;
  const fresh = (rows: readonly UsageRow[]) => rows.filter((r) => r.resumed !== true);
  const rates = resume
    ? [rateRefusal(byAccount.filter((r) => r.resumed === true), attempt.ratePerAccount * RESUMES_PER_DOWNLOAD, attempt, 'account')]
    : [rateRefusal(fresh(byLicense), attempt.ratePerLicense, attempt, 'license'),
      rateRefusal(fresh(byAccount), attempt.ratePerAccount, attempt, 'account')];
  const refusals = [
    concurrencyRefusal(byLicense, attempt.concurrentPerLicense, attempt, 'license'),
    concurrencyRefusal(byAccount, attempt.concurrentPerAccount, attempt, 'account'),
    ...rates,
  ].filter((r): r is Limited => r !== undefined);
  return refusals.sort((a, b) => b.retryAt.getTime() - a.retryAt.getTime())[0];
}

/**
 * How far a download got once one of its transfers reported `progress`: the furthest byte
 * either reached, and complete once either sent the copy's last byte.
 */
export function furthest(row: { sentTo?: number; complete?: boolean }, progress: UsageProgress): UsageProgress {
  return { sentTo: Math.max(row.sentTo ?? 0, progress.sentTo), complete: row.complete === true || progress.complete };
}

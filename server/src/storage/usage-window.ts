/**
 * The arithmetic of the usage limits (uploads, license copies, identify), shared by both
 * repository implementations so they decide alike. An action counts towards a rate while it
 * started less than the window ago, and towards concurrency while it holds a running slot
 * (`holdUntil` after now). A full rate frees its next slot when the (used - limit + 1)-th
 * oldest start leaves the window; a full concurrency limit at the latest when the
 * (running - limit + 1)-th earliest slot lapses (sooner, when a transfer finishes).
 */
import type { UsageAttempt, UsageOutcome } from './repository.js';
import { windowStart } from './window.js';

/** One recorded action, as the limiter reads it. */
export interface UsageRow {
  licenseId: string | undefined;
  startedAt: Date;
  holdUntil: Date | undefined;
  /** A resumed download (a `Range` request continuing a counted one); false when absent. */
  resumed?: boolean;
}

/**
 * Resumed downloads of one license allowed per window, per download started in it: a resume
 * (`Range` from a byte after the first) continues a counted download of the same copy and does
 * not count as a new one, but each makes the service produce the copy again, so they are
 * bounded too: `RESUMES_PER_DOWNLOAD` times the per-license download rate.
 */
export const RESUMES_PER_DOWNLOAD = 4;

/**
 * Whether a resume attempt counts as a resume: only when a download of its license was
 * counted within the window. Otherwise it is a download like any other (so asking for
 * `bytes=1-` cannot dodge the download limits).
 */
export function countsAsResume(attempt: UsageAttempt, byLicense: readonly UsageRow[]): boolean {
  if (attempt.resume !== true) return false;
  const since = windowStart(attempt).getTime();
  return byLicense.some((r) => r.resumed !== true && r.startedAt.getTime() > since);
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
  // Running downloads hold slots whether resumed or not; the rates count new downloads and
  // resumes apart (`countsAsResume`, `RESUMES_PER_DOWNLOAD`).
  const resume = countsAsResume(attempt, byLicense);
  const fresh = (rows: readonly UsageRow[]) => rows.filter((r) => r.resumed !== true);
  const rates = resume
    ? [rateRefusal(byLicense.filter((r) => r.resumed === true), attempt.ratePerLicense * RESUMES_PER_DOWNLOAD, attempt, 'license')]
    : [rateRefusal(fresh(byLicense), attempt.ratePerLicense, attempt, 'license'),
      rateRefusal(fresh(byAccount), attempt.ratePerAccount, attempt, 'account')];
  const refusals = [
    concurrencyRefusal(byLicense, attempt.concurrentPerLicense, attempt, 'license'),
    concurrencyRefusal(byAccount, attempt.concurrentPerAccount, attempt, 'account'),
    ...rates,
  ].filter((r): r is Limited => r !== undefined);
  return refusals.sort((a, b) => b.retryAt.getTime() - a.retryAt.getTime())[0];
}


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
  const refusals = [
    concurrencyRefusal(byLicense, attempt.concurrentPerLicense, attempt, 'license'),
    concurrencyRefusal(byAccount, attempt.concurrentPerAccount, attempt, 'account'),
    rateRefusal(byLicense, attempt.ratePerLicense, attempt, 'license'),
    rateRefusal(byAccount, attempt.ratePerAccount, attempt, 'account'),
  ].filter((r): r is Limited => r !== undefined);
  return refusals.sort((a, b) => b.retryAt.getTime() - a.retryAt.getTime())[0];
}


/**
 * The sliding-window arithmetic of the key-release limits (SPEC "Limits": 20 per license and
 * 120 per user per hour), of the sign-in failure limits and of the verification-mail limits,
 * shared by both repository implementations so they decide alike. An event counts while it is younger than the window;
 * a full limit frees its next slot when the (used - limit + 1)-th oldest counted event ages out.
 */
import type {
  LimitState, ReleaseAttempt, ReleaseOutcome, ThrottleAttempt, Throttled,
} from './repository.js';

/**
 * The releases of one limit's scope inside the window, as much as a decision needs: how many
 * count (at most the limit: a fuller scope is refused alike) and the oldest of the newest
 * `limit` of them, whose ageing out frees the next slot. The SQL function of migration 10
 * reads exactly this from an index, so a release costs the same however many came before it.
 */
export interface WindowCount {
  used: number;
  first: Date | undefined;
}

/** The `WindowCount` of release times (ascending, all inside the window) under `limit`. */
export function windowCount(times: readonly Date[], limit: number): WindowCount {
  const kept = Number.isFinite(limit) ? times.slice(Math.max(0, times.length - Math.max(1, limit))) : times;
  return { used: Math.min(times.length, kept.length), first: kept[0] };
}

const plus = (at: Date, windowSeconds: number): Date => new Date(at.getTime() + windowSeconds * 1000);

function state(count: WindowCount, limit: number, now: Date, windowSeconds: number): LimitState {
  return { limit, used: count.used, resetAt: plus(count.first ?? now, windowSeconds) };
}

function retryAt(times: readonly Date[], limit: number, windowSeconds: number): Date {
  const at = times[Math.max(0, times.length - limit)] ?? new Date(0);
  return plus(at, windowSeconds);
}

/**
 * Decides an attempt from the window counts of its license and of its user. Returns the
 * refusal, or undefined when one more release fits both limits.
 */
export function refusal(attempt: ReleaseAttempt, byLicense: WindowCount,
  byUser: WindowCount): ReleaseOutcome | undefined {
  const { now, windowSeconds: w } = attempt;
  const licenseFull = byLicense.used >= attempt.perLicense;
  if (!licenseFull && byUser.used < attempt.perUser) return undefined;
  const full = licenseFull ? byLicense : byUser;
  return {
    kind: 'limited',
    scope: licenseFull ? 'license' : 'user',
    retryAt: plus(full.first ?? new Date(0), w),
    perLicense: state(byLicense, attempt.perLicense, now, w),
    perUser: state(byUser, attempt.perUser, now, w),
  };
}

/** The granted outcome after the release at `attempt.now` was recorded. */
export function granted(attempt: ReleaseAttempt, byLicense: WindowCount, byUser: WindowCount,
  releaseCount: number): ReleaseOutcome {
  const { now, windowSeconds: w } = attempt;
  const after = (c: WindowCount): WindowCount => ({ used: c.used + 1, first: c.first ?? now });
  return {
    kind: 'granted',
    releaseCount,
    perLicense: state(after(byLicense), attempt.perLicense, now, w),
    perUser: state(after(byUser), attempt.perUser, now, w),
  };
}

/**
 * Decides a sign-in or a mail request from the recorded times (ascending, all inside the
 * window) of its address and of its client. Returns the refusal, or undefined when one more
 * record fits both limits. When both are full the later retry time is given, since an earlier
 * retry would be refused.
 */
export function throttleRefusal(attempt: ThrottleAttempt, byAddress: readonly Date[],
  byIp: readonly Date[]): Throttled | undefined {
  const w = attempt.windowSeconds;
  const address = byAddress.length >= attempt.perAddress ? retryAt(byAddress, attempt.perAddress, w) : undefined;
  const ip = byIp.length >= attempt.perIp ? retryAt(byIp, attempt.perIp, w) : undefined;
  if (ip !== undefined && (address === undefined || ip > address)) return { kind: 'throttled', scope: 'ip', retryAt: ip };
  if (address !== undefined) return { kind: 'throttled', scope: 'address', retryAt: address };
  return undefined;
}

/** Start of the window for an attempt: events after this instant count. */
export function windowStart(attempt: Pick<ReleaseAttempt | ThrottleAttempt, 'now' | 'windowSeconds'>): Date {
  return new Date(attempt.now.getTime() - attempt.windowSeconds * 1000);
}

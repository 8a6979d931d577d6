/**
 * The sliding-window arithmetic of the key-release limits (SPEC "Limits": 20 per license and
 * 120 per user per hour), of the sign-in failure limits and of the verification-mail limits,
 * shared by both repository implementations so they decide alike. An event counts while it is younger than the window;
 * a full limit frees its next slot when the (used - limit + 1)-th oldest counted event ages out.
 */
import type {
  LimitState, ReleaseAttempt, ReleaseOutcome, ThrottleAttempt, Throttled,
} from './repository.js';

function state(times: readonly Date[], limit: number, now: Date, windowSeconds: number): LimitState {
  const first = times[0] ?? now;
  return { limit, used: times.length, resetAt: new Date(first.getTime() + windowSeconds * 1000) };
}

function retryAt(times: readonly Date[], limit: number, windowSeconds: number): Date {
  const at = times[Math.max(0, times.length - limit)] ?? new Date(0);
  return new Date(at.getTime() + windowSeconds * 1000);
}

/**
 * Decides an attempt from the release times (ascending, all inside the window) of its license
 * and of its user. Returns the refusal, or undefined when one more release fits both limits.
 */
export function refusal(attempt: ReleaseAttempt, byLicense: readonly Date[],
  byUser: readonly Date[]): ReleaseOutcome | undefined {
  const { now, windowSeconds: w } = attempt;
  const licenseFull = byLicense.length >= attempt.perLicense;
  if (!licenseFull && byUser.length < attempt.perUser) return undefined;
  return {
    kind: 'limited',
    scope: licenseFull ? 'license' : 'user',
    retryAt: licenseFull ? retryAt(byLicense, attempt.perLicense, w) : retryAt(byUser, attempt.perUser, w),
    perLicense: state(byLicense, attempt.perLicense, now, w),
    perUser: state(byUser, attempt.perUser, now, w),
  };
}

/** The granted outcome after the release at `attempt.now` was recorded. */
export function granted(attempt: ReleaseAttempt, byLicense: readonly Date[], byUser: readonly Date[],
  releaseCount: number): ReleaseOutcome {
  const { now, windowSeconds: w } = attempt;
  return {
    kind: 'granted',
    releaseCount,
    perLicense: state([...byLicense, now], attempt.perLicense, now, w),
    perUser: state([...byUser, now], attempt.perUser, now, w),
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

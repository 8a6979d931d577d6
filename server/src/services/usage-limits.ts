/**
 * Limits on the expensive things one account can make the service do (issue 15 items 2 and 3;
 * the per-license copy-download limits of issue 13): master uploads running at once, license
 * copies (each one decrypts, watermarks and re-encrypts the whole master) started per license
 * and per licensee within a window and running at once, and identify requests (each one
 * decodes an image) per seller within a window. Every count is kept in the database
 * (`Repository.tryStartUsage`), so several instances sharing it enforce one limit, and a
 * refusal is a 429 with `Retry-After`. A copy refused by its rate also writes a
 * `rate_limit.exceeded` event for the seller's webhooks, at most one per license per window.
 *
 * A running upload or download holds a slot that lapses `HOLD_SECONDS` after its last renewal;
 * a timer renews it while the transfer runs, and its end frees it. A process that dies
 * mid-transfer therefore frees its slots within `HOLD_SECONDS`, with no sweep to run.
 */
import type { QuotaLimits } from '../config.js';
import { ApiError, type ErrorCode } from '../errors.js';
import type { Repository, UsageAttempt, UsageOutcome, UsageProgress } from '../storage/repository.js';

/** How long a running transfer keeps its slot without a renewal. */
export const HOLD_SECONDS = 120;
/** How often a running transfer renews its slot: four renewals fit one hold. */
const RENEW_MS = (HOLD_SECONDS / 4) * 1000;

/** A running transfer's slot; `release` when it ends however it ends, `cancel` if it never began. */
export interface UsageSlot {
  /** Frees the slot (recording how far a copy download got); it still counts towards the rates. Idempotent. */
  release(): Promise<void>;
  /** Forgets the transfer altogether (it failed before any byte went out). Idempotent. */
  cancel(): Promise<void>;
}

/** Dependencies of the limiter. */
export interface UsageDeps {
  repo: Repository;
  now: () => Date;
  limits: QuotaLimits;
}

type Limited = Extract<UsageOutcome, { kind: 'limited' }>;

const retrySeconds = (outcome: Limited, now: Date): number =>
  Math.max(1, Math.ceil((outcome.retryAt.getTime() - now.getTime()) / 1000));

function refusal(code: ErrorCode, message: string, details: Record<string, unknown>, seconds: number): ApiError {
  return new ApiError(code, message, { ...details, retryAfterSeconds: seconds }, { 'Retry-After': String(seconds) });
}

/** Admits uploads, copies and identify requests within their limits. */
export class UsageLimiter {
  constructor(private readonly deps: UsageDeps) {}

  /** A slot for one more running upload of `accountId`, or `TOO_MANY_UPLOADS`. */
  async startUpload(accountId: string): Promise<UsageSlot> {
    const { concurrentPerAccount } = this.deps.limits.uploads;
    const outcome = await this.start({ kind: 'upload', accountId, licenseId: undefined, windowSeconds: 0,
      ratePerAccount: Infinity, ratePerLicense: Infinity, concurrentPerAccount, concurrentPerLicense: Infinity });
    if (outcome.kind === 'limited') {
      throw refusal('TOO_MANY_UPLOADS', `${outcome.limit} uploads of this account are running; retry when one ends`,
        { limit: outcome.limit }, retrySeconds(outcome, this.deps.now()));
    }
    return this.hold(outcome.id);
  }

  /**
   * A slot for one more download of `licenseId`'s copy (ETag `etag`) by its licensee
   * `accountId`, or `COPY_RATE_LIMITED` (too many started in the window) or
   * `TOO_MANY_DOWNLOADS` (too many running), each with the scope that is full: `license` or
   * `user`. `resumeFrom`: a `Range` request from that byte, which continues a cut download
   * recorded in the window instead of counting as a new one when there is one
   * (`storage/usage-window.ts` `resumeParent`). `progress` tells how far the download got; it
   * is recorded with each renewal and at the end.
   */
  async startCopy(accountId: string, licenseId: string, etag: string, resumeFrom: number | undefined,
    progress: () => UsageProgress): Promise<UsageSlot & { resumed: boolean }> {
    const c = this.deps.limits.copies;
    const outcome = await this.start({ kind: 'copy', accountId, licenseId, windowSeconds: c.windowSeconds,
      ratePerAccount: c.perUser, ratePerLicense: c.perLicense, concurrentPerAccount: c.concurrentPerUser,
      concurrentPerLicense: c.concurrentPerLicense, etag,
      ...(resumeFrom === undefined ? {} : { resume: { etag, from: resumeFrom } }) });
    if (outcome.kind === 'started') return { ...this.hold(outcome.id, progress), resumed: outcome.resumed === true };
    const scope = outcome.scope === 'license' ? 'license' : 'user';
    const seconds = retrySeconds(outcome, this.deps.now());
    if (outcome.reason === 'rate') {
      // The seller hears of it (`rate_limit.exceeded`), at most once per license per window.
      await this.deps.repo.notices.rateLimited({ licenseId, actorId: accountId, now: this.deps.now(), limit: 'copy', scope,
        windowSeconds: c.windowSeconds, retryAt: outcome.retryAt });
      throw refusal('COPY_RATE_LIMITED', `too many downloads of license copies for this ${scope}`,
        { scope, limit: outcome.limit, windowSeconds: c.windowSeconds }, seconds);
    }
    throw refusal('TOO_MANY_DOWNLOADS', `${outcome.limit} downloads for this ${scope} are running; retry when one ends`,
      { scope, limit: outcome.limit }, seconds);
  }

  /** Counts one identify request of `sellerId`, or refuses it with `IDENTIFY_RATE_LIMITED`. */
  async countIdentify(sellerId: string): Promise<void> {
    const { perSeller, windowSeconds } = this.deps.limits.identify;
    const outcome = await this.start({ kind: 'identify', accountId: sellerId, licenseId: undefined, windowSeconds,
      ratePerAccount: perSeller, ratePerLicense: Infinity, concurrentPerAccount: Infinity,
      concurrentPerLicense: Infinity }, false);
    if (outcome.kind === 'limited') {
      throw refusal('IDENTIFY_RATE_LIMITED', 'too many identify requests for this account',
        { limit: outcome.limit, windowSeconds }, retrySeconds(outcome, this.deps.now()));
    }
  }

  private async start(attempt: Omit<UsageAttempt, 'now' | 'holdUntil'>, holds = true): Promise<UsageOutcome> {
    const now = this.deps.now();
    return this.deps.repo.tryStartUsage({ ...attempt, now,
      holdUntil: holds ? new Date(now.getTime() + HOLD_SECONDS * 1000) : undefined });
  }

  /** The slot of a started transfer, renewed until it is released or cancelled. */
  private hold(id: string, progress?: () => UsageProgress): UsageSlot {
    const { repo, now } = this.deps;
    let done = false;
    const timer = setInterval(() => {
      // A failed renewal is harmless: the slot lapses HOLD_SECONDS later, and the next tick tries again.
      repo.renewUsage(id, new Date(now().getTime() + HOLD_SECONDS * 1000), progress?.()).catch(() => {});
    }, RENEW_MS);
    timer.unref();
    const end = async (how: (slotId: string) => Promise<void>) => {
      if (done) return;
      done = true;
      clearInterval(timer);
      // The database may be closing under a shutdown; the slot then lapses by itself.
      await how(id).catch(() => {});
    };
    return {
      release: () => end((slotId) => repo.finishUsage(slotId, progress?.())),
      cancel: () => end((slotId) => repo.cancelUsage(slotId)),
    };
  }
}

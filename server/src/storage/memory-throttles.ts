/**
 * The in-memory repository's throttles (failed sign-ins, verification mail, license creations)
 * and usage slots (uploads, copies, identifies), as `sql-throttles.ts` and `sql-usage.ts` keep
 * them. Each method runs without an `await` between its check and its write, so it is atomic on
 * Node's single thread.
 */
import type {
  MailOutcome, MailRequest, SignInAttempt, SignInOutcome, ThrottleAttempt, Throttled, UsageAttempt, UsageKind, UsageOutcome,
  UsageProgress,
} from './repository.js';
import { furthest, resumeParent, usageRefusal, type UsageRow } from './usage-window.js';
import { throttleRefusal, windowStart } from './window.js';

interface Throttle { id: string; addressHash: string; clientIp: string; at: Date }
interface Usage extends UsageRow { id: string; kind: UsageKind; accountId: string }

/** Throttle records and usage slots, in memory. */
export class MemoryThrottles {
  private signInFailures: Throttle[] = [];
  private mailRequests: Throttle[] = [];
  private licenseCreations: Throttle[] = [];
  private usages: Usage[] = [];
  private nextThrottleId = 1;

  async tryRecordLicenseCreation(attempt: ThrottleAttempt): Promise<MailOutcome> {
    const [kept, outcome] = this.recordThrottled(this.licenseCreations, attempt);
    this.licenseCreations = kept;
    return outcome.kind === 'recorded' ? { kind: 'recorded' } : outcome;
  }

  async tryRecordSignInFailure(attempt: SignInAttempt): Promise<SignInOutcome> {
    const [kept, outcome] = this.recordThrottled(this.signInFailures, attempt);
    this.signInFailures = kept;
    return outcome.kind === 'recorded' ? { kind: 'recorded', failureId: outcome.id } : outcome;
  }

  async withdrawSignInFailure(failureId: string): Promise<void> {
    this.signInFailures = this.signInFailures.filter((f) => f.id !== failureId);
  }

  async tryRecordMailRequest(request: MailRequest): Promise<MailOutcome> {
    const [kept, outcome] = this.recordThrottled(this.mailRequests, request);
    this.mailRequests = kept;
    return outcome.kind === 'recorded' ? { kind: 'recorded' } : outcome;
  }

  async tryStartUsage(attempt: UsageAttempt): Promise<UsageOutcome> {
    const since = windowStart(attempt).getTime();
    const now = attempt.now.getTime();
    // Rows that neither count towards a rate nor hold a slot are dropped, as the SQL sweep does.
    this.usages = this.usages.filter((u) => u.startedAt.getTime() > since || (u.holdUntil?.getTime() ?? 0) > now);
    const ofKind = this.usages.filter((u) => u.kind === attempt.kind);
    const byAccount = ofKind.filter((u) => u.accountId === attempt.accountId);
    const byLicense = attempt.licenseId === undefined ? [] : ofKind.filter((u) => u.licenseId === attempt.licenseId);
    const refused = usageRefusal(attempt, byAccount, byLicense);
    if (refused !== undefined) return refused;
    const id = String(this.nextThrottleId++);
    const parent = resumeParent(attempt, byLicense);
    this.usages.push({ id, kind: attempt.kind, accountId: attempt.accountId, licenseId: attempt.licenseId,
      startedAt: attempt.now, holdUntil: attempt.holdUntil, resumed: parent !== undefined,
      ...(parent?.id === undefined ? {} : { parentId: parent.id }), ...(attempt.etag === undefined ? {} : { etag: attempt.etag }) });
    return { kind: 'started', id, resumed: parent !== undefined };
  }

  async renewUsage(id: string, holdUntil: Date, progress?: UsageProgress): Promise<void> {
    const usage = this.usages.find((u) => u.id === id);
    if (usage?.holdUntil !== undefined) usage.holdUntil = holdUntil;
    if (progress !== undefined) this.progress(id, progress);
  }

  async finishUsage(id: string, progress?: UsageProgress): Promise<void> {
    const usage = this.usages.find((u) => u.id === id);
    if (usage !== undefined) usage.holdUntil = undefined;
    if (progress !== undefined) this.progress(id, progress);
  }

  /** Records how far a download got, on itself and on the download it resumes. */
  private progress(id: string, progress: UsageProgress): void {
    const usage = this.usages.find((u) => u.id === id);
    const parent = usage?.parentId === undefined ? undefined : this.usages.find((u) => u.id === usage.parentId);
    for (const row of [usage, parent]) if (row !== undefined) Object.assign(row, furthest(row, progress));
  }

  async cancelUsage(id: string): Promise<void> {
    this.usages = this.usages.filter((u) => u.id !== id);
  }

  /**
   * The list without the records that left the window (they never count again; dropping them
   * keeps it small) and, when both limits have room, the attempt recorded in it.
   */
  private recordThrottled(records: Throttle[], attempt: ThrottleAttempt):
  [Throttle[], { kind: 'recorded'; id: string } | Throttled] {
    const since = windowStart(attempt).getTime();
    const kept = records.filter((r) => r.at.getTime() > since);
    const inWindow = [...kept].sort((a, b) => a.at.getTime() - b.at.getTime());
    const byAddress = inWindow.filter((r) => r.addressHash === attempt.addressHash).map((r) => r.at);
    const byIp = inWindow.filter((r) => r.clientIp === attempt.clientIp).map((r) => r.at);
    const refused = throttleRefusal(attempt, byAddress, byIp);
    if (refused !== undefined) return [kept, refused];
    const id = String(this.nextThrottleId++);
    kept.push({ id, addressHash: attempt.addressHash, clientIp: attempt.clientIp, at: attempt.now });
    return [kept, { kind: 'recorded', id }];
  }
}

/**
 * `NoticeRecords` in memory, for `MemoryRepository`: the marks live here, beside the
 * repository's licenses; no `await` between a check and its write, so each method is atomic.
 */
import type { License, NewEvent } from './repository.js';
import { SYSTEM_ACTOR, type NoticeRecords, type RateLimitRefusal } from './notice-records.js';

/** The in-memory notice records over the repository's licenses. */
export class MemoryNoticeRecords implements NoticeRecords {
  private readonly expiryNoticed = new Set<string>();
  private readonly rateNoticed = new Map<string, number>();

  constructor(private readonly licenses: Map<string, License>, private readonly pushEvent: (e: NewEvent) => void) {}

  async noticeExpired(now: Date, limit: number): Promise<number> {
    const due = [...this.licenses.values()]
      .filter((l) => l.expiresAt !== undefined && l.expiresAt.getTime() <= now.getTime() && !this.expiryNoticed.has(l.id))
      .sort((a, b) => (a.expiresAt?.getTime() ?? 0) - (b.expiresAt?.getTime() ?? 0))
      .slice(0, limit);
    for (const l of due) {
      this.expiryNoticed.add(l.id);
      if (l.revokedAt !== undefined) continue;
      this.pushEvent({ at: now, kind: 'expire', actorId: SYSTEM_ACTOR, masterId: l.masterId, licenseId: l.id,
        details: { expiresAt: l.expiresAt?.toISOString() } });
    }
    return due.length;
  }

  async rateLimited(r: RateLimitRefusal): Promise<boolean> {
    const l = this.licenses.get(r.licenseId);
    const last = this.rateNoticed.get(r.licenseId);
    if (l === undefined || (last !== undefined && last > r.now.getTime() - r.windowSeconds * 1000)) return false;
    this.rateNoticed.set(r.licenseId, r.now.getTime());
    this.pushEvent({ at: r.now, kind: 'rate_limited', actorId: r.actorId, masterId: l.masterId, licenseId: l.id,
      details: { limit: r.limit, scope: r.scope, windowSeconds: r.windowSeconds, retryAt: r.retryAt.toISOString() } });
    return true;
  }
}

/**
 * `FlagRecords` in memory, for `MemoryRepository`: the flags live here, beside the
 * repository's licenses and masters; no `await` between a check and its write, so `raise` is
 * atomic, and it records the `flag` event on the same turn (the fake's fan-out).
 */
import type { License, Master, NewEvent } from './repository.js';
import { SYSTEM_ACTOR } from './notice-records.js';
import type { FlagQuery, FlagRecord, FlagRecords, NewFlag } from './flags-records.js';
import { flagDetails } from './sql-flags.js';

/** The in-memory flag records. */
export class MemoryFlagRecords implements FlagRecords {
  private readonly flags: FlagRecord[] = [];
  private nextSeq = 1;

  constructor(private readonly licenses: Map<string, License>, private readonly masters: Map<string, Master>,
    private readonly pushEvent: (e: NewEvent) => void) {}

  async raise(f: NewFlag): Promise<FlagRecord | undefined> {
    const license = this.licenses.get(f.licenseId);
    const master = license === undefined ? undefined : this.masters.get(license.masterId);
    if (license === undefined || master === undefined) return undefined;
    if (this.flags.some((x) => x.licenseId === f.licenseId && x.rule === f.rule
      && x.windowStart.getTime() === f.windowStart.getTime())) return undefined;
    const flag: FlagRecord = { ...f, masterId: master.id, sellerId: master.sellerId, dismissedAt: undefined,
      seq: String(this.nextSeq++) };
    this.flags.push(flag);
    this.pushEvent({ at: f.raisedAt, kind: 'flag', actorId: SYSTEM_ACTOR, masterId: master.id, licenseId: license.id,
      details: flagDetails(f) });
    return structuredClone(flag);
  }

  async list(q: FlagQuery): Promise<FlagRecord[]> {
    return this.flags.filter((f) => (q.licenseId === undefined || f.licenseId === q.licenseId)
      && (q.sellerId === undefined || f.sellerId === q.sellerId)
      && (q.state === 'all' || (q.state === 'open') === (f.dismissedAt === undefined))
      && (q.before === undefined || Number(f.seq) < Number(q.before)))
      .sort((a, b) => Number(b.seq) - Number(a.seq)).slice(0, q.limit).map((f) => structuredClone(f));
  }

  async openCounts(licenseIds: readonly string[]): Promise<Map<string, number>> {
    const out = new Map<string, number>();
    for (const f of this.flags) {
      if (f.dismissedAt === undefined && licenseIds.includes(f.licenseId)) out.set(f.licenseId, (out.get(f.licenseId) ?? 0) + 1);
    }
    return out;
  }

  async dismiss(licenseId: string, flagId: string, sellerId: string, now: Date): Promise<FlagRecord | undefined> {
    const f = this.flags.find((x) => x.id === flagId && x.licenseId === licenseId && x.sellerId === sellerId);
    if (f === undefined) return undefined;
    f.dismissedAt ??= now;
    return structuredClone(f);
  }

  async prune(before: Date): Promise<number> {
    const keep = this.flags.filter((f) => f.windowEnd.getTime() >= before.getTime());
    const n = this.flags.length - keep.length;
    this.flags.splice(0, this.flags.length, ...keep);
    return n;
  }
}

/**
 * `ActivityRecords` in memory, for `MemoryRepository`: the same quarter-hour counters as
 * migration 45, kept in maps. Reads answer in UTC only (a bucket is then a fixed number of
 * quarter hours); another zone is refused as the SQL store refuses an unknown one, since time
 * zone rules live in the database. The SQL store is what serves pages; this keeps service tests fast.
 */
import {
  emptyCounts, REFUSAL_REASONS, type ActivityCounts, type ActivityKind, type ActivityRecords, type BucketQuery,
  type BucketRange, type ClientMark, type LicenseActivity, type RefusalReason, type WindowMeasure, type WindowThresholds,
  type ZonedTime,
} from './activity-records.js';
import type { License } from './repository.js';

const SLOT_MS = 15 * 60 * 1000;
const BUCKET_MS = { hour: 3600 * 1000, day: 86400 * 1000 } as const;

interface Slot { licenseId: string; slot: number; counts: ActivityCounts; addrs: Set<string>; devices: Set<string> }

const utc = (ms: number): ZonedTime => ({ at: new Date(ms), local: new Date(ms).toISOString().slice(0, 19), offsetSeconds: 0 });

/** The in-memory activity records over the repository's licenses. */
export class MemoryActivityRecords implements ActivityRecords {
  private readonly slots = new Map<string, Slot>();
  /** Release times per license, for the gaps of `measureWindow` (the SQL store reads key_releases). */
  private readonly releaseTimes = new Map<string, number[]>();

  constructor(private readonly licenses: Map<string, License>) {}

  /** Synchronous `record`, for the fake's atomic release. */
  add(licenseId: string, at: Date, kind: ActivityKind, mark: ClientMark = {}): void {
    if (!this.licenses.has(licenseId)) throw new Error(`no license ${licenseId}`);
    const slot = Math.floor(at.getTime() / SLOT_MS) * SLOT_MS;
    const key = `${licenseId}/${slot}`;
    const s = this.slots.get(key) ?? { licenseId, slot, counts: emptyCounts(), addrs: new Set(), devices: new Set() };
    this.slots.set(key, s);
    if (kind === 'release') {
      s.counts.releases += 1;
      this.releaseTimes.set(licenseId, [...this.releaseTimes.get(licenseId) ?? [], at.getTime()]);
    }
    else if (kind === 'download') s.counts.downloads += 1;
    else if (kind === 'resume') s.counts.resumes += 1;
    else s.counts.refusals[kind] += 1;
    if (mark.addrHash !== undefined) s.addrs.add(Buffer.from(mark.addrHash).toString('hex'));
    if (mark.deviceId !== undefined) s.devices.add(mark.deviceId);
  }

  async record(licenseId: string, at: Date, kind: ActivityKind, mark?: ClientMark): Promise<void> {
    this.add(licenseId, at, kind, mark);
  }

  async buckets(q: BucketQuery): Promise<BucketRange> {
    if (q.timeZone !== 'UTC') throw new RangeError(`unknown time zone ${q.timeZone}`);
    const size = BUCKET_MS[q.bucket];
    const from = Math.floor(q.from.getTime() / size) * size;
    const to = Math.ceil(q.to.getTime() / size) * size;
    const starts: ZonedTime[] = [];
    for (let t = from; t < to; t += size) starts.push(utc(t));
    return { from: utc(from), to: utc(to), starts };
  }

  async licenseSeries(licenseId: string, q: BucketQuery): Promise<Map<number, ActivityCounts>> {
    const out = new Map<number, { counts: ActivityCounts; addrs: Set<string>; devices: Set<string> }>();
    for (const s of this.inRange(q, (id) => id === licenseId)) {
      const start = Math.floor(s.slot / BUCKET_MS[q.bucket]) * BUCKET_MS[q.bucket];
      const b = out.get(start) ?? { counts: emptyCounts(), addrs: new Set<string>(), devices: new Set<string>() };
      out.set(start, b);
      b.counts.releases += s.counts.releases;
      b.counts.downloads += s.counts.downloads;
      b.counts.resumes += s.counts.resumes;
      for (const r of REFUSAL_REASONS) b.counts.refusals[r] += s.counts.refusals[r];
      s.addrs.forEach((a) => b.addrs.add(a));
      s.devices.forEach((d) => b.devices.add(d));
    }
    return new Map([...out].map(([k, b]) => [k, { ...b.counts, addresses: b.addrs.size, devices: b.devices.size }]));
  }

  async masterSummary(masterId: string, q: BucketQuery, max: number): Promise<{ licenses: LicenseActivity[]; total: number }> {
    const all = [...this.licenses.values()].filter((l) => l.masterId === masterId).map((l) => {
      const totals = { releases: 0, downloads: 0, resumes: 0, refusals: 0, addresses: 0, devices: 0 };
      const addrs = new Set<string>();
      const devices = new Set<string>();
      const releases = new Map<number, number>();
      for (const s of this.inRange(q, (id) => id === l.id)) {
        totals.releases += s.counts.releases;
        totals.downloads += s.counts.downloads;
        totals.resumes += s.counts.resumes;
        totals.refusals += REFUSAL_REASONS.reduce((n, r: RefusalReason) => n + s.counts.refusals[r], 0);
        s.addrs.forEach((a) => addrs.add(a));
        s.devices.forEach((d) => devices.add(d));
        const start = Math.floor(s.slot / BUCKET_MS[q.bucket]) * BUCKET_MS[q.bucket];
        if (s.counts.releases > 0) releases.set(start, (releases.get(start) ?? 0) + s.counts.releases);
      }
      return { license: l, activity: { licenseId: l.id, licenseeEmail: l.licenseeEmail, revokedAt: l.revokedAt,
        suspendedAt: l.suspendedAt, expiresAt: l.expiresAt,
        totals: { ...totals, addresses: addrs.size, devices: devices.size }, releases } };
    });
    all.sort((a, b) => b.activity.totals.releases - a.activity.totals.releases
      || a.license.issuedAt.getTime() - b.license.issuedAt.getTime() || (a.license.id < b.license.id ? -1 : 1));
    return { licenses: all.slice(0, max).map((x) => x.activity), total: all.length };
  }

  async measureWindow(start: Date, end: Date, t: WindowThresholds, max: number): Promise<WindowMeasure[]> {
    const q: BucketQuery = { from: start, to: end, bucket: 'day', timeZone: 'UTC' };
    const out: WindowMeasure[] = [];
    for (const id of new Set([...this.slots.values()].map((s) => s.licenseId))) {
      const slots = this.inRange(q, (x) => x === id);
      if (slots.length === 0) continue;
      const addrs = new Set(slots.flatMap((s) => [...s.addrs]));
      const devices = new Set(slots.flatMap((s) => [...s.devices]));
      const m: WindowMeasure = { licenseId: id, releases: slots.reduce((n, s) => n + s.counts.releases, 0),
        rateLimited: slots.reduce((n, s) => n + s.counts.refusals.rate_limited, 0), addresses: addrs.size,
        devices: devices.size, gapCv: undefined };
      const times = (this.releaseTimes.get(id) ?? []).filter((x) => x >= start.getTime() && x < end.getTime()).sort((a, b) => a - b);
      if (times.length >= t.releases && times.length > 1) {
        const gaps = times.slice(1).map((x, i) => (x - (times[i] ?? x)) / 1000);
        const mean = gaps.reduce((a, b) => a + b, 0) / gaps.length;
        const sd = Math.sqrt(gaps.reduce((a, g) => a + (g - mean) ** 2, 0) / gaps.length);
        m.gapCv = mean === 0 ? undefined : sd / mean;
      }
      if (m.rateLimited >= t.rateLimited || m.addresses > t.addresses || m.devices > t.devices || m.releases >= t.releases) {
        out.push(m);
      }
    }
    return out.sort((a, b) => b.releases - a.releases || (a.licenseId < b.licenseId ? -1 : 1)).slice(0, max);
  }

  async prune(before: Date): Promise<number> {
    let n = 0;
    for (const [key, s] of this.slots) {
      if (s.slot < before.getTime()) {
        this.slots.delete(key);
        n += 1;
      }
    }
    return n;
  }

  private inRange(q: BucketQuery, match: (licenseId: string) => boolean): Slot[] {
    return [...this.slots.values()].filter((s) => match(s.licenseId) && s.slot >= q.from.getTime() && s.slot < q.to.getTime());
  }
}

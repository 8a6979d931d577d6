/**
 * Raising flags (issue 29 item 3): every `sweepSeconds` each instance measures the current
 * and the previous flag window (fixed windows of `windowSeconds` since 1970, so instances
 * agree on them) over the activity counters, and raises a flag per rule a license crossed:
 *
 * - `rate_limit`: at least `rateLimitHits` refusals by a release or download limit;
 * - `addresses`: more than `maxAddresses` distinct address prefixes;
 * - `devices`: more than `maxDevices` distinct player devices;
 * - `scripted`: at least `scriptedMinReleases` releases whose gaps vary by less than
 *   `scriptedMaxCv` (coefficient of variation): a timer, not a person.
 *
 * A sweep reads the window's counters through the `slot` indexes (one statement) and the
 * release times of the busiest licenses only. With several instances every one sweeps; the
 * flag's unique (license, rule, window start) raises it once (and its `license.flagged` event
 * once). Flags this process raised or found are remembered for the window, so a sweep inserts
 * nothing it already knows.
 */
import { randomBytes } from 'node:crypto';
import type { FlagSettings } from '../activity-config.js';
import type { Logger } from '../logger.js';
import type { WindowMeasure } from '../storage/activity-records.js';
import type { FlagRule, NewFlag } from '../storage/flags-records.js';
import type { Repository } from '../storage/repository.js';

/** Licenses measured per window and sweep at most (the busiest first). */
export const SWEEP_MAX_LICENSES = 5000;

/** Dependencies of the sweeper. */
export interface FlagSweepDeps {
  repo: Repository;
  now: () => Date;
  settings: FlagSettings;
  logger: Logger;
}

/** The rules a window's counts break, with what was measured against what. */
export function brokenRules(m: WindowMeasure, s: FlagSettings): { rule: FlagRule; value: number; threshold: number }[] {
  const out: { rule: FlagRule; value: number; threshold: number }[] = [];
  if (m.rateLimited >= s.rateLimitHits) out.push({ rule: 'rate_limit', value: m.rateLimited, threshold: s.rateLimitHits });
  if (m.addresses > s.maxAddresses) out.push({ rule: 'addresses', value: m.addresses, threshold: s.maxAddresses });
  if (m.devices > s.maxDevices) out.push({ rule: 'devices', value: m.devices, threshold: s.maxDevices });
  if (m.gapCv !== undefined && m.releases >= s.scriptedMinReleases && m.gapCv < s.scriptedMaxCv) {
    out.push({ rule: 'scripted', value: Math.round(m.gapCv * 10_000) / 10_000, threshold: s.scriptedMaxCv });
  }
  return out;
}

/** Sweeps for flags until stopped. */
export class FlagSweeper {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<unknown> = Promise.resolve();
  private stopped = true;
  /** `license/rule/windowStart` of flags known to exist, for the windows still swept. */
  private known = new Set<string>();
  private knownWindow = 0;

  constructor(private readonly deps: FlagSweepDeps) {}

  /** Measures the current and the previous window once; returns how many flags this raised. */
  async sweep(): Promise<number> {
    const { settings } = this.deps;
    const now = this.deps.now().getTime();
    const size = settings.windowSeconds * 1000;
    const current = Math.floor(now / size) * size;
    if (current !== this.knownWindow) {
      // Keep what is known of the previous window (it is still swept), drop anything older.
      const previous = current - size;
      this.known = new Set([...this.known].filter((k) => k.endsWith(`/${previous}`)));
      this.knownWindow = current;
    }
    let raised = 0;
    for (const start of [current - size, current]) raised += await this.sweepWindow(start, start + size);
    return raised;
  }

  private async sweepWindow(start: number, end: number): Promise<number> {
    const { repo, settings } = this.deps;
    const measured = await repo.activity.measureWindow(new Date(start), new Date(end), {
      rateLimited: settings.rateLimitHits, addresses: settings.maxAddresses, devices: settings.maxDevices,
      releases: settings.scriptedMinReleases }, SWEEP_MAX_LICENSES);
    let raised = 0;
    for (const m of measured) {
      for (const broken of brokenRules(m, settings)) {
        const key = `${m.licenseId}/${broken.rule}/${start}`;
        if (this.known.has(key)) continue;
        const flag: NewFlag = { id: `fl_${randomBytes(12).toString('hex')}`, licenseId: m.licenseId, ...broken,
          raisedAt: this.deps.now(), windowStart: new Date(start), windowEnd: new Date(end) };
        if (await repo.flags.raise(flag) !== undefined) raised += 1;
        this.known.add(key);
      }
    }
    return raised;
  }

  /** Sweeps every `sweepSeconds` (none when 0) until `stop`. */
  start(): void {
    if (!this.stopped || this.deps.settings.sweepSeconds === 0) return;
    this.stopped = false;
    const tick = () => {
      this.running = this.sweep().catch((err: unknown) => {
        this.deps.logger.warn('flag sweep failed', { error: err instanceof Error ? err.message : String(err) });
      }).finally(() => {
        if (!this.stopped) {
          this.timer = setTimeout(tick, this.deps.settings.sweepSeconds * 1000);
          this.timer.unref();
        }
      });
    };
    tick();
  }

  /** Stops sweeping and waits for the sweep under way. */
  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    await this.running;
  }
}

/**
 * The flag settings (issue 29 item 3), read by `config.ts` with its validating reader and
 * documented in server/README.md. A flag is raised at most once per license, rule and window;
 * the windows are fixed (aligned to multiples of the window since 1970, so every instance
 * agrees on them) and the sweeper (services/flags-sweep.ts) looks at the current and the
 * previous one.
 */

/** When a license is flagged. */
export interface FlagSettings {
  /** The window every rule counts over (IKI_FLAG_WINDOW_HOURS). */
  windowSeconds: number;
  /** How often an instance sweeps (IKI_FLAG_SWEEP_SECONDS); 0 turns flagging off. */
  sweepSeconds: number;
  /** `rate_limit`: refusals by a release or download limit in the window, at least (IKI_FLAG_RATE_LIMIT_HITS). */
  rateLimitHits: number;
  /** `addresses`: distinct address prefixes in the window, more than (IKI_FLAG_MAX_ADDRESSES). */
  maxAddresses: number;
  /** `devices`: distinct player devices in the window, more than (IKI_FLAG_MAX_DEVICES). */
  maxDevices: number;
  /** `scripted`: looked at from this many releases in the window (IKI_FLAG_SCRIPTED_MIN_RELEASES). */
  scriptedMinReleases: number;
  /**
   * `scripted`: the coefficient of variation (standard deviation / mean) of the gaps between
   * releases below this (IKI_FLAG_SCRIPTED_MAX_CV). People open a model when they like; a
   * timer does it every N minutes, give or take its jitter.
   */
  scriptedMaxCv: number;
}

/**
 * The defaults. A day: abuse shows over a day, and a day's flag per rule is what a seller can
 * read. One refusal by a limit is already unusual (the limits are far above a person's use).
 * Four prefixes: home, work, phone and a café; more from one license in a day looks shared.
 * Three devices: the player's id is per browser profile and license. 24 releases at a CV under
 * 0.1: a person's gaps vary by far more than 10 %; Poisson-like use has a CV near 1.
 */
export const FLAG_DEFAULTS: FlagSettings = { windowSeconds: 86_400, sweepSeconds: 300, rateLimitHits: 1, maxAddresses: 4,
  maxDevices: 3, scriptedMinReleases: 24, scriptedMaxCv: 0.1 };

/** What `readFlagSettings` needs of config.ts's reader. */
export interface FlagReader {
  int(name: string, fallback: number, min: number, max: number): number;
  str(name: string): string | undefined;
  problem(text: string): void;
}

/** Reads the flag settings through `r`. */
export function readFlagSettings(r: FlagReader): FlagSettings {
  const d = FLAG_DEFAULTS;
  const cvText = r.str('IKI_FLAG_SCRIPTED_MAX_CV');
  let cv = d.scriptedMaxCv;
  if (cvText !== undefined) {
    cv = /^(?:0|0?\.[0-9]{1,4}|1(?:\.0{1,4})?)$/.test(cvText) ? Number(cvText) : Number.NaN;
    if (Number.isNaN(cv)) r.problem('IKI_FLAG_SCRIPTED_MAX_CV must be a number from 0 to 1 (for example 0.1)');
  }
  return {
    windowSeconds: r.int('IKI_FLAG_WINDOW_HOURS', d.windowSeconds / 3600, 1, 7 * 24) * 3600,
    sweepSeconds: r.int('IKI_FLAG_SWEEP_SECONDS', d.sweepSeconds, 0, 86_400),
    rateLimitHits: r.int('IKI_FLAG_RATE_LIMIT_HITS', d.rateLimitHits, 1, 1_000_000),
    maxAddresses: r.int('IKI_FLAG_MAX_ADDRESSES', d.maxAddresses, 1, 1_000_000),
    maxDevices: r.int('IKI_FLAG_MAX_DEVICES', d.maxDevices, 1, 1_000_000),
    scriptedMinReleases: r.int('IKI_FLAG_SCRIPTED_MIN_RELEASES', d.scriptedMinReleases, 3, 1_000_000),
    scriptedMaxCv: Number.isNaN(cv) ? d.scriptedMaxCv : cv,
  };
}

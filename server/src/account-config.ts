/**
 * Sessions, password resets and the account-side limits (issue 14 items 1-2, issue 15 items 1,
 * 9 and 12), read by `config.ts` with its validating reader: their shape, their defaults and
 * how the defaults were chosen. Documented in server/README.md.
 */

/** The account settings. */
export interface AccountSettings {
  /** A session ends when unused this long (IKI_SESSION_IDLE_SECONDS). */
  sessionIdleSeconds: number;
  /** ... and this long after sign-in whatever its use (IKI_SESSION_MAX_SECONDS). */
  sessionMaxSeconds: number;
  /** A password-reset link works once, within this time. */
  passwordResetTtlSeconds: number;
  /** Mail requests (sign-ups, resends, resets) of all addresses and clients per mail window (IKI_MAILS_TOTAL). */
  mailsTotal: number;
  /** License creations per seller per hour (IKI_LICENSES_PER_SELLER_PER_HOUR). */
  licensesPerSellerPerHour: number;
  /** IKI_ALLOW_LOG_MAIL=1: an https service may write mail links to its log instead of sending them. */
  allowLogMail: boolean;
  /**
   * A replaced refresh token still refreshes (without a new one) this long after it was
   * replaced, for tabs that refresh at once; used later it ends the session
   * (IKI_REFRESH_REUSE_GRACE_SECONDS, issue 22 item 8).
   */
  refreshReuseGraceSeconds?: number;
}

const DAY = 24 * 3600;

/** The defaults. */
export const ACCOUNT_DEFAULTS: Required<AccountSettings> = {
  // A browser or CLI session lasts a month unused and a quarter at most; the access token it
  // refreshes lives 15 minutes, and every request checks the session, so a revoked one stops at once.
  sessionIdleSeconds: 30 * DAY,
  sessionMaxSeconds: 90 * DAY,
  passwordResetTtlSeconds: 3600,
  // Past this many mail requests an hour from everyone together the service is being used to
  // send mail, not to sign people up: refuse until the window frees.
  mailsTotal: 1000,
  // Each creation by e-mail tells whether the address has a verified account; a seller who
  // licenses more than this an hour is scripted.
  licensesPerSellerPerHour: 200,
  allowLogMail: false,
  // Tabs loading at once refresh within milliseconds of each other; 10 s covers a slow network
  // and leaves a thief who replays a copy only that long after the owner's refresh.
  refreshReuseGraceSeconds: 10,
};

/** What `readAccountSettings` needs of config.ts's reader. */
export interface SettingsReader {
  int(name: string, fallback: number, min: number, max: number): number;
  str(name: string): string | undefined;
  problem(text: string): void;
}

/** Reads the account settings from the environment through `r`. */
export function readAccountSettings(r: SettingsReader): AccountSettings {
  const d = ACCOUNT_DEFAULTS;
  const allow = r.str('IKI_ALLOW_LOG_MAIL');
  if (allow !== undefined && allow !== '1' && allow !== '0') r.problem('IKI_ALLOW_LOG_MAIL must be 1 or 0');
  const idle = r.int('IKI_SESSION_IDLE_SECONDS', d.sessionIdleSeconds, 300, 365 * DAY);
  const max = r.int('IKI_SESSION_MAX_SECONDS', d.sessionMaxSeconds, 300, 5 * 365 * DAY);
  if (max < idle) r.problem('IKI_SESSION_MAX_SECONDS must be at least IKI_SESSION_IDLE_SECONDS');
  return {
    sessionIdleSeconds: idle, sessionMaxSeconds: max,
    passwordResetTtlSeconds: d.passwordResetTtlSeconds,
    mailsTotal: r.int('IKI_MAILS_TOTAL', d.mailsTotal, 1, 10_000_000),
    licensesPerSellerPerHour: r.int('IKI_LICENSES_PER_SELLER_PER_HOUR', d.licensesPerSellerPerHour, 1, 1_000_000),
    allowLogMail: allow === '1',
    refreshReuseGraceSeconds: r.int('IKI_REFRESH_REUSE_GRACE_SECONDS', d.refreshReuseGraceSeconds, 0, 300),
  };
}

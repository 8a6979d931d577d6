/**
 * The webhook delivery settings (issue 26 item 4), read by `config.ts` with its validating
 * reader. Documented in server/README.md and docs/deploy.md.
 */

/** How webhooks are delivered. */
export interface WebhookSettings {
  /** IKI_WEBHOOK_ALLOW_PRIVATE=1: private, loopback and link-local destinations allowed (development only). */
  allowPrivate: boolean;
  /** Deadline of one delivery, connection to last byte (IKI_WEBHOOK_TIMEOUT_MS). */
  timeoutMs: number;
  /** How often an idle instance looks for due deliveries (IKI_WEBHOOK_POLL_MS). */
  pollMs: number;
  /** A delivery is retried with exponential backoff for this long; an endpoint failing this long is disabled (IKI_WEBHOOK_RETRY_HOURS). */
  retryHours: number;
}

/** The defaults: Stripe retries for three days; a shop's endpoint answers within seconds. */
export const WEBHOOK_DEFAULTS: WebhookSettings = { allowPrivate: false, timeoutMs: 10_000, pollMs: 2000, retryHours: 72 };

/** What `readWebhookSettings` needs of config.ts's reader. */
export interface WebhookReader {
  int(name: string, fallback: number, min: number, max: number): number;
  str(name: string): string | undefined;
  problem(text: string): void;
}

/** Reads the webhook settings through `r`. */
export function readWebhookSettings(r: WebhookReader): WebhookSettings {
  const d = WEBHOOK_DEFAULTS;
  const allow = r.str('IKI_WEBHOOK_ALLOW_PRIVATE');
  if (allow !== undefined && allow !== '1' && allow !== '0') r.problem('IKI_WEBHOOK_ALLOW_PRIVATE must be 1 or 0');
  return {
    allowPrivate: allow === '1',
    timeoutMs: r.int('IKI_WEBHOOK_TIMEOUT_MS', d.timeoutMs, 100, 60_000),
    pollMs: r.int('IKI_WEBHOOK_POLL_MS', d.pollMs, 10, 600_000),
    retryHours: r.int('IKI_WEBHOOK_RETRY_HOURS', d.retryHours, 24, 30 * 24),
  };
}

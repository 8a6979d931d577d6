/**
 * Outgoing mail. `Mailer` is what the account module needs; `smtp-mailer.ts` sends over SMTP
 * when IKI_SMTP_URL is set. Without it the default mailer writes the verification link to the
 * log, which is enough for the embedded single-user default and for tests (the log then holds
 * a credential: whoever reads it can verify the address).
 */
import type { Logger } from '../logger.js';

/** Sends the messages the account module needs. */
export interface Mailer {
  /** Sends the link; resolves once the message is handed over or its failure logged. */
  sendVerification(to: string, link: string): Promise<void>;
  /** Sends a password-reset link valid for `ttlSeconds` (optional for test mailers). */
  sendPasswordReset?(to: string, link: string, ttlSeconds: number): Promise<void>;
  /** Tells a seller that a webhook endpoint was disabled after failing (issue 26 item 4; optional for test mailers). */
  sendWebhookDisabled?(to: string, url: string, reason: string): Promise<void>;
}

/**
 * A mailer that logs each message instead of sending it, at the logger's `link` level (its
 * own level, issue 15 item 12) when it has one. Refused at start for an https service unless
 * IKI_ALLOW_LOG_MAIL=1 (config.ts).
 */
export function logMailer(logger: Logger): Mailer {
  const log = (message: string, fields: Record<string, unknown>) => (logger.link ?? logger.info).call(logger, message, fields);
  return {
    async sendVerification(to, link) {
      log('e-mail verification link (no SMTP configured)', { to, link });
    },
    async sendPasswordReset(to, link) {
      log('password-reset link (no SMTP configured)', { to, link });
    },
    async sendWebhookDisabled(to, url, reason) {
      log('webhook endpoint disabled notice (no SMTP configured)', { to, url, reason });
    },
  };
}

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
}

/** A mailer that logs each message instead of sending it. */
export function logMailer(logger: Logger): Mailer {
  return {
    async sendVerification(to, link) {
      logger.info('e-mail verification link (no SMTP configured)', { to, link });
    },
  };
}

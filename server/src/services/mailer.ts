/**
 * Outgoing mail. No SMTP support is built in: the default mailer writes the verification link
 * to the log, which is enough for the embedded single-user default and for tests.
 */
import type { Logger } from '../logger.js';

/** Sends the messages the account module needs. */
export interface Mailer {
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

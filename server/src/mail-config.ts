/**
 * Outgoing mail settings (IKI_SMTP_URL, IKI_SMTP_STARTTLS, IKI_MAIL_FROM), read by `config.ts`
 * with its validating reader. The URL carries credentials, so it is read as a secret and never
 * quoted in a problem.
 */
import type { Reader } from './config-reader.js';
import { parseMailbox, parseSmtpUrl, SmtpServer, MAX_MAIL_ADDRESS_CHARS, MAX_MAIL_LOCAL_PART_CHARS, type Mailbox,
  type StartTls } from './services/mail-settings.js';

/** STARTTLS on smtp:// unless set otherwise: a server that does not offer it is refused. */
export const DEFAULT_START_TLS: StartTls = 'required';

/** Outgoing mail (`services/smtp-mailer.ts`). */
export interface MailConfig {
  /** IKI_SMTP_URL and IKI_SMTP_STARTTLS; prints without its credentials. */
  smtp: SmtpServer;
  /** The From of every message (IKI_MAIL_FROM). */
  from: Mailbox;
}

function readStartTls(r: Reader, secure: boolean): StartTls {
  const raw = r.str('IKI_SMTP_STARTTLS');
  if (raw === undefined || secure) {
    if (raw !== undefined) r.problems.push('IKI_SMTP_STARTTLS applies to smtp:// only (smtps:// is TLS from the first byte)');
    return DEFAULT_START_TLS;
  }
  if (raw === 'required' || raw === 'optional' || raw === 'off') return raw;
  r.problems.push('IKI_SMTP_STARTTLS must be "required", "optional" or "off"');
  return DEFAULT_START_TLS;
}

/** IKI_SMTP_URL, IKI_SMTP_STARTTLS and IKI_MAIL_FROM; none of them alone is a valid setting. */
export function readMail(r: Reader): MailConfig | undefined {
  const url = r.secret('IKI_SMTP_URL');
  const fromRaw = r.str('IKI_MAIL_FROM');
  if (url === undefined) {
    if (fromRaw !== undefined || r.str('IKI_SMTP_STARTTLS') !== undefined) {
      r.problems.push('IKI_MAIL_FROM and IKI_SMTP_STARTTLS take effect only with IKI_SMTP_URL, which is not set');
    }
    return undefined;
  }
  const parts = parseSmtpUrl(url, 'IKI_SMTP_URL', r.problems);
  const startTls = readStartTls(r, parts?.secure ?? false);
  const from = fromRaw === undefined ? undefined : parseMailbox(fromRaw);
  if (fromRaw === undefined) r.problems.push('IKI_MAIL_FROM is required when IKI_SMTP_URL is set');
  else if (from === undefined) {
    r.problems.push('IKI_MAIL_FROM must be an address such as no-reply@iki.example or "iki <no-reply@iki.example>", '
      + `at most ${MAX_MAIL_ADDRESS_CHARS} characters with at most ${MAX_MAIL_LOCAL_PART_CHARS} before the @`);
  }
  if (parts === undefined || from === undefined) return undefined;
  return { smtp: new SmtpServer(parts.host, parts.port, parts.secure, startTls, parts.credentials), from };
}

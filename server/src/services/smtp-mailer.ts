/**
 * Outgoing mail over SMTP (RFC 5321) with nodemailer: the e-mail verification message of
 * sign-up (task "Accounts and tokens"). `smtp://` upgrades with STARTTLS (RFC 3207) as
 * IKI_SMTP_STARTTLS says; `smtps://` is TLS from the first byte (RFC 8314 §3.3). Certificates
 * are checked against the host name (Node's defaults). One connection per message, no pool:
 * sign-ups are rare, and a pool would hold a connection the server may have dropped.
 *
 * Failure: a message that cannot be handed to the server is logged as an error and
 * `sendVerification` resolves anyway, so sign-up answers 201. Failing sign-up instead would
 * not undo anything: `AccountService.signUp` has stored the account before it sends, so the
 * user would see an error, retry and be told the address is taken. The log line names the
 * recipient and the SMTP error (code, reply code, reason) but never the link, which verifies
 * the address by itself, nor the SMTP password; server replies that quote either are redacted.
 *
 * Time: every step is bounded (`SMTP_TIMEOUTS`), so a hung server delays a sign-up by tens of
 * seconds at worst, never forever.
 */
import { isIP } from 'node:net';
import type { ConnectionOptions } from 'node:tls';
import { createTransport } from 'nodemailer';
import type SMTPTransport from 'nodemailer/lib/smtp-transport/index.js';
import type { MailConfig, SmtpServer } from '../config.js';
import type { LogFields, Logger } from '../logger.js';
import type { Mailer } from './mailer.js';

/** Subject of the verification message. */
export const VERIFICATION_SUBJECT = 'Verify your e-mail address for iki';
export const RESET_SUBJECT = 'Reset your iki password';

/**
 * Per-step limits in milliseconds. nodemailer's defaults (two minutes to connect, ten minutes
 * of socket silence) would hold a sign-up request far past any client's patience; a healthy
 * submission server answers each step in well under a second, and 15 s leaves room for a slow
 * DNS answer or a distant server. `connectionMs` covers DNS and TCP together.
 */
export const SMTP_TIMEOUTS = { connectionMs: 15_000, greetingMs: 15_000, socketMs: 30_000, dnsMs: 10_000 } as const;

/** Timeouts as `SMTP_TIMEOUTS` names them. */
export type SmtpTimeouts = { [K in keyof typeof SMTP_TIMEOUTS]: number };

/** Options of `smtpMailer`. */
export interface SmtpMailerOptions {
  logger: Logger;
  /** How long the link is valid (`Config.verificationTtlSeconds`), told in the message. */
  verificationTtlSeconds: number;
  /** Shorter timeouts (tests); `SMTP_TIMEOUTS` otherwise. */
  timeouts?: Partial<SmtpTimeouts>;
  /** Extra TLS options, such as a test CA; never from the environment. */
  tls?: ConnectionOptions;
}

/** A mailer over SMTP that can also check the server and be closed. */
export interface SmtpMailer extends Mailer {
  /**
   * Connects, upgrades and authenticates once without sending; logs a warning and resolves
   * false when that fails. Never rejects, so it can run in the background at start.
   */
  check(): Promise<boolean>;
  close(): void;
}

/**
 * Whether messages (and AUTH) may cross a network in plain text: STARTTLS not required and the
 * server not on the loopback interface, where plain text never leaves the machine.
 */
export function mayCrossNetworkInPlainText(smtp: SmtpServer): boolean {
  const loopback = smtp.host === 'localhost' || smtp.host === '::1' || (isIP(smtp.host) === 4 && smtp.host.startsWith('127.'));
  return !smtp.secure && smtp.startTls !== 'required' && !loopback;
}

/** "24 hours", "90 minutes", "45 seconds": the largest whole unit. */
export function describeDuration(seconds: number): string {
  const [count, unit] = seconds % 3600 === 0 ? [seconds / 3600, 'hour']
    : seconds % 60 === 0 ? [seconds / 60, 'minute'] : [seconds, 'second'];
  return `${count} ${unit}${count === 1 ? '' : 's'}`;
}

/** The verification message's plain text (no HTML part: a bare link works in every client). */
export function verificationText(link: string, ttlSeconds: number): string {
  return [
    'Hello,',
    '',
    'someone, probably you, signed up for an iki account with this e-mail address.',
    'To confirm that the address is yours, open this link:',
    '',
    link,
    '',
    `The link works once and expires in ${describeDuration(ttlSeconds)}.`,
    '',
    'If you did not sign up for iki, ignore this e-mail and do not open the link.',
    '',
  ].join('\n');
}

/** The reset message's plain text. */
export function resetText(link: string, ttlSeconds: number): string {
  return [
    'Hello,',
    '',
    'someone, probably you, asked to reset the password of the iki account with this e-mail address.',
    'To choose a new password, open this link:',
    '',
    link,
    '',
    `The link works once and expires in ${describeDuration(ttlSeconds)}. Using it signs the account out everywhere.`,
    '',
    'If you did not ask for this, ignore this e-mail; your password stays as it is.',
    '',
  ].join('\n');
}

/** Replaces every occurrence of each secret in `text`. */
function redact(text: string, secrets: readonly string[]): string {
  return secrets.reduce((out, secret) => (secret === '' ? out : out.split(secret).join('<redacted>')), text);
}

/**
 * The loggable part of a nodemailer error: its code (`EAUTH`, `ESOCKET`, `ETIMEDOUT`,
 * `ETLS`, `EENVELOPE`, ...), the SMTP reply code and the message, with `secrets` redacted.
 * The error object itself is not logged: its stack repeats the message and `response`
 * repeats the server's words unredacted.
 */
export function describeSmtpError(err: unknown, secrets: readonly string[]): LogFields {
  const e = (typeof err === 'object' && err !== null ? err : {}) as Record<string, unknown>;
  const fields: LogFields = {
    code: typeof e['code'] === 'string' ? e['code'] : 'UNKNOWN',
    reason: redact(err instanceof Error ? err.message : String(err), secrets),
  };
  // The system error under nodemailer's own code (ESOCKET over ECONNREFUSED, for instance).
  if (typeof e['originalCode'] === 'string') fields['originalCode'] = e['originalCode'];
  if (typeof e['responseCode'] === 'number') fields['responseCode'] = e['responseCode'];
  if (typeof e['command'] === 'string') fields['command'] = redact(e['command'], secrets);
  return fields;
}

/** The password in every form a server reply might quote: as given, URL-encoded, and in AUTH PLAIN and LOGIN base64. */
function credentialForms(credentials: { user: string; password: string } | undefined): string[] {
  if (credentials === undefined) return [];
  const { user, password } = credentials;
  const b64 = (text: string) => Buffer.from(text, 'utf8').toString('base64');
  return [password, encodeURIComponent(password), b64(password), b64(`\0${user}\0${password}`)];
}

function transportOptions(mail: MailConfig, options: SmtpMailerOptions): SMTPTransport.Options {
  const { smtp } = mail;
  const t = { ...SMTP_TIMEOUTS, ...options.timeouts };
  const credentials = smtp.credentials();
  return {
    host: smtp.host, port: smtp.port, secure: smtp.secure,
    requireTLS: !smtp.secure && smtp.startTls === 'required',
    ignoreTLS: !smtp.secure && smtp.startTls === 'off',
    connectionTimeout: t.connectionMs, greetingTimeout: t.greetingMs, socketTimeout: t.socketMs, dnsTimeout: t.dnsMs,
    // nodemailer's own logging would print the SMTP dialogue, message included.
    logger: false, debug: false,
    ...(credentials === undefined ? {} : { auth: { user: credentials.user, pass: credentials.password } }),
    ...(options.tls === undefined ? {} : { tls: options.tls }),
  };
}

/** A mailer that submits each message to the SMTP server of `mail`. */
export function smtpMailer(mail: MailConfig, options: SmtpMailerOptions): SmtpMailer {
  const { logger } = options;
  const transport = createTransport(transportOptions(mail, options));
  const hidden = credentialForms(mail.smtp.credentials());
  const server = mail.smtp.address;
  const send = async (to: string, link: string, subject: string, text: string, kind: string): Promise<void> => {
    const token = /[?&]token=([^&#]*)/.exec(link)?.[1] ?? '';
    try {
      const info = await transport.sendMail({
        from: mail.from.name === undefined ? mail.from.address : { name: mail.from.name, address: mail.from.address },
        to, subject, text,
        // The envelope names the one recipient explicitly (issue 15 item 9): nodemailer would
        // otherwise derive RCPT TO from the header, which a crafted address could split.
        envelope: { from: mail.from.address, to: [to] },
        // RFC 3834 §5: an automatic message, so auto-responders do not answer it.
        headers: { 'Auto-Submitted': 'auto-generated' },
      });
      logger.info(`${kind} e-mail sent`, { to, server, messageId: info.messageId });
    } catch (err) {
      // Resolve, not reject: see the module comment for why sign-up still succeeds.
      logger.error(`${kind} e-mail not sent`, {
        to, server, error: describeSmtpError(err, [...hidden, link, token]),
      });
    }
  };
  return {
    async sendVerification(to, link) {
      await send(to, link, VERIFICATION_SUBJECT, verificationText(link, options.verificationTtlSeconds), 'verification');
    },
    async sendPasswordReset(to, link, ttlSeconds) {
      await send(to, link, RESET_SUBJECT, resetText(link, ttlSeconds), 'password-reset');
    },
    async sendWebhookDisabled(to, url, reason) {
      await send(to, url, 'Your iki webhook endpoint was disabled',
        `Deliveries to your webhook endpoint\n\n  ${url}\n\nkept failing (${reason}), so it was disabled and nothing more`
        + ' is queued for it. Fix the endpoint, then enable it again on your seller page (Webhooks) or with'
        + ' "iki webhooks enable".\n', 'webhook-disabled');
    },
    async check() {
      try {
        await transport.verify();
        return true;
      } catch (err) {
        logger.warn('SMTP server check failed; verification e-mails will fail until it works', {
          server, error: describeSmtpError(err, hidden),
        });
        return false;
      }
    },
    close() {
      transport.close();
    },
  };
}

/**
 * Verification e-mail (task "Accounts and tokens"): the one-time link sent at sign-up and on
 * `POST /api/accounts/verification`, and the limiter both share.
 *
 * Links: a token is 32 random bytes and only its SHA-256 is stored, so a leaked database does
 * not verify anyone. An account has one outstanding link: issuing a new one replaces the
 * earlier one, which from then on answers `VERIFICATION_INVALID`. A person who asked twice need
 * not work out which message is current (the newest), and a link left in an old message or a
 * log stops working once a new one is sent. Each link is valid for `verificationTtlSeconds`.
 *
 * Limits: with SMTP configured, sign-up and resend make the service mail an address of the
 * caller's choosing (OWASP Forgot Password Cheat Sheet: the same concern for reset e-mails).
 * Every sign-up and every resend request is recorded per normalised address and per client
 * address over a sliding window before any account is looked up or created, whether or not a
 * message goes out, so the count never depends on whether the address has an account. Past a
 * limit the request is refused with `MAIL_THROTTLED` and `Retry-After`. Resend is refused at
 * either limit; sign-up only at the per-client one. Sign-up counts towards its address, but a
 * stranger who spends an address's allowance on resends must not keep its owner from signing
 * up; sign-up mails an address at most once, since a second sign-up is `EMAIL_TAKEN`. The
 * address counter is shared by everyone, so a refused resend tells the caller that someone
 * asked for mail to the address within the window: no more than sign-up's `EMAIL_TAKEN`
 * already tells. The records hold the address as HMAC-SHA256 under a key derived from the
 * root secret (`RootSecret.mailAddressKey`, docs/format.md §8.4).
 *
 * Timing: a resend's message is issued and sent after the answer. Handing a message to an
 * SMTP server takes hundreds of milliseconds, which would otherwise tell an unverified account
 * from an unknown or verified address; before the answer every request does the same work (the
 * count and one look-up). A failure after the answer is logged, never the link.
 */
import { createHash, createHmac, randomBytes } from 'node:crypto';
import type { MailLimits } from '../config.js';
import { ApiError } from '../errors.js';
import type { Logger } from '../logger.js';
import type { Repository } from '../storage/repository.js';
import type { Mailer } from './mailer.js';

/** Dependencies of `VerificationMail`. */
export interface VerificationDeps {
  repo: Repository;
  mailer: Mailer;
  now: () => Date;
  /** Base URL the verification link points to. */
  publicUrl: string;
  verificationTtlSeconds: number;
  mailLimits: MailLimits;
  /** HMAC-SHA256 key of the mail records' addresses (`RootSecret.mailAddressKey`). */
  mailAddressKey: Uint8Array;
  logger: Logger;
}

/** Issuing and sending verification links, under the mail limits. */
export class VerificationMail {
  private readonly pending = new Set<Promise<void>>();

  constructor(private readonly deps: VerificationDeps) {}

  /** Counts a sign-up for `email` (normalised); `MAIL_THROTTLED` when the client's limit is full. */
  async admitSignUp(email: string, clientIp: string): Promise<void> {
    await this.admit(email, clientIp, Number.POSITIVE_INFINITY);
  }

  /** Counts a resend request for `email` (normalised); `MAIL_THROTTLED` when either limit is full. */
  async admitResend(email: string, clientIp: string): Promise<void> {
    await this.admit(email, clientIp, this.deps.mailLimits.perAddress);
  }

  /** Issues a new link (under `base`, default `publicUrl`) for the account, replacing any earlier one, and sends it. */
  async send(accountId: string, email: string, base = this.deps.publicUrl): Promise<void> {
    const token = randomBytes(32).toString('base64url');
    const expiresAt = new Date(this.deps.now().getTime() + this.deps.verificationTtlSeconds * 1000);
    const tokenHash = createHash('sha256').update(token, 'utf8').digest('hex');
    await this.deps.repo.saveVerificationToken(tokenHash, accountId, expiresAt);
    await this.deps.mailer.sendVerification(email, `${base}/verify-email?token=${token}`);
  }

  /** `send` without waiting for it; a failure is logged with the account id only. */
  sendLater(accountId: string, email: string, base = this.deps.publicUrl): void {
    const sending: Promise<void> = this.send(accountId, email, base)
      .catch((error: unknown) => this.deps.logger.error('verification e-mail not sent', { accountId, error }))
      .finally(() => this.pending.delete(sending));
    this.pending.add(sending);
  }

  /** Resolves once every message `sendLater` started has been handed over or its failure logged. */
  async settled(): Promise<void> {
    while (this.pending.size > 0) await Promise.all([...this.pending]);
  }

  /**
   * Records the request, or throws `MAIL_THROTTLED` with `Retry-After` (whole seconds, rounded
   * up, at least 1) when a limit is full. Neither the scope nor any count is told.
   */
  private async admit(email: string, clientIp: string, perAddress: number): Promise<void> {
    const { repo, now, mailLimits: limits } = this.deps;
    const at = now();
    const outcome = await repo.tryRecordMailRequest({
      addressHash: createHmac('sha256', this.deps.mailAddressKey).update(email, 'utf8').digest('hex'),
      clientIp, now: at, windowSeconds: limits.windowSeconds, perAddress, perIp: limits.perIp,
    });
    if (outcome.kind === 'recorded') return;
    const retryAfterSeconds = Math.max(1, Math.ceil((outcome.retryAt.getTime() - at.getTime()) / 1000));
    throw new ApiError('MAIL_THROTTLED', 'too many verification e-mails requested; try again later',
      { retryAfterSeconds }, { 'Retry-After': String(retryAfterSeconds) });
  }
}

/**
 * Verification e-mail (task "Accounts and tokens"): the one-time link sent at sign-up and on
 * `POST /api/accounts/verification`, and the limiter they share with password-reset mail.
 *
 * Pending sign-ups (issue 15 item 1): a sign-up stores no account, only a pending record with
 * the chosen password's hash and the link's token hash; using the link creates the account.
 * A newer sign-up for the address replaces the pending one (its link stops working), and a
 * pending sign-up expires with its link. So someone who signs up with another person's address
 * gets nothing: the owner's own sign-up replaces theirs, and their link only ever reaches the
 * owner's mailbox. A resend renews the pending sign-up's link; for an unverified account of an
 * earlier version it sends that account's link as before.
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
 * up. The address counter is shared by everyone, so a refused resend tells the caller that
 * someone asked for mail to the address within the window, and nothing about accounts. A
 * global cap (`IKI_MAILS_TOTAL` requests per window from everyone together) bounds what the
 * service can be made to send at all. The records hold the address as HMAC-SHA256 under a key
 * derived from the root secret (`RootSecret.mailAddressKey`, docs/format.md §8.4).
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
import { linkBase } from './link-base.js';

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
  /** Mail requests of everyone together per mail window (`IKI_MAILS_TOTAL`). */
  mailsTotal: number;
  logger: Logger;
}

/** What the global mail cap records in place of an address and a client. */
const GLOBAL_BUCKET = '(all)';

const sha256Hex = (text: string): string => createHash('sha256').update(text, 'utf8').digest('hex');

/** A new link token and the SHA-256 stored for it. */
export function newLinkToken(): { token: string; tokenHash: string } {
  const token = randomBytes(32).toString('base64url');
  return { token, tokenHash: sha256Hex(token) };
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

  /**
   * Stores a pending sign-up (replacing any other for the address) and sends its link after
   * the answer. The message is started at once, so a log mailer has written it on return.
   */
  async startSignUp(pending: { email: string; name: string; passwordHash: string; proofHash: string | undefined },
    mail = true): Promise<void> {
    const { token, tokenHash } = newLinkToken();
    const createdAt = this.deps.now();
    await this.deps.repo.savePendingSignUp({ ...pending, tokenHash, createdAt, expiresAt: this.expiry() });
    if (mail) this.later('sign-up', () => this.deps.mailer.sendVerification(pending.email, this.link(token)));
  }

  /**
   * A new link for the address's pending sign-up, or for an unverified account of an earlier
   * version; nothing otherwise (a pending record beside a verified account is inert and gets
   * no mail). Each case does the same two queries before the answer.
   */
  async resend(email: string): Promise<void> {
    const { repo, now } = this.deps;
    const { token, tokenHash } = newLinkToken();
    const renewed = await repo.renewPendingSignUp(email, tokenHash, this.expiry(), now());
    const legacy = await repo.findLocalAccountByEmail(email);
    if (renewed && legacy?.emailVerified !== true) {
      this.later('resend', () => this.deps.mailer.sendVerification(email, this.link(token)));
    } else if (legacy !== undefined && !legacy.emailVerified) {
      this.later('resend', async () => {
        await repo.saveVerificationToken(tokenHash, legacy.id, this.expiry());
        await this.deps.mailer.sendVerification(email, this.link(token));
      });
    }
  }

  /** Runs `sending` after the answer; a failure is logged with its kind only, never the link. */
  later(kind: string, sending: () => Promise<void>): void {
    const started: Promise<void> = sending()
      .catch((error: unknown) => this.deps.logger.error('e-mail not sent', { kind, error }))
      .finally(() => this.pending.delete(started));
    this.pending.add(started);
  }

  /** The link of a verification token. */
  private link(token: string): string {
    return `${linkBase(this.deps.publicUrl)}/verify-email?token=${token}`;
  }

  private expiry(): Date {
    return new Date(this.deps.now().getTime() + this.deps.verificationTtlSeconds * 1000);
  }

  /** Resolves once every message `later` started has been handed over or its failure logged. */
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
    const hash = (text: string) => createHmac('sha256', this.deps.mailAddressKey).update(text, 'utf8').digest('hex');
    let outcome = await repo.tryRecordMailRequest({
      addressHash: hash(email), clientIp, now: at, windowSeconds: limits.windowSeconds, perAddress, perIp: limits.perIp,
    });
    // The global cap: one more row in one bucket that every request shares.
    if (outcome.kind === 'recorded') {
      outcome = await repo.tryRecordMailRequest({ addressHash: hash(GLOBAL_BUCKET), clientIp: GLOBAL_BUCKET, now: at,
        windowSeconds: limits.windowSeconds, perAddress: this.deps.mailsTotal, perIp: Number.POSITIVE_INFINITY });
    }
    if (outcome.kind === 'recorded') return;
    const retryAfterSeconds = Math.max(1, Math.ceil((outcome.retryAt.getTime() - at.getTime()) / 1000));
    throw new ApiError('MAIL_THROTTLED', 'too many verification e-mails requested; try again later',
      { retryAfterSeconds }, { 'Retry-After': String(retryAfterSeconds) });
  }
}

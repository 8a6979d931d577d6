/**
 * The built-in account module (task "Accounts and tokens"): sign-up with e-mail and password,
 * pending until the one-time link is used (issued, sent and limited by `verification.ts`),
 * sign-in opening a session (`sessions.ts`), password change, and resolving a bearer token to
 * the account it names.
 *
 * Sign-up is counted against the mail limits before the password is hashed. It answers alike
 * whether or not the address has an account (no enumeration): an address with a verified
 * account gets no link, any other a pending sign-up. A resend request answers alike for every
 * address. Sign-in answers `INVALID_CREDENTIALS` alike for an unknown address and a wrong
 * password and spends one hash either way, so timing does not tell them apart; only local
 * accounts sign in with a password (an external account with the same address is never
 * matched). Sign-in and every action but reading one's own account and sessions need a
 * verified address (`EMAIL_NOT_VERIFIED`).
 *
 * Online guessing is throttled (OWASP Authentication Cheat Sheet, "Protect against automated
 * attacks"): failed sign-ins are counted per normalised address, known or not, and per client
 * address over a sliding window. Each attempt is recorded as a failure before the password is
 * checked and withdrawn when it was right, so concurrent guesses cannot all pass one count.
 * A full limit answers `SIGN_IN_THROTTLED` before the account is looked up or a hash is spent,
 * whatever the password, and the answer is the same for an address with or without an account.
 * The cost: anyone can keep one address locked with `perAddress` wrong guesses per window; the
 * window, not a successful sign-in, frees it. Refused attempts are not counted, so a lock-out
 * ends one window after the last counted guess however long refused attempts go on. The
 * records hold the address as HMAC-SHA256 under a key derived from the root secret, so a copy
 * of the table alone does not confirm a guessed address. Every attempt, successful ones too, is
 * also counted against `attemptsPerAddress` and `attemptsPerIp` (issue 22 item 9).
 */
import { createHash, createHmac, randomBytes } from 'node:crypto';
import { DEFAULTS, type MailLimits, type SignInLimits } from '../config.js';
import { ApiError } from '../errors.js';
import type { Logger } from '../logger.js';
import type { Account, Repository } from '../storage/repository.js';
import { newAccountId } from './ids.js';
import type { Mailer } from './mailer.js';
import type { PasswordHasher } from './passwords.js';
import type { OpenedSession, SessionService } from './sessions.js';
import type { TokenService } from './tokens.js';
import { VerificationMail } from './verification.js';

/** Public view of an account. */
export interface AccountView {
  accountId: string;
  email: string;
  name: string;
  emailVerified: boolean;
  createdAt: string;
}

/** Dependencies of the account service. */
export interface AccountDeps {
  repo: Repository;
  hasher: PasswordHasher;
  tokens: TokenService;
  mailer: Mailer;
  now: () => Date;
  /** Base URL the verification link points to. */
  publicUrl: string;
  verificationTtlSeconds: number;
  signInLimits: SignInLimits;
  /** HMAC-SHA256 key of the failure records' addresses (`RootSecret.signInAddressKey`). */
  addressKey: Uint8Array;
  mailLimits: MailLimits;
  /** HMAC-SHA256 key of the mail records' addresses (`RootSecret.mailAddressKey`). */
  mailAddressKey: Uint8Array;
  /** Mail requests of everyone together per mail window (`IKI_MAILS_TOTAL`). */
  mailsTotal: number;
  sessions: SessionService;
  /** Where a verification e-mail sent after the answer reports its failure. */
  logger: Logger;
}

/** The one answer of a sign-up, whatever the address: it tells nothing about accounts. */
export const SIGN_UP_ANSWER = { status: 'verification-sent' } as const;

/** Who an access token names, and its session (local tokens only). */
export interface Caller {
  accountId: string;
  sessionId: string | undefined;
}

const notVerified = (): ApiError => new ApiError('EMAIL_NOT_VERIFIED',
  'verify your e-mail address first: open the link we sent, or ask for a new one');

const sha256Hex = (text: string): string => createHash('sha256').update(text, 'utf8').digest('hex');

/** Normalises an e-mail address for storage and look-up. */
export const normaliseEmail = (email: string): string => email.trim().toLowerCase();

/** The view returned to the account itself. */
export function accountView(account: Account): AccountView {
  return {
    accountId: account.id, email: account.email, name: account.name,
    emailVerified: account.emailVerified, createdAt: account.createdAt.toISOString(),
  };
}

/** Sign-up, verification, sign-in and token resolution. */
export class AccountService {
  private dummyHash: Promise<string> | undefined;
  private readonly verification: VerificationMail;

  constructor(private readonly deps: AccountDeps) {
    this.verification = new VerificationMail(deps);
  }

  /**
   * Starts a pending sign-up and sends its link, unless a verified account has the address;
   * answers alike either way. `clientIp` is for the per-client mail limit. `proof` is the
   * secret the signing-up browser keeps (a cookie, routes/accounts.ts): only a link used with
   * it makes this password the account's (issue 22 item 3).
   */
  async signUp(input: { email: string; password: string; name: string }, clientIp: string,
    proof?: string): Promise<typeof SIGN_UP_ANSWER> {
    const { repo, hasher } = this.deps;
    const email = normaliseEmail(input.email);
    await this.verification.admitSignUp(email, clientIp);
    const passwordHash = await hasher.hash(input.password);
    const existing = await repo.findLocalAccountByEmail(email);
    // The same work either way, so the time taken does not tell either: a pending record for a
    // verified address is inert (its link could only fail), and no message goes out for it.
    await this.verification.startSignUp({ email, name: input.name.trim(), passwordHash,
      proofHash: proof === undefined ? undefined : sha256Hex(proof) }, existing?.emailVerified !== true);
    return SIGN_UP_ANSWER;
  }

  /** How long a sign-up's link (and so its browser proof) lives. */
  get signUpProofSeconds(): number {
    return this.deps.verificationTtlSeconds;
  }

  /**
   * Sends a new link, replacing the outstanding one, when `emailInput` names a built-in account
   * that is not verified yet; does nothing else otherwise, and resolves alike in every case
   * before any message is sent (`verification.ts`, "Timing").
   */
  async resendVerification(emailInput: string, clientIp: string): Promise<void> {
    const email = normaliseEmail(emailInput);
    await this.verification.admitResend(email, clientIp);
    // An external account's address is its issuer's to verify; no link of ours applies to it.
    await this.verification.resend(email);
  }

  /** The mail side shared with password reset (limits and sending after the answer). */
  get mail(): VerificationMail {
    return this.verification;
  }

  /** Resolves once every verification e-mail started after an answer is sent or logged. */
  settled(): Promise<void> {
    return this.verification.settled();
  }

  /**
   * Uses a verification token: a pending sign-up's creates its account (verified); an earlier
   * version's verifies its account.
   *
   * Issue 22 item 3: a link proves the mailbox, not who typed the pending password. The
   * pending password takes effect only with `given.proof`, the secret of the browser that
   * signed up; anywhere else (another browser, a mail scanner) the person at the link chooses
   * the password (`given.password`), and without one the answer is
   * `SIGN_UP_PASSWORD_REQUIRED` and nothing changes. A password typed at the link wins over
   * the proof. The hash is spent only for a token that names a waiting sign-up.
   */
  async verifyEmail(token: string, given: { proof?: string | undefined; password?: string | undefined } = {}): Promise<AccountView> {
    const { repo, now } = this.deps;
    const tokenHash = sha256Hex(token);
    const proofHash = given.password === undefined && given.proof !== undefined ? sha256Hex(given.proof) : undefined;
    let created = await repo.completeSignUp(tokenHash, newAccountId(), now(), { proofHash });
    if (created === 'proof_needed' && given.password !== undefined) {
      created = await repo.completeSignUp(tokenHash, newAccountId(), now(), { passwordHash: await this.deps.hasher.hash(given.password) });
    }
    if (created === 'proof_needed') {
      throw new ApiError('SIGN_UP_PASSWORD_REQUIRED',
        'this link was opened away from the browser that signed up: choose the account\'s password here');
    }
    if (created !== undefined) return accountView(created);
    const accountId = await this.deps.repo.consumeVerificationToken(sha256Hex(token), this.deps.now());
    const account = accountId === undefined ? undefined : await this.deps.repo.findAccountById(accountId);
    if (account === undefined) {
      throw new ApiError('VERIFICATION_INVALID', 'the verification link is invalid, used or expired');
    }
    return accountView(account);
  }

  /**
   * Checks e-mail and password and opens a session named `device`; `clientIp` is the address
   * the request came from, for the per-client limit.
   */
  async signIn(emailInput: string, password: string, clientIp: string, device = ''): Promise<OpenedSession> {
    const { repo, hasher, sessions } = this.deps;
    const email = normaliseEmail(emailInput);
    await this.recordAttempt(email, clientIp);
    const failureId = await this.recordFailure(email, clientIp);
    const account = await repo.findLocalAccountByEmail(email);
    const stored = account?.passwordHash;
    if (account === undefined || stored === undefined) {
      // A pending sign-up's own password is told to use its link; anyone else learns nothing.
      const pending = account === undefined ? await repo.findPendingSignUp(email, this.deps.now()) : undefined;
      const matched = await hasher.verify(password, pending?.passwordHash ?? await this.dummy());
      if (pending !== undefined && matched) {
        await repo.withdrawSignInFailure(failureId);
        throw notVerified();
      }
      throw new ApiError('INVALID_CREDENTIALS', 'wrong e-mail address or password');
    }
    if (!(await hasher.verify(password, stored))) {
      throw new ApiError('INVALID_CREDENTIALS', 'wrong e-mail address or password');
    }
    // Only this attempt's own record goes; earlier failures keep counting. Clearing the client's
    // would let one known password buy unlimited guesses at other addresses, and clearing the
    // address's would give guesses interleaved with its owner's sign-ins a fresh allowance.
    await repo.withdrawSignInFailure(failureId);
    if (!account.emailVerified) throw notVerified();
    if (hasher.needsRehash(stored)) await repo.updatePasswordHash(account.id, await hasher.hash(password));
    return sessions.open(account.id, device);
  }

  /**
   * Changes the caller's password after checking the current one (counted like a sign-in
   * attempt), and ends every other session of the account and any outstanding reset link.
   */
  async changePassword(caller: Caller, current: string, next: string, clientIp: string): Promise<void> {
    const { repo, hasher } = this.deps;
    const account = await repo.findAccountById(caller.accountId);
    if (account?.passwordHash === undefined) {
      throw new ApiError('FORBIDDEN', 'this account signs in through its identity provider; change the password there');
    }
    const failureId = await this.recordFailure(account.email, clientIp);
    if (!(await hasher.verify(current, account.passwordHash))) {
      throw new ApiError('INVALID_CREDENTIALS', 'the current password is wrong');
    }
    await repo.withdrawSignInFailure(failureId);
    await repo.updatePasswordHash(account.id, await hasher.hash(next));
    // A reset link asked for before the change would undo it (issue 22 item 11): it ends too.
    await repo.endPasswordResets(account.id);
    await this.deps.sessions.revokeAll(account.id, caller.sessionId);
  }

  /**
   * Resolves a bearer token to an existing account and its session; `UNAUTHENTICATED` when the
   * token or its session is not valid now, `EMAIL_NOT_VERIFIED` when the address is not
   * verified unless `allowUnverified`.
   */
  async authenticate(token: string, allowUnverified = false, deferSessionCheck = false): Promise<Caller> {
    const subject = await this.deps.tokens.verify(token);
    // The caller checks the session and the verified address in its own statement (the key
    // release: `iki_release`, migration 10); the token's signature and expiry are checked here.
    if (deferSessionCheck && subject.kind === 'local' && subject.sessionId !== undefined) {
      return { accountId: subject.accountId, sessionId: subject.sessionId };
    }
    let account: Account | undefined;
    let sessionId: string | undefined;
    if (subject.kind === 'external') {
      account = await this.deps.repo.upsertExternalAccount(subject.identity, newAccountId(), this.deps.now());
    } else {
      if (subject.sessionId === undefined) throw new ApiError('UNAUTHENTICATED', 'invalid or expired access token');
      await this.deps.sessions.check(subject.sessionId, subject.accountId);
      account = await this.deps.repo.findAccountById(subject.accountId);
      sessionId = subject.sessionId;
    }
    if (account === undefined) throw new ApiError('UNAUTHENTICATED', 'invalid or expired access token');
    if (!account.emailVerified && !allowUnverified) throw notVerified();
    return { accountId: account.id, sessionId };
  }

  /** The caller's own account. */
  async me(accountId: string): Promise<AccountView> {
    const account = await this.deps.repo.findAccountById(accountId);
    if (account === undefined) throw new ApiError('UNAUTHENTICATED', 'invalid or expired access token');
    return accountView(account);
  }

  /**
   * Records the attempt as a failure and returns its id, or throws `SIGN_IN_THROTTLED` with
   * `Retry-After` (whole seconds, rounded up, at least 1) when a limit is full. An attempt that
   * dies before its withdrawal stays counted as a failure, which errs on the safe side.
   */
  private async recordFailure(email: string, clientIp: string): Promise<string> {
    const { perAddress, perIp } = this.deps.signInLimits;
    return this.record(email, clientIp, perAddress, perIp);
  }

  /**
   * Counts a sign-in attempt whatever its outcome (issue 22 item 9): successful sign-ins are
   * limited too, per address and per client, before any hash is spent. The records share the
   * failures' table under keys of their own (`attempt\0` before the address, `attempt:` before
   * the client), are never withdrawn and are swept like failures as the window passes.
   */
  private async recordAttempt(email: string, clientIp: string): Promise<void> {
    const limits = this.deps.signInLimits;
    await this.record(`attempt\0${email}`, `attempt:${clientIp}`, limits.attemptsPerAddress ?? DEFAULTS.signInAttemptsPerAddress,
      limits.attemptsPerIp ?? DEFAULTS.signInAttemptsPerIp);
  }

  private async record(key: string, clientIp: string, perAddress: number, perIp: number): Promise<string> {
    const { repo, now, signInLimits: limits } = this.deps;
    const at = now();
    const outcome = await repo.tryRecordSignInFailure({ addressHash: createHmac('sha256', this.deps.addressKey).update(key, 'utf8').digest('hex'),
      clientIp, now: at, windowSeconds: limits.windowSeconds, perAddress, perIp });
    if (outcome.kind === 'recorded') return outcome.failureId;
    // Neither the scope nor any count is told: the caller learns only when to try again.
    const retryAfterSeconds = Math.max(1, Math.ceil((outcome.retryAt.getTime() - at.getTime()) / 1000));
    throw new ApiError('SIGN_IN_THROTTLED', 'too many failed sign-in attempts; try again later',
      { retryAfterSeconds }, { 'Retry-After': String(retryAfterSeconds) });
  }

  private dummy(): Promise<string> {
    this.dummyHash ??= this.deps.hasher.hash(randomBytes(16).toString('hex'));
    return this.dummyHash;
  }
}

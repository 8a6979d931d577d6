/**
 * The built-in account module (task "Accounts and tokens"): sign-up with e-mail and password,
 * e-mail verification through a one-time link, sign-in returning a short-lived access token,
 * and resolving a bearer token to the account it names.
 *
 * Verification tokens are 32 random bytes; only their SHA-256 is stored, so a leaked database
 * does not verify anyone. Sign-in answers `INVALID_CREDENTIALS` alike for an unknown address
 * and a wrong password and spends one hash either way, so timing does not tell them apart.
 */
import { createHash, randomBytes } from 'node:crypto';
import { ApiError } from '../errors.js';
import type { Account, Repository } from '../storage/repository.js';
import { newAccountId } from './ids.js';
import type { Mailer } from './mailer.js';
import type { PasswordHasher } from './passwords.js';
import type { IssuedToken, TokenService } from './tokens.js';

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
}

const hashToken = (token: string): string => createHash('sha256').update(token).digest('hex');

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

  constructor(private readonly deps: AccountDeps) {}

  /** Creates an unverified account and sends the verification link. */
  async signUp(input: { email: string; password: string; name: string }): Promise<AccountView> {
    const { repo, hasher, now } = this.deps;
    const email = normaliseEmail(input.email);
    const account = {
      id: newAccountId(), email, name: input.name.trim(),
      passwordHash: await hasher.hash(input.password), createdAt: now(),
    };
    if (!(await repo.createAccount(account))) {
      throw new ApiError('EMAIL_TAKEN', 'an account with this e-mail address exists');
    }
    await this.sendVerification(account.id, email);
    return accountView({ ...account, emailVerified: false });
  }

  /** Uses a verification token; the account's e-mail address becomes verified. */
  async verifyEmail(token: string): Promise<AccountView> {
    const accountId = await this.deps.repo.consumeVerificationToken(hashToken(token), this.deps.now());
    const account = accountId === undefined ? undefined : await this.deps.repo.findAccountById(accountId);
    if (account === undefined) {
      throw new ApiError('VERIFICATION_INVALID', 'the verification link is invalid, used or expired');
    }
    return accountView(account);
  }

  /** Checks e-mail and password and issues an access token. */
  async signIn(emailInput: string, password: string): Promise<IssuedToken & { accountId: string }> {
    const { repo, hasher, tokens } = this.deps;
    const account = await repo.findAccountByEmail(normaliseEmail(emailInput));
    const stored = account?.passwordHash;
    if (account === undefined || stored === undefined) {
      await hasher.verify(password, await this.dummy());
      throw new ApiError('INVALID_CREDENTIALS', 'wrong e-mail address or password');
    }
    if (!(await hasher.verify(password, stored))) {
      throw new ApiError('INVALID_CREDENTIALS', 'wrong e-mail address or password');
    }
    if (hasher.needsRehash(stored)) await repo.updatePasswordHash(account.id, await hasher.hash(password));
    return { ...(await tokens.issue(account.id)), accountId: account.id };
  }

  /** Resolves a bearer token to an existing account id; `UNAUTHENTICATED` otherwise. */
  async authenticate(token: string): Promise<string> {
    const subject = await this.deps.tokens.verify(token);
    if (subject.kind === 'external') {
      const account = await this.deps.repo.upsertExternalAccount(subject.identity, newAccountId(), this.deps.now());
      return account.id;
    }
    const account = await this.deps.repo.findAccountById(subject.accountId);
    if (account === undefined) throw new ApiError('UNAUTHENTICATED', 'invalid or expired access token');
    return account.id;
  }

  /** The caller's own account. */
  async me(accountId: string): Promise<AccountView> {
    const account = await this.deps.repo.findAccountById(accountId);
    if (account === undefined) throw new ApiError('UNAUTHENTICATED', 'invalid or expired access token');
    return accountView(account);
  }

  private async sendVerification(accountId: string, email: string): Promise<void> {
    const token = randomBytes(32).toString('base64url');
    const expiresAt = new Date(this.deps.now().getTime() + this.deps.verificationTtlSeconds * 1000);
    await this.deps.repo.saveVerificationToken(hashToken(token), accountId, expiresAt);
    const link = `${this.deps.publicUrl}/verify-email?token=${token}`;
    await this.deps.mailer.sendVerification(email, link);
  }

  private dummy(): Promise<string> {
    this.dummyHash ??= this.deps.hasher.hash(randomBytes(16).toString('hex'));
    return this.dummyHash;
  }
}

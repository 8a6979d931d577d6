/**
 * Password reset by e-mailed link (issue 14 item 2; the repair of issue 15 item 1).
 *
 * `request` is counted under the verification-mail limits (per address, per client and the
 * global cap) before any account is looked up, answers alike whether or not the address has a
 * local account, and issues and sends the link only after the answer, so neither the answer
 * nor its timing tells. A link is 32 random bytes of which only the SHA-256 is stored; an
 * account has one outstanding link (a new request replaces the old), it works once and
 * expires after `ttlSeconds` (an hour). Using it sets the new password, marks the address
 * verified (the link proved the mailbox: an unverified account of an earlier version is thus
 * repaired by its owner), drops any pending sign-up of the address, and ends every session of
 * the account, the one that asked included.
 */
import { createHash } from 'node:crypto';
import { ApiError } from '../errors.js';
import type { Repository } from '../storage/repository.js';
import { normaliseEmail } from './accounts.js';
import type { Mailer } from './mailer.js';
import type { PasswordHasher } from './passwords.js';
import { newLinkToken, type VerificationMail } from './verification.js';

/** The one answer of a reset request, whatever the address. */
export const RESET_ANSWER = { status: 'sent-if-account' } as const;

/** Dependencies of `PasswordReset`. */
export interface PasswordResetDeps {
  repo: Repository;
  hasher: PasswordHasher;
  mailer: Mailer;
  mail: VerificationMail;
  now: () => Date;
  publicUrl: string;
  ttlSeconds: number;
}

/** Requests and completes password resets. */
export class PasswordReset {
  constructor(private readonly deps: PasswordResetDeps) {}

  /** Sends a reset link when `emailInput` names a local account; answers alike in every case. */
  async request(emailInput: string, clientIp: string): Promise<typeof RESET_ANSWER> {
    const { repo, mail, mailer } = this.deps;
    const email = normaliseEmail(emailInput);
    await mail.admitResend(email, clientIp);
    const account = await repo.findLocalAccountByEmail(email);
    if (account !== undefined) {
      mail.later('password-reset', async () => {
        const { token, tokenHash } = newLinkToken();
        await repo.savePasswordReset(tokenHash, account.id, new Date(this.deps.now().getTime() + this.deps.ttlSeconds * 1000));
        const link = `${this.deps.publicUrl}/reset-password?token=${token}`;
        if (mailer.sendPasswordReset === undefined) throw new Error('the mailer cannot send password-reset messages');
        await mailer.sendPasswordReset(email, link, this.deps.ttlSeconds);
      });
    }
    return RESET_ANSWER;
  }

  /** Uses a reset link's token to set `password`; `VERIFICATION_INVALID` when unknown, used or expired. */
  async complete(token: string, password: string): Promise<void> {
    const passwordHash = await this.deps.hasher.hash(password);
    const tokenHash = createHash('sha256').update(token, 'utf8').digest('hex');
    const accountId = await this.deps.repo.consumePasswordReset(tokenHash, passwordHash, this.deps.now());
    if (accountId === undefined) {
      throw new ApiError('VERIFICATION_INVALID', 'the reset link is invalid, used or expired; ask for a new one');
    }
  }
}

/**
 * The in-memory repository's signing keys: one account per public key; a revoked key stays
 * revoked and is not registered again (as the SQL table's primary key and `revoked_at`).
 */
import type { RegisterKeyOutcome, SigningKey } from './repository.js';

const copy = <T>(value: T): T => structuredClone(value);

/** Signing keys by public key. */
export class MemorySigningKeys {
  private readonly byPublicKey = new Map<string, SigningKey>();

  async register(key: Omit<SigningKey, 'revokedAt'>): Promise<RegisterKeyOutcome> {
    const found = this.byPublicKey.get(key.publicKey);
    if (found === undefined) {
      this.byPublicKey.set(key.publicKey, { ...copy(key), revokedAt: undefined });
      return 'created';
    }
    if (found.accountId !== key.accountId) return 'taken';
    return found.revokedAt === undefined ? 'exists' : 'revoked';
  }

  async find(publicKey: string): Promise<SigningKey | undefined> {
    return copy(this.byPublicKey.get(publicKey));
  }

  async list(accountId: string): Promise<SigningKey[]> {
    return [...this.byPublicKey.values()].filter((k) => k.accountId === accountId)
      .sort((a, b) => b.createdAt.getTime() - a.createdAt.getTime() || (a.publicKey < b.publicKey ? -1 : 1))
      .map((k) => copy(k));
  }

  async revoke(publicKey: string, accountId: string, now: Date): Promise<SigningKey | undefined> {
    const key = this.byPublicKey.get(publicKey);
    if (key === undefined || key.accountId !== accountId) return undefined;
    key.revokedAt ??= now;
    return copy(key);
  }

  async hasActive(accountId: string): Promise<boolean> {
    return [...this.byPublicKey.values()].some((k) => k.accountId === accountId && k.revokedAt === undefined);
  }
}

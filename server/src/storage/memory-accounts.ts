/**
 * The in-memory side of pending sign-ups, sessions and password resets, for
 * `MemoryRepository` (which owns the accounts map and hands it in). Like the rest of the fake,
 * every method runs without an `await` between its check and its write.
 */
import type { Account, PendingSignUp, RotateOutcome, SessionLifetime, SessionRecord, SignUpProof } from './repository.js';

/** An account as the memory repository stores it (`external` names an OIDC identity). */
export interface StoredAccount extends Account { external: string | undefined }

const copy = <T>(value: T): T => structuredClone(value);

/** Pending sign-ups, sessions and resets over the repository's accounts. */
export class MemoryAccountRecords {
  private readonly pending = new Map<string, PendingSignUp>();
  private readonly sessions = new Map<string, SessionRecord & { refreshHash: string }>();
  private readonly resets = new Map<string, { accountId: string; expiresAt: Date }>();
  private readonly retired = new Map<string, { sessionId: string; retiredAt: Date }>();

  constructor(private readonly accounts: Map<string, StoredAccount>, private readonly view: (a: StoredAccount) => Account) {}

  localByEmail(email: string): StoredAccount | undefined {
    return [...this.accounts.values()].find((a) => a.external === undefined && a.email === email);
  }

  verifiedByEmail(email: string): Account[] {
    return [...this.accounts.values()].filter((a) => a.email === email && a.emailVerified)
      .sort((a, b) => a.createdAt.getTime() - b.createdAt.getTime() || a.id.localeCompare(b.id)).map(this.view);
  }

  findPending(email: string, now: Date): PendingSignUp | undefined {
    const found = [...this.pending.values()].find((p) => p.email === email && p.expiresAt > now);
    return found === undefined ? undefined : copy(found);
  }

  savePending(p: PendingSignUp): void {
    for (const [hash, other] of this.pending) {
      if (other.email === p.email || other.expiresAt <= p.createdAt) this.pending.delete(hash);
    }
    this.pending.set(p.tokenHash, copy(p));
  }

  renewPending(email: string, tokenHash: string, expiresAt: Date, now: Date): boolean {
    const found = [...this.pending.values()].find((p) => p.email === email && p.expiresAt > now);
    if (found === undefined) return false;
    this.pending.delete(found.tokenHash);
    this.pending.set(tokenHash, { ...found, tokenHash, expiresAt });
    return true;
  }

  completeSignUp(tokenHash: string, newId: string, now: Date, proof: SignUpProof): Account | 'proof_needed' | undefined {
    const found = this.pending.get(tokenHash);
    if (found === undefined) return undefined;
    if ('proofHash' in proof && (found.proofHash === undefined || found.proofHash !== proof.proofHash)) {
      return found.expiresAt > now ? 'proof_needed' : undefined;
    }
    const pending = 'passwordHash' in proof ? { ...found, passwordHash: proof.passwordHash } : found;
    this.pending.delete(tokenHash);
    if (pending.expiresAt <= now) return undefined;
    const existing = this.localByEmail(pending.email);
    if (existing?.emailVerified === true) return undefined;
    if (existing !== undefined) {
      Object.assign(existing, { emailVerified: true, passwordHash: pending.passwordHash, name: pending.name });
      this.revokeAll(existing.id, now);
      return this.view(existing);
    }
    const account: StoredAccount = { id: newId, email: pending.email, emailVerified: true, passwordHash: pending.passwordHash,
      name: pending.name, createdAt: now, external: undefined };
    this.accounts.set(newId, account);
    return this.view(account);
  }

  createSession(s: Omit<SessionRecord, 'revokedAt'>, refreshHash: string): void {
    this.sessions.set(s.id, { ...copy(s), revokedAt: undefined, refreshHash });
  }

  useSession(refreshHash: string, now: Date, lifetime: SessionLifetime): SessionRecord | undefined {
    const s = [...this.sessions.values()].find((x) => x.refreshHash === refreshHash);
    if (s === undefined || s.revokedAt !== undefined || s.expiresAt <= now) return undefined;
    s.lastUsedAt = now;
    s.expiresAt = new Date(Math.min(now.getTime() + lifetime.idleSeconds * 1000, s.createdAt.getTime() + lifetime.maxSeconds * 1000));
    return this.sessionView(s);
  }

  rotateSession(refreshHash: string, nextHash: string, now: Date, lifetime: SessionLifetime, graceSeconds: number): RotateOutcome {
    const session = this.useSession(refreshHash, now, lifetime);
    if (session !== undefined) {
      (this.sessions.get(session.id) as { refreshHash: string }).refreshHash = nextHash;
      this.retired.set(refreshHash, { sessionId: session.id, retiredAt: now });
      return { kind: 'rotated', session };
    }
    const retired = this.retired.get(refreshHash);
    const s = retired === undefined ? undefined : this.sessions.get(retired.sessionId);
    if (retired === undefined || s === undefined) return { kind: 'ended' };
    if (retired.retiredAt.getTime() + graceSeconds * 1000 > now.getTime()) {
      const used = this.useSession(s.refreshHash, now, lifetime);
      return used === undefined ? { kind: 'ended' } : { kind: 'grace', session: used };
    }
    s.revokedAt ??= now;
    return { kind: 'reused' };
  }

  findSession(id: string): SessionRecord | undefined {
    const s = this.sessions.get(id);
    return s === undefined ? undefined : this.sessionView(s);
  }

  listSessions(accountId: string, now: Date): SessionRecord[] {
    return [...this.sessions.values()].filter((s) => s.accountId === accountId && s.revokedAt === undefined && s.expiresAt > now)
      .sort((a, b) => b.lastUsedAt.getTime() - a.lastUsedAt.getTime() || a.id.localeCompare(b.id)).map((s) => this.sessionView(s));
  }

  revokeSession(id: string, accountId: string, now: Date): boolean {
    const s = this.sessions.get(id);
    if (s === undefined || s.accountId !== accountId || s.revokedAt !== undefined || s.expiresAt <= now) return false;
    s.revokedAt = now;
    return true;
  }

  pruneSessions(now: Date, max: number): number {
    let count = 0;
    for (const [id, s] of this.sessions) {
      if (count >= max) break;
      if (s.revokedAt === undefined && s.expiresAt > now) continue;
      this.sessions.delete(id);
      for (const [hash, r] of this.retired) if (r.sessionId === id) this.retired.delete(hash);
      count += 1;
    }
    return count;
  }

  revokeAll(accountId: string, now: Date, exceptId?: string): number {
    let count = 0;
    for (const s of this.sessions.values()) {
      if (s.accountId === accountId && s.revokedAt === undefined && s.id !== exceptId) {
        s.revokedAt = now;
        count += 1;
      }
    }
    return count;
  }

  saveReset(tokenHash: string, accountId: string, expiresAt: Date): void {
    this.endResets(accountId);
    this.resets.set(tokenHash, { accountId, expiresAt });
  }

  endResets(accountId: string): void {
    for (const [hash, r] of this.resets) if (r.accountId === accountId) this.resets.delete(hash);
  }

  consumeReset(tokenHash: string, passwordHash: string, now: Date): string | undefined {
    const reset = this.resets.get(tokenHash);
    this.resets.delete(tokenHash);
    if (reset === undefined || reset.expiresAt <= now) return undefined;
    const account = this.accounts.get(reset.accountId);
    if (account === undefined || account.external !== undefined) return undefined;
    Object.assign(account, { passwordHash, emailVerified: true });
    for (const [hash, p] of this.pending) if (p.email === account.email) this.pending.delete(hash);
    this.revokeAll(account.id, now);
    return account.id;
  }

  private sessionView(s: SessionRecord & { refreshHash: string }): SessionRecord {
    const { refreshHash: _hash, ...rest } = s;
    return copy(rest);
  }
}

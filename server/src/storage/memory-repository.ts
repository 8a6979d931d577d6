/**
 * An in-memory `Repository` for fast service tests. Atomic methods run without an `await`
 * between their check and their write, which makes them atomic on Node's single thread.
 * Records are copied in and out so callers cannot mutate stored state.
 */
import type {
  Account, BlobCommit, DeleteMasterOutcome, EventPage, ExternalIdentity, License, LicenseEvent, MailOutcome, MailRequest, Master, NewAccount,
  NewEvent, PendingSignUp, RegisterKeyOutcome, SignUpProof, ReleaseAttempt, ReleaseOutcome, Repository, RotateOutcome, SessionLifetime, SessionRecord,
  SignInAttempt, SignInOutcome, SigningKey, TextureBound, ThrottleAttempt, UsageAttempt, UsageOutcome, UsageProgress,
} from './repository.js';
import { MemoryAccountRecords, type StoredAccount } from './memory-accounts.js';
import { MemoryThrottles } from './memory-throttles.js';
import { MemorySigningKeys } from './memory-signing-keys.js';
import { MemorySellerRecords } from './memory-seller.js';
import { MemoryWebhookRecords } from './memory-webhooks.js';
import { MemoryShopRecords } from './shop-records.js';
import { MemoryNoticeRecords } from './memory-notices.js';
import { MemoryActivityRecords } from './memory-activity.js';
import { MemoryFlagRecords } from './memory-flags.js';
import { licenseState, revokeDetails, type ApiKeyRecord, type CreateLicenseOutcome, type LicenseQuery, type NewLicense,
  type SuspensionChange, type SuspensionOutcome } from './seller-records.js';
import type { ActivityKind } from './activity-records.js';
import { granted, refusal, windowCount, windowStart } from './window.js';

interface Release { licenseId: string; accountId: string; at: Date }

const copy = <T>(value: T): T => structuredClone(value);

/** The in-memory fake repository. */
export class MemoryRepository implements Repository {
  private readonly accounts = new Map<string, StoredAccount>();
  private readonly tokens = new Map<string, { accountId: string; expiresAt: Date }>();
  private readonly keys = new MemorySigningKeys();
  private readonly masters = new Map<string, Master>();
  /** Tails of the per-content locks (`recordMaster`, `deleteMaster`). */
  private readonly contentLocks = new Map<string, Promise<void>>();
  private readonly licenses = new Map<string, License>();
  private releases: Release[] = [];
  private events: LicenseEvent[] = [];
  private readonly throttles = new MemoryThrottles();
  private readonly records = new MemoryAccountRecords(this.accounts, (a) => this.publicAccount(a) as Account);
  private nextEventId = 1;
  private readonly seller = new MemorySellerRecords({ accounts: this.accounts, masters: this.masters, licenses: this.licenses,
    pushEvent: (e) => this.pushEvent(e) });
  readonly webhooks = new MemoryWebhookRecords(this.masters);
  readonly shops = new MemoryShopRecords();
  readonly notices = new MemoryNoticeRecords(this.licenses, (e) => this.pushEvent(e));
  readonly activity = new MemoryActivityRecords(this.licenses);
  readonly flags = new MemoryFlagRecords(this.licenses, this.masters, (e) => this.pushEvent(e));

  async createAccount(account: NewAccount): Promise<boolean> {
    const taken = [...this.accounts.values()].some((a) => a.external === undefined && a.email === account.email);
    if (taken) return false;
    this.accounts.set(account.id, { ...copy(account), emailVerified: false, external: undefined });
    return true;
  }

  async findAccountById(id: string): Promise<Account | undefined> {
    return this.publicAccount(this.accounts.get(id));
  }

  async findAccountByEmail(email: string): Promise<Account | undefined> {
    return this.publicAccount(this.byEmail(email));
  }

  async findLocalAccountByEmail(email: string): Promise<Account | undefined> {
    return this.publicAccount(this.records.localByEmail(email));
  }

  async findVerifiedAccountsByEmail(email: string): Promise<Account[]> {
    return this.records.verifiedByEmail(email);
  }

  async findPendingSignUp(email: string, now: Date): Promise<PendingSignUp | undefined> {
    return this.records.findPending(email, now);
  }

  async savePendingSignUp(pending: PendingSignUp): Promise<void> {
    this.records.savePending(pending);
  }

  async renewPendingSignUp(email: string, tokenHash: string, expiresAt: Date, now: Date): Promise<boolean> {
    return this.records.renewPending(email, tokenHash, expiresAt, now);
  }

  async completeSignUp(tokenHash: string, newId: string, now: Date, proof: SignUpProof): Promise<Account | 'proof_needed' | undefined> {
    return this.records.completeSignUp(tokenHash, newId, now, proof);
  }

  async createSession(session: Omit<SessionRecord, 'revokedAt'>, refreshHash: string): Promise<void> {
    this.records.createSession(session, refreshHash);
  }

  async useSession(refreshHash: string, now: Date, lifetime: SessionLifetime): Promise<SessionRecord | undefined> {
    return this.records.useSession(refreshHash, now, lifetime);
  }

  async rotateSession(refreshHash: string, nextHash: string, now: Date, lifetime: SessionLifetime,
    graceSeconds: number): Promise<RotateOutcome> {
    return this.records.rotateSession(refreshHash, nextHash, now, lifetime, graceSeconds);
  }

  async findSession(id: string): Promise<SessionRecord | undefined> {
    return this.records.findSession(id);
  }

  async listSessions(accountId: string, now: Date): Promise<SessionRecord[]> {
    return this.records.listSessions(accountId, now);
  }

  async revokeSession(id: string, accountId: string, now: Date): Promise<boolean> {
    return this.records.revokeSession(id, accountId, now);
  }

  async pruneSessions(now: Date, max: number): Promise<number> {
    return this.records.pruneSessions(now, max);
  }

  async revokeSessions(accountId: string, now: Date, exceptId?: string): Promise<number> {
    return this.records.revokeAll(accountId, now, exceptId);
  }

  async savePasswordReset(tokenHash: string, accountId: string, expiresAt: Date): Promise<void> {
    this.records.saveReset(tokenHash, accountId, expiresAt);
  }

  async endPasswordResets(accountId: string): Promise<void> {
    this.records.endResets(accountId);
  }

  async consumePasswordReset(tokenHash: string, passwordHash: string, now: Date): Promise<string | undefined> {
    return this.records.consumeReset(tokenHash, passwordHash, now);
  }

  async upsertExternalAccount(identity: ExternalIdentity, newId: string, now: Date): Promise<Account> {
    const external = `${identity.issuer}\n${identity.subject}`;
    const found = [...this.accounts.values()].find((a) => a.external === external);
    if (found !== undefined) {
      Object.assign(found, { email: identity.email, emailVerified: identity.emailVerified, name: identity.name });
      return this.publicAccount(found) as Account;
    }
    const account: StoredAccount = {
      id: newId, email: identity.email, emailVerified: identity.emailVerified, passwordHash: undefined,
      name: identity.name, createdAt: now, external,
    };
    this.accounts.set(newId, account);
    return this.publicAccount(account) as Account;
  }

  async updatePasswordHash(accountId: string, passwordHash: string): Promise<void> {
    const account = this.accounts.get(accountId);
    if (account !== undefined) account.passwordHash = passwordHash;
  }

  async saveVerificationToken(tokenHash: string, accountId: string, expiresAt: Date): Promise<void> {
    for (const [hash, token] of this.tokens) if (token.accountId === accountId) this.tokens.delete(hash);
    this.tokens.set(tokenHash, { accountId, expiresAt });
  }

  async consumeVerificationToken(tokenHash: string, now: Date): Promise<string | undefined> {
    const token = this.tokens.get(tokenHash);
    this.tokens.delete(tokenHash);
    if (token === undefined || token.expiresAt <= now) return undefined;
    const account = this.accounts.get(token.accountId);
    if (account === undefined) return undefined;
    account.emailVerified = true;
    return account.id;
  }

  // Signing keys (memory-signing-keys.ts).
  registerSigningKey(key: Omit<SigningKey, 'revokedAt'>): Promise<RegisterKeyOutcome> { return this.keys.register(key); }
  findSigningKey(publicKey: string): Promise<SigningKey | undefined> { return this.keys.find(publicKey); }
  listSigningKeys(accountId: string): Promise<SigningKey[]> { return this.keys.list(accountId); }
  revokeSigningKey(publicKey: string, accountId: string, now: Date): Promise<SigningKey | undefined> {
    return this.keys.revoke(publicKey, accountId, now);
  }
  hasActiveSigningKey(accountId: string): Promise<boolean> { return this.keys.hasActive(accountId); }

  async insertMaster(master: Master): Promise<void> {
    this.masters.set(master.id, copy(master));
  }

  async insertMasterWithinQuota(master: Master, quotaBytes: number): Promise<boolean> {
    if ((await this.storedMasterBytes(master.sellerId)) + master.size > quotaBytes) return false;
    this.masters.set(master.id, copy(master));
    return true;
  }

  async recordMaster(master: Master, quotaBytes: number, commit: BlobCommit): Promise<Master | undefined> {
    return this.underContentLock(master.sha256, async () => {
      const twin = await this.findMasterBySha256(master.sha256);
      const { blobId: _, ...own } = master;
      const recorded: Master = twin === undefined ? own : { ...own, blobId: twin.blobId ?? twin.id };
      if (twin === undefined) await commit(master.id, undefined);
      // Checked after the commit's await, with nothing awaited before the insert: atomic here.
      if ((await this.storedMasterBytes(master.sellerId)) + master.size > quotaBytes) return undefined;
      this.masters.set(recorded.id, copy(recorded));
      return copy(recorded);
    });
  }

  /** Runs `fn` after every earlier holder of the lock on `sha256` (as the SQL advisory lock). */
  private async underContentLock<T>(sha256: string, fn: () => Promise<T>): Promise<T> {
    const before = this.contentLocks.get(sha256) ?? Promise.resolve();
    const run = before.then(fn);
    const tail = run.then(() => {}, () => {});
    this.contentLocks.set(sha256, tail);
    try {
      return await run;
    } finally {
      if (this.contentLocks.get(sha256) === tail) this.contentLocks.delete(sha256);
    }
  }

  async storedMasterBytes(sellerId: string): Promise<number> {
    return [...this.masters.values()].filter((m) => m.sellerId === sellerId).reduce((sum, m) => sum + m.size, 0);
  }

  async setMasterTextureBound(id: string, bound: TextureBound): Promise<void> {
    const master = this.masters.get(id);
    if (master !== undefined) master.textureBound = copy(bound);
  }

  async findMaster(id: string): Promise<Master | undefined> {
    return copy(this.masters.get(id));
  }

  async findMasterBySha256(sha256: string): Promise<Master | undefined> {
    return copy([...this.masters.values()].filter((m) => m.sha256 === sha256)
      .sort((a, b) => a.createdAt.getTime() - b.createdAt.getTime() || a.id.localeCompare(b.id))[0]);
  }

  async listMastersBySeller(sellerId: string): Promise<(Master & { licenseCount: number })[]> {
    return [...this.masters.values()]
      .filter((m) => m.sellerId === sellerId)
      .sort((a, b) => b.createdAt.getTime() - a.createdAt.getTime() || a.id.localeCompare(b.id))
      .map((m) => ({ ...copy(m), licenseCount: this.licensesOf((l) => l.masterId === m.id).length }));
  }

  async renameMaster(id: string, sellerId: string, name: string): Promise<Master | undefined> {
    const master = this.masters.get(id);
    if (master === undefined || master.sellerId !== sellerId) return undefined;
    master.name = name;
    return copy(master);
  }

  async archiveMaster(id: string, sellerId: string, at: Date | undefined): Promise<Master | undefined> {
    const master = this.masters.get(id);
    if (master === undefined || master.sellerId !== sellerId) return undefined;
    if (at === undefined) delete master.archivedAt;
    else master.archivedAt ??= new Date(at.getTime());
    return copy(master);
  }

  async deleteMaster(id: string, sellerId: string): Promise<DeleteMasterOutcome> {
    const found = this.masters.get(id);
    if (found === undefined || found.sellerId !== sellerId) return { kind: 'not_found' };
    return this.underContentLock(found.sha256, async () => this.deleteUnlocked(id, sellerId));
  }

  private deleteUnlocked(id: string, sellerId: string): DeleteMasterOutcome {
    const master = this.masters.get(id);
    if (master === undefined || master.sellerId !== sellerId) return { kind: 'not_found' };
    const licenses = this.licensesOf((l) => l.masterId === id).length;
    if (licenses > 0) return { kind: 'has_licenses', licenses };
    this.masters.delete(id);
    for (let i = this.events.length - 1; i >= 0; i -= 1) if (this.events[i]?.masterId === id) this.events.splice(i, 1);
    const blob = master.blobId ?? master.id;
    const shared = [...this.masters.values()].some((m) => (m.blobId ?? m.id) === blob);
    return { kind: 'deleted', orphanBlob: shared ? undefined : blob };
  }

  async findLicense(id: string): Promise<License | undefined> {
    return copy(this.licenses.get(id));
  }

  async findLicenseAndMaster(id: string): Promise<{ license: License; master: Master } | undefined> {
    const license = this.licenses.get(id);
    const master = license === undefined ? undefined : this.masters.get(license.masterId);
    return license === undefined || master === undefined ? undefined : { license: copy(license), master: copy(master) };
  }

  async setLicenseCopyBytes(id: string, bytes: number): Promise<void> {
    const license = this.licenses.get(id);
    if (license !== undefined) license.copyBytes = bytes;
  }

  async listLicensesByMaster(masterId: string): Promise<License[]> {
    return this.licensesOf((l) => l.masterId === masterId);
  }

  async listLicensesByLicensee(accountId: string): Promise<License[]> {
    return this.licensesOf((l) => l.licenseeId === accountId);
  }

  async revokeLicense(id: string, actorId: string, now: Date, reason: string | undefined, apiKeyId?: string): Promise<License | undefined> {
    const license = this.licenses.get(id);
    if (license === undefined) return undefined;
    if (license.revokedAt === undefined) {
      license.revokedAt = now;
      this.pushEvent({ at: now, kind: 'revoke', actorId, masterId: license.masterId, licenseId: id,
        details: revokeDetails(reason, apiKeyId) });
    }
    return copy(license);
  }

  async tryRecordRelease(attempt: ReleaseAttempt): Promise<ReleaseOutcome> {
    // The checks of `iki_release` (migration 10), in its order.
    if (attempt.sessionId !== undefined) {
      const session = this.records.findSession(attempt.sessionId);
      if (session?.accountId !== attempt.accountId || session.revokedAt !== undefined
        || session.expiresAt <= attempt.now) return { kind: 'unauthenticated' };
      const account = this.accounts.get(attempt.accountId);
      if (account === undefined) return { kind: 'unauthenticated' };
      if (!account.emailVerified) return { kind: 'unverified' };
    }
    const license = this.licenses.get(attempt.licenseId);
    if (license === undefined) return { kind: 'not_found' };
    // Refusals that name a license are counted, as migration 45's `iki_release` counts them.
    const refused = <K extends 'not_found' | 'revoked' | 'suspended' | 'expired'>(kind: K, counted: ActivityKind) => {
      this.activity.add(license.id, attempt.now, counted);
      return { kind };
    };
    if (license.licenseeId !== attempt.accountId) return refused('not_found', 'not_licensee');
    if (license.revokedAt !== undefined) return refused('revoked', 'revoked');
    const state = licenseState(license, attempt.now);
    if (state === 'suspended' || state === 'expired') return refused(state, state);
    const since = windowStart(attempt).getTime();
    const inWindow = this.releases.filter((r) => r.at.getTime() > since);
    const byLicense = windowCount(inWindow.filter((r) => r.licenseId === attempt.licenseId).map((r) => r.at),
      attempt.perLicense);
    const byUser = windowCount(inWindow.filter((r) => r.accountId === attempt.accountId).map((r) => r.at), attempt.perUser);
    const limited = refusal(attempt, byLicense, byUser);
    if (limited !== undefined) {
      this.activity.add(license.id, attempt.now, 'rate_limited');
      return limited;
    }
    // As `iki_release` (migration 21): recorded no earlier than the newest release of its
    // license and of its account, so each scope's times stay in order.
    const newest = this.releases.filter((r) => r.licenseId === license.id || r.accountId === attempt.accountId)
      .reduce((t, r) => Math.max(t, r.at.getTime()), attempt.now.getTime());
    const at = new Date(newest);
    this.releases.push({ licenseId: license.id, accountId: attempt.accountId, at });
    this.activity.add(license.id, at, 'release', attempt.mark);
    license.releaseCount += 1;
    this.pushEvent({ at: attempt.now, kind: 'release', actorId: attempt.accountId,
      masterId: license.masterId, licenseId: license.id, details: {} });
    return granted({ ...attempt, now: at }, byLicense, byUser, license.releaseCount);
  }

  // Sign-in, mail and license-creation throttles and usage slots (memory-throttles.ts).
  tryRecordLicenseCreation(a: ThrottleAttempt): Promise<MailOutcome> { return this.throttles.tryRecordLicenseCreation(a); }
  tryRecordSignInFailure(a: SignInAttempt): Promise<SignInOutcome> { return this.throttles.tryRecordSignInFailure(a); }
  withdrawSignInFailure(id: string): Promise<void> { return this.throttles.withdrawSignInFailure(id); }
  tryRecordMailRequest(request: MailRequest): Promise<MailOutcome> { return this.throttles.tryRecordMailRequest(request); }
  tryStartUsage(attempt: UsageAttempt): Promise<UsageOutcome> { return this.throttles.tryStartUsage(attempt); }
  renewUsage(id: string, holdUntil: Date, p?: UsageProgress): Promise<void> { return this.throttles.renewUsage(id, holdUntil, p); }
  finishUsage(id: string, progress?: UsageProgress): Promise<void> { return this.throttles.finishUsage(id, progress); }
  cancelUsage(id: string): Promise<void> { return this.throttles.cancelUsage(id); }

  async pruneHistory(before: Date): Promise<{ keyReleases: number; events: number }> {
    const [r, e] = [this.releases.length, this.events.length];
    this.releases = this.releases.filter((x) => x.at >= before);
    this.events = this.events.filter((x) => x.at >= before);
    await this.activity.prune(before);
    await this.flags.prune(before);
    return { keyReleases: r - this.releases.length, events: e - this.events.length };
  }

  async appendEvent(event: NewEvent): Promise<void> {
    this.pushEvent(copy(event));
  }

  async listEvents(licenseId: string, page: EventPage): Promise<LicenseEvent[]> {
    const before = page.before === undefined ? Infinity : Number(page.before);
    return this.events
      .filter((e) => e.licenseId === licenseId && Number(e.id) < before)
      .sort((a, b) => Number(b.id) - Number(a.id))
      .slice(0, page.limit)
      .map(copy);
  }

  // Issue 26 (memory-seller.ts).
  insertApiKey(key: Omit<ApiKeyRecord, 'lastUsedAt' | 'revokedAt'>, secretHash: string): Promise<void> {
    return this.seller.insertApiKey(key, secretHash);
  }

  useApiKey(secretHash: string, now: Date): Promise<ApiKeyRecord | undefined> { return this.seller.useApiKey(secretHash, now); }
  listApiKeys(accountId: string): Promise<ApiKeyRecord[]> { return this.seller.listApiKeys(accountId); }
  revokeApiKey(id: string, accountId: string, now: Date): Promise<ApiKeyRecord | undefined> {
    return this.seller.revokeApiKey(id, accountId, now);
  }

  createLicense(input: NewLicense): Promise<CreateLicenseOutcome> { return this.seller.createLicense(input); }
  findIdempotentLicense(sellerId: string, key: string): Promise<{ licenseId: string; requestHash: string } | undefined> {
    return this.seller.findIdempotentLicense(sellerId, key);
  }

  queryLicenses(query: LicenseQuery): Promise<License[]> { return this.seller.queryLicenses(query); }
  setSuspended(change: SuspensionChange): Promise<SuspensionOutcome> { return this.seller.setSuspended(change); }

  async close(): Promise<void> {}

  private pushEvent(event: NewEvent): void {
    this.events.push({ ...event, id: String(this.nextEventId++) });
    this.webhooks.fanOut(event);
  }

  /** Verified accounts first, then the oldest (the SQL implementation orders alike). */
  private byEmail(email: string): StoredAccount | undefined {
    return [...this.accounts.values()].filter((a) => a.email === email)
      .sort((a, b) => Number(b.emailVerified) - Number(a.emailVerified)
        || a.createdAt.getTime() - b.createdAt.getTime() || a.id.localeCompare(b.id))[0];
  }

  private publicAccount(account: StoredAccount | undefined): Account | undefined {
    if (account === undefined) return undefined;
    const { external: _external, ...rest } = account;
    return copy(rest);
  }

  private licensesOf(keep: (l: License) => boolean): License[] {
    return [...this.licenses.values()].filter(keep)
      .sort((a, b) => b.issuedAt.getTime() - a.issuedAt.getTime() || a.id.localeCompare(b.id))
      .map(copy);
  }
}

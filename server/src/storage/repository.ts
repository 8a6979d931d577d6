/**
 * The repository interface: every record the service keeps (task "Storage"; SPEC "Resources"
 * and "States and transitions"). Two implementations share it: `SqlRepository` (one SQL
 * dialect over PGlite or PostgreSQL) and `MemoryRepository` (a fake for fast service tests).
 * Methods that must be atomic say so; both implementations honour that.
 */
import type { SellerRecords } from './seller-records.js';
import type { WebhookRecords } from './webhook-records.js';
import type { ShopRecords } from './shop-records.js';
import type { NoticeRecords } from './notice-records.js';
import type { ActivityRecords } from './activity-records.js';
import type { FlagRecords } from './flags-records.js';
import type {
  Account, NewAccount, ExternalIdentity, SigningKey, TextureBound, Master, License, LicenseEvent, NewEvent,
  BlobCommit, DeleteMasterOutcome, RegisterKeyOutcome, EventPage, PendingSignUp, SignUpProof, SessionRecord,
  RotateOutcome, SessionLifetime,
} from './records.js';
import type {
  ReleaseAttempt, ReleaseOutcome, ThrottleAttempt, SignInAttempt, SignInOutcome, MailRequest, MailOutcome,
  UsageAttempt, UsageProgress, UsageOutcome,
} from './attempts.js';

export * from './records.js';
export * from './attempts.js';

/** Every stored record of the service. */
export interface Repository extends SellerRecords {
  /** Webhook endpoints and the outbox (issue 26 item 4). */
  readonly webhooks: WebhookRecords;
  /** Connected shops (issue 26 item 5). */
  readonly shops: ShopRecords;
  /** The `license.expired` and `rate_limit.exceeded` events (issue 26 item 4). */
  readonly notices: NoticeRecords;
  /** Activity per license: counters, address prefixes, devices (issue 29). */
  readonly activity: ActivityRecords;
  /** Flags on licenses (issue 29 item 3). */
  readonly flags: FlagRecords;
  /** The local (password) account with this address, external accounts aside. */
  findLocalAccountByEmail(email: string): Promise<Account | undefined>;
  /** Every account, local or external, whose verified address is `email`. */
  findVerifiedAccountsByEmail(email: string): Promise<Account[]>;

  /** The address's pending sign-up that has not expired. */
  findPendingSignUp(email: string, now: Date): Promise<PendingSignUp | undefined>;
  /** Stores a pending sign-up, replacing any other for its address; deletes expired ones. */
  savePendingSignUp(pending: PendingSignUp): Promise<void>;
  /**
   * Gives the address's pending sign-up (not expired) a new token and expiry, so only the
   * newest link works; false when the address has none.
   */
  renewPendingSignUp(email: string, tokenHash: string, expiresAt: Date, now: Date): Promise<boolean>;
  /**
   * Atomically uses a pending sign-up's token: creates the verified account with `newId`, or,
   * when an unverified local account of an earlier version holds the address, makes it
   * verified with the password and name and revokes its sessions. The password is the pending
   * one when `proof` is the sign-up's own proof, or the one `proof` carries. `proof_needed`
   * (nothing changed) when the token is valid but the proof is missing or another's.
   * Undefined when the token is unknown, used or expired, or a verified local account already
   * has the address.
   */
  completeSignUp(tokenHash: string, newId: string, now: Date, proof: SignUpProof): Promise<Account | 'proof_needed' | undefined>;

  /** Stores a new session with the SHA-256 of its refresh token. */
  createSession(session: Omit<SessionRecord, 'revokedAt'>, refreshHash: string): Promise<void>;
  /**
   * The active session of a refresh token, its last use set to `now` and its expiry extended
   * within `lifetime`; undefined when unknown, revoked or expired.
   */
  useSession(refreshHash: string, now: Date, lifetime: SessionLifetime): Promise<SessionRecord | undefined>;
  /**
   * Atomically uses a refresh token and replaces it with `nextHash`, as `useSession` does; the
   * old hash is kept as retired. A retired token used within `graceSeconds` of its retirement
   * uses the session without replacing anything; used later, it revokes the session.
   */
  rotateSession(refreshHash: string, nextHash: string, now: Date, lifetime: SessionLifetime,
    graceSeconds: number): Promise<RotateOutcome>;
  findSession(id: string): Promise<SessionRecord | undefined>;
  /** The account's sessions that are neither revoked nor expired, most recently used first. */
  listSessions(accountId: string, now: Date): Promise<SessionRecord[]>;
  /** Revokes one of the account's sessions; false when it has no such active session. */
  revokeSession(id: string, accountId: string, now: Date): Promise<boolean>;
  /**
   * Deletes up to `max` sessions that ended (revoked, or expired by `now`), with their retired
   * refresh tokens; the number deleted.
   */
  pruneSessions(now: Date, max: number): Promise<number>;
  /** Revokes every active session of the account but `exceptId`; the number revoked. */
  revokeSessions(accountId: string, now: Date, exceptId?: string): Promise<number>;

  /** Stores the account's one outstanding reset token, replacing any earlier one. */
  savePasswordReset(tokenHash: string, accountId: string, expiresAt: Date): Promise<void>;
  /** Deletes the account's outstanding reset token (a password change ends it, issue 22 item 11). */
  endPasswordResets(accountId: string): Promise<void>;
  /**
   * Atomically uses a reset token: sets the password hash, marks the address verified (the
   * link proved the mailbox), drops any pending sign-up of the address and revokes every
   * session. The account id, or undefined when the token is unknown, used or expired.
   */
  consumePasswordReset(tokenHash: string, passwordHash: string, now: Date): Promise<string | undefined>;

  /** Counts a license creation per seller (`addressHash`) and client, like the mail limiter. */
  tryRecordLicenseCreation(attempt: ThrottleAttempt): Promise<MailOutcome>;

  /** Creates an account; resolves false when the e-mail is taken. */
  createAccount(account: NewAccount): Promise<boolean>;
  findAccountById(id: string): Promise<Account | undefined>;
  findAccountByEmail(email: string): Promise<Account | undefined>;
  /** Finds the account mirrored for (issuer, subject) or creates it with `newId`. */
  upsertExternalAccount(identity: ExternalIdentity, newId: string, now: Date): Promise<Account>;
  updatePasswordHash(accountId: string, passwordHash: string): Promise<void>;

  /**
   * Stores the account's one outstanding verification token, atomically replacing any earlier
   * one: only the newest link verifies.
   */
  saveVerificationToken(tokenHash: string, accountId: string, expiresAt: Date): Promise<void>;
  /** Atomically uses a token: marks its account verified; undefined when unknown/expired/used. */
  consumeVerificationToken(tokenHash: string, now: Date): Promise<string | undefined>;

  registerSigningKey(key: Omit<SigningKey, 'revokedAt'>): Promise<RegisterKeyOutcome>;
  findSigningKey(publicKey: string): Promise<SigningKey | undefined>;
  /** The account's signing keys, newest first. */
  listSigningKeys(accountId: string): Promise<SigningKey[]>;
  /** Whether the account has a signing key that is not revoked. */
  hasActiveSigningKey(accountId: string): Promise<boolean>;
  /** Revokes a key of `accountId` (idempotent: the first revocation time stays). */
  revokeSigningKey(publicKey: string, accountId: string, now: Date): Promise<SigningKey | undefined>;

  insertMaster(master: Master): Promise<void>;
  /**
   * Atomically inserts the master when the seller's stored masters and it together hold at
   * most `quotaBytes`; false, and nothing inserted, otherwise. Concurrent uploads of one seller
   * are counted one after the other.
   */
  insertMasterWithinQuota(master: Master, quotaBytes: number): Promise<boolean>;
  /**
   * Records a master whose bytes wait in a pending upload, storing each content once
   * (identical masters share one blob). Under a lock on `master.sha256` (a transaction-scoped
   * advisory lock on SQL, which `deleteMaster` takes too): when a master with the same SHA-256
   * exists, the new one is recorded with its blob (`blobId`) and `commit` is not called;
   * otherwise `commit(master.id, within)` moves the upload into place, inside the transaction
   * that records the master (`within`, so a blob store in the same database commits atomically
   * with the row). Within the quota as `insertMasterWithinQuota`; undefined when over it. The
   * caller removes a blob it committed if this throws or answers undefined.
   */
  recordMaster(master: Master, quotaBytes: number, commit: BlobCommit): Promise<Master | undefined>;
  /** Bytes of the seller's stored masters. */
  storedMasterBytes(sellerId: string): Promise<number>;
  /** Records the texture bound of a master stored before it was recorded at upload. */
  setMasterTextureBound(id: string, bound: TextureBound): Promise<void>;
  findMaster(id: string): Promise<Master | undefined>;
  /** A stored master with these bytes (SHA-256, lowercase hex), if any. */
  findMasterBySha256(sha256: string): Promise<Master | undefined>;
  listMastersBySeller(sellerId: string): Promise<(Master & { licenseCount: number })[]>;
  /** Renames a master of `sellerId`; undefined when it is not one. */
  renameMaster(id: string, sellerId: string, name: string): Promise<Master | undefined>;
  /**
   * Archives a master of `sellerId` at `at` (keeping an earlier archive time), or un-archives
   * it with undefined; undefined when it is not one of the seller's.
   */
  archiveMaster(id: string, sellerId: string, at: Date | undefined): Promise<Master | undefined>;
  /**
   * Atomically deletes a master of `sellerId` and its events when no license of it exists
   * (revoked ones included: their history needs the master). A license created concurrently
   * either makes the deletion refused or fails itself; never a license without its master.
   * The blob is the caller's to remove, and only when no other master shares it (`orphanBlob`);
   * decided under the same lock on the SHA-256 as `recordMaster`, so an identical upload being
   * recorded meanwhile either shares the blob (which then is no orphan) or stores its own.
   */
  deleteMaster(id: string, sellerId: string): Promise<DeleteMasterOutcome>;

  findLicense(id: string): Promise<License | undefined>;
  /** A license and its master in one look-up (the key-release and copy hot path). */
  findLicenseAndMaster(id: string): Promise<{ license: License; master: Master } | undefined>;
  /** Records the size of a license's copy (deterministic, so it never changes). */
  setLicenseCopyBytes(id: string, bytes: number): Promise<void>;
  listLicensesByMaster(masterId: string): Promise<License[]>;
  listLicensesByLicensee(accountId: string): Promise<License[]>;
  /**
   * Atomically revokes; the event is written only by the first revocation, naming the API key
   * `apiKeyId` when one was used.
   */
  revokeLicense(id: string, actorId: string, now: Date, reason: string | undefined, apiKeyId?: string): Promise<License | undefined>;

  /**
   * Atomically checks the license (exists, licensee = caller, not revoked) and both sliding
   * windows, and when allowed records the release, bumps the count and writes the event.
   * Concurrent attempts for one license or one user never exceed the limits.
   */
  tryRecordRelease(attempt: ReleaseAttempt): Promise<ReleaseOutcome>;

  /**
   * Atomically counts the failed sign-ins of the attempt's address and client address inside
   * the window and, when both are below their limits, records the attempt as a failure.
   * Concurrent attempts for one address or one client never exceed the limits. Deletes some
   * failures older than the window, so the record stays bounded by recent traffic.
   */
  tryRecordSignInFailure(attempt: SignInAttempt): Promise<SignInOutcome>;
  /** Removes a recorded failure whose password turned out to be right (nothing else). */
  withdrawSignInFailure(failureId: string): Promise<void>;

  /**
   * Atomically counts the mail requests of the request's address and client address inside
   * the window and, when both are below their limits, records it. Concurrent requests for one
   * address or one client never exceed the limits. Deletes some requests older than the
   * window, like `tryRecordSignInFailure`.
   */
  tryRecordMailRequest(request: MailRequest): Promise<MailOutcome>;

  /**
   * Atomically counts the actions of the attempt's kind that its account (and license) started
   * within the window and that are running, and when every limit has room records the action.
   * Concurrent attempts never exceed a limit. Deletes some finished actions older than the
   * window, so the record stays bounded by recent use.
   */
  tryStartUsage(attempt: UsageAttempt): Promise<UsageOutcome>;
  /**
   * Extends a running action's slot to `holdUntil` (a no-op once it finished), recording how
   * far a copy download got so far.
   */
  renewUsage(id: string, holdUntil: Date, progress?: UsageProgress): Promise<void>;
  /**
   * Frees a running action's slot; its start still counts towards the rates. A copy download
   * records how far it got, on itself and, for a resume, on the download it continues.
   */
  finishUsage(id: string, progress?: UsageProgress): Promise<void>;
  /** Forgets an action that never got going (it counts towards nothing). */
  cancelUsage(id: string): Promise<void>;

  /**
   * Deletes key-release and event rows older than `before` (retention, issue 16 item 6),
   * returning how many of each went. Release counts live on the license and the limiters
   * count only their window, so nothing a limit needs is lost while `before` is older than
   * the longest window.
   */
  pruneHistory(before: Date): Promise<{ keyReleases: number; events: number }>;

  appendEvent(event: NewEvent): Promise<void>;
  listEvents(licenseId: string, page: EventPage): Promise<LicenseEvent[]>;

  close(): Promise<void>;
}

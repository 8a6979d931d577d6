/**
 * The repository interface: every record the service keeps (task "Storage"; SPEC "Resources"
 * and "States and transitions"). Two implementations share it: `SqlRepository` (one SQL
 * dialect over PGlite or PostgreSQL) and `MemoryRepository` (a fake for fast service tests).
 * Methods that must be atomic say so; both implementations honour that.
 */
import type { SqlQueryable } from './sql-db.js';
import type { SellerRecords } from './seller-records.js';
import type { WebhookRecords } from './webhook-records.js';
import type { ShopRecords } from './shop-records.js';
import type { NoticeRecords } from './notice-records.js';
import type { ActivityRecords, ClientMark } from './activity-records.js';
import type { FlagRecords } from './flags-records.js';

/** An account of the built-in module or mirrored from an external OpenID Connect issuer. */
export interface Account {
  id: string;
  /** Lower-cased e-mail address. */
  email: string;
  emailVerified: boolean;
  /** Argon2id PHC string; undefined for external accounts. */
  passwordHash: string | undefined;
  name: string;
  createdAt: Date;
}

/** Input of `createAccount`. */
export interface NewAccount {
  id: string;
  email: string;
  passwordHash: string;
  name: string;
  createdAt: Date;
}

/** Claims of an external identity, used to find or create its mirrored account. */
export interface ExternalIdentity {
  issuer: string;
  subject: string;
  email: string;
  emailVerified: boolean;
  name: string;
}

/** A device signing key registered to an account. */
export interface SigningKey {
  /** Ed25519 public key, 43-character base64url. */
  publicKey: string;
  accountId: string;
  name: string;
  createdAt: Date;
  revokedAt: Date | undefined;
}

/**
 * The largest texture of a master: the longest side and the largest area among its `rgba8`
 * entries, in pixels (both 0 for a master without textures). Identify decodes no image
 * beyond it, since a leaked texture is one of the master's.
 */
export interface TextureBound {
  maxSidePx: number;
  maxPixels: number;
}

/** A verified master (SPEC "Master and license copy"). */
export interface Master {
  id: string;
  sellerId: string;
  name: string;
  /** SHA-256 of the stored file, lowercase hex. */
  sha256: string;
  size: number;
  entries: number;
  textures: number;
  signerPublicKey: string;
  createdAt: Date;
  /** Recorded at upload; undefined for a master stored before it was (worked out on first use). */
  textureBound: TextureBound | undefined;
  /** When its seller archived it (no new licenses; everything else goes on); undefined when not archived. */
  archivedAt?: Date;
  /**
   * The blob holding the bytes when another master with the same SHA-256 stored them first
   * (identical masters are stored once); undefined: the blob is the master's own id.
   */
  blobId?: string | undefined;
}

/** The blob store id of a master's bytes. */
export const blobOf = (m: Pick<Master, 'id' | 'blobId'>): string => m.blobId ?? m.id;

/** A license: one buyer's right to one master. */
export interface License {
  /** 16 lowercase hex digits (random 64-bit id). */
  id: string;
  masterId: string;
  licenseeId: string;
  /**
   * The licensee's display name when the license was issued. It is written into every copy's
   * manifest, so it is frozen: a later change of the account's name never changes a copy.
   */
  licenseeName: string;
  /**
   * The address the seller licensed the buyer by, when they licensed by e-mail (issue 22
   * item 6); undefined when they named the account id, so its address is never shown to them.
   */
  licenseeEmail?: string | undefined;
  issuedAt: Date;
  revokedAt: Date | undefined;
  releaseCount: number;
  /** Size of the license copy in bytes, once one was produced whole (for `Range` answers). */
  copyBytes?: number | undefined;
  /** The seller's reference (an order id), at most 200 characters (issue 26 item 2). */
  externalRef?: string | undefined;
  /** From this time on no copy or key is issued (issue 26 item 3); undefined: never expires. */
  expiresAt?: Date | undefined;
  /** When its seller suspended it (reversible); undefined when not suspended. */
  suspendedAt?: Date | undefined;
}

/** Event kinds recorded for licenses and masters. */
export type EventKind = 'license_created' | 'release' | 'download' | 'revoke' | 'identify' | 'suspend' | 'reinstate'
  /** Written once when the license passed its `expiresAt`, and one per window when a limit refused it (notice-records.ts). */
  | 'expire' | 'rate_limited'
  /** A flag raised on the license (issue 29 item 3; storage/flags-records.ts), actor `system`. */
  | 'flag';

/** Something that happened to a license (or a master, for identify without a match). */
export interface LicenseEvent {
  /** Monotonic id, decimal string (a cursor for paging). */
  id: string;
  at: Date;
  kind: EventKind;
  actorId: string;
  masterId: string;
  licenseId: string | undefined;
  details: Record<string, unknown>;
}

/** Input of `appendEvent`. */
export type NewEvent = Omit<LicenseEvent, 'id'>;

/** A key release request for the sliding-window limiter. */
export interface ReleaseAttempt {
  licenseId: string;
  accountId: string;
  /**
   * The session the caller's access token names, checked in the same statement (active, of
   * `accountId`), with the account's verified address: the release route authenticates no
   * further. Undefined: the caller was authenticated already (an external token), and
   * neither is checked.
   */
  sessionId?: string | undefined;
  now: Date;
  windowSeconds: number;
  perLicense: number;
  perUser: number;
  /** The caller's address prefix hash and device, counted with a granted release (issue 29). */
  mark?: ClientMark | undefined;
}

/** State of one limit after an attempt. */
export interface LimitState {
  limit: number;
  /** Releases counted in the window, including this one when it was granted. */
  used: number;
  /** When the oldest counted release leaves the window (now + window when none). */
  resetAt: Date;
}

/** Outcome of `tryRecordRelease`. */
export type ReleaseOutcome =
  | { kind: 'granted'; releaseCount: number; perLicense: LimitState; perUser: LimitState }
  | { kind: 'limited'; scope: 'license' | 'user'; retryAt: Date; perLicense: LimitState; perUser: LimitState }
  | { kind: 'not_found' }
  | { kind: 'revoked' }
  /** Suspended by its seller, or past its `expiresAt` (issue 26 item 3). */
  | { kind: 'suspended' }
  | { kind: 'expired' }
  /** The session ended (or the account is gone): the caller is not authenticated. */
  | { kind: 'unauthenticated' }
  /** The account's address is not verified. */
  | { kind: 'unverified' };

/**
 * One event counted per address and per client over a sliding window: a failed sign-in or a
 * request for a verification e-mail. The address is never stored in clear.
 */
export interface ThrottleAttempt {
  /**
   * HMAC-SHA256 (lowercase hex) of the normalised e-mail address under a key derived from the
   * root secret; the address is never stored.
   */
  addressHash: string;
  /** The client address as Express reports it, stored as given. */
  clientIp: string;
  now: Date;
  windowSeconds: number;
  /** `Infinity` counts the address without limiting it. */
  perAddress: number;
  perIp: number;
}

/** The refusal of a throttled attempt: which limit is full and when a slot frees. */
export interface Throttled { kind: 'throttled'; scope: 'address' | 'ip'; retryAt: Date }

/**
 * A sign-in for the failure limiter. The attempt is recorded as a failure before the password
 * is checked and withdrawn when it was right, so concurrent guesses are counted one after the
 * other instead of all passing a count taken before any of them failed.
 */
export type SignInAttempt = ThrottleAttempt;

/** Outcome of `tryRecordSignInFailure`. */
export type SignInOutcome = { kind: 'recorded'; failureId: string } | Throttled;

/**
 * A sign-up or a resend for the verification-mail limiter, recorded before the account is
 * looked up or created, so it counts alike for an address with or without an account.
 */
export type MailRequest = ThrottleAttempt;

/** Outcome of `tryRecordMailRequest`. */
export type MailOutcome = { kind: 'recorded' } | Throttled;

/** What a usage action is: a master upload, a license-copy download, an identify request. */
export type UsageKind = 'upload' | 'copy' | 'identify';

/**
 * One usage action to admit against its limits (`services/usage-limits.ts`): how many of its
 * kind the account (and, for a copy, the license) started within the window, and how many are
 * running now. A limit of `Infinity` does not apply.
 */
export interface UsageAttempt {
  kind: UsageKind;
  accountId: string;
  /** The license of a copy download; the per-license limits apply only with one. */
  licenseId: string | undefined;
  now: Date;
  /** Actions started within this many seconds before `now` count towards the rates. */
  windowSeconds: number;
  ratePerAccount: number;
  ratePerLicense: number;
  concurrentPerAccount: number;
  concurrentPerLicense: number;
  /**
   * Until when a started action holds a running slot unless renewed (`renewUsage`) or finished
   * (`finishUsage`): a process that dies mid-transfer frees its slots when they lapse. Undefined
   * for an action that runs at once and holds no slot (identify).
   */
  holdUntil: Date | undefined;
  /**
   * A copy download asked for with a `Range` that starts after the first byte (`from`), of the
   * copy whose ETag is `etag`: it continues a cut download when one was recorded (see
   * `usage-window.ts` `resumeParent`), and counts as a download otherwise.
   */
  resume?: { etag: string; from: number };
  /** The ETag of the copy a download sends, recorded with it so that a resume can name it. */
  etag?: string;
}

/** How far a copy download got: the byte after the last one sent, and whether that was the copy's end. */
export interface UsageProgress {
  sentTo: number;
  complete: boolean;
}

/** Outcome of `tryStartUsage`: the action's id, or which limit refused it and until when. */
export type UsageOutcome =
  | { kind: 'started'; id: string; resumed?: boolean }
  | { kind: 'limited'; reason: 'rate' | 'concurrency'; scope: 'account' | 'license'; limit: number; retryAt: Date };

/** Outcome of `deleteMaster`: deleted, not the seller's (or unknown), or kept for its licenses. */
/** Moves a pending upload into place as blob `blobId`; `within` is the recording transaction on SQL. */
export type BlobCommit = (blobId: string, within: SqlQueryable | undefined) => Promise<void>;

export type DeleteMasterOutcome =
  /** `orphanBlob`: the blob no remaining master reads (identical masters share one), to remove. */
  | { kind: 'deleted'; orphanBlob: string | undefined }
  | { kind: 'not_found' }
  | { kind: 'has_licenses'; licenses: number };

/** Result of `registerSigningKey`. */
export type RegisterKeyOutcome = 'created' | 'exists' | 'taken' | 'revoked';

/** Paging of event lists: newest first, before an event id. */
export interface EventPage {
  limit: number;
  before: string | undefined;
}

/**
 * A sign-up waiting for its link (issue 15 item 1): the password it chose takes effect only
 * when the link's token is used; a newer sign-up for the address replaces it.
 */
export interface PendingSignUp {
  /** SHA-256 of the link's token, lowercase hex. */
  tokenHash: string;
  email: string;
  name: string;
  passwordHash: string;
  /**
   * SHA-256 (lowercase hex) of the proof the browser that signed up holds (issue 22 item 3);
   * undefined for a sign-up stored before there was one.
   */
  proofHash: string | undefined;
  createdAt: Date;
  expiresAt: Date;
}

/**
 * What completes a pending sign-up: the proof of the browser that signed up (its password then
 * takes effect), or a password the person at the link chose (which replaces it).
 */
export type SignUpProof = { proofHash: string | undefined } | { passwordHash: string };

/** A signed-in session: the refresh token's record (only its SHA-256 is stored). */
export interface SessionRecord {
  id: string;
  accountId: string;
  /** What the client said it is (User-Agent or the CLI's device name), at most 200 characters. */
  device: string;
  createdAt: Date;
  lastUsedAt: Date;
  expiresAt: Date;
  revokedAt: Date | undefined;
}

/**
 * What using a refresh token did (issue 22 item 8): `rotated` (the token is replaced by the new
 * one), `grace` (a token retired less than the grace period ago, as two tabs refreshing at once
 * do: the session is used but nothing replaced), `reused` (an older retired token: the session
 * was ended), `ended` (unknown, revoked or expired).
 */
export type RotateOutcome =
  | { kind: 'rotated' | 'grace'; session: SessionRecord }
  | { kind: 'reused' | 'ended' };

/** How long a session lives: idle lifetime, extended on use, never past the maximum from creation. */
export interface SessionLifetime {
  idleSeconds: number;
  maxSeconds: number;
}

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

  /** Inserts a license and its `license_created` event; false when the id already exists. */
  insertLicense(license: Omit<License, 'revokedAt' | 'releaseCount' | 'copyBytes'>, actorId: string): Promise<boolean>;
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

/**
 * The `Repository` in SQL, shared by PGlite and PostgreSQL (one dialect, one set of
 * migrations). Atomic methods run in one transaction; the key-release limiter locks the
 * caller's account row and the license row (always in that order) so that concurrent
 * releases for one license or one user, from any number of service instances sharing the
 * database, are counted one after the other: exactly `limit` of them can succeed per window.
 * The sign-in and verification-mail limiters do the same with transaction advisory locks on
 * the address and the client (`sql-throttles.ts`), since an unknown address or a new client has
 * no row to lock.
 */
import { SqlWebhookRecords } from './sql-webhooks.js';
import { SqlShopRecords } from './shop-records.js';
import { SqlNoticeRecords } from './sql-notices.js';
import { SqlActivityRecords } from './sql-activity.js';
import { SqlFlagRecords } from './sql-flags.js';
import type { SqlDb } from './sql-db.js';
import * as accounts from './sql-accounts.js';
import { ACCOUNT_COLUMNS, toAccount } from './sql-accounts.js';
import {
  LICENSE_COLUMNS, MASTER_COLUMNS, date, insertEvent, toEvent, toLicense, toMaster, toSigningKey, type Row,
} from './sql-rows.js';
import type {
  Account, BlobCommit, DeleteMasterOutcome, EventPage, ExternalIdentity, License, LicenseEvent, MailOutcome, MailRequest, Master, NewAccount,
  NewEvent, PendingSignUp, RegisterKeyOutcome, SignUpProof, ReleaseAttempt, ReleaseOutcome, Repository, RotateOutcome, SessionLifetime, SessionRecord,
  SignInAttempt, SignInOutcome, SigningKey, TextureBound, ThrottleAttempt, UsageAttempt, UsageOutcome, UsageProgress,
} from './repository.js';
import { LICENSE_CREATIONS, MAIL_REQUESTS, SIGN_IN_FAILURES, tryRecordThrottled } from './sql-throttles.js';
import * as masters from './sql-masters.js';
import * as usage from './sql-usage.js';
import { ReleaseRecorder } from './sql-release.js';
import * as seller from './sql-seller.js';
import {
  revokeDetails, type ApiKeyRecord, type CreateLicenseOutcome, type LicenseQuery, type NewLicense, type SuspensionChange,
  type SuspensionOutcome,
} from './seller-records.js';

/** Rows deleted per statement when pruning history. */
const PRUNE_BATCH = 5000;

/** The SQL repository over a `SqlDb` (migrations must have been applied). */
export class SqlRepository implements Repository {
  private readonly releases: ReleaseRecorder;
  readonly webhooks: SqlWebhookRecords;
  readonly shops: SqlShopRecords;
  readonly notices: SqlNoticeRecords;
  readonly activity: SqlActivityRecords;
  readonly flags: SqlFlagRecords;

  constructor(private readonly db: SqlDb) {
    this.releases = new ReleaseRecorder(db);
    this.webhooks = new SqlWebhookRecords(db);
    this.shops = new SqlShopRecords(db);
    this.notices = new SqlNoticeRecords(db);
    this.activity = new SqlActivityRecords(db);
    this.flags = new SqlFlagRecords(db);
  }

  async createAccount(a: NewAccount): Promise<boolean> {
    const result = await this.db.query(`INSERT INTO accounts (id, email, password_hash, name, created_at)
      VALUES ($1, $2, $3, $4, $5) ON CONFLICT DO NOTHING`,
    [a.id, a.email, a.passwordHash, a.name, a.createdAt]);
    return result.rowCount === 1;
  }

  async findAccountById(id: string): Promise<Account | undefined> {
    const { rows } = await this.db.query(`SELECT ${ACCOUNT_COLUMNS} FROM accounts WHERE id = $1`, [id]);
    return rows[0] === undefined ? undefined : toAccount(rows[0]);
  }

  async findAccountByEmail(email: string): Promise<Account | undefined> {
    const { rows } = await this.db.query(`SELECT ${ACCOUNT_COLUMNS} FROM accounts WHERE email = $1
      ORDER BY email_verified DESC, created_at, id LIMIT 1`, [email]);
    return rows[0] === undefined ? undefined : toAccount(rows[0]);
  }

  async findLocalAccountByEmail(email: string): Promise<Account | undefined> {
    return accounts.findLocalAccountByEmail(this.db, email);
  }

  async findVerifiedAccountsByEmail(email: string): Promise<Account[]> {
    return accounts.findVerifiedAccountsByEmail(this.db, email);
  }

  async findPendingSignUp(email: string, now: Date): Promise<PendingSignUp | undefined> {
    return accounts.findPendingSignUp(this.db, email, now);
  }

  async savePendingSignUp(pending: PendingSignUp): Promise<void> {
    await accounts.savePendingSignUp(this.db, pending);
  }

  async renewPendingSignUp(email: string, tokenHash: string, expiresAt: Date, now: Date): Promise<boolean> {
    return accounts.renewPendingSignUp(this.db, email, tokenHash, expiresAt, now);
  }

  async completeSignUp(tokenHash: string, newId: string, now: Date, proof: SignUpProof): Promise<Account | 'proof_needed' | undefined> {
    return accounts.completeSignUp(this.db, tokenHash, newId, now, proof);
  }

  async createSession(session: Omit<SessionRecord, 'revokedAt'>, refreshHash: string): Promise<void> {
    await accounts.createSession(this.db, session, refreshHash);
  }

  async useSession(refreshHash: string, now: Date, lifetime: SessionLifetime): Promise<SessionRecord | undefined> {
    return accounts.useSession(this.db, refreshHash, now, lifetime);
  }

  async rotateSession(refreshHash: string, nextHash: string, now: Date, lifetime: SessionLifetime,
    graceSeconds: number): Promise<RotateOutcome> {
    return accounts.rotateSession(this.db, refreshHash, nextHash, now, lifetime, graceSeconds);
  }

  async findSession(id: string): Promise<SessionRecord | undefined> {
    return accounts.findSession(this.db, id);
  }

  async listSessions(accountId: string, now: Date): Promise<SessionRecord[]> {
    return accounts.listSessions(this.db, accountId, now);
  }

  async revokeSession(id: string, accountId: string, now: Date): Promise<boolean> {
    return accounts.revokeSession(this.db, id, accountId, now);
  }

  async pruneSessions(now: Date, max: number): Promise<number> {
    return accounts.pruneSessions(this.db, now, max);
  }

  async revokeSessions(accountId: string, now: Date, exceptId?: string): Promise<number> {
    return accounts.revokeSessions(this.db, accountId, now, exceptId);
  }

  async savePasswordReset(tokenHash: string, accountId: string, expiresAt: Date): Promise<void> {
    await accounts.savePasswordReset(this.db, tokenHash, accountId, expiresAt);
  }

  async endPasswordResets(accountId: string): Promise<void> {
    await this.db.query('DELETE FROM password_resets WHERE account_id = $1', [accountId]);
  }

  async consumePasswordReset(tokenHash: string, passwordHash: string, now: Date): Promise<string | undefined> {
    return accounts.consumePasswordReset(this.db, tokenHash, passwordHash, now);
  }

  async tryRecordLicenseCreation(attempt: ThrottleAttempt): Promise<MailOutcome> {
    const outcome = await tryRecordThrottled(this.db, LICENSE_CREATIONS, attempt);
    return outcome.kind === 'recorded' ? { kind: 'recorded' } : outcome;
  }

  async upsertExternalAccount(identity: ExternalIdentity, newId: string, now: Date): Promise<Account> {
    const { rows } = await this.db.query(`INSERT INTO accounts
      (id, email, email_verified, name, external_issuer, external_subject, created_at)
      VALUES ($1, $2, $3, $4, $5, $6, $7)
      ON CONFLICT (external_issuer, external_subject) WHERE external_issuer IS NOT NULL
      DO UPDATE SET email = EXCLUDED.email, email_verified = EXCLUDED.email_verified, name = EXCLUDED.name
      RETURNING ${ACCOUNT_COLUMNS}`,
    [newId, identity.email, identity.emailVerified, identity.name, identity.issuer, identity.subject, now]);
    return toAccount(rows[0] as Row);
  }

  async updatePasswordHash(accountId: string, passwordHash: string): Promise<void> {
    await this.db.query('UPDATE accounts SET password_hash = $2 WHERE id = $1', [accountId, passwordHash]);
  }

  async saveVerificationToken(tokenHash: string, accountId: string, expiresAt: Date): Promise<void> {
    await this.db.transaction(async (tx) => {
      // The account row lock orders concurrent resends for one account, so exactly one token,
      // the last one written, stays.
      await tx.query('SELECT id FROM accounts WHERE id = $1 FOR UPDATE', [accountId]);
      await tx.query('DELETE FROM email_verifications WHERE account_id = $1', [accountId]);
      await tx.query('INSERT INTO email_verifications (token_hash, account_id, expires_at) VALUES ($1, $2, $3)',
        [tokenHash, accountId, expiresAt]);
    });
  }

  async consumeVerificationToken(tokenHash: string, now: Date): Promise<string | undefined> {
    return this.db.transaction(async (tx) => {
      const { rows } = await tx.query('DELETE FROM email_verifications WHERE token_hash = $1 RETURNING account_id, expires_at',
        [tokenHash]);
      const row = rows[0];
      if (row === undefined || date(row['expires_at']) <= now) return undefined;
      const updated = await tx.query('UPDATE accounts SET email_verified = true WHERE id = $1 RETURNING id',
        [row['account_id']]);
      return updated.rows[0] === undefined ? undefined : String(updated.rows[0]['id']);
    });
  }

  async registerSigningKey(key: Omit<SigningKey, 'revokedAt'>): Promise<RegisterKeyOutcome> {
    const inserted = await this.db.query(`INSERT INTO signing_keys (public_key, account_id, name, created_at)
      VALUES ($1, $2, $3, $4) ON CONFLICT (public_key) DO NOTHING`,
    [key.publicKey, key.accountId, key.name, key.createdAt]);
    if (inserted.rowCount === 1) return 'created';
    const found = await this.findSigningKey(key.publicKey);
    if (found === undefined || found.accountId !== key.accountId) return 'taken';
    return found.revokedAt === undefined ? 'exists' : 'revoked';
  }

  async findSigningKey(publicKey: string): Promise<SigningKey | undefined> {
    const { rows } = await this.db.query('SELECT * FROM signing_keys WHERE public_key = $1', [publicKey]);
    return rows[0] === undefined ? undefined : toSigningKey(rows[0]);
  }

  async listSigningKeys(accountId: string): Promise<SigningKey[]> {
    const { rows } = await this.db.query(
      'SELECT * FROM signing_keys WHERE account_id = $1 ORDER BY created_at DESC, public_key', [accountId]);
    return rows.map(toSigningKey);
  }

  async revokeSigningKey(publicKey: string, accountId: string, now: Date): Promise<SigningKey | undefined> {
    const { rows } = await this.db.query(`UPDATE signing_keys SET revoked_at = COALESCE(revoked_at, $3)
      WHERE public_key = $1 AND account_id = $2 RETURNING *`, [publicKey, accountId, now]);
    return rows[0] === undefined ? undefined : toSigningKey(rows[0]);
  }

  async hasActiveSigningKey(accountId: string): Promise<boolean> {
    const { rows } = await this.db.query(
      'SELECT 1 FROM signing_keys WHERE account_id = $1 AND revoked_at IS NULL LIMIT 1', [accountId]);
    return rows.length > 0;
  }

  async insertMaster(m: Master): Promise<void> {
    await masters.insertMasterRow(this.db, m);
  }

  async insertMasterWithinQuota(m: Master, quotaBytes: number): Promise<boolean> {
    return usage.withinQuota(this.db, m.sellerId, m.size, quotaBytes, (tx) => masters.insertMasterRow(tx, m));
  }

  async recordMaster(m: Master, quotaBytes: number, commit: BlobCommit): Promise<Master | undefined> {
    return masters.recordMaster(this.db, m, quotaBytes, commit);
  }

  async storedMasterBytes(sellerId: string): Promise<number> {
    return usage.storedMasterBytes(this.db, sellerId);
  }

  async setMasterTextureBound(id: string, bound: TextureBound): Promise<void> {
    await this.db.query('UPDATE masters SET texture_max_side = $2, texture_max_pixels = $3 WHERE id = $1',
      [id, bound.maxSidePx, bound.maxPixels]);
  }

  async findMaster(id: string): Promise<Master | undefined> {
    const { rows } = await this.db.query(`SELECT ${MASTER_COLUMNS} FROM masters WHERE id = $1`, [id]);
    return rows[0] === undefined ? undefined : toMaster(rows[0]);
  }

  async findMasterBySha256(sha256: string): Promise<Master | undefined> {
    const { rows } = await this.db.query(`SELECT ${MASTER_COLUMNS} FROM masters WHERE sha256 = $1
      ORDER BY created_at, id LIMIT 1`, [sha256]);
    return rows[0] === undefined ? undefined : toMaster(rows[0]);
  }

  async listMastersBySeller(sellerId: string): Promise<(Master & { licenseCount: number })[]> {
    const { rows } = await this.db.query(`SELECT ${MASTER_COLUMNS},
        (SELECT count(*)::int FROM licenses l WHERE l.master_id = masters.id) AS license_count
      FROM masters WHERE seller_id = $1 ORDER BY created_at DESC, id`, [sellerId]);
    return rows.map((r) => ({ ...toMaster(r), licenseCount: Number(r['license_count']) }));
  }

  async renameMaster(id: string, sellerId: string, name: string): Promise<Master | undefined> {
    const { rows } = await this.db.query(`UPDATE masters SET name = $3 WHERE id = $1 AND seller_id = $2
      RETURNING ${MASTER_COLUMNS}`, [id, sellerId, name]);
    return rows[0] === undefined ? undefined : toMaster(rows[0]);
  }

  async archiveMaster(id: string, sellerId: string, at: Date | undefined): Promise<Master | undefined> {
    const { rows } = await this.db.query(`UPDATE masters SET archived_at = CASE WHEN $3::timestamptz IS NULL THEN NULL
        ELSE COALESCE(archived_at, $3::timestamptz) END
      WHERE id = $1 AND seller_id = $2 RETURNING ${MASTER_COLUMNS}`, [id, sellerId, at ?? null]);
    return rows[0] === undefined ? undefined : toMaster(rows[0]);
  }

  async deleteMaster(id: string, sellerId: string): Promise<DeleteMasterOutcome> {
    return masters.deleteMaster(this.db, id, sellerId);
  }

  async findLicense(id: string): Promise<License | undefined> {
    const { rows } = await this.db.query(`SELECT ${LICENSE_COLUMNS} FROM licenses WHERE id = $1`, [id]);
    return rows[0] === undefined ? undefined : toLicense(rows[0]);
  }

  async listLicensesByMaster(masterId: string): Promise<License[]> {
    const { rows } = await this.db.query(`SELECT ${LICENSE_COLUMNS} FROM licenses WHERE master_id = $1
      ORDER BY issued_at DESC, id`, [masterId]);
    return rows.map(toLicense);
  }

  async listLicensesByLicensee(accountId: string): Promise<License[]> {
    const { rows } = await this.db.query(`SELECT ${LICENSE_COLUMNS} FROM licenses WHERE licensee_id = $1
      ORDER BY issued_at DESC, id`, [accountId]);
    return rows.map(toLicense);
  }

  async revokeLicense(id: string, actorId: string, now: Date, reason: string | undefined, apiKeyId?: string): Promise<License | undefined> {
    return this.db.transaction(async (tx) => {
      const { rows } = await tx.query(`SELECT ${LICENSE_COLUMNS} FROM licenses WHERE id = $1 FOR UPDATE`, [id]);
      const license = rows[0] === undefined ? undefined : toLicense(rows[0]);
      if (license === undefined || license.revokedAt !== undefined) return license;
      await tx.query('UPDATE licenses SET revoked_at = $2 WHERE id = $1', [id, now]);
      await insertEvent(tx, { at: now, kind: 'revoke', actorId, masterId: license.masterId, licenseId: id,
        details: revokeDetails(reason, apiKeyId) });
      return { ...license, revokedAt: now };
    });
  }

  /** One statement (`sql-release.ts`); on PGlite, grouped with concurrent releases into one commit. */
  async tryRecordRelease(attempt: ReleaseAttempt): Promise<ReleaseOutcome> {
    return this.releases.record(attempt);
  }

  async findLicenseAndMaster(id: string): Promise<{ license: License; master: Master } | undefined> {
    const { rows } = await this.db.query(`SELECT l.id, l.master_id, l.licensee_id, l.licensee_name, l.licensee_email, l.issued_at,
        l.revoked_at, l.release_count, l.copy_bytes::float8 AS copy_bytes, l.external_ref, l.expires_at, l.suspended_at, m.id AS m_id, m.seller_id, m.name, m.sha256,
        m.size::float8 AS size, m.entries, m.textures, m.signer_public_key, m.created_at, m.texture_max_side,
        m.texture_max_pixels::float8 AS texture_max_pixels, m.blob_id
      FROM licenses l JOIN masters m ON m.id = l.master_id WHERE l.id = $1`, [id]);
    const r = rows[0];
    if (r === undefined) return undefined;
    return { license: toLicense(r), master: toMaster({ ...r, id: r['m_id'] }) };
  }

  async setLicenseCopyBytes(id: string, bytes: number): Promise<void> {
    await this.db.query('UPDATE licenses SET copy_bytes = $2 WHERE id = $1', [id, bytes]);
  }

  async tryRecordSignInFailure(attempt: SignInAttempt): Promise<SignInOutcome> {
    const outcome = await tryRecordThrottled(this.db, SIGN_IN_FAILURES, attempt);
    return outcome.kind === 'recorded' ? { kind: 'recorded', failureId: outcome.id } : outcome;
  }

  async withdrawSignInFailure(failureId: string): Promise<void> {
    await this.db.query('DELETE FROM sign_in_failures WHERE id = $1::bigint', [failureId]);
  }

  async tryRecordMailRequest(request: MailRequest): Promise<MailOutcome> {
    const outcome = await tryRecordThrottled(this.db, MAIL_REQUESTS, request);
    return outcome.kind === 'recorded' ? { kind: 'recorded' } : outcome;
  }

  async tryStartUsage(attempt: UsageAttempt): Promise<UsageOutcome> {
    return usage.tryStartUsage(this.db, attempt);
  }

  async renewUsage(id: string, holdUntil: Date, progress?: UsageProgress): Promise<void> {
    await usage.renewUsage(this.db, id, holdUntil, progress);
  }

  async finishUsage(id: string, progress?: UsageProgress): Promise<void> {
    await usage.finishUsage(this.db, id, progress);
  }

  async cancelUsage(id: string): Promise<void> {
    await usage.cancelUsage(this.db, id);
  }

  /** In batches of `PRUNE_BATCH` rows, so no statement holds locks on a large table for long. */
  async pruneHistory(before: Date): Promise<{ keyReleases: number; events: number }> {
    const prune = async (table: string, at: string) => {
      let total = 0;
      for (;;) {
        const { rowCount } = await this.db.query(`DELETE FROM ${table} WHERE id IN (SELECT id FROM ${table}
          WHERE ${at} < $1 ORDER BY ${at} LIMIT ${PRUNE_BATCH})`, [before]);
        total += rowCount;
        if (rowCount < PRUNE_BATCH) return total;
      }
    };
    // The activity counters (issue 29) are history too, kept as long.
    await this.activity.prune(before);
    await this.flags.prune(before);
    return { keyReleases: await prune('key_releases', 'released_at'), events: await prune('events', 'at') };
  }

  async appendEvent(event: NewEvent): Promise<void> {
    await insertEvent(this.db, event);
  }

  async listEvents(licenseId: string, page: EventPage): Promise<LicenseEvent[]> {
    const { rows } = await this.db.query(`SELECT id::text AS id, at, kind, actor_id, master_id, license_id, details
      FROM events WHERE license_id = $1 AND ($2::bigint IS NULL OR id < $2::bigint)
      ORDER BY events.id DESC LIMIT $3`, [licenseId, page.before ?? null, page.limit]);
    return rows.map(toEvent);
  }

  // Issue 26 (sql-seller.ts).
  insertApiKey(key: Omit<ApiKeyRecord, 'lastUsedAt' | 'revokedAt'>, secretHash: string): Promise<void> {
    return seller.insertApiKey(this.db, key, secretHash);
  }

  useApiKey(secretHash: string, now: Date): Promise<ApiKeyRecord | undefined> { return seller.useApiKey(this.db, secretHash, now); }
  listApiKeys(accountId: string): Promise<ApiKeyRecord[]> { return seller.listApiKeys(this.db, accountId); }
  revokeApiKey(id: string, accountId: string, now: Date): Promise<ApiKeyRecord | undefined> {
    return seller.revokeApiKey(this.db, id, accountId, now);
  }

  createLicense(input: NewLicense): Promise<CreateLicenseOutcome> { return seller.createLicense(this.db, input); }
  findIdempotentLicense(sellerId: string, key: string): Promise<{ licenseId: string; requestHash: string } | undefined> {
    return seller.findIdempotentLicense(this.db, sellerId, key);
  }

  queryLicenses(query: LicenseQuery): Promise<License[]> { return seller.queryLicenses(this.db, query, toLicense); }
  setSuspended(change: SuspensionChange): Promise<SuspensionOutcome> { return seller.setSuspended(this.db, change, toLicense); }

  /** The database belongs to whoever opened it (see `storage/index.ts`); nothing to do here. */
  async close(): Promise<void> {}
}

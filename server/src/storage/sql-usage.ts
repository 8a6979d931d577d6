/**
 * The SQL side of the usage limits (`usage_actions`, migration 5) and of the storage quota.
 * Like the key-release limiter, an attempt locks the account row and then the license row
 * (always in that order, the order `tryRecordRelease` uses), so concurrent attempts from any
 * number of service instances sharing the database are counted one after the other: exactly
 * `limit` of them start.
 */
import type { SqlDb, SqlQueryable } from './sql-db.js';
import type { UsageAttempt, UsageOutcome, UsageProgress } from './repository.js';
import { resumeParent, usageRefusal, type UsageRow } from './usage-window.js';
import { windowStart } from './window.js';

/** Finished actions deleted per started one, oldest first (as in `sql-throttles.ts`). */
const SWEEP_ROWS = 100;

const date = (v: unknown): Date => (v instanceof Date ? v : new Date(String(v)));

function toRow(r: Record<string, unknown>): UsageRow & { accountId: string } {
  return {
    id: String(r['id']),
    accountId: String(r['account_id']),
    licenseId: r['license_id'] === null ? undefined : String(r['license_id']),
    startedAt: date(r['started_at']),
    holdUntil: r['hold_until'] === null ? undefined : date(r['hold_until']),
    resumed: r['resumed'] === true,
    ...(r['parent_id'] === null ? {} : { parentId: String(r['parent_id']) }),
    ...(r['etag'] === null ? {} : { etag: String(r['etag']) }),
    sentTo: Number(r['sent_to']),
    complete: r['complete'] === true,
  };
}

/** Locks the account (and license) rows of an attempt; false when one does not exist. */
async function lockSubjects(tx: SqlQueryable, attempt: UsageAttempt): Promise<boolean> {
  const account = await tx.query('SELECT id FROM accounts WHERE id = $1 FOR UPDATE', [attempt.accountId]);
  if (account.rows.length === 0) return false;
  if (attempt.licenseId === undefined) return true;
  const license = await tx.query('SELECT id FROM licenses WHERE id = $1 FOR UPDATE', [attempt.licenseId]);
  return license.rows.length > 0;
}

/** `Repository.tryStartUsage` in SQL. */
export async function tryStartUsage(db: SqlDb, attempt: UsageAttempt): Promise<UsageOutcome> {
  return db.transaction(async (tx) => {
    if (!(await lockSubjects(tx, attempt))) throw new Error('usage attempt for an unknown account or license');
    const since = windowStart(attempt);
    const { rows } = await tx.query(`SELECT id::text AS id, account_id, license_id, started_at, hold_until, resumed,
      parent_id::text AS parent_id, etag, sent_to::float8 AS sent_to, complete FROM usage_actions
      WHERE kind = $1 AND (account_id = $2 OR license_id = $3) AND (started_at > $4 OR hold_until > $5)`,
    [attempt.kind, attempt.accountId, attempt.licenseId ?? null, since, attempt.now]);
    const found = rows.map(toRow);
    const byAccount = found.filter((r) => r.accountId === attempt.accountId);
    const byLicense = attempt.licenseId === undefined ? [] : found.filter((r) => r.licenseId === attempt.licenseId);
    const refused = usageRefusal(attempt, byAccount, byLicense);
    if (refused !== undefined) return refused;
    const parent = resumeParent(attempt, byLicense);
    const resumed = parent !== undefined;
    const inserted = await tx.query(`INSERT INTO usage_actions (kind, account_id, license_id, started_at, hold_until, resumed,
      parent_id, etag) VALUES ($1, $2, $3, $4, $5, $6, $7::bigint, $8) RETURNING id::text AS id`,
    [attempt.kind, attempt.accountId, attempt.licenseId ?? null, attempt.now, attempt.holdUntil ?? null, resumed,
      parent?.id ?? null, attempt.etag ?? null]);
    // SKIP LOCKED: concurrent sweeps take disjoint rows instead of waiting on each other.
    await tx.query(`DELETE FROM usage_actions WHERE id IN (SELECT id FROM usage_actions
      WHERE kind = $1 AND started_at <= $2 AND (hold_until IS NULL OR hold_until <= $3)
      ORDER BY started_at LIMIT ${SWEEP_ROWS} FOR UPDATE SKIP LOCKED)`, [attempt.kind, since, attempt.now]);
    return { kind: 'started', id: String(inserted.rows[0]?.['id']), resumed };
  });
}

/** `Repository.renewUsage`. */
export async function renewUsage(db: SqlDb, id: string, holdUntil: Date, progress?: UsageProgress): Promise<void> {
  await db.query('UPDATE usage_actions SET hold_until = $2 WHERE id = $1::bigint AND hold_until IS NOT NULL',
    [id, holdUntil]);
  if (progress !== undefined) await recordProgress(db, id, progress);
}

/** `Repository.finishUsage`. */
export async function finishUsage(db: SqlDb, id: string, progress?: UsageProgress): Promise<void> {
  await db.query('UPDATE usage_actions SET hold_until = NULL WHERE id = $1::bigint', [id]);
  if (progress !== undefined) await recordProgress(db, id, progress);
}

/** How far a download got, on its own row and on the download it resumes (`furthest`, in SQL). */
async function recordProgress(db: SqlDb, id: string, progress: UsageProgress): Promise<void> {
  await db.query(`UPDATE usage_actions SET sent_to = greatest(sent_to, $2), complete = complete OR $3
    WHERE id = $1::bigint OR id = (SELECT parent_id FROM usage_actions WHERE id = $1::bigint)`,
  [id, progress.sentTo, progress.complete]);
}

/** `Repository.cancelUsage`. */
export async function cancelUsage(db: SqlDb, id: string): Promise<void> {
  await db.query('DELETE FROM usage_actions WHERE id = $1::bigint', [id]);
}

/** Bytes of the seller's stored masters. */
export async function storedMasterBytes(q: SqlQueryable, sellerId: string): Promise<number> {
  const { rows } = await q.query('SELECT coalesce(sum(size), 0)::float8 AS bytes FROM masters WHERE seller_id = $1',
    [sellerId]);
  return Number(rows[0]?.['bytes'] ?? 0);
}

/**
 * Runs `insert` when the seller's stored masters and `size` more bytes fit `quotaBytes`, under
 * the seller's account row lock, so that two uploads finishing at once are counted in turn.
 */
export async function withinQuota(db: SqlDb, sellerId: string, size: number, quotaBytes: number,
  insert: (tx: SqlQueryable) => Promise<void>): Promise<boolean> {
  return db.transaction(async (tx) => {
    await tx.query('SELECT id FROM accounts WHERE id = $1 FOR UPDATE', [sellerId]);
    if ((await storedMasterBytes(tx, sellerId)) + size > quotaBytes) return false;
    await insert(tx);
    return true;
  });
}

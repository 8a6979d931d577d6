/**
 * `SellerRecords` in SQL (PGlite and PostgreSQL alike, migrations 30 to 32): API keys, the
 * idempotent license creation, the seller's license query and suspension.
 *
 * Idempotency: the (seller, key) row is inserted first in the creating transaction with
 * `ON CONFLICT DO NOTHING`. On PostgreSQL a second transaction inserting the same key waits on
 * the primary key until the first ends; when the first committed, the insert does nothing and
 * the next statement (a new snapshot under READ COMMITTED) reads the committed row, so two
 * instances racing one key make one license. PGlite runs one transaction at a time.
 */
import type { License } from './repository.js';
import type {
  ApiKeyRecord, ApiKeyScope, CreateLicenseOutcome, LicenseQuery, NewLicense, SuspensionChange, SuspensionOutcome,
} from './seller-records.js';
import { createdEvent, suspensionEvent } from './seller-records.js';
import type { SqlDb, SqlQueryable } from './sql-db.js';

type Row = Record<string, unknown>;

const date = (v: unknown): Date => (v instanceof Date ? v : new Date(String(v)));
const optDate = (v: unknown): Date | undefined => (v === null || v === undefined ? undefined : date(v));

/** The columns `toLicense` (sql-repository.ts) reads, with the table aliased `l`. */
export const LICENSE_COLUMNS_L = `l.id, l.master_id, l.licensee_id, l.licensee_name, l.licensee_email, l.issued_at, l.revoked_at, l.release_count,
  l.copy_bytes::float8 AS copy_bytes, l.external_ref, l.expires_at, l.suspended_at`;

/** The seller-side fields of a license row. */
export function sellerFields(r: Row): Pick<License, 'externalRef' | 'expiresAt' | 'suspendedAt'> {
  return {
    ...(r['external_ref'] === null || r['external_ref'] === undefined ? {} : { externalRef: String(r['external_ref']) }),
    ...(optDate(r['expires_at']) === undefined ? {} : { expiresAt: optDate(r['expires_at']) }),
    ...(optDate(r['suspended_at']) === undefined ? {} : { suspendedAt: optDate(r['suspended_at']) }),
  };
}

/** A text[] as `pg` (an array) or PGlite returns it. */
function textArray(v: unknown): string[] {
  if (Array.isArray(v)) return v.map(String);
  const text = String(v ?? '{}');
  return text === '{}' ? [] : text.slice(1, -1).split(',');
}

function toApiKey(r: Row): ApiKeyRecord {
  return {
    id: String(r['id']), accountId: String(r['account_id']), name: String(r['name']), hint: String(r['hint']),
    scopes: textArray(r['scopes']) as ApiKeyScope[], createdAt: date(r['created_at']),
    lastUsedAt: optDate(r['last_used_at']), revokedAt: optDate(r['revoked_at']),
  };
}

const API_KEY_COLUMNS = 'id, account_id, name, hint, scopes, created_at, last_used_at, revoked_at';

async function insertEvent(q: SqlQueryable, e: ReturnType<typeof createdEvent>): Promise<void> {
  await q.query(`INSERT INTO events (at, kind, actor_id, master_id, license_id, details)
    VALUES ($1, $2, $3, $4, $5, $6::jsonb)`,
  [e.at, e.kind, e.actorId, e.masterId, e.licenseId ?? null, JSON.stringify(e.details)]);
}

export async function insertApiKey(db: SqlDb, key: Omit<ApiKeyRecord, 'lastUsedAt' | 'revokedAt'>, secretHash: string): Promise<void> {
  await db.query(`INSERT INTO api_keys (id, account_id, name, secret_hash, hint, scopes, created_at)
    VALUES ($1, $2, $3, $4, $5, $6::text[], $7)`,
  [key.id, key.accountId, key.name, secretHash, key.hint, key.scopes, key.createdAt]);
}

export async function useApiKey(db: SqlDb, secretHash: string, now: Date): Promise<ApiKeyRecord | undefined> {
  const { rows } = await db.query(`UPDATE api_keys SET last_used_at = $2 WHERE secret_hash = $1 AND revoked_at IS NULL
    RETURNING ${API_KEY_COLUMNS}`, [secretHash, now]);
  return rows[0] === undefined ? undefined : toApiKey(rows[0]);
}

export async function listApiKeys(db: SqlDb, accountId: string): Promise<ApiKeyRecord[]> {
  const { rows } = await db.query(`SELECT ${API_KEY_COLUMNS} FROM api_keys WHERE account_id = $1
    ORDER BY created_at DESC, id`, [accountId]);
  return rows.map(toApiKey);
}

export async function revokeApiKey(db: SqlDb, id: string, accountId: string, now: Date): Promise<ApiKeyRecord | undefined> {
  const { rows } = await db.query(`UPDATE api_keys SET revoked_at = COALESCE(revoked_at, $3)
    WHERE id = $1 AND account_id = $2 RETURNING ${API_KEY_COLUMNS}`, [id, accountId, now]);
  return rows[0] === undefined ? undefined : toApiKey(rows[0]);
}

export async function findIdempotentLicense(db: SqlQueryable, sellerId: string, key: string):
Promise<{ licenseId: string; requestHash: string } | undefined> {
  const { rows } = await db.query('SELECT license_id, request_hash FROM license_idempotency WHERE seller_id = $1 AND key = $2',
    [sellerId, key]);
  const r = rows[0];
  return r === undefined || r['license_id'] === null ? undefined
    : { licenseId: String(r['license_id']), requestHash: String(r['request_hash']) };
}

/** Thrown inside the transaction to roll back a license whose id was taken. */
class IdTaken extends Error {}

export async function createLicense(db: SqlDb, input: NewLicense): Promise<CreateLicenseOutcome> {
  const { license: l, idempotency } = input;
  try {
    return await db.transaction(async (tx): Promise<CreateLicenseOutcome> => {
      if (idempotency !== undefined) {
        const claimed = await tx.query(`INSERT INTO license_idempotency (seller_id, key, request_hash, created_at)
          VALUES ($1, $2, $3, $4) ON CONFLICT (seller_id, key) DO NOTHING`,
        [idempotency.sellerId, idempotency.key, idempotency.requestHash, l.issuedAt]);
        if (claimed.rowCount !== 1) {
          const earlier = await findIdempotentLicense(tx, idempotency.sellerId, idempotency.key);
          if (earlier === undefined) throw new Error('an idempotency key without its license');
          return earlier.requestHash === idempotency.requestHash ? { kind: 'replayed', licenseId: earlier.licenseId }
            : { kind: 'key_conflict' };
        }
      }
      const inserted = await tx.query(`INSERT INTO licenses (id, master_id, licensee_id, licensee_name, issued_at,
          external_ref, expires_at, licensee_email)
        VALUES ($1, $2, $3, $4, $5, $6, $7, $8) ON CONFLICT (id) DO NOTHING`,
      [l.id, l.masterId, l.licenseeId, l.licenseeName, l.issuedAt, l.externalRef ?? null, l.expiresAt ?? null, l.licenseeEmail ?? null]);
      if (inserted.rowCount !== 1) throw new IdTaken();
      if (idempotency !== undefined) {
        await tx.query('UPDATE license_idempotency SET license_id = $3 WHERE seller_id = $1 AND key = $2',
          [idempotency.sellerId, idempotency.key, l.id]);
      }
      await insertEvent(tx, createdEvent(input));
      return { kind: 'created' };
    });
  } catch (err) {
    if (err instanceof IdTaken) return { kind: 'id_taken' };
    throw err;
  }
}

/** The SQL condition of a license state at `$now` (the parameter's text), as `licenseState` decides it. */
function stateCondition(state: NonNullable<LicenseQuery['state']>, now: string): string {
  switch (state) {
    case 'revoked': return 'l.revoked_at IS NOT NULL';
    case 'suspended': return 'l.revoked_at IS NULL AND l.suspended_at IS NOT NULL';
    case 'expired': return `l.revoked_at IS NULL AND l.suspended_at IS NULL AND l.expires_at <= ${now}`;
    case 'active': return `l.revoked_at IS NULL AND l.suspended_at IS NULL AND (l.expires_at IS NULL OR l.expires_at > ${now})`;
  }
}

export async function queryLicenses(db: SqlDb, q: LicenseQuery, toLicense: (r: Row) => License): Promise<License[]> {
  const params: unknown[] = [q.sellerId];
  const where = ['m.seller_id = $1'];
  const add = (value: unknown, condition: (p: string) => string) => {
    params.push(value);
    where.push(condition(`$${params.length}`));
  };
  if (q.masterId !== undefined) add(q.masterId, (p) => `l.master_id = ${p}`);
  // By e-mail: only licenses made by that address (issue 22 item 6), or the search would tell a
  // seller which address an account id they licensed belongs to.
  if (q.buyer !== undefined) add(q.buyer, (p) => `(l.licensee_id = ${p} OR l.licensee_email = ${p})`);
  if (q.externalRef !== undefined) add(q.externalRef, (p) => `l.external_ref = ${p}`);
  if (q.state === 'revoked' || q.state === 'suspended') where.push(stateCondition(q.state, ''));
  else if (q.state !== undefined) {
    const state = q.state;
    add(q.now, (p) => stateCondition(state, `${p}::timestamptz`));
  }
  if (q.after !== undefined) {
    params.push(q.after.issuedAt, q.after.id);
    where.push(`(l.issued_at, l.id) < ($${params.length - 1}::timestamptz, $${params.length})`);
  }
  params.push(q.limit);
  const { rows } = await db.query(`SELECT ${LICENSE_COLUMNS_L}
    FROM licenses l JOIN masters m ON m.id = l.master_id JOIN accounts a ON a.id = l.licensee_id
    WHERE ${where.join(' AND ')} ORDER BY l.issued_at DESC, l.id DESC LIMIT $${params.length}`, params);
  return rows.map(toLicense);
}

export async function setSuspended(db: SqlDb, change: SuspensionChange, toLicense: (r: Row) => License): Promise<SuspensionOutcome> {
  return db.transaction(async (tx) => {
    const { rows } = await tx.query(`SELECT ${LICENSE_COLUMNS_L} FROM licenses l WHERE l.id = $1 FOR UPDATE`, [change.licenseId]);
    const license = rows[0] === undefined ? undefined : toLicense(rows[0]);
    if (license === undefined) return { kind: 'not_found' } as const;
    if (license.revokedAt !== undefined) return { kind: 'revoked', license } as const;
    if ((license.suspendedAt !== undefined) === change.suspend) return { kind: 'unchanged', license } as const;
    const suspendedAt = change.suspend ? change.now : undefined;
    await tx.query('UPDATE licenses SET suspended_at = $2 WHERE id = $1', [change.licenseId, suspendedAt ?? null]);
    await insertEvent(tx, suspensionEvent(change, license.masterId));
    return { kind: 'changed', license: { ...license, suspendedAt } } as const;
  });
}

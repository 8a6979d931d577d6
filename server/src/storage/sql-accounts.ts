/**
 * The SQL side of pending sign-ups, sessions and password resets (migration 6; issue 15
 * item 1, issue 14 items 1-2). Each atomic step is one transaction; completing a sign-up locks
 * the pending row (by deleting it) and then the address's local account row, so two uses of
 * one link, or a link racing a reset, cannot both create or change the account.
 */
import type { SqlDb, SqlQueryable } from './sql-db.js';
import type { Account, PendingSignUp, RotateOutcome, SessionLifetime, SessionRecord, SignUpProof } from './repository.js';

type Row = Record<string, unknown>;

const date = (v: unknown): Date => (v instanceof Date ? v : new Date(String(v)));
const optDate = (v: unknown): Date | undefined => (v === null || v === undefined ? undefined : date(v));

/** The columns `toAccount` reads. */
export const ACCOUNT_COLUMNS = 'id, email, email_verified, password_hash, name, created_at';

export function toAccount(r: Row): Account {
  return {
    id: String(r['id']), email: String(r['email']), emailVerified: r['email_verified'] === true,
    passwordHash: r['password_hash'] === null ? undefined : String(r['password_hash']),
    name: String(r['name']), createdAt: date(r['created_at']),
  };
}

const SESSION_COLUMNS = 'id, account_id, device, created_at, last_used_at, expires_at, revoked_at';

function toSession(r: Row): SessionRecord {
  return {
    id: String(r['id']), accountId: String(r['account_id']), device: String(r['device']),
    createdAt: date(r['created_at']), lastUsedAt: date(r['last_used_at']), expiresAt: date(r['expires_at']),
    revokedAt: optDate(r['revoked_at']),
  };
}

export async function findLocalAccountByEmail(db: SqlQueryable, email: string): Promise<Account | undefined> {
  const { rows } = await db.query(`SELECT ${ACCOUNT_COLUMNS} FROM accounts WHERE email = $1 AND external_issuer IS NULL`,
    [email]);
  return rows[0] === undefined ? undefined : toAccount(rows[0]);
}

export async function findVerifiedAccountsByEmail(db: SqlQueryable, email: string): Promise<Account[]> {
  const { rows } = await db.query(`SELECT ${ACCOUNT_COLUMNS} FROM accounts WHERE email = $1 AND email_verified
    ORDER BY created_at, id`, [email]);
  return rows.map(toAccount);
}

export async function findPendingSignUp(db: SqlQueryable, email: string, now: Date): Promise<PendingSignUp | undefined> {
  const { rows } = await db.query(`SELECT token_hash, email, name, password_hash, proof_hash, created_at, expires_at
    FROM pending_sign_ups WHERE email = $1 AND expires_at > $2`, [email, now]);
  const r = rows[0];
  return r === undefined ? undefined : {
    tokenHash: String(r['token_hash']), email: String(r['email']), name: String(r['name']),
    passwordHash: String(r['password_hash']), proofHash: r['proof_hash'] === null ? undefined : String(r['proof_hash']),
    createdAt: date(r['created_at']), expiresAt: date(r['expires_at']),
  };
}

export async function savePendingSignUp(db: SqlDb, p: PendingSignUp): Promise<void> {
  await db.transaction(async (tx) => {
    await tx.query('DELETE FROM pending_sign_ups WHERE email = $1 OR expires_at <= $2', [p.email, p.createdAt]);
    await tx.query(`INSERT INTO pending_sign_ups (token_hash, email, name, password_hash, proof_hash, created_at, expires_at)
      VALUES ($1, $2, $3, $4, $5, $6, $7)`, [p.tokenHash, p.email, p.name, p.passwordHash, p.proofHash ?? null, p.createdAt,
      p.expiresAt]);
  });
}

export async function renewPendingSignUp(db: SqlQueryable, email: string, tokenHash: string, expiresAt: Date,
  now: Date): Promise<boolean> {
  const result = await db.query(`UPDATE pending_sign_ups SET token_hash = $2, expires_at = $3
    WHERE email = $1 AND expires_at > $4`, [email, tokenHash, expiresAt, now]);
  return result.rowCount === 1;
}

export async function completeSignUp(db: SqlDb, tokenHash: string, newId: string, now: Date,
  proof: SignUpProof): Promise<Account | 'proof_needed' | undefined> {
  return db.transaction(async (tx) => {
    // The sign-up's own password only with its browser's proof; a chosen one replaces it.
    const chosen = 'passwordHash' in proof ? proof.passwordHash : null;
    const { rows } = await tx.query(`DELETE FROM pending_sign_ups WHERE token_hash = $1
      AND ($2::text IS NOT NULL OR (proof_hash IS NOT NULL AND proof_hash = $3::text))
      RETURNING email, name, COALESCE($2::text, password_hash) AS password_hash, expires_at`,
    [tokenHash, chosen, 'proofHash' in proof ? proof.proofHash ?? null : null]);
    const pending = rows[0];
    if (pending === undefined) {
      const waiting = await tx.query('SELECT 1 FROM pending_sign_ups WHERE token_hash = $1 AND expires_at > $2', [tokenHash, now]);
      return waiting.rows.length > 0 ? 'proof_needed' : undefined;
    }
    if (date(pending['expires_at']) <= now) return undefined;
    const email = String(pending['email']);
    const found = await tx.query(`SELECT ${ACCOUNT_COLUMNS} FROM accounts WHERE email = $1 AND external_issuer IS NULL
      FOR UPDATE`, [email]);
    const existing = found.rows[0] === undefined ? undefined : toAccount(found.rows[0]);
    if (existing?.emailVerified === true) return undefined;
    if (existing !== undefined) {
      // An unverified account of an earlier version: whoever proved the mailbox takes it over.
      const updated = await tx.query(`UPDATE accounts SET email_verified = true, password_hash = $2, name = $3
        WHERE id = $1 RETURNING ${ACCOUNT_COLUMNS}`, [existing.id, pending['password_hash'], pending['name']]);
      await tx.query('UPDATE sessions SET revoked_at = $2 WHERE account_id = $1 AND revoked_at IS NULL', [existing.id, now]);
      await tx.query('DELETE FROM email_verifications WHERE account_id = $1', [existing.id]);
      return toAccount(updated.rows[0] as Row);
    }
    const inserted = await tx.query(`INSERT INTO accounts (id, email, email_verified, password_hash, name, created_at)
      VALUES ($1, $2, true, $3, $4, $5) RETURNING ${ACCOUNT_COLUMNS}`,
    [newId, email, pending['password_hash'], pending['name'], now]);
    return toAccount(inserted.rows[0] as Row);
  });
}

export async function createSession(db: SqlQueryable, s: Omit<SessionRecord, 'revokedAt'>, refreshHash: string): Promise<void> {
  await db.query(`INSERT INTO sessions (id, account_id, refresh_hash, device, created_at, last_used_at, expires_at)
    VALUES ($1, $2, $3, $4, $5, $6, $7)`, [s.id, s.accountId, refreshHash, s.device, s.createdAt, s.lastUsedAt, s.expiresAt]);
}

export async function useSession(db: SqlQueryable, refreshHash: string, now: Date,
  lifetime: SessionLifetime): Promise<SessionRecord | undefined> {
  const { rows } = await db.query(`UPDATE sessions SET last_used_at = $2::timestamptz,
      expires_at = LEAST($2::timestamptz + make_interval(secs => $3::float8), created_at + make_interval(secs => $4::float8))
    WHERE refresh_hash = $1 AND revoked_at IS NULL AND expires_at > $2::timestamptz RETURNING ${SESSION_COLUMNS}`,
  [refreshHash, now, lifetime.idleSeconds, lifetime.maxSeconds]);
  return rows[0] === undefined ? undefined : toSession(rows[0]);
}

export async function rotateSession(db: SqlDb, refreshHash: string, nextHash: string, now: Date, lifetime: SessionLifetime,
  graceSeconds: number): Promise<RotateOutcome> {
  return db.transaction(async (tx) => {
    const extend = `last_used_at = $2::timestamptz, expires_at = LEAST($2::timestamptz + make_interval(secs => $3::float8),
      created_at + make_interval(secs => $4::float8))`;
    const live = 'revoked_at IS NULL AND expires_at > $2::timestamptz';
    const rotated = await tx.query(`UPDATE sessions SET ${extend}, refresh_hash = $5 WHERE refresh_hash = $1 AND ${live}
      RETURNING ${SESSION_COLUMNS}`, [refreshHash, now, lifetime.idleSeconds, lifetime.maxSeconds, nextHash]);
    const session = rotated.rows[0];
    if (session !== undefined) {
      await tx.query('INSERT INTO retired_refresh_tokens (refresh_hash, session_id, retired_at) VALUES ($1, $2, $3)',
        [refreshHash, session['id'], now]);
      return { kind: 'rotated', session: toSession(session) };
    }
    const { rows } = await tx.query('SELECT session_id, retired_at FROM retired_refresh_tokens WHERE refresh_hash = $1', [refreshHash]);
    const retired = rows[0];
    if (retired === undefined) return { kind: 'ended' };
    if (date(retired['retired_at']).getTime() + graceSeconds * 1000 > now.getTime()) {
      const used = await tx.query(`UPDATE sessions SET ${extend} WHERE id = $1 AND ${live} RETURNING ${SESSION_COLUMNS}`,
        [retired['session_id'], now, lifetime.idleSeconds, lifetime.maxSeconds]);
      return used.rows[0] === undefined ? { kind: 'ended' } : { kind: 'grace', session: toSession(used.rows[0]) };
    }
    await tx.query('UPDATE sessions SET revoked_at = $2 WHERE id = $1 AND revoked_at IS NULL', [retired['session_id'], now]);
    return { kind: 'reused' };
  });
}

export async function findSession(db: SqlQueryable, id: string): Promise<SessionRecord | undefined> {
  const { rows } = await db.query(`SELECT ${SESSION_COLUMNS} FROM sessions WHERE id = $1`, [id]);
  return rows[0] === undefined ? undefined : toSession(rows[0]);
}

export async function listSessions(db: SqlQueryable, accountId: string, now: Date): Promise<SessionRecord[]> {
  const { rows } = await db.query(`SELECT ${SESSION_COLUMNS} FROM sessions
    WHERE account_id = $1 AND revoked_at IS NULL AND expires_at > $2 ORDER BY last_used_at DESC, id`, [accountId, now]);
  return rows.map(toSession);
}

export async function revokeSession(db: SqlQueryable, id: string, accountId: string, now: Date): Promise<boolean> {
  const result = await db.query(`UPDATE sessions SET revoked_at = $3
    WHERE id = $1 AND account_id = $2 AND revoked_at IS NULL AND expires_at > $3`, [id, accountId, now]);
  return result.rowCount === 1;
}

export async function pruneSessions(db: SqlQueryable, now: Date, max: number): Promise<number> {
  const result = await db.query(`DELETE FROM sessions WHERE id IN (
      SELECT id FROM sessions WHERE expires_at <= $1 UNION SELECT id FROM sessions WHERE revoked_at IS NOT NULL LIMIT $2)`,
  [now, max]);
  return result.rowCount ?? 0;
}

export async function revokeSessions(db: SqlQueryable, accountId: string, now: Date, exceptId?: string): Promise<number> {
  const result = await db.query(`UPDATE sessions SET revoked_at = $2
    WHERE account_id = $1 AND revoked_at IS NULL AND ($3::text IS NULL OR id <> $3::text)`, [accountId, now, exceptId ?? null]);
  return result.rowCount ?? 0;
}

export async function savePasswordReset(db: SqlDb, tokenHash: string, accountId: string, expiresAt: Date): Promise<void> {
  await db.transaction(async (tx) => {
    await tx.query('SELECT id FROM accounts WHERE id = $1 FOR UPDATE', [accountId]);
    await tx.query('DELETE FROM password_resets WHERE account_id = $1', [accountId]);
    await tx.query('INSERT INTO password_resets (token_hash, account_id, expires_at) VALUES ($1, $2, $3)',
      [tokenHash, accountId, expiresAt]);
  });
}

export async function consumePasswordReset(db: SqlDb, tokenHash: string, passwordHash: string,
  now: Date): Promise<string | undefined> {
  return db.transaction(async (tx) => {
    const { rows } = await tx.query('DELETE FROM password_resets WHERE token_hash = $1 RETURNING account_id, expires_at',
      [tokenHash]);
    const row = rows[0];
    if (row === undefined || date(row['expires_at']) <= now) return undefined;
    const updated = await tx.query(`UPDATE accounts SET password_hash = $2, email_verified = true
      WHERE id = $1 AND external_issuer IS NULL RETURNING id, email`, [row['account_id'], passwordHash]);
    const account = updated.rows[0];
    if (account === undefined) return undefined;
    await tx.query('DELETE FROM pending_sign_ups WHERE email = $1', [account['email']]);
    await tx.query('DELETE FROM email_verifications WHERE account_id = $1', [account['id']]);
    await tx.query('UPDATE sessions SET revoked_at = $2 WHERE account_id = $1 AND revoked_at IS NULL', [account['id'], now]);
    return String(account['id']);
  });
}

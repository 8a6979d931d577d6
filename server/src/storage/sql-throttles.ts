/**
 * The SQL side of the two limiters that count per address and per client over a sliding
 * window: failed sign-ins (`sign_in_failures`, migration 3) and verification-mail requests
 * (`mail_requests`, migration 4). An unknown address or a new client has no row to lock, so
 * each attempt takes transaction advisory locks on its address and its client before counting:
 * concurrent attempts, from any number of service instances sharing the database, are counted
 * one after the other and exactly `limit` of them are recorded per window.
 */
import type { SqlDb } from './sql-db.js';
import type { ThrottleAttempt, Throttled } from './repository.js';
import { throttleRefusal, windowStart } from './window.js';

/** One limiter's table, its time column and its two lock classes. */
export interface ThrottleTable {
  table: string;
  at: string;
  /**
   * Classes (the first key of `pg_advisory_xact_lock(int, int)`) of the address and client
   * locks; the second key is `hashtext` of the subject. The two-key space does not overlap the
   * one-key space of the migration lock, and two subjects sharing a hash merely wait for each
   * other. Each limiter has its own classes, so a sign-in never waits on a mail request.
   */
  addressLock: number;
  clientLock: number;
}

/** Failed sign-ins. */
export const SIGN_IN_FAILURES: ThrottleTable = {
  table: 'sign_in_failures', at: 'failed_at', addressLock: 0x696b6901, clientLock: 0x696b6902,
};

/** Requests for a verification e-mail (sign-ups and resends). */
export const MAIL_REQUESTS: ThrottleTable = {
  table: 'mail_requests', at: 'requested_at', addressLock: 0x696b6903, clientLock: 0x696b6904,
};

/** License creations per seller (migration 6; the seller's account id stands as the address). */
export const LICENSE_CREATIONS: ThrottleTable = {
  table: 'license_creations', at: 'created_at', addressLock: 0x696b6905, clientLock: 0x696b6906,
};

/**
 * Expired rows deleted per recorded one, oldest first. Expired rows go up to a hundred times
 * faster than new ones arrive, so a table stays near the size of the busiest recent window
 * instead of growing with every address and client ever seen.
 */
const SWEEP_ROWS = 100;

const date = (v: unknown): Date => (v instanceof Date ? v : new Date(String(v)));

/**
 * Counts the attempt's address and client inside the window and, when both are below their
 * limits, records it and sweeps some expired rows. Returns the new row's id or the refusal.
 */
export async function tryRecordThrottled(db: SqlDb, t: ThrottleTable,
  attempt: ThrottleAttempt): Promise<{ kind: 'recorded'; id: string } | Throttled> {
  return db.transaction(async (tx) => {
    // Lock order: address, then client. Held to the end of the transaction, so the count
    // below sees every row committed by the previous holder.
    await tx.query('SELECT pg_advisory_xact_lock($1::int, hashtext($2))', [t.addressLock, attempt.addressHash]);
    await tx.query('SELECT pg_advisory_xact_lock($1::int, hashtext($2))', [t.clientLock, attempt.clientIp]);
    const since = windowStart(attempt);
    const { rows } = await tx.query(`SELECT address_hash, client_ip, ${t.at} AS at FROM ${t.table}
      WHERE (address_hash = $1 OR client_ip = $2) AND ${t.at} > $3 ORDER BY ${t.at}, id`,
    [attempt.addressHash, attempt.clientIp, since]);
    const byAddress = rows.filter((r) => r['address_hash'] === attempt.addressHash).map((r) => date(r['at']));
    const byIp = rows.filter((r) => r['client_ip'] === attempt.clientIp).map((r) => date(r['at']));
    const refused = throttleRefusal(attempt, byAddress, byIp);
    if (refused !== undefined) return refused;
    const inserted = await tx.query(`INSERT INTO ${t.table} (address_hash, client_ip, ${t.at})
      VALUES ($1, $2, $3) RETURNING id::text AS id`, [attempt.addressHash, attempt.clientIp, attempt.now]);
    // SKIP LOCKED: concurrent sweeps take disjoint rows instead of waiting on (or
    // deadlocking over) each other's.
    await tx.query(`DELETE FROM ${t.table} WHERE id IN (SELECT id FROM ${t.table}
      WHERE ${t.at} <= $1 ORDER BY ${t.at} LIMIT ${SWEEP_ROWS} FOR UPDATE SKIP LOCKED)`, [since]);
    return { kind: 'recorded', id: String(inserted.rows[0]?.['id']) };
  });
}

/**
 * The key release in SQL: one call of `iki_release` (migration 10, redefined by 32 to refuse
 * suspended and expired licenses), which checks the session, the verified address, the license
 * and both limits and records the release, in one statement.
 *
 * Releases that arrive while one group is being recorded are recorded together afterwards,
 * in one statement (`RELEASE_GROUP_SQL`): it calls `iki_release` once per release, in order,
 * and each call (a volatile function, with a fresh snapshot for each statement in it) counts
 * every release before it exactly as separate commits would. Every caller gets its answer
 * only after that one commit. A lone release is still a single statement. If a group's
 * statement fails, nothing of it is recorded and its releases are retried one by one, so one
 * failing release cannot fail the others; an outage (`STORAGE_UNAVAILABLE`) is every caller's
 * answer at once, within the database timeouts as for a single release.
 * - On PGlite (one backend, one transaction at a time, and in its durable mode one fsync of
 *   the WAL per commit, made synchronously on the event loop) this is the group commit: one
 *   fsync for the group instead of one each (issue 23 item 6), and PGlite's per-statement cost
 *   (the protocol's messages, parse, bind, a transaction) once per group (issue 28 item 1).
 * - On PostgreSQL it saves the service the driver's work per release (a pool checkout, a
 *   query's messages and socket writes, its result), about a fifth of the service's CPU
 *   per release, and the database a statement and a commit per release (issue 28 item 1). One
 *   group at a time: two groups in flight on two connections could lock the same licenses and
 *   accounts in opposite orders and deadlock. Other queries use the rest of the pool.
 */
import { ApiError } from '../errors.js';
import type { SqlDb, SqlQueryable } from './sql-db.js';
import type { ReleaseAttempt, ReleaseOutcome } from './repository.js';
import { granted, refusal, windowStart, type WindowCount } from './window.js';

/** Releases recorded in one statement at most. */
export const RELEASE_GROUP_MAX = 64;

const date = (v: unknown): Date => (v instanceof Date ? v : new Date(String(v)));

/** The release statement; prepared once per PostgreSQL connection under `RELEASE_STATEMENT`. */
const RELEASE_SQL = `SELECT outcome, release_count, license_used, license_first, user_used, user_first,
    recorded_at FROM iki_release($1, $2, $3, $4, $5, $6, $7)`;
const RELEASE_STATEMENT = 'iki_release_v1';
/** The same with the client's address-prefix hash and device id (migration 45). */
const RELEASE_MARKED_SQL = `SELECT outcome, release_count, license_used, license_first, user_used, user_first,
    recorded_at FROM iki_release($1, $2, $3, $4, $5, $6, $7, $8, $9)`;
const RELEASE_MARKED_STATEMENT = 'iki_release_marked_v1';

/**
 * A group of releases in one statement (migration 45's function; on a schema before 45 it fails
 * and its releases are recorded one by one): `$1` is a JSON array of the calls' arguments,
 * called in the array's order (the function scan of the LATERAL join runs once per element, in
 * order); one row per call, in the same order.
 */
const RELEASE_GROUP_SQL = `SELECT r.outcome, r.release_count, r.license_used, r.license_first, r.user_used, r.user_first,
    r.recorded_at
  FROM jsonb_array_elements($1::jsonb) WITH ORDINALITY AS a(e, n)
  CROSS JOIN LATERAL iki_release(a.e->>'session', a.e->>'license', a.e->>'account', (a.e->>'now')::timestamptz,
    (a.e->>'since')::timestamptz, (a.e->>'perLicense')::integer, (a.e->>'perUser')::integer,
    decode(a.e->>'addr', 'hex'), a.e->>'device') AS r
  ORDER BY a.n`;
const RELEASE_GROUP_STATEMENT = 'iki_release_group_v1';

/** Records `attempts` in one statement, in order (see the module comment). */
async function recordReleases(q: SqlQueryable, attempts: readonly ReleaseAttempt[]): Promise<Record<string, unknown>[]> {
  const calls = attempts.map((a) => ({ session: a.sessionId ?? null, license: a.licenseId, account: a.accountId,
    now: a.now.toISOString(), since: windowStart(a).toISOString(), perLicense: a.perLicense, perUser: a.perUser,
    addr: a.mark?.addrHash === undefined ? null : Buffer.from(a.mark.addrHash).toString('hex'), device: a.mark?.deviceId ?? null }));
  const { rows } = await q.query(RELEASE_GROUP_SQL, [JSON.stringify(calls)], RELEASE_GROUP_STATEMENT);
  if (rows.length !== attempts.length) throw new Error(`a group of ${attempts.length} releases answered ${rows.length} rows`);
  return rows;
}

/** One release, one statement. */
export async function recordRelease(q: SqlQueryable, attempt: ReleaseAttempt): Promise<ReleaseOutcome> {
  // The client's prefix hash and device (issue 29, migration 45) only when there is one: the
  // seven-argument call is the function's with both absent, and the one a schema before 45 has.
  const mark = attempt.mark?.addrHash !== undefined || attempt.mark?.deviceId !== undefined;
  const { rows } = mark
    ? await q.query(RELEASE_MARKED_SQL, [attempt.sessionId ?? null, attempt.licenseId, attempt.accountId, attempt.now,
      windowStart(attempt), attempt.perLicense, attempt.perUser, attempt.mark?.addrHash ?? null, attempt.mark?.deviceId ?? null],
    RELEASE_MARKED_STATEMENT)
    : await q.query(RELEASE_SQL, [attempt.sessionId ?? null, attempt.licenseId, attempt.accountId, attempt.now,
      windowStart(attempt), attempt.perLicense, attempt.perUser], RELEASE_STATEMENT);
  return outcomeOf(attempt, rows[0] ?? {});
}

/** What one row of `iki_release` says of `attempt`. */
function outcomeOf(attempt: ReleaseAttempt, row: Record<string, unknown>): ReleaseOutcome {
  const outcome = String(row['outcome']);
  if (outcome === 'not_found' || outcome === 'revoked' || outcome === 'unauthenticated' || outcome === 'unverified'
    || outcome === 'suspended' || outcome === 'expired') {
    return { kind: outcome };
  }
  const count = (used: unknown, first: unknown): WindowCount =>
    ({ used: Number(used ?? 0), first: first === null || first === undefined ? undefined : date(first) });
  const byLicense = count(row['license_used'], row['license_first']);
  const byUser = count(row['user_used'], row['user_first']);
  if (outcome === 'limited') {
    const refused = refusal(attempt, byLicense, byUser);
    if (refused !== undefined) return refused;
    throw new Error('iki_release refused a release the limits allow');
  }
  // Recorded at `now`, or a little later to keep its scopes' times in order (migration 21).
  return granted({ ...attempt, now: date(row['recorded_at']) }, byLicense, byUser, Number(row['release_count']));
}

interface Waiting {
  attempt: ReleaseAttempt;
  resolve: (outcome: ReleaseOutcome) => void;
  reject: (err: unknown) => void;
}

/** Records releases, grouping those that arrive together into one statement and one commit (see the module comment). */
export class ReleaseRecorder {
  private readonly waiting: Waiting[] = [];
  private busy = false;

  constructor(private readonly db: SqlDb) {}

  record(attempt: ReleaseAttempt): Promise<ReleaseOutcome> {
    return new Promise((resolve, reject) => {
      this.waiting.push({ attempt, resolve, reject });
      this.next();
    });
  }

  /**
   * Starts the next group one turn of the event loop later (`setImmediate`), not at once. A
   * PGlite statement and its fsync run synchronously on the event loop, so while a group is
   * recorded no request is read; afterwards the poll phase reads every request that arrived
   * meanwhile, and each of them reaches `record` in that same phase (the token cache and the
   * body parser answer without I/O). Starting at once would record the first of them alone,
   * before the others were read: one fsync per release over HTTP, measured with strace (issue
   * 23 item 6). The check phase after the poll phase sees them all queued.
   */
  private next(): void {
    if (this.busy || this.waiting.length === 0) return;
    this.busy = true;
    setImmediate(() => {
      const group = this.waiting.splice(0, RELEASE_GROUP_MAX);
      void this.run(group).finally(() => {
        this.busy = false;
        this.next();
      });
    });
  }

  private async run(group: Waiting[]): Promise<void> {
    if (group.length > 1) {
      let outage: unknown;
      const rows = await recordReleases(this.db, group.map((w) => w.attempt)).catch((err: unknown) => {
        if (err instanceof ApiError && err.code === 'STORAGE_UNAVAILABLE') outage = err;
        return undefined;
      });
      // An outage would fail each release again, one timeout after the other: all get its answer now.
      if (outage !== undefined) {
        for (const w of group) w.reject(outage);
        return;
      }
      if (rows !== undefined) {
        group.forEach((w, i) => {
          try {
            w.resolve(outcomeOf(w.attempt, rows[i] ?? {}));
          } catch (err) {
            w.reject(err);
          }
        });
        return;
      }
    }
    for (const w of group) await recordRelease(this.db, w.attempt).then(w.resolve, w.reject);
  }
}

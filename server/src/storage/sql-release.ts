/**
 * The key release in SQL: one call of `iki_release` (migration 10, redefined by 32 to refuse
 * suspended and expired licenses), which checks the session, the verified address, the license
 * and both limits and records the release, in one statement.
 *
 * On PGlite (one backend, one transaction at a time, and in its durable mode one fsync of the
 * WAL per commit, made synchronously on the event loop) releases that arrive while one is
 * being recorded are recorded together afterwards, in one transaction: the calls run one after
 * the other inside it, so each counts every release before it exactly as separate commits
 * would, and every caller gets its answer only after that one commit (group commit: one fsync
 * for the group instead of one each). A lone release is still a single statement. If a group's
 * transaction fails, its releases are retried one by one, so one failing release cannot fail
 * the others. PostgreSQL groups concurrent commits' WAL flushes by itself; there every release
 * is its own statement on the pool.
 */
import type { SqlDb, SqlQueryable } from './sql-db.js';
import type { ReleaseAttempt, ReleaseOutcome } from './repository.js';
import { granted, refusal, windowStart, type WindowCount } from './window.js';

/** Releases recorded in one PGlite transaction at most. */
export const RELEASE_GROUP_MAX = 64;

const date = (v: unknown): Date => (v instanceof Date ? v : new Date(String(v)));

/** One release, one statement. */
export async function recordRelease(q: SqlQueryable, attempt: ReleaseAttempt): Promise<ReleaseOutcome> {
  const { rows } = await q.query(`SELECT outcome, release_count, license_used, license_first, user_used, user_first,
    recorded_at FROM iki_release($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
  [attempt.sessionId ?? null, attempt.licenseId, attempt.accountId, attempt.now, windowStart(attempt),
    attempt.perLicense, attempt.perUser, attempt.mark?.addrHash ?? null, attempt.mark?.deviceId ?? null]);
  const row = rows[0] ?? {};
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

/** Records releases, grouping them into one commit on PGlite (see the module comment). */
export class ReleaseRecorder {
  private readonly waiting: Waiting[] = [];
  private busy = false;

  constructor(private readonly db: SqlDb) {}

  record(attempt: ReleaseAttempt): Promise<ReleaseOutcome> {
    if (this.db.engine !== 'pglite') return recordRelease(this.db, attempt);
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
      const outcomes = await this.db.transaction(async (tx) => {
        const done: ReleaseOutcome[] = [];
        for (const w of group) done.push(await recordRelease(tx, w.attempt));
        return done;
      }).catch(() => undefined);
      if (outcomes !== undefined) {
        group.forEach((w, i) => w.resolve(outcomes[i] as ReleaseOutcome));
        return;
      }
    }
    for (const w of group) await recordRelease(this.db, w.attempt).then(w.resolve, w.reject);
  }
}

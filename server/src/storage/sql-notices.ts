/**
 * `NoticeRecords` in SQL (PGlite and PostgreSQL alike, migration 35). Each method is one
 * statement: the license row is marked and the event inserted together, and the mark is the
 * guard (`expiry_noticed_at IS NULL`, `rate_limit_noticed_at` older than the window), so two
 * instances racing write one event: the second waits on the row lock, then finds it marked.
 */
import type { SqlDb } from './sql-db.js';
import { SYSTEM_ACTOR, type NoticeRecords, type RateLimitRefusal } from './notice-records.js';

/** The SQL notice records over `db`. */
export class SqlNoticeRecords implements NoticeRecords {
  constructor(private readonly db: SqlDb) {}

  async noticeExpired(now: Date, limit: number): Promise<number> {
    const { rows } = await this.db.query(`WITH due AS (
        SELECT id FROM licenses WHERE expires_at IS NOT NULL AND expiry_noticed_at IS NULL AND expires_at <= $1
        ORDER BY expires_at LIMIT $2 FOR UPDATE SKIP LOCKED),
      marked AS (
        UPDATE licenses l SET expiry_noticed_at = $1 FROM due
        WHERE l.id = due.id AND l.expiry_noticed_at IS NULL
        RETURNING l.id, l.master_id, l.expires_at, l.revoked_at),
      written AS (
        INSERT INTO events (at, kind, actor_id, master_id, license_id, details)
        SELECT $1, 'expire', $3, master_id, id, jsonb_build_object('expiresAt', to_char(expires_at AT TIME ZONE 'UTC',
          'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'))
        FROM marked WHERE revoked_at IS NULL)
      SELECT count(*)::int AS n FROM marked`, [now, limit, SYSTEM_ACTOR]);
    return Number(rows[0]?.['n'] ?? 0);
  }

  async rateLimited(r: RateLimitRefusal): Promise<boolean> {
    const { rows } = await this.db.query(`WITH marked AS (
        UPDATE licenses SET rate_limit_noticed_at = $2
        WHERE id = $1 AND (rate_limit_noticed_at IS NULL OR rate_limit_noticed_at <= $2::timestamptz - make_interval(secs => $3::double precision))
        RETURNING id, master_id),
      written AS (
        INSERT INTO events (at, kind, actor_id, master_id, license_id, details)
        SELECT $2, 'rate_limited', $4, master_id, id, $5::jsonb FROM marked)
      SELECT count(*)::int AS n FROM marked`,
    [r.licenseId, r.now, r.windowSeconds, r.actorId, JSON.stringify({ limit: r.limit, scope: r.scope,
      windowSeconds: r.windowSeconds, retryAt: r.retryAt.toISOString() })]);
    return Number(rows[0]?.['n'] ?? 0) > 0;
  }
}

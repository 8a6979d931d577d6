/**
 * `FlagRecords` in SQL (PGlite and PostgreSQL alike, migration 46). `raise` is one statement:
 * the flag is inserted under its unique (license, rule, window start) and, only when that
 * inserted a row, the license's `flag` event with it, whose trigger queues `license.flagged`.
 */
import type { SqlDb } from './sql-db.js';
import { SYSTEM_ACTOR } from './notice-records.js';
import type { FlagQuery, FlagRecord, FlagRecords, FlagRule, NewFlag } from './flags-records.js';

type Row = Record<string, unknown>;

const date = (v: unknown): Date => (v instanceof Date ? v : new Date(String(v)));

const COLUMNS = `id, seq::text AS seq, license_id, master_id, seller_id, rule, window_start, window_end, value, threshold,
  raised_at, dismissed_at`;

function toFlag(r: Row): FlagRecord {
  return {
    id: String(r['id']), seq: String(r['seq']), licenseId: String(r['license_id']), masterId: String(r['master_id']),
    sellerId: String(r['seller_id']), rule: String(r['rule']) as FlagRule, windowStart: date(r['window_start']),
    windowEnd: date(r['window_end']), value: Number(r['value']), threshold: Number(r['threshold']),
    raisedAt: date(r['raised_at']),
    dismissedAt: r['dismissed_at'] === null || r['dismissed_at'] === undefined ? undefined : date(r['dismissed_at']),
  };
}

/** The event details of a raised flag (also the `license.flagged` payload's `details`). */
export function flagDetails(f: NewFlag): Record<string, unknown> {
  return { flag: { id: f.id, rule: f.rule, raisedAt: f.raisedAt.toISOString(), windowStart: f.windowStart.toISOString(),
    windowEnd: f.windowEnd.toISOString(), value: f.value, threshold: f.threshold } };
}

/** The SQL flag records over `db`. */
export class SqlFlagRecords implements FlagRecords {
  constructor(private readonly db: SqlDb) {}

  async raise(f: NewFlag): Promise<FlagRecord | undefined> {
    const { rows } = await this.db.query(`WITH lic AS (
        SELECT l.id, l.master_id, m.seller_id FROM licenses l JOIN masters m ON m.id = l.master_id WHERE l.id = $2),
      ins AS (
        INSERT INTO activity_flags (id, license_id, master_id, seller_id, rule, window_start, window_end, value, threshold, raised_at)
        SELECT $1, lic.id, lic.master_id, lic.seller_id, $3, $4, $5, $6, $7, $8 FROM lic
        ON CONFLICT (license_id, rule, window_start) DO NOTHING
        RETURNING ${COLUMNS}),
      ev AS (
        INSERT INTO events (at, kind, actor_id, master_id, license_id, details)
        SELECT ins.raised_at, 'flag', $9, ins.master_id, ins.license_id, $10::jsonb FROM ins)
      SELECT * FROM ins`,
    [f.id, f.licenseId, f.rule, f.windowStart, f.windowEnd, f.value, f.threshold, f.raisedAt, SYSTEM_ACTOR,
      JSON.stringify(flagDetails(f))]);
    return rows[0] === undefined ? undefined : toFlag(rows[0]);
  }

  async list(q: FlagQuery): Promise<FlagRecord[]> {
    const { rows } = await this.db.query(`SELECT ${COLUMNS} FROM activity_flags
      WHERE ($1::text IS NULL OR license_id = $1) AND ($2::text IS NULL OR seller_id = $2)
        AND ($3 = 'all' OR ($3 = 'open') = (dismissed_at IS NULL))
        AND ($4::bigint IS NULL OR seq < $4::bigint)
      ORDER BY activity_flags.seq DESC LIMIT $5`, [q.licenseId ?? null, q.sellerId ?? null, q.state, q.before ?? null, q.limit]);
    return rows.map(toFlag);
  }

  async openCounts(licenseIds: readonly string[]): Promise<Map<string, number>> {
    if (licenseIds.length === 0) return new Map();
    const { rows } = await this.db.query(`SELECT license_id, count(*)::int AS n FROM activity_flags
      WHERE license_id = ANY ($1::text[]) AND dismissed_at IS NULL GROUP BY 1`, [licenseIds]);
    return new Map(rows.map((r) => [String(r['license_id']), Number(r['n'])]));
  }

  async dismiss(licenseId: string, flagId: string, sellerId: string, now: Date): Promise<FlagRecord | undefined> {
    const { rows } = await this.db.query(`UPDATE activity_flags SET dismissed_at = coalesce(dismissed_at, $4),
        dismissed_by = coalesce(dismissed_by, $3)
      WHERE id = $1 AND license_id = $2 AND seller_id = $3 RETURNING ${COLUMNS}`, [flagId, licenseId, sellerId, now]);
    return rows[0] === undefined ? undefined : toFlag(rows[0]);
  }

  async prune(before: Date): Promise<number> {
    const { rowCount } = await this.db.query('DELETE FROM activity_flags WHERE window_end < $1', [before]);
    return rowCount;
  }
}

/**
 * `ActivityRecords` in SQL (PGlite and PostgreSQL alike, migration 45). Every read groups the
 * quarter-hour rows of `activity_slots`, `activity_addresses` and `activity_devices` by
 * `date_trunc(bucket, slot, zone)` (PostgreSQL 14's three-argument form: the hour or day in the
 * zone, daylight saving included), reading only the rows of the licenses and range asked for
 * through each table's primary key; the cost follows the busy quarter hours in the range, not
 * the releases they count (bench/activity).
 */
import type { SqlDb } from './sql-db.js';
import {
  emptyCounts, type ActivityCounts, type ActivityKind, type ActivityRecords, type BucketQuery, type BucketRange,
  type ClientMark, type LicenseActivity, type WindowMeasure, type WindowThresholds, type ZonedTime,
} from './activity-records.js';

type Row = Record<string, unknown>;

/** Rows deleted per statement when pruning. */
const PRUNE_BATCH = 5000;

const date = (v: unknown): Date => (v instanceof Date ? v : new Date(String(v)));
const optDate = (v: unknown): Date | undefined => (v === null || v === undefined ? undefined : date(v));
const num = (v: unknown): number => Number(v ?? 0);

/** SQLSTATE 22023 (invalid_parameter_value): "time zone ... not recognized". */
const isUnknownZone = (err: unknown): boolean =>
  typeof err === 'object' && err !== null && (err as { code?: unknown }).code === '22023';

/** The wall-clock text and offset of the instant in `col`, in the zone `$zone`. */
const zoned = (col: string, zone: string, as: string): string =>
  `${col} AS ${as}_at, to_char(${col} AT TIME ZONE ${zone}, 'YYYY-MM-DD"T"HH24:MI:SS') AS ${as}_local,
  extract(epoch FROM (${col} AT TIME ZONE ${zone}) - (${col} AT TIME ZONE 'UTC'))::int AS ${as}_off`;

const toZoned = (r: Row, as: string): ZonedTime =>
  ({ at: date(r[`${as}_at`]), local: String(r[`${as}_local`]), offsetSeconds: num(r[`${as}_off`]) });

/** The SQL activity records over `db`. */
export class SqlActivityRecords implements ActivityRecords {
  constructor(private readonly db: SqlDb) {}

  async record(licenseId: string, at: Date, kind: ActivityKind, mark: ClientMark = {}): Promise<void> {
    await this.db.query('SELECT iki_activity_add($1, $2, $3, $4, $5)',
      [licenseId, at, kind, mark.addrHash ?? null, mark.deviceId ?? null]);
  }

  async buckets(q: BucketQuery): Promise<BucketRange> {
    // `to` goes forward to a bucket start: an hour later, or the next local midnight (a day
    // of 23 or 25 hours on a daylight-saving change), unless it is one.
    const sql = `WITH r AS (
        SELECT date_trunc($3::text, $1::timestamptz, $4::text) AS f,
          CASE WHEN date_trunc($3::text, $2::timestamptz, $4::text) = $2::timestamptz THEN $2::timestamptz
            WHEN $3::text = 'hour' THEN date_trunc('hour', $2::timestamptz, $4::text) + interval '1 hour'
            ELSE ((date_trunc('day', $2::timestamptz, $4::text) AT TIME ZONE $4::text) + interval '1 day') AT TIME ZONE $4::text
          END AS t),
      b AS (SELECT DISTINCT date_trunc($3::text, g, $4::text) AS s
        FROM r, generate_series(r.f, r.t - interval '15 minutes', interval '15 minutes') g)
      SELECT ${zoned('r.f', '$4::text', 'f')}, ${zoned('r.t', '$4::text', 't')},
        coalesce((SELECT array_agg(b.s ORDER BY b.s) FROM b), '{}') AS starts FROM r`;
    let row: Row;
    try {
      row = (await this.db.query(sql, [q.from, q.to, q.bucket, q.timeZone])).rows[0] ?? {};
    } catch (err) {
      if (isUnknownZone(err)) throw new RangeError(`unknown time zone ${q.timeZone}`);
      throw err;
    }
    const startDates = (row['starts'] as unknown[]).map(date);
    // Each start's wall clock, computed again in one query (the array keeps the order).
    const { rows } = await this.db.query(`SELECT ${zoned('s', '$2::text', 's')}
      FROM unnest($1::timestamptz[]) WITH ORDINALITY AS u(s, n) ORDER BY n`, [startDates, q.timeZone]);
    return { from: toZoned(row, 'f'), to: toZoned(row, 't'), starts: rows.map((r) => toZoned(r, 's')) };
  }

  async licenseSeries(licenseId: string, q: BucketQuery): Promise<Map<number, ActivityCounts>> {
    const params = [licenseId, q.from, q.to, q.bucket, q.timeZone];
    const bucketOf = 'date_trunc($4::text, slot, $5::text)';
    const range = 'license_id = $1 AND slot >= $2 AND slot < $3';
    const { rows } = await this.db.query(`WITH c AS (
        SELECT ${bucketOf} AS s, sum(releases)::int AS releases, sum(downloads)::int AS downloads,
          sum(resumes)::int AS resumes, sum(refused_rate_limited)::int AS rate_limited, sum(refused_revoked)::int AS revoked,
          sum(refused_expired)::int AS expired, sum(refused_suspended)::int AS suspended,
          sum(refused_not_licensee)::int AS not_licensee
        FROM activity_slots WHERE ${range} GROUP BY 1),
      a AS (SELECT ${bucketOf} AS s, count(DISTINCT addr_hash)::int AS n FROM activity_addresses WHERE ${range} GROUP BY 1),
      d AS (SELECT ${bucketOf} AS s, count(DISTINCT device)::int AS n FROM activity_devices WHERE ${range} GROUP BY 1)
      SELECT coalesce(c.s, a.s, d.s) AS s, c.*, a.n AS addresses, d.n AS devices
      FROM c FULL JOIN a ON a.s = c.s FULL JOIN d ON d.s = coalesce(c.s, a.s)`, params);
    const out = new Map<number, ActivityCounts>();
    for (const r of rows) {
      const counts = emptyCounts();
      counts.releases = num(r['releases']);
      counts.downloads = num(r['downloads']);
      counts.resumes = num(r['resumes']);
      counts.addresses = num(r['addresses']);
      counts.devices = num(r['devices']);
      for (const reason of Object.keys(counts.refusals) as (keyof ActivityCounts['refusals'])[]) {
        counts.refusals[reason] = num(r[reason]);
      }
      out.set(date(r['s']).getTime(), counts);
    }
    return out;
  }

  async masterSummary(masterId: string, q: BucketQuery, max: number): Promise<{ licenses: LicenseActivity[]; total: number }> {
    const { rows } = await this.db.query(`WITH lic AS (
        SELECT id, licensee_email, issued_at, revoked_at, suspended_at, expires_at FROM licenses WHERE master_id = $1),
      t AS (SELECT a.license_id, sum(a.releases)::int AS releases, sum(a.downloads)::int AS downloads,
          sum(a.resumes)::int AS resumes, sum(a.refused_rate_limited + a.refused_revoked + a.refused_expired
            + a.refused_suspended + a.refused_not_licensee)::int AS refusals
        FROM lic JOIN activity_slots a ON a.license_id = lic.id AND a.slot >= $2 AND a.slot < $3 GROUP BY 1),
      top AS (SELECT lic.*, coalesce(t.releases, 0) AS releases, coalesce(t.downloads, 0) AS downloads,
          coalesce(t.resumes, 0) AS resumes, coalesce(t.refusals, 0) AS refusals, count(*) OVER () AS total
        FROM lic LEFT JOIN t ON t.license_id = lic.id ORDER BY coalesce(t.releases, 0) DESC, lic.issued_at, lic.id LIMIT $4)
      SELECT top.*,
        (SELECT count(DISTINCT x.addr_hash)::int FROM activity_addresses x
          WHERE x.license_id = top.id AND x.slot >= $2 AND x.slot < $3) AS addresses,
        (SELECT count(DISTINCT x.device)::int FROM activity_devices x
          WHERE x.license_id = top.id AND x.slot >= $2 AND x.slot < $3) AS devices
      FROM top ORDER BY top.releases DESC, top.issued_at, top.id`, [masterId, q.from, q.to, max]);
    const licenses: LicenseActivity[] = rows.map((r) => ({
      licenseId: String(r['id']),
      licenseeEmail: r['licensee_email'] === null || r['licensee_email'] === undefined ? undefined : String(r['licensee_email']),
      revokedAt: optDate(r['revoked_at']), suspendedAt: optDate(r['suspended_at']), expiresAt: optDate(r['expires_at']),
      totals: { releases: num(r['releases']), downloads: num(r['downloads']), resumes: num(r['resumes']),
        refusals: num(r['refusals']), addresses: num(r['addresses']), devices: num(r['devices']) },
      releases: new Map(),
    }));
    const busy = licenses.filter((l) => l.totals.releases > 0);
    if (busy.length > 0) {
      const series = await this.db.query(`SELECT license_id, date_trunc($4::text, slot, $5::text) AS s, sum(releases)::int AS n
        FROM activity_slots WHERE license_id = ANY ($1::text[]) AND slot >= $2 AND slot < $3 AND releases > 0 GROUP BY 1, 2`,
      [busy.map((l) => l.licenseId), q.from, q.to, q.bucket, q.timeZone]);
      const byId = new Map(busy.map((l) => [l.licenseId, l]));
      for (const r of series.rows) byId.get(String(r['license_id']))?.releases.set(date(r['s']).getTime(), num(r['n']));
    }
    return { licenses, total: num(rows[0]?.['total']) };
  }

  async measureWindow(start: Date, end: Date, t: WindowThresholds, max: number): Promise<WindowMeasure[]> {
    const window = 'slot >= $1 AND slot < $2';
    const { rows } = await this.db.query(`WITH w AS (
        SELECT license_id, sum(releases)::int AS releases, sum(refused_rate_limited)::int AS rate_limited
        FROM activity_slots WHERE ${window} GROUP BY 1),
      a AS (SELECT license_id, count(DISTINCT addr_hash)::int AS n FROM activity_addresses WHERE ${window} GROUP BY 1),
      d AS (SELECT license_id, count(DISTINCT device)::int AS n FROM activity_devices WHERE ${window} GROUP BY 1)
      SELECT w.license_id, w.releases, w.rate_limited, coalesce(a.n, 0) AS addresses, coalesce(d.n, 0) AS devices
      FROM w LEFT JOIN a ON a.license_id = w.license_id LEFT JOIN d ON d.license_id = w.license_id
      WHERE w.rate_limited >= $3 OR a.n > $4 OR d.n > $5 OR w.releases >= $6
      ORDER BY w.releases DESC, w.license_id LIMIT $7`, [start, end, t.rateLimited, t.addresses, t.devices, t.releases, max]);
    const out: WindowMeasure[] = rows.map((r) => ({ licenseId: String(r['license_id']), releases: num(r['releases']),
      rateLimited: num(r['rate_limited']), addresses: num(r['addresses']), devices: num(r['devices']), gapCv: undefined }));
    const busy = out.filter((m) => m.releases >= t.releases).map((m) => m.licenseId);
    if (busy.length === 0) return out;
    // The gaps between recorded releases (key_releases, by its (license, time) index).
    const gaps = await this.db.query(`SELECT license_id, count(*)::int AS n,
        stddev_pop(gap) / nullif(avg(gap), 0) AS cv
      FROM (SELECT license_id, extract(epoch FROM released_at - lag(released_at) OVER (
          PARTITION BY license_id ORDER BY released_at, license_seq)) AS gap
        FROM key_releases WHERE license_id = ANY ($1::text[]) AND released_at >= $2 AND released_at < $3) g
      WHERE gap IS NOT NULL GROUP BY 1`, [busy, start, end]);
    const cv = new Map(gaps.rows.filter((r) => num(r['n']) + 1 >= t.releases && r['cv'] !== null)
      .map((r) => [String(r['license_id']), Number(r['cv'])]));
    return out.map((m) => ({ ...m, gapCv: cv.get(m.licenseId) }));
  }

  async prune(before: Date): Promise<number> {
    let total = 0;
    for (const table of ['activity_slots', 'activity_addresses', 'activity_devices']) {
      for (;;) {
        const { rowCount } = await this.db.query(`DELETE FROM ${table} WHERE ctid IN (SELECT ctid FROM ${table}
          WHERE slot < $1 LIMIT ${PRUNE_BATCH})`, [before]);
        total += rowCount;
        if (rowCount < PRUNE_BATCH) break;
      }
    }
    return total;
  }
}

/**
 * `ActivityRecords` in SQL (PGlite and PostgreSQL alike, migration 45). `buckets` asks the
 * database for the bucket starts of a range (`date_trunc(bucket, t, zone)`, PostgreSQL 14's
 * three-argument form: the hour or day in the zone, daylight saving included; once per request,
 * over at most 8,640 quarter hours); every read then groups the quarter-hour rows of
 * `activity_slots`, `activity_addresses` and `activity_devices` by `width_bucket` over those
 * starts, reading only the rows of the licenses and range asked for through each table's
 * primary key. The cost follows the busy quarter hours in the range, not the releases they
 * count (bench/activity).
 */
import type { SqlDb, SqlQueryable } from './sql-db.js';
import {
  emptyCounts, REFUSAL_REASONS, type ActivityCounts, type ActivityKind, type ActivityRecords, type BucketQuery, type BucketRange,
  type ClientMark, type LicenseActivity, type WindowMeasure, type WindowThresholds, type ZonedTime,
} from './activity-records.js';

type Row = Record<string, unknown>;

/** Rows deleted per statement when pruning. */
const PRUNE_BATCH = 5000;

const date = (v: unknown): Date => (v instanceof Date ? v : new Date(String(v)));
const optDate = (v: unknown): Date | undefined => (v === null || v === undefined ? undefined : date(v));
const num = (v: unknown): number => Number(v ?? 0);
/** An int[] as `pg` (an array) or PGlite returns it. */
const intArray = (v: unknown): number[] => (Array.isArray(v) ? v.map(Number)
  : typeof v === 'string' ? v.replace(/[{}]/g, '').split(',').filter((x) => x !== '').map(Number) : []);

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

  /**
   * Runs `fn` in a transaction without JIT compilation: these reads aggregate enough rows for
   * PostgreSQL to JIT-compile them, which costs more than it saves at this size (measured:
   * about 200 ms of a 500 ms read; bench/activity).
   */
  private read<T>(fn: (q: SqlQueryable) => Promise<T>): Promise<T> {
    return this.db.transaction(async (tx) => {
      await tx.query('SET LOCAL jit = off');
      return fn(tx);
    });
  }

  async licenseSeries(licenseId: string, range: BucketRange): Promise<Map<number, ActivityCounts>> {
    const starts = range.starts.map((s) => s.at);
    // The bucket of a quarter hour: its index in the (sorted) starts, a binary search; ten
    // times cheaper per row than date_trunc in a zone (bench/activity).
    const bucketOf = 'width_bucket(slot, $2::timestamptz[])';
    const where = 'license_id = $1 AND slot >= $3 AND slot < $4';
    const { rows } = await this.read((q) => q.query(`WITH c AS (
        SELECT ${bucketOf} AS b, sum(releases)::int AS releases, sum(downloads)::int AS downloads,
          sum(resumes)::int AS resumes, sum(refused_rate_limited)::int AS rate_limited, sum(refused_revoked)::int AS revoked,
          sum(refused_expired)::int AS expired, sum(refused_suspended)::int AS suspended,
          sum(refused_not_licensee)::int AS not_licensee
        FROM activity_slots WHERE ${where} GROUP BY 1),
      a AS (SELECT ${bucketOf} AS b, count(DISTINCT addr_hash)::int AS n FROM activity_addresses WHERE ${where} GROUP BY 1),
      d AS (SELECT ${bucketOf} AS b, count(DISTINCT device)::int AS n FROM activity_devices WHERE ${where} GROUP BY 1)
      SELECT coalesce(c.b, a.b, d.b) AS bucket, c.*, a.n AS addresses, d.n AS devices
      FROM c FULL JOIN a ON a.b = c.b FULL JOIN d ON d.b = coalesce(c.b, a.b)`,
    [licenseId, starts, range.from.at, range.to.at]));
    const out = new Map<number, ActivityCounts>();
    for (const r of rows) {
      const start = starts[num(r['bucket']) - 1];
      if (start === undefined) continue;
      const counts = emptyCounts();
      counts.releases = num(r['releases']);
      counts.downloads = num(r['downloads']);
      counts.resumes = num(r['resumes']);
      counts.addresses = num(r['addresses']);
      counts.devices = num(r['devices']);
      for (const reason of REFUSAL_REASONS) counts.refusals[reason] = num(r[reason]);
      out.set(start.getTime(), counts);
    }
    return out;
  }

  async masterSummary(masterId: string, range: BucketRange, max: number): Promise<{ licenses: LicenseActivity[]; total: number }> {
    const starts = range.starts.map((s) => s.at);
    const span = [range.from.at, range.to.at];
    return this.read(async (q) => {
      const lic = await q.query(`SELECT id, licensee_email, issued_at, revoked_at, suspended_at, expires_at
        FROM licenses WHERE master_id = $1`, [masterId]);
      const ids = lic.rows.map((r) => String(r['id']));
      if (ids.length === 0) return { licenses: [], total: 0 };
      // One pass over the range's quarter hours of every license of the master; one row per
      // license, its releases per bucket as two arrays (a row per bucket costs the Node side
      // more to parse than the database to make: bench/activity).
      const sums = await q.query(`SELECT license_id, array_agg(b ORDER BY b) AS buckets, array_agg(releases ORDER BY b) AS per,
          sum(releases)::int AS releases, sum(downloads)::int AS downloads, sum(resumes)::int AS resumes,
          sum(refusals)::int AS refusals
        FROM (SELECT license_id, width_bucket(slot, $2::timestamptz[]) AS b, sum(releases)::int AS releases,
            sum(downloads) AS downloads, sum(resumes) AS resumes, sum(refused_rate_limited + refused_revoked
              + refused_expired + refused_suspended + refused_not_licensee) AS refusals
          FROM activity_slots WHERE license_id = ANY ($1::text[]) AND slot >= $3 AND slot < $4 GROUP BY 1, 2) x
        GROUP BY 1`, [ids, starts, ...span]);
      const byId = new Map<string, LicenseActivity & { issuedAt: number }>(lic.rows.map((r) => [String(r['id']), {
        licenseId: String(r['id']), issuedAt: date(r['issued_at']).getTime(),
        licenseeEmail: r['licensee_email'] === null || r['licensee_email'] === undefined ? undefined : String(r['licensee_email']),
        revokedAt: optDate(r['revoked_at']), suspendedAt: optDate(r['suspended_at']), expiresAt: optDate(r['expires_at']),
        totals: { releases: 0, downloads: 0, resumes: 0, refusals: 0, addresses: 0, devices: 0 }, releases: new Map() }]));
      for (const r of sums.rows) {
        const l = byId.get(String(r['license_id']));
        if (l === undefined) continue;
        l.totals.releases = num(r['releases']);
        l.totals.downloads = num(r['downloads']);
        l.totals.resumes = num(r['resumes']);
        l.totals.refusals = num(r['refusals']);
        const buckets = intArray(r['buckets']);
        const per = intArray(r['per']);
        buckets.forEach((b, i) => {
          const start = starts[b - 1];
          const n = per[i] ?? 0;
          if (start !== undefined && n > 0) l.releases.set(start.getTime(), n);
        });
      }
      const top = [...byId.values()].sort((a, b) => b.totals.releases - a.totals.releases || a.issuedAt - b.issuedAt
        || (a.licenseId < b.licenseId ? -1 : 1)).slice(0, max);
      // Distinct prefixes and devices over the whole range (index-only scans of the primary keys).
      // Each license's distinct values are found by skipping from one to the next through the
      // (license_id, value, slot) index: a few probes per value, not a read of every row.
      for (const [table, col, key] of [['activity_addresses', 'addr_hash', 'addresses'], ['activity_devices', 'device', 'devices']] as const) {
        const { rows } = await q.query(`SELECT l.id AS license_id, (WITH RECURSIVE r(v) AS (
            (SELECT ${col} FROM ${table} WHERE license_id = l.id AND slot >= $2 AND slot < $3 ORDER BY ${col} LIMIT 1)
            UNION ALL
            SELECT (SELECT ${col} FROM ${table} WHERE license_id = l.id AND ${col} > r.v AND slot >= $2 AND slot < $3
              ORDER BY ${col} LIMIT 1) FROM r WHERE r.v IS NOT NULL)
          SELECT count(v)::int FROM r) AS n
          FROM unnest($1::text[]) AS l(id)`, [top.map((l) => l.licenseId), ...span]);
        for (const r of rows) {
          const l = byId.get(String(r['license_id']));
          if (l !== undefined) l.totals[key] = num(r['n']);
        }
      }
      return { licenses: top.map(({ issuedAt: _, ...l }) => l), total: ids.length };
    });
  }

  async measureWindow(start: Date, end: Date, t: WindowThresholds, max: number): Promise<WindowMeasure[]> {
    return this.read(async (q) => this.measure(q, start, end, t, max));
  }

  private async measure(q: SqlQueryable, start: Date, end: Date, t: WindowThresholds, max: number): Promise<WindowMeasure[]> {
    const window = 'slot >= $1 AND slot < $2';
    const { rows } = await q.query(`WITH w AS (
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
    const gaps = await q.query(`SELECT license_id, count(*)::int AS n,
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

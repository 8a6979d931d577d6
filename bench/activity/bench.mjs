#!/usr/bin/env node
// make bench-activity: the cost of the activity reads (issue 29) over 1,000,000 key releases
// on PostgreSQL (DATABASE_URL; a fresh database is made on its server and dropped after).
//
// One master with 50 licenses and `--releases` key-release rows over 30 days (a long tail of
// use: a few busy licenses, most quiet; each license's releases from 1 to 3 address prefixes
// and 1 or 2 devices, one shared license from 12 and 6), written as real `key_releases` rows
// and the quarter-hour counters migration 45 keeps beside them (derived from those rows in
// SQL, as `iki_release` would have written them one by one). Then, `--runs` times each, the
// service's own reads (server/dist ActivityService, the endpoint less HTTP): the master's
// licenses by day over 30 days and by hour over 14 days, the busiest license by hour over 14
// days and by day over 90 days, in Asia/Tokyo; the flag sweep of one day; and, as the
// alternative the rollup replaces, the master view grouped straight from key_releases
// (date_trunc in the zone over the (license_id, released_at) index). Prints p50/p95 ms, the
// PostgreSQL backend's CPU ms per read (/proc/<pid>/stat of the connection's backend, when
// the server runs on this machine) and the load average. Not in CI. `--keep` keeps the database
// (its name on stderr) to look at the plans.
//
//   DATABASE_URL=postgres://... node bench/activity/bench.mjs [--releases 1000000] [--runs 40]
import { readFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { parseArgs } from 'node:util';
import pg from 'pg';
import { migrate } from '../../server/dist/storage/migrations.js';
import { postgresDb } from '../../server/dist/storage/sql-db.js';
import { SqlRepository } from '../../server/dist/storage/sql-repository.js';
import { ActivityService } from '../../server/dist/services/activity.js';
import { FlagSweeper } from '../../server/dist/services/flags-sweep.js';
import { FLAG_DEFAULTS } from '../../server/dist/activity-config.js';

const { values } = parseArgs({ options: {
  releases: { type: 'string', default: '1000000' }, runs: { type: 'string', default: '40' },
  keep: { type: 'boolean', default: false }, reuse: { type: 'string' },
  help: { type: 'boolean', short: 'h', default: false } } });
if (values.help || !process.env.DATABASE_URL) {
  process.stdout.write('Usage: DATABASE_URL=postgres://... node bench/activity/bench.mjs [--releases 1000000] [--runs 40]\n');
  process.exit(values.help ? 0 : 2);
}
const RELEASES = Number(values.releases);
const RUNS = Number(values.runs);
const LICENSES = 50;
const END = Date.parse('2031-06-01T00:00:00Z');
const START = END - 30 * 86400_000;

const server = process.env.DATABASE_URL;
const name = values.reuse ?? `iki_bench_activity_${process.pid}`;
if (!/^iki_bench_activity_[0-9]+$/.test(name)) throw new Error('--reuse takes a database a --keep run kept');
const admin = new pg.Client({ connectionString: server });
await admin.connect();
if (values.reuse === undefined) await admin.query(`CREATE DATABASE ${name}`);
const url = new URL(server);
url.pathname = `/${name}`;
// Set-up statements run for minutes on a busy machine: no request timeouts for the bench's pool.
const db = postgresDb(url.toString(), 1, { connectMs: 60_000, queryMs: 3_600_000, statementMs: 0, keepAliveMs: 0 });
const load = () => loadavg().map((l) => Number(l.toFixed(2)));
const out = (row) => process.stdout.write(`${JSON.stringify(row)}\n`);

try {
  if (values.reuse === undefined) await setUp();
  await reads();
} finally {
  await db.close();
  if (values.keep || values.reuse !== undefined) process.stderr.write(`kept database ${name}\n`);
  else await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
  await admin.end();
}

async function setUp() {
  await migrate(db);
  const t0 = performance.now();
  await db.query(`INSERT INTO accounts (id, email, name, created_at) VALUES ('seller', 'seller@example.com', 'Seller', now())`);
  await db.query(`INSERT INTO masters (id, seller_id, name, sha256, size, entries, textures, signer_public_key, created_at)
    VALUES ('mst_bench', 'seller', 'Bench', $1, 1, 1, 1, 'k', now())`, ['a'.repeat(64)]);
  // Weights: a long tail (exponential), the first five much busier; pools of prefixes and devices.
  const weights = Array.from({ length: LICENSES }, (_, i) => (i < 5 ? 8 : 1) * -Math.log(1 - (((i * 7919) % 97) + 1) / 98));
  const total = weights.reduce((a, b) => a + b, 0);
  const ids = weights.map((_, i) => `be${i.toString(16).padStart(14, '0')}`);
  await db.query(`INSERT INTO accounts (id, email, name, created_at) SELECT 'buyer' || i, 'b' || i || '@example.com', 'B', now()
    FROM generate_series(0, ${LICENSES - 1}) i`);
  await db.query(`INSERT INTO licenses (id, master_id, licensee_id, issued_at, licensee_name)
    SELECT id, 'mst_bench', 'buyer' || (n - 1), now(), 'B' FROM unnest($1::text[]) WITH ORDINALITY AS u(id, n)`, [ids]);
  await db.query(`CREATE TABLE bench_plan (license_id text, account_id text, n int, prefixes int, devices int)`);
  await db.query(`INSERT INTO bench_plan SELECT id, 'buyer' || (k - 1), n, p, d
    FROM unnest($1::text[], $2::int[], $3::int[], $4::int[]) WITH ORDINALITY AS u(id, n, p, d, k)`,
  [ids, weights.map((w) => Math.round((w / total) * RELEASES)), ids.map((_, i) => (i === 1 ? 12 : 1 + (i % 3))),
    ids.map((_, i) => (i === 1 ? 6 : 1 + (i % 2)))]);
  // The releases: each license's times over the 30 days, in order, with their ordinals.
  await db.query(`INSERT INTO key_releases (license_id, account_id, released_at, license_seq, account_seq)
    SELECT license_id, account_id, t, row_number() OVER w, row_number() OVER w FROM (
      SELECT p.license_id, p.account_id, $1::timestamptz + random() * ($2::timestamptz - $1::timestamptz) AS t
      FROM bench_plan p, generate_series(1, p.n)) r
    WINDOW w AS (PARTITION BY license_id ORDER BY t)`, [new Date(START), new Date(END)]);
  // What iki_release keeps beside each release: the counters, the prefixes and the devices.
  await db.query(`INSERT INTO activity_slots (license_id, slot, releases, refused_rate_limited)
    SELECT license_id, date_bin('15 minutes', released_at, timestamptz '2000-01-01 00:00:00+00'), count(*),
      (count(*) > 40)::int FROM key_releases GROUP BY 1, 2`);
  await db.query(`INSERT INTO activity_addresses (license_id, slot, addr_hash)
    SELECT DISTINCT k.license_id, date_bin('15 minutes', k.released_at, timestamptz '2000-01-01 00:00:00+00'),
      substring(sha256(convert_to(k.license_id || '/' || floor(random() * p.prefixes)::int, 'UTF8')) FROM 1 FOR 16)
    FROM key_releases k JOIN bench_plan p USING (license_id)`);
  await db.query(`INSERT INTO activity_devices (license_id, slot, device)
    SELECT DISTINCT k.license_id, date_bin('15 minutes', k.released_at, timestamptz '2000-01-01 00:00:00+00'),
      substring(translate(encode(sha256(convert_to(k.license_id || '#' || floor(random() * p.devices)::int, 'UTF8')), 'base64'),
        '+/=', '-_A') FROM 1 FOR 22)
    FROM key_releases k JOIN bench_plan p USING (license_id)`);
  // As autovacuum leaves a table in steady state (visibility map set: index-only scans).
  await db.exec('VACUUM ANALYZE');
  const sizes = (await db.query(`SELECT (SELECT count(*) FROM key_releases)::int AS releases,
    (SELECT count(*) FROM activity_slots)::int AS slots, (SELECT count(*) FROM activity_addresses)::int AS addresses,
    (SELECT count(*) FROM activity_devices)::int AS devices`)).rows[0];
  out({ setup: 'rows', ...sizes, seconds: Number(((performance.now() - t0) / 1000).toFixed(1)), load: load() });
}

async function reads() {

  const repo = new SqlRepository(db);
  const clock = new Date(END);
  const service = new ActivityService({ repo, now: () => clock, limits: { perLicense: 20, perUser: 120, windowSeconds: 3600 } });
  const busiest = (await db.query('SELECT license_id FROM bench_plan ORDER BY n DESC LIMIT 1')).rows[0].license_id;
  const backend = Number((await db.query('SELECT pg_backend_pid() AS p')).rows[0].p);
  const backendCpuMs = () => {
    try {
      const f = readFileSync(`/proc/${backend}/stat`, 'utf8').split(') ')[1].split(' ');
      return ((Number(f[11]) + Number(f[12])) * 1000) / 100;
    } catch { return Number.NaN; }
  };
  const iso = (ms) => new Date(ms).toISOString();
  const tz = 'Asia/Tokyo';
  const cases = [
    ['master, day x 30 days', () => service.master('seller', 'mst_bench', { bucket: 'day', tz, from: iso(END - 30 * 86400_000), to: iso(END) })],
    ['master, hour x 14 days', () => service.master('seller', 'mst_bench', { bucket: 'hour', tz, from: iso(END - 14 * 86400_000), to: iso(END) })],
    ['license (busiest), hour x 14 days', () => service.license('seller', busiest, { bucket: 'hour', tz, from: iso(END - 14 * 86400_000), to: iso(END) })],
    ['license (busiest), day x 90 days', () => service.license('seller', busiest, { bucket: 'day', tz, from: iso(END - 90 * 86400_000), to: iso(END) })],
    ['flag sweep (2 windows of a day)', () => new FlagSweeper({ repo, now: () => clock, settings: FLAG_DEFAULTS,
      logger: { info() {}, warn() {}, error() {} } }).sweep()],
    ['alternative: master by day from key_releases', () => db.query(`SELECT license_id, date_trunc('day', released_at, $2) AS d,
      count(*) FROM key_releases WHERE license_id IN (SELECT id FROM licenses WHERE master_id = $1)
      AND released_at >= $3 AND released_at < $4 GROUP BY 1, 2`, ['mst_bench', tz, new Date(END - 30 * 86400_000), new Date(END)])],
  ];
  for (const [label, run] of cases) {
    for (let i = 0; i < 3; i += 1) await run();
    const times = [];
    const cpu0 = backendCpuMs();
    const node0 = process.cpuUsage();
    for (let i = 0; i < RUNS; i += 1) {
      const t = performance.now();
      await run();
      times.push(performance.now() - t);
    }
    const node = process.cpuUsage(node0);
    times.sort((a, b) => a - b);
    const at = (q) => Number(times[Math.min(times.length - 1, Math.floor(q * times.length))].toFixed(1));
    out({ read: label, runs: RUNS, p50Ms: at(0.5), p95Ms: at(0.95),
      dbCpuMsPerRead: Number(((backendCpuMs() - cpu0) / RUNS).toFixed(1)),
      nodeCpuMsPerRead: Number(((node.user + node.system) / 1000 / RUNS).toFixed(1)), load: load() });
  }
}

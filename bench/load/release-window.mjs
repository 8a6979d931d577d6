#!/usr/bin/env node
// Release cost against the releases in the window (issue 23 item 5): the release statement
// (`iki_release`, 25 calls in one statement so the round trip weighs little) for a license
// with N releases in its hour window, N = 10, 1,000, 10,000, 100,000, limits raised so every
// release counts. PGlite in memory, or the PostgreSQL of DATABASE_URL (a fresh schema in it).
// Prints one JSON line per N with the median ms per release and the load average. Not in CI.
//
//   node bench/load/release-window.mjs [--rounds 12]
import { loadavg } from 'node:os';
import { parseArgs } from 'node:util';
import { migrate } from '../../server/dist/storage/migrations.js';
import { pgliteDb, postgresDb } from '../../server/dist/storage/sql-db.js';

const { values } = parseArgs({ options: { rounds: { type: 'string', default: '12' }, help: { type: 'boolean', short: 'h', default: false } } });
if (values.help) {
  process.stdout.write('Usage: node bench/load/release-window.mjs [--rounds 12]   (DATABASE_URL= for PostgreSQL)\n');
  process.exit(0);
}
const url = process.env.DATABASE_URL;
const db = url ? postgresDb(url, 2) : await pgliteDb(undefined);
const engine = url ? 'postgres' : 'pglite';
if (url) await db.exec('DROP SCHEMA IF EXISTS public CASCADE; CREATE SCHEMA public;');
await migrate(db);
const T0 = Date.parse('2031-03-01T00:00:00Z');
await db.query(`INSERT INTO accounts (id, email, name, created_at) VALUES ('s', 's@x', 's', now())`);
await db.query(`INSERT INTO masters (id, seller_id, name, sha256, size, entries, textures, signer_public_key, created_at)
  VALUES ('m', 's', 'm', $1, 1, 1, 1, 'k', now())`, ['a'.repeat(64)]);
const BATCH = 25;
let now = T0 + 30 * 60_000;
for (const [i, n] of [10, 1000, 10_000, 100_000].entries()) {
  const lic = `000000000000f00${i}`;
  await db.query(`INSERT INTO accounts (id, email, name, created_at) VALUES ($1, $1, 'b', now())`, [`a${i}`]);
  await db.query(`INSERT INTO licenses (id, master_id, licensee_id, issued_at, licensee_name) VALUES ($1, 'm', $2, now(), 'b')`, [lic, `a${i}`]);
  await db.query(`INSERT INTO key_releases (license_id, account_id, released_at, license_seq, account_seq)
    SELECT $1, $2, $3::timestamptz + (g * interval '10 microseconds'), g, g FROM generate_series(1, $4::integer) g`,
  [lic, `a${i}`, new Date(T0 + 20 * 60_000), n]);
  await db.exec('ANALYZE key_releases');
  const times = [];
  for (let r = 0; r < Number(values.rounds) + 3; r += 1) {
    now += BATCH + 1;
    const t0 = performance.now();
    await db.query(`SELECT count(*) FROM generate_series(1, ${BATCH}) g, LATERAL iki_release(NULL, $1, $2,
      $3::timestamptz + g * interval '1 millisecond', $3::timestamptz - interval '1 hour', 10000000, 10000000) r`,
    [lic, `a${i}`, new Date(now)]);
    if (r >= 3) times.push((performance.now() - t0) / BATCH);
  }
  times.sort((a, b) => a - b);
  console.log(JSON.stringify({ engine, inWindow: n, msPerRelease: Number(times[Math.floor(times.length / 2)].toFixed(3)),
    load: loadavg().map((l) => Number(l.toFixed(2))) }));
}
await db.close();

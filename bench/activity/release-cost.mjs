#!/usr/bin/env node
// What the activity counters add to a key release (issue 29): the release statement
// (`iki_release`, 25 calls in one statement so the round trip weighs little, limits raised so
// every release counts) on a schema before migration 45 and on the current one (with an
// address-prefix hash and a device id, so every counter and both distinct rows are written),
// side by side in rounds that alternate. PGlite in memory, or fresh databases on the
// PostgreSQL server of DATABASE_URL (dropped after). Prints the median ms per release of each,
// the ratio, and the load average. Not in CI.
//
//   node bench/activity/release-cost.mjs [--rounds 20]
import { createHash } from 'node:crypto';
import { loadavg } from 'node:os';
import { parseArgs } from 'node:util';
import pg from 'pg';
import { migrate, MIGRATIONS } from '../../server/dist/storage/migrations.js';
import { pgliteDb, postgresDb } from '../../server/dist/storage/sql-db.js';

const { values } = parseArgs({ options: { rounds: { type: 'string', default: '20' } } });
const server = process.env.DATABASE_URL;
const BATCH = 25;
const T0 = Date.parse('2031-03-01T00:00:00Z');
const created = [];
const admin = server ? new pg.Client({ connectionString: server }) : undefined;
await admin?.connect();

async function open(label, migrations) {
  let db;
  if (server) {
    const name = `iki_bench_release_${label}_${process.pid}`;
    await admin.query(`CREATE DATABASE ${name}`);
    created.push(name);
    const url = new URL(server);
    url.pathname = `/${name}`;
    db = postgresDb(url.toString(), 1, { connectMs: 60_000, queryMs: 600_000, statementMs: 0, keepAliveMs: 0 });
  } else {
    db = await pgliteDb(undefined);
  }
  await migrate(db, migrations);
  await db.query(`INSERT INTO accounts (id, email, name, created_at) VALUES ('s', 's@x', 's', now()), ('a', 'a@x', 'a', now())`);
  await db.query(`INSERT INTO masters (id, seller_id, name, sha256, size, entries, textures, signer_public_key, created_at)
    VALUES ('m', 's', 'm', $1, 1, 1, 1, 'k', now())`, ['a'.repeat(64)]);
  await db.query(`INSERT INTO licenses (id, master_id, licensee_id, issued_at, licensee_name) VALUES ('000000000000f001', 'm', 'a', now(), 'b')`);
  return db;
}

const before = await open('before', MIGRATIONS.filter((m) => m.version < 45));
const after = await open('after', MIGRATIONS);
const addr = createHash('sha256').update('v4:192.0.2.0/24').digest().subarray(0, 16);
let now = T0;
const round = async (db, withActivity) => {
  now += 3600_000;
  const t0 = performance.now();
  await db.query(`SELECT count(*) FROM generate_series(1, ${BATCH}) g, LATERAL iki_release(NULL, '000000000000f001', 'a',
    $1::timestamptz + g * interval '1 second', $1::timestamptz - interval '1 hour', 10000000, 10000000
    ${withActivity ? ", $2::bytea, 'AAAAAAAAAAAAAAAAAAAAAA'" : ''}) r`, withActivity ? [new Date(now), addr] : [new Date(now)]);
  return (performance.now() - t0) / BATCH;
};
const times = { before: [], after: [] };
try {
  for (let r = 0; r < Number(values.rounds) + 3; r += 1) {
    const b = await round(before, false);
    const a = await round(after, true);
    if (r >= 3) {
      times.before.push(b);
      times.after.push(a);
    }
  }
  const median = (xs) => [...xs].sort((x, y) => x - y)[Math.floor(xs.length / 2)];
  const mb = median(times.before);
  const ma = median(times.after);
  process.stdout.write(`${JSON.stringify({ engine: server ? 'postgres' : 'pglite', msPerReleaseBefore45: Number(mb.toFixed(3)),
    msPerReleaseWithActivity: Number(ma.toFixed(3)), ratio: Number((ma / mb).toFixed(2)),
    load: loadavg().map((l) => Number(l.toFixed(2))) })}\n`);
} finally {
  await before.close();
  await after.close();
  for (const name of created) await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
  await admin?.end();
}

#!/usr/bin/env node
// What the webhook fan-out trigger (`iki_webhook_fanout`, migrations 33 and 35) costs each key
// release of a seller without webhook endpoints, before and after migration 42's early return
// (issue 28 item 1), with no HTTP: `iki_release` called in batches inside one statement on a
// fresh database (PostgreSQL of DATABASE_URL, else in-memory PGlite), the function swapped
// between rounds: migration 35's text ("before"), migration 42's ("after"), and the trigger
// disabled ("no trigger", the floor). CPU per release is the database's: the backend process
// from /proc on PostgreSQL, this process on PGlite (its backend runs here). The median of the
// rounds is printed per variant with the load average.
//
//   node bench/load/webhook-fanout.mjs [--rounds 9] [--batches 20] [--batch 50]
import { readFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { parseArgs } from 'node:util';
import pg from 'pg';
import { pgliteDb, postgresDb } from '../../server/dist/storage/sql-db.js';
import { migrate } from '../../server/dist/storage/migrations.js';
import { FANOUT_WITH_NOTICES } from '../../server/dist/storage/migrations-sell.js';
import { FANOUT_EARLY_RETURN } from '../../server/dist/storage/fanout-migration.js';
import { SqlRepository } from '../../server/dist/storage/sql-repository.js';

const { values } = parseArgs({ options: { rounds: { type: 'string', default: '9' }, batches: { type: 'string', default: '20' },
  batch: { type: 'string', default: '50' } } });
const rounds = Number(values.rounds);
const batches = Number(values.batches);
const batch = Number(values.batch);
const url = process.env.DATABASE_URL;
let db;
let dropDb = async () => {};
if (url) {
  // A database of its own on that server, dropped at the end.
  const name = `iki_fanout_${process.pid}`;
  const admin = new pg.Client({ connectionString: url });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name}`);
  const own = new URL(url);
  own.pathname = `/${name}`;
  db = postgresDb(own.toString(), 1);
  dropDb = async () => {
    await admin.query(`DROP DATABASE ${name}`);
    await admin.end();
  };
} else {
  db = await pgliteDb(undefined);
}
const ticks = (pid) => {
  const f = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return (Number(f[11]) + Number(f[12])) * 10;
};
try {
  await migrate(db);
  const repo = new SqlRepository(db);
  const t0 = new Date();
  await repo.createAccount({ id: 'acct_seller', email: 's@example.com', passwordHash: 'h', name: 'S', createdAt: t0 });
  await repo.createAccount({ id: 'acct_buyer', email: 'b@example.com', passwordHash: 'h', name: 'B', createdAt: t0 });
  await repo.insertMaster({ id: 'mst_1', sellerId: 'acct_seller', name: 'M', sha256: 'a'.repeat(64), size: 1, entries: 1,
    textures: 0, signerPublicKey: 'k', createdAt: t0, textureBound: { maxSidePx: 0, maxPixels: 0 } });
  await repo.createLicense({ license: { id: '00000000000000f1', masterId: 'mst_1', licenseeId: 'acct_buyer', licenseeName: 'B', issuedAt: t0 },
    actor: { accountId: 'acct_seller' } });
  // Another seller with an endpoint, so the endpoints table is not empty.
  await repo.createAccount({ id: 'acct_other', email: 'o@example.com', passwordHash: 'h', name: 'O', createdAt: t0 });
  await db.query(`INSERT INTO webhook_endpoints (id, seller_id, url, events, secret, created_at)
    VALUES ('we_${'0'.repeat(24)}', 'acct_other', 'https://example.com/hook', ARRAY['key.released'], 'x', now())`);
  const backend = url ? Number((await db.query('SELECT pg_backend_pid() AS pid')).rows[0].pid) : undefined;
  const cpuMs = () => (backend === undefined ? (process.cpuUsage().user + process.cpuUsage().system) / 1000 : ticks(backend));
  let now = Date.now();
  const PLAIN_TRIGGER = `DROP TRIGGER events_webhooks ON events;
CREATE TRIGGER events_webhooks AFTER INSERT ON events FOR EACH ROW EXECUTE FUNCTION iki_webhook_fanout();`;
  const variants = {
    before: async () => { await db.exec(`${PLAIN_TRIGGER} ${FANOUT_WITH_NOTICES}`); },
    after: async () => { await db.exec(`${PLAIN_TRIGGER} ${FANOUT_EARLY_RETURN}`); },
    'when clause': async () => {
      await db.exec(`${FANOUT_WITH_NOTICES}
CREATE OR REPLACE FUNCTION iki_seller_has_webhooks(p_master text) RETURNS boolean LANGUAGE sql STABLE AS $f$
  SELECT EXISTS (SELECT 1 FROM masters m JOIN webhook_endpoints e ON e.seller_id = m.seller_id
    WHERE m.id = p_master AND e.disabled_at IS NULL) $f$;
DROP TRIGGER events_webhooks ON events;
CREATE TRIGGER events_webhooks AFTER INSERT ON events FOR EACH ROW
  WHEN (NEW.master_id IS NOT NULL AND iki_seller_has_webhooks(NEW.master_id)) EXECUTE FUNCTION iki_webhook_fanout();`);
    },
    'no trigger': async () => { await db.exec(`${PLAIN_TRIGGER} ALTER TABLE events DISABLE TRIGGER events_webhooks;`); },
  };
  const results = Object.fromEntries(Object.keys(variants).map((k) => [k, { cpu: [], wall: [] }]));
  const load0 = loadavg();
  for (let round = 0; round < rounds; round += 1) {
    const order = Object.keys(variants);
    if (round % 2 === 1) order.reverse();
    for (const name of order) {
      await variants[name]();
      const c0 = cpuMs();
      const w0 = performance.now();
      for (let b = 0; b < batches; b += 1) {
        now += batch + 1;
        const { rows } = await db.query(`SELECT count(*) FILTER (WHERE r.outcome = 'granted') AS n
          FROM generate_series(1, ${batch}) g, LATERAL iki_release(NULL, '00000000000000f1', 'acct_buyer',
            $1::timestamptz + g * interval '1 millisecond', $1::timestamptz - interval '1 hour', 100000000, 100000000) r`,
        [new Date(now)]);
        if (Number(rows[0].n) !== batch) throw new Error('a release was refused');
      }
      const n = batches * batch;
      if (round > 0) {
        results[name].cpu.push((cpuMs() - c0) / n);
        results[name].wall.push((performance.now() - w0) / n);
      }
    }
  }
  const outbox = Number((await db.query('SELECT count(*) AS n FROM webhook_outbox')).rows[0].n);
  if (outbox !== 0) throw new Error(`the fan-out wrote ${outbox} rows for a seller without endpoints`);
  const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
  for (const [name, r] of Object.entries(results)) {
    console.log(JSON.stringify({ engine: url ? 'postgres' : 'pglite (memory)', fanout: name, releasesPerRound: batches * batch,
      rounds: rounds - 1, dbCpuMsPerRelease: Number(median(r.cpu).toFixed(4)), wallMsPerRelease: Number(median(r.wall).toFixed(4)),
      load: [...load0, ...loadavg()].map((l) => Number(l.toFixed(2))) }));
  }
} finally {
  await db.close();
  await dropDb();
}

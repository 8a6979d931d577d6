#!/usr/bin/env node
// Key releases straight into the repository on a durable PGlite data directory, no HTTP: N
// concurrent callers for the given seconds, once one release per commit (`recordRelease`,
// what every release did before the group commit) and once through `SqlRepository` (releases
// that arrive while one is recorded are committed together). Reports releases/s and WAL
// fsyncs per release, which is what the durable mode costs.
//
//   node bench/load/release-group-commit.mjs [--seconds 3] [--callers 16] [--licenses 16]
import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { pgliteDb, pgliteFsyncs } from '../../server/dist/storage/sql-db.js';
import { migrate } from '../../server/dist/storage/migrations.js';
import { SqlRepository } from '../../server/dist/storage/sql-repository.js';
import { recordRelease } from '../../server/dist/storage/sql-release.js';

const { values } = parseArgs({ options: { seconds: { type: 'string', default: '3' }, callers: { type: 'string', default: '16' },
  licenses: { type: 'string', default: '16' } } });
const seconds = Number(values.seconds);
const callers = Number(values.callers);
const licenses = Number(values.licenses);
const dir = mkdtempSync(join(tmpdir(), 'iki-group-'));
const db = await pgliteDb(dir, { durable: true });
try {
  await migrate(db);
  const repo = new SqlRepository(db);
  const t0 = new Date();
  await repo.createAccount({ id: 'acct_seller', email: 's@example.com', passwordHash: 'h', name: 'S', createdAt: t0 });
  await repo.insertMaster({ id: 'mst_1', sellerId: 'acct_seller', name: 'M', sha256: 'a'.repeat(64), size: 1, entries: 1,
    textures: 0, signerPublicKey: 'k', createdAt: t0, textureBound: { maxSidePx: 0, maxPixels: 0 } });
  const ids = [];
  for (let i = 0; i < licenses; i += 1) {
    await repo.createAccount({ id: `acct_b${i}`, email: `b${i}@example.com`, passwordHash: 'h', name: 'B', createdAt: t0 });
    const id = i.toString(16).padStart(16, '0');
    await repo.createLicense({ license: { id, masterId: 'mst_1', licenseeId: `acct_b${i}`, licenseeName: 'B', issuedAt: t0 },
      actor: { accountId: 'acct_seller' } });
    ids.push([id, `acct_b${i}`]);
  }
  for (const [label, release] of [['one commit per release', (a) => recordRelease(db, a)],
    ['grouped commits (SqlRepository)', (a) => repo.tryRecordRelease(a)]]) {
    const fsyncs0 = pgliteFsyncs();
    const end = performance.now() + seconds * 1000;
    let n = 0;
    const lat = [];
    await Promise.all(Array.from({ length: callers }, async () => {
      while (performance.now() < end) {
        const [licenseId, accountId] = ids[n++ % ids.length];
        const s = performance.now();
        const outcome = await release({ licenseId, accountId, now: new Date(), windowSeconds: 3600, perLicense: 100000, perUser: 100000 });
        if (outcome.kind !== 'granted') throw new Error(outcome.kind);
        lat.push(performance.now() - s);
      }
    }));
    lat.sort((a, b) => a - b);
    console.log(JSON.stringify({ row: label, callers, licenses, releases: lat.length, perSecond: Math.round(lat.length / seconds),
      p50ms: Number(lat[Math.floor(lat.length / 2)].toFixed(1)), p99ms: Number(lat[Math.floor(lat.length * 0.99)].toFixed(1)),
      fsyncsPerRelease: Number(((pgliteFsyncs() - fsyncs0) / lat.length).toFixed(2)), load: loadavg().map((l) => Number(l.toFixed(2))) }));
  }
} finally {
  await db.close();
  rmSync(dir, { recursive: true, force: true });
}

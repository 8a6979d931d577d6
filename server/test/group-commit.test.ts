/**
 * PGlite's group commit over HTTP (issue 23 item 6): concurrent key releases sent over real
 * sockets to the app on PGlite share commits (in durable mode one WAL fsync each), while a
 * lone release still makes its own. Commits are counted on the database handle: every
 * top-level statement and every transaction is one. (A durable data directory takes ~20 s of
 * CPU to create, too long for this suite; `bench/load.mjs --fsyncs` counts the fsyncs
 * themselves with strace against the service process: bench/RESULTS.md "Durability".)
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PgBlobStore } from '../src/storage/pg-blobs.js';
import type { SqlDb } from '../src/storage/sql-db.js';
import { SqlRepository } from '../src/storage/sql-repository.js';
import { license, newUser, playerKey, scenario, startApp, type TestApp } from './helpers/app.js';
import { freshPglite } from './helpers/databases.js';

describe('group commit of key releases over HTTP on PGlite', () => {
  let db: SqlDb;
  let app: TestApp;
  let commits = 0;
  

  beforeAll(async () => {
    db = await freshPglite();
    // The same handle, counting what commits: a statement outside a transaction, or a transaction.
    const counted: SqlDb = { ...db,
      query: (text, params) => { commits += 1; return db.query(text, params); },
      transaction: (fn) => { commits += 1; return db.transaction(fn); } };
    app = await startApp({ repo: new SqlRepository(counted), blobs: new PgBlobStore(counted) });
  });
  afterAll(async () => {
    await app?.close();
    await db?.close();
  });

  const release = (token: string, licenseId: string) =>
    app.call('POST', `/api/licenses/${licenseId}/key`, { token, json: { publicKey: playerKey() } });

  it('records 16 concurrent releases in far fewer than 16 commits, each still counted', async () => {
    const { seller, masterId } = await scenario(app);
    const buyers = await Promise.all(Array.from({ length: 16 }, (_, i) => newUser(app, `Buyer${i}`)));
    const licenses: string[] = [];
    for (const buyer of buyers) licenses.push(await license(app, seller, masterId, buyer));
    // Each buyer's token is verified once before (the token cache), as in a steady state.
    for (const [i, buyer] of buyers.entries()) expect((await release(buyer.token, licenses[i]!)).status).toBe(200);

    const lone = commits;
    expect((await release(buyers[0]!.token, licenses[0]!)).status).toBe(200);
    expect(commits - lone).toBeGreaterThanOrEqual(1);

    const before = commits;
    const answers = await Promise.all(buyers.map((b, i) => release(b.token, licenses[i]!)));
    const grouped = commits - before;
    expect(answers.map((a) => a.status)).toEqual(buyers.map(() => 200));
    expect(answers.map((a) => a.body.releaseCount).sort()).toEqual(buyers.map((_, i) => (i === 0 ? 3 : 2)).sort());
    // One commit per release would be 16; grouped, a handful (the first may still go alone).
    expect(grouped).toBeLessThanOrEqual(4);
  }, 60_000);
});

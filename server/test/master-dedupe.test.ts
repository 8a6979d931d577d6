/**
 * Identical masters are stored once (issue 16 item 6): the same bytes uploaded twice make two
 * masters (two records, both counted against the quota) over one stored blob, and both serve
 * their license copies. On PGlite with masters as files and on PostgreSQL with masters as
 * `blob_chunks` rows.
 */
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { PgBlobStore } from '../src/storage/pg-blobs.js';
import { SqlRepository } from '../src/storage/sql-repository.js';
import { license, newUser, registerKey, startApp, uploadMaster } from './helpers/app.js';
import { postgresServer, sqlEngines } from './helpers/databases.js';

describe.each(sqlEngines)('identical masters on $name', (engine) => {
  it.skipIf(engine.name === 'postgres' && postgresServer() === '')('are stored once and both serve copies', async () => {
    const store = await engine.open();
    const app = await startApp({ repo: new SqlRepository(store.db),
      ...(engine.name === 'postgres' ? { blobs: new PgBlobStore(store.db) } : {}) });
    try {
      const seller = await newUser(app, 'Seller');
      const buyer = await newUser(app, 'Buyer');
      const key = await registerKey(app, seller);
      const first = await uploadMaster(app, seller, key, 'Same');
      const second = await uploadMaster(app, seller, key, 'Same');
      expect(second).not.toBe(first);
      const listed = await app.call('GET', '/api/licenses/masters', { token: seller.token });
      expect(listed.body.masters.map((m: { masterId: string }) => m.masterId).sort()).toEqual([first, second].sort());
      expect(new Set(listed.body.masters.map((m: { sha256: string }) => m.sha256)).size).toBe(1);
      if (engine.name === 'postgres') {
        const { rows } = await store.db.query<{ blob_id: string }>('SELECT DISTINCT blob_id FROM blob_chunks');
        expect(rows.map((r) => r.blob_id)).toEqual([first]);
      } else {
        expect((await readdir(join(app.config.dataDir, 'masters'))).filter((n) => n.endsWith('.ikm'))).toEqual([`${first}.ikm`]);
      }
      const stored = await store.db.query<{ id: string; blob_id: string | null }>('SELECT id, blob_id FROM masters ORDER BY created_at, id');
      expect(stored.rows.find((r) => r.id === second)?.blob_id).toBe(first);
      for (const masterId of [first, second]) {
        const licenseId = await license(app, seller, masterId, buyer);
        const copy = await app.call("GET", `/api/licenses/${licenseId}/model`, { token: buyer.token });
        expect(copy.status).toBe(200);
        // The fake copy is a JSON line followed by the stored master's bytes: the shared blob was read.
        expect(copy.bytes.length).toBeGreaterThan(3000);
      }
      expect(app.logs.filter((l) => l.level === 'error')).toEqual([]);
    } finally {
      await app.close();
      await store.close();
    }
  });
});

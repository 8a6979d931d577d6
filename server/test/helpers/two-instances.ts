/**
 * Two app instances on one database, as two service processes sharing PostgreSQL: on
 * PostgreSQL each has its own connection pool; on PGlite (one embedded backend, which two
 * processes cannot share) each has its own repository over the one database.
 */
import { randomBytes } from 'node:crypto';
import { startApp, type TestApp } from './app.js';
import { RootSecret } from '../../src/secrets.js';
import type { Config } from '../../src/config.js';
import { freshPglite, freshPostgres } from './databases.js';
import { postgresDb, type SqlDb } from '../../src/storage/sql-db.js';
import { SqlRepository } from '../../src/storage/sql-repository.js';

/** Two instances and the database they share. */
export interface TwoInstances { a: TestApp; b: TestApp; db: SqlDb; close(): Promise<void> }

/** Starts two instances on a fresh database of `engine`, both on the clock `now` (and with `config` when given). */
export async function twoInstances(engine: 'pglite' | 'postgres', now: () => Date, config?: Partial<Config>): Promise<TwoInstances> {
  // One deployment: both instances hold the same root secret (IKI_ROOT_SECRET), as they must
  // to read each other's sealed secrets and license keys.
  const root = new RootSecret(randomBytes(32));
  if (engine === 'pglite') {
    const db = await freshPglite();
    const a = await startApp({ repo: new SqlRepository(db), now, root, ...(config === undefined ? {} : { config }) });
    const b = await startApp({ repo: new SqlRepository(db), now, root, ...(config === undefined ? {} : { config }) });
    return { a, b, db, async close() { await a.close(); await b.close(); await db.close(); } };
  }
  const pg = await freshPostgres();
  const other = postgresDb(pg.url, 10);
  const a = await startApp({ repo: new SqlRepository(pg.db), now, root, ...(config === undefined ? {} : { config }) });
  const b = await startApp({ repo: new SqlRepository(other), now, root, ...(config === undefined ? {} : { config }) });
  return { a, b, db: pg.db, async close() { await a.close(); await b.close(); await other.close(); await pg.drop(); } };
}

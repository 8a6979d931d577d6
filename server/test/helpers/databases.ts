/**
 * Databases for tests: a fresh PostgreSQL database per test file on the server provided by
 * the global setup, and a PGlite instance in memory. Both with migrations applied.
 */
import { randomBytes } from 'node:crypto';
import { cp, mkdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import pg from 'pg';
import { inject } from 'vitest';
import { MemoryRepository } from '../../src/storage/memory-repository.js';
import { migrate, MIGRATIONS } from '../../src/storage/migrations.js';
import type { Repository } from '../../src/storage/repository.js';
import { postgresDb, wrapPglite, type SqlDb } from '../../src/storage/sql-db.js';
import { SqlRepository } from '../../src/storage/sql-repository.js';

/** URL of the PostgreSQL server for tests ('' when none could be started). */
export const postgresServer = (): string => inject('postgresUrl');

/** A new database on the test server with `migrations` applied (all of them by default); `drop` removes it. */
export async function freshPostgres(migrations = MIGRATIONS): Promise<{ db: SqlDb; url: string; drop(): Promise<void> }> {
  const server = postgresServer();
  const name = `iki_test_${randomBytes(6).toString('hex')}`;
  const admin = new pg.Client({ connectionString: server });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name}`);
  await admin.end();
  const url = new URL(server);
  url.pathname = `/${name}`;
  const db = postgresDb(url.toString(), 20);
  await migrate(db, migrations);
  return {
    db,
    url: url.toString(),
    async drop() {
      await db.close();
      const again = new pg.Client({ connectionString: server });
      await again.connect();
      await again.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await again.end();
    },
  };
}

/**
 * A migrated in-memory PGlite database: the run's migrated dump (helpers/global-pglite.ts)
 * restored, which skips initdb; `migrate` then confirms it is current.
 */
export async function freshPglite(): Promise<SqlDb> {
  const dump = new Blob([await readFile(inject('pgliteDump'))]);
  const db = wrapPglite(await PGlite.create({ loadDataDir: dump }));
  await migrate(db);
  return db;
}

/**
 * Puts a copy of the run's migrated embedded database into `dataDir` (as `db/`, where the
 * service keeps it) and returns `dataDir`: a service started on it opens the database as on a
 * restart instead of running initdb (helpers/global-pglite.ts). With `env` naming a
 * `DATABASE_URL` the service uses no embedded database, so nothing is copied. Not for tests of
 * a first start.
 */
export async function preparedDataDir(dataDir: string, env: Record<string, string> = {}): Promise<string> {
  if (env['DATABASE_URL'] !== undefined) return dataDir;
  await mkdir(dataDir, { recursive: true, mode: 0o700 });
  await cp(inject('pgliteDataDir'), join(dataDir, 'db'), { recursive: true });
  return dataDir;
}

/** Empties every table (between tests sharing one database). */
export async function truncateAll(db: SqlDb): Promise<void> {
  await db.exec(`TRUNCATE accounts, email_verifications, signing_keys, masters, licenses, events,
    key_releases, blob_chunks, sign_in_failures, mail_requests, usage_actions RESTART IDENTITY CASCADE`);
}

/** A repository under test and, for the SQL engines, its database. */
export interface Store { repo: Repository; db: SqlDb | undefined; reset(): Promise<void>; close(): Promise<void> }

/**
 * The three engines a repository test runs on: the in-memory fake, PGlite and PostgreSQL
 * (skip the last when `postgresServer()` is ''). `reset` empties the store between tests.
 */
export const repositoryEngines: { name: 'memory' | 'pglite' | 'postgres'; open(): Promise<Store> }[] = [
  { name: 'memory', async open() {
    const store: Store = { repo: new MemoryRepository(), db: undefined,
      async reset() { store.repo = new MemoryRepository(); }, async close() {} };
    return store;
  } },
  { name: 'pglite', async open() {
    const db = await freshPglite();
    return { repo: new SqlRepository(db), db, reset: () => truncateAll(db), close: () => db.close() };
  } },
  { name: 'postgres', async open() {
    const pg = await freshPostgres();
    return { repo: new SqlRepository(pg.db), db: pg.db, reset: () => truncateAll(pg.db), close: () => pg.drop() };
  } },
];

/** A SQL database under test: PGlite in memory or a fresh PostgreSQL database. */
export interface SqlStore { db: SqlDb; close(): Promise<void> }

/**
 * The two SQL engines an HTTP test runs the real app on (skip the second when
 * `postgresServer()` is '').
 */
export const sqlEngines: { name: 'pglite' | 'postgres'; open(): Promise<SqlStore> }[] = [
  { name: 'pglite', async open() { const db = await freshPglite(); return { db, close: () => db.close() }; } },
  { name: 'postgres', async open() { const pg = await freshPostgres(); return { db: pg.db, close: () => pg.drop() }; } },
];

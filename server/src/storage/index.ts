/**
 * Opens the storage a configuration asks for: PostgreSQL through `pg` when `DATABASE_URL` is
 * set, otherwise PGlite in `<dataDir>/db`; migrations are applied before anything else runs.
 * Master blobs go to `<dataDir>/masters/` or, with `IKI_BLOB_STORE=postgres`, into the database.
 */
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { FsBlobStore, type BlobStore } from './blobs.js';
import { migrate } from './migrations.js';
import { PgBlobStore } from './pg-blobs.js';
import type { Repository } from './repository.js';
import { pgliteDb, postgresDb, type SqlDb } from './sql-db.js';
import { SqlRepository } from './sql-repository.js';

/** Opened storage; `close` releases the database. */
export interface Storage {
  repo: Repository;
  blobs: BlobStore;
  db: SqlDb;
  close(): Promise<void>;
}

/** What `openStorage` needs from the configuration. */
export interface StorageOptions {
  dataDir: string;
  databaseUrl: string | undefined;
  blobStore: 'fs' | 'postgres';
}

/** Opens the database, applies migrations, sweeps interrupted uploads. */
export async function openStorage(options: StorageOptions): Promise<Storage> {
  let db: SqlDb;
  if (options.databaseUrl !== undefined) {
    db = postgresDb(options.databaseUrl);
  } else {
    const dir = join(options.dataDir, 'db');
    await mkdir(dir, { recursive: true, mode: 0o700 });
    db = await pgliteDb(dir);
  }
  try {
    await migrate(db);
    const blobs = options.blobStore === 'postgres'
      ? new PgBlobStore(db)
      : new FsBlobStore(join(options.dataDir, 'masters'));
    await blobs.sweep();
    return { repo: new SqlRepository(db), blobs, db, close: () => db.close() };
  } catch (err) {
    await db.close().catch(() => {});
    throw err;
  }
}

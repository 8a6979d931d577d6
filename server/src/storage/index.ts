/**
 * Opens the storage a configuration asks for: PostgreSQL through `pg` when `DATABASE_URL` is
 * set, otherwise PGlite in `<dataDir>/db`; migrations are applied before anything else runs.
 * Master blobs go to `<dataDir>/masters/`, with `IKI_BLOB_STORE=postgres` into the database, with
 * `IKI_BLOB_STORE=s3` into a bucket.
 */
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import type { S3Settings } from '../s3-config.js';
import type { StorageSettings } from '../storage-config.js';
import { FsBlobStore, type BlobStore, type PendingOwner } from './blobs.js';
import { lockDataDir, type DataDirLock, type LockHolder } from './data-lock.js';
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
  /** The dead process whose stale `db.lock` this one took over (main.ts logs it). */
  staleLock?: LockHolder | undefined;
  close(): Promise<void>;
}

/** What `openStorage` needs from the configuration. */
export interface StorageOptions {
  dataDir: string;
  databaseUrl: string | undefined;
  blobStore: 'fs' | 'postgres' | 's3';
  /** The bucket with `blobStore: 's3'`. */
  s3?: S3Settings | undefined;
  /** Pool size, durability, pending-upload sweep; defaults when absent (tests). */
  storage?: Partial<StorageSettings>;
}

/** How often history older than the retention is pruned (and once at start). */
const PRUNE_INTERVAL_MS = 3600 * 1000;

/**
 * Prunes key-release and event rows older than `days` now and hourly, and sweeps abandoned
 * pending uploads hourly (a long-running instance also clears what dead ones left); returns
 * the stop.
 */
export function pruneEvery(repo: Repository, days: number, blobs?: BlobStore): () => void {
  const run = () => {
    // A failed prune or sweep (an outage) is retried at the next tick.
    if (days > 0) repo.pruneHistory(new Date(Date.now() - days * 86400 * 1000)).catch(() => {});
  };
  run();
  const timer = setInterval(() => {
    run();
    blobs?.sweep().catch(() => {});
  }, PRUNE_INTERVAL_MS);
  timer.unref();
  return () => clearInterval(timer);
}

async function openBlobs(options: StorageOptions, db: SqlDb, owner: PendingOwner): Promise<BlobStore> {
  if (options.blobStore === 'postgres') return new PgBlobStore(db, owner);
  if (options.blobStore === 's3') {
    if (options.s3 === undefined) throw new Error('IKI_BLOB_STORE=s3 needs its settings (IKI_S3_BUCKET, ...)');
    // The AWS SDK is loaded only by deployments that use it.
    const { S3BlobStore } = await import('./s3-blobs.js');
    return new S3BlobStore(options.s3, owner);
  }
  return new FsBlobStore(join(options.dataDir, 'masters'), owner);
}

/**
 * Opens the database, applies migrations, sweeps interrupted uploads. An embedded (PGlite)
 * database is locked for this process first (`data-lock.ts`): a second process refuses.
 */
export async function openStorage(options: StorageOptions): Promise<Storage> {
  const settings = options.storage ?? {};
  let db: SqlDb;
  let lock: DataDirLock | undefined;
  if (options.databaseUrl !== undefined) {
    db = postgresDb(options.databaseUrl, settings.dbPool, settings.dbTimeouts);
  } else {
    await mkdir(options.dataDir, { recursive: true, mode: 0o700 });
    lock = await lockDataDir(options.dataDir);
    const dir = join(options.dataDir, 'db');
    try {
      await mkdir(dir, { recursive: true, mode: 0o700 });
      db = await pgliteDb(dir, { durable: settings.pgliteDurable ?? true });
    } catch (err) {
      await lock.release();
      throw err;
    }
  }
  const close = async () => {
    try {
      await db.close();
    } finally {
      await lock?.release();
    }
  };
  try {
    await migrate(db);
    const owner: PendingOwner = { instanceId: settings.instanceId ?? 'local', pid: process.pid,
      staleSeconds: settings.uploadStaleSeconds ?? 24 * 3600 };
    const blobs = await openBlobs(options, db, owner);
    try {
      // A bucket that is missing or refuses the credentials fails the start, clearly.
      await blobs.open?.();
      await blobs.sweep();
    } catch (err) {
      await blobs.close?.();
      throw err;
    }
    const repo = new SqlRepository(db);
    const stopPruning = pruneEvery(repo, settings.retentionDays ?? 0, blobs);
    return { repo, blobs, db, staleLock: lock?.tookOver, async close() {
      stopPruning();
      await blobs.close?.();
      await close();
    } };
  } catch (err) {
    await close().catch(() => {});
    throw err;
  }
}

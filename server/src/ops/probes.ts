/**
 * The readiness probes of a running service (`/readyz`, ops/health.ts): the database answers,
 * has every migration this build knows and takes a write; the blob store and the data
 * directory take a write and keep a free-space floor (issue 23 item 2: a full or read-only
 * disk is not ready, so a load balancer sends the work elsewhere); the workers are up.
 */
import { randomBytes } from 'node:crypto';
import { mkdir, open, rm, statfs } from 'node:fs/promises';
import { join } from 'node:path';
import type { BlobStore } from '../storage/blobs.js';
import { MIGRATIONS } from '../storage/migrations.js';
import type { SqlDb } from '../storage/sql-db.js';
import type { Probe } from './health.js';

const LATEST_MIGRATION = Math.max(...MIGRATIONS.map((m) => m.version));

/**
 * The database answers, its schema is at this build's latest migration, and it takes a write
 * (one row per instance in `readiness_probe`, migration 20): a full, read-only or standby
 * database is not ready.
 */
export function databaseProbe(db: SqlDb, instanceId: string): Probe {
  return {
    name: 'database',
    async check() {
      const { rows } = await db.query<{ v: number | null }>('SELECT max(version) AS v FROM schema_migrations');
      const version = Number(rows[0]?.v ?? 0);
      if (version < LATEST_MIGRATION) throw new Error(`migrations not done: at ${version} of ${LATEST_MIGRATION}`);
      await db.query(`INSERT INTO readiness_probe (instance_id, checked_at) VALUES ($1, now())
        ON CONFLICT (instance_id) DO UPDATE SET checked_at = excluded.checked_at`, [instanceId]);
    },
  };
}

/** Bytes written by a directory probe: one page, so a full disk cannot hide in a partial block. */
const PROBE_FILE_BYTES = 4096;

/**
 * `dir` has at least `floorBytes` free for this process's user and takes a small file,
 * written, fsynced and removed (a read-only or full file system fails here).
 */
export async function checkWritable(dir: string, floorBytes: number): Promise<void> {
  await mkdir(dir, { recursive: true, mode: 0o700 });
  const fs = await statfs(dir);
  const free = fs.bavail * fs.bsize;
  if (free < floorBytes) throw new Error(`free space ${free} bytes is below the floor of ${floorBytes} (IKI_MIN_FREE_MB)`);
  const file = join(dir, `.readyz.${process.pid}.${randomBytes(4).toString('hex')}`);
  try {
    const handle = await open(file, 'wx', 0o600);
    try {
      await handle.write(new Uint8Array(PROBE_FILE_BYTES));
      await handle.sync();
    } finally {
      await handle.close();
    }
  } finally {
    await rm(file, { force: true });
  }
}

/**
 * The blob store: its table in the database, its directory writable above the floor, or its own
 * check (the S3 bucket).
 */
export function blobProbe(blobStore: 'fs' | 'postgres' | 's3', db: SqlDb, dataDir: string, floorBytes: number, blobs?: BlobStore): Probe {
  return {
    name: 'blobs',
    async check() {
      if (blobs?.check !== undefined) {
        await blobs.check();
        return;
      }
      if (blobStore === 'postgres') {
        await db.query('SELECT 1 FROM blob_chunks LIMIT 1');
        return;
      }
      await checkWritable(join(dataDir, 'masters'), floorBytes);
    },
  };
}

/** The data directory (the embedded database's files live there) writable above the floor. */
export function dataDirProbe(dataDir: string, floorBytes: number): Probe {
  return { name: 'dataDir', check: () => checkWritable(dataDir, floorBytes) };
}

/** The worker pool has all its workers. */
export function workersProbe(pool: { healthy(): boolean }): Probe {
  return {
    name: 'workers',
    async check() {
      if (!pool.healthy()) throw new Error('a worker is down');
    },
  };
}

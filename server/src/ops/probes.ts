/**
 * The readiness probes of a running service (`/readyz`, ops/health.ts): the database answers
 * and has every migration this build knows, the blob store is reachable, the workers are up.
 */
import { constants } from 'node:fs';
import { access, mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import type { BlobStore } from '../storage/blobs.js';
import { MIGRATIONS } from '../storage/migrations.js';
import type { SqlDb } from '../storage/sql-db.js';
import type { Probe } from './health.js';

const LATEST_MIGRATION = Math.max(...MIGRATIONS.map((m) => m.version));

/** The database answers and its schema is at this build's latest migration. */
export function databaseProbe(db: SqlDb): Probe {
  return {
    name: 'database',
    async check() {
      const { rows } = await db.query<{ v: number | null }>('SELECT max(version) AS v FROM schema_migrations');
      const version = Number(rows[0]?.v ?? 0);
      if (version < LATEST_MIGRATION) throw new Error(`migrations not done: at ${version} of ${LATEST_MIGRATION}`);
    },
  };
}

/** The blob store: its table in the database, its directory writable, or its own check (the S3 bucket). */
export function blobProbe(blobStore: 'fs' | 'postgres' | 's3', db: SqlDb, dataDir: string, blobs?: BlobStore): Probe {
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
      const dir = join(dataDir, 'masters');
      await mkdir(dir, { recursive: true, mode: 0o700 });
      await access(dir, constants.R_OK | constants.W_OK);
    },
  };
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

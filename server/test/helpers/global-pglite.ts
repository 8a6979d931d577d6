/**
 * Vitest global setup: one migrated PGlite database for the whole run, in the two forms tests
 * start from. A new PGlite database runs initdb inside WebAssembly: about 3 s of CPU in memory
 * and 11 s in a directory on this machine's disks, then the migrations. Opening a prepared one
 * takes under a second, so
 *
 * - `pgliteDump` is a file holding `dumpDataDir()` of a migrated in-memory database, which
 *   `freshPglite()` (helpers/databases.ts) restores for each test file's PGlite;
 * - `pgliteDataDir` is the same database restored into a directory, which `preparedDataDir()`
 *   copies into a service's data directory; the service opens it durably, as on a restart.
 *
 * Tests that are about a first start (initdb, migrations, the data directory's lock and files)
 * do not use either; everything else gets the same schema the migrations make, checked again by
 * `migrate()` (a no-op on a current database) wherever a test opens one.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import type { TestProject } from 'vitest/node';
import { migrate } from '../../src/storage/migrations.js';
import { wrapPglite } from '../../src/storage/sql-db.js';

declare module 'vitest' {
  export interface ProvidedContext {
    pgliteDump: string;
    pgliteDataDir: string;
  }
}

export default async function setup(project: TestProject): Promise<() => void> {
  const dir = mkdtempSync(join(tmpdir(), 'iki-pglite-template-'));
  const memory = await PGlite.create();
  await migrate(wrapPglite(memory));
  const dump = await memory.dumpDataDir('none');
  await memory.close();
  const dumpFile = join(dir, 'migrated.tar');
  writeFileSync(dumpFile, new Uint8Array(await dump.arrayBuffer()));
  const dataDir = join(dir, 'db');
  const restored = await PGlite.create({ dataDir, loadDataDir: dump });
  await restored.close();
  project.provide('pgliteDump', dumpFile);
  project.provide('pgliteDataDir', dataDir);
  return () => rmSync(dir, { recursive: true, force: true });
}

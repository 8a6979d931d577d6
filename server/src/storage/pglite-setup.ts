/**
 * Worker thread that creates a new embedded (PGlite) data directory (issue 23 item 7):
 * initdb and the migrations grow PGlite's WebAssembly memory to about twice what serving
 * needs (~850 MiB for a first start against ~360 MiB for a restart, with two workers), and
 * WebAssembly memory never shrinks; an instance closed on the main thread kept it too. Made
 * here, the set-up memory goes with the thread, and the service opens the prepared directory
 * as it would on a restart (`sql-db.ts` `pgliteDb`, `storage/index.ts`).
 */
import { parentPort, workerData } from 'node:worker_threads';
import { migrate } from './migrations.js';
import { pgliteDb } from './sql-db.js';

const { dataDir, durable } = workerData as { dataDir: string; durable: boolean };
const db = await pgliteDb(dataDir, { durable, setUp: 'here' });
await migrate(db);
await db.close();
// Said rather than left to the thread's end: a handle PGlite leaves open must not keep the
// service's start waiting; the service ends the thread on this message.
parentPort?.postMessage('ready');

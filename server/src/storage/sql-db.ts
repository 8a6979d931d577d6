/**
 * One small SQL interface over the two PostgreSQL engines the service runs on: PGlite (the
 * WASM build of PostgreSQL, embedded, no server) and a PostgreSQL server through `pg`. The
 * repository and the PostgreSQL blob store are written once against `SqlDb`, in one dialect.
 */
import { existsSync, fsyncSync } from 'node:fs';
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import { PGlite } from '@electric-sql/pglite';
import { NodeFS } from '@electric-sql/pglite/nodefs';
import pg from 'pg';
import { DB_TIMEOUT_DEFAULTS, type DbTimeouts } from '../db-config.js';
import { ApiError } from '../errors.js';
import { isUnreachable, unavailable } from './unavailable.js';

/** A query result: rows as plain objects. */
export interface SqlResult<R> {
  rows: R[];
  rowCount: number;
}

/** Something that runs parameterised SQL (`$1`, `$2`, ...). */
export interface SqlQueryable {
  /**
   * `name`: on PostgreSQL, the statement is prepared once per connection under that name and
   * then only bound and executed (the key release, sql-release.ts); one name, one text.
   * PGlite runs every parameterised query through the extended protocol anyway and ignores it.
   */
  query<R = Record<string, unknown>>(text: string, params?: readonly unknown[], name?: string): Promise<SqlResult<R>>;
  /** Runs a script of several statements without parameters (migrations). */
  exec(script: string): Promise<void>;
}

/** A database: queries, transactions (BEGIN ... COMMIT, rolled back on a throw), close. */
export interface SqlDb extends SqlQueryable {
  transaction<T>(fn: (tx: SqlQueryable) => Promise<T>): Promise<T>;
  close(): Promise<void>;
  /** `pglite` or `postgres`, for logs. */
  readonly engine: string;
}

/** `pg` sends Buffers as bytea; a plain Uint8Array is converted first. */
function toPgParams(params: readonly unknown[] = []): unknown[] {
  return params.map((p) => (p instanceof Uint8Array && !Buffer.isBuffer(p)
    ? Buffer.from(p.buffer, p.byteOffset, p.byteLength) : p));
}

/** Connections a `pg` pool opens at most, by default (`IKI_DB_POOL`). */
export const DEFAULT_POOL = 10;

/**
 * Longest wait for a migration or a prune batch: they may rewrite large tables, and run where
 * nothing waits for an answer (start, the hourly prune), so the request bounds do not apply.
 */
export const MAINTENANCE_TIMEOUT_MS = 3600_000;

/**
 * A `SqlDb` over a `pg` pool of at most `max` connections, bounded in time by `timeouts`
 * (db-config.ts). A database that cannot be reached (refused, timed out, not answering,
 * shutting down, full) raises `STORAGE_UNAVAILABLE` (503 with `Retry-After`). A connection
 * whose query timed out is discarded, never reused: its answer may still arrive.
 */
export function postgresDb(connectionString: string, max = DEFAULT_POOL, timeouts: DbTimeouts = DB_TIMEOUT_DEFAULTS): SqlDb {
  const pool = new pg.Pool({ connectionString, max, connectionTimeoutMillis: timeouts.connectMs,
    query_timeout: timeouts.queryMs, keepAlive: timeouts.keepAliveMs > 0, keepAliveInitialDelayMillis: timeouts.keepAliveMs,
    ...(timeouts.statementMs > 0 ? { statement_timeout: timeouts.statementMs } : {}) });
  // An idle client that loses its connection must not crash the process.
  pool.on('error', () => {});
  const run = async <R>(client: pg.Pool | pg.PoolClient, text: string, params?: readonly unknown[], long = false, name?: string) => {
    try {
      // `query_timeout` per query is read by pg's client but missing from its types.
      const config: pg.QueryConfig & { query_timeout?: number } = { text, values: toPgParams(params) };
      if (long) config.query_timeout = MAINTENANCE_TIMEOUT_MS;
      if (name !== undefined) config.name = name;
      const result = await client.query(config);
      return { rows: result.rows as R[], rowCount: result.rowCount ?? 0 };
    } catch (err) {
      throw unavailable(err);
    }
  };
  return {
    engine: 'postgres',
    query: (text, params, name) => run(pool, text, params, false, name),
    exec: async (script) => { await run(pool, script, undefined, true); },
    async transaction(fn) {
      const client = await pool.connect().catch((err: unknown) => { throw unavailable(err); });
      let broken: unknown;
      // A checked-out client is not covered by the pool's idle 'error' listener: a connection
      // lost mid-transaction (the server stopped or restarted) would emit 'error' with no
      // listener and end the process. It breaks the transaction instead: its query fails with
      // STORAGE_UNAVAILABLE, and the client is destroyed on release.
      const lost = (err: unknown): void => { broken ??= err; };
      client.on('error', lost);
      try {
        await run(client, 'BEGIN');
        const value = await fn({
          query: (text, params, name) => run(client, text, params, false, name),
          // Migrations: no statement timeout for their transaction, the maintenance bound for the wait.
          exec: async (script) => { await run(client, `SET LOCAL statement_timeout = 0; ${script}`, undefined, true); },
        });
        await run(client, 'COMMIT');
        return value;
      } catch (err) {
        // After an outage the connection's state is unknown (a ROLLBACK would wait out another
        // timeout): it is destroyed instead, which ends the transaction on the server.
        if (isUnreachable(err) || (err instanceof ApiError && err.code === 'STORAGE_UNAVAILABLE')) broken = err;
        else await client.query('ROLLBACK').catch((e: unknown) => { broken = e; });
        throw err;
      } finally {
        client.removeListener('error', lost);
        client.release(broken === undefined ? undefined : (broken instanceof Error ? broken : new Error('broken')));
      }
    },
    close: () => pool.end(),
  };
}

/**
 * Emscripten's NODEFS, which PGlite stores its data directory through, has no `fsync`: every
 * sync PostgreSQL asks for is silently skipped, and PGlite starts PostgreSQL with `-F` (fsync
 * off) besides. The durable mode gives NODEFS a real `fsync` and starts PostgreSQL with
 * `fsync=on` and `wal_sync_method=fsync` (Emscripten's `fdatasync` is a no-op, its `fsync`
 * reaches the file system), so a commit returns only after its WAL record is on disk.
 */
let fsyncs = 0;

/** fsyncs made for PGlite in this process so far (tests check that commits are synced). */
export const pgliteFsyncs = (): number => fsyncs;

class DurableNodeFS extends NodeFS {
  override async init(...args: Parameters<NodeFS['init']>): ReturnType<NodeFS['init']> {
    const result = await super.init(...args);
    const opts = result.emscriptenOpts as { preRun?: ((mod: unknown) => void)[] };
    opts.preRun = [...(opts.preRun ?? []), (mod: unknown) => {
      const ops = (mod as { NODEFS: { stream_ops: Record<string, unknown> } }).NODEFS.stream_ops;
      ops['fsync'] = (stream: { nfd: number }) => {
        fsyncSync(stream.nfd);
        fsyncs += 1;
        return 0;
      };
    }];
    return result;
  }
}

/** PGlite's own start parameters (0.5.x `defaultStartParams`) without `-F`, plus the durable settings. */
const DURABLE_START_PARAMS = ['--single', '-O', '-j', '-c', 'search_path=public', '-c', 'exit_on_error=false',
  '-c', 'log_checkpoints=false', '-c', 'max_worker_processes=0', '-c', 'max_parallel_workers=0',
  '-c', 'max_parallel_workers_per_gather=0', '-c', 'io_method=sync', '-c', 'max_parallel_maintenance_workers=0',
  '-c', 'fsync=on', '-c', 'wal_sync_method=fsync'];

/**
 * A `SqlDb` over PGlite stored in `dataDir` (in memory when undefined), durable unless
 * `durable: false` (see `DurableNodeFS`). PGlite runs one transaction at a time, which makes
 * every transaction serializable by construction.
 */
export async function pgliteDb(dataDir: string | undefined,
  options: { durable?: boolean; setUp?: 'worker' | 'here' } = {}): Promise<SqlDb> {
  const durable = options.durable !== false;
  if (dataDir !== undefined && options.setUp !== 'here' && !existsSync(join(dataDir, 'PG_VERSION'))) {
    const script = setUpScript();
    if (script !== undefined) await setUpInWorker(script, dataDir, durable);
  }
  return wrapPglite(await (dataDir === undefined ? PGlite.create()
    : !durable ? PGlite.create(dataDir)
      : PGlite.create({ fs: new DurableNodeFS(dataDir), startParams: DURABLE_START_PARAMS })));
}

/**
 * The compiled `pglite-setup.js` beside this file when running built (the service); undefined
 * when running from the sources (in-process tests, through vitest), which set up here: the
 * worker costs a start ~2-3 s longer, and those tests do not measure memory.
 */
function setUpScript(): URL | undefined {
  return import.meta.url.endsWith('.js') ? new URL('./pglite-setup.js', import.meta.url) : undefined;
}

/** Creates and migrates a new data directory in a worker thread (`pglite-setup.ts`). */
async function setUpInWorker(script: URL, dataDir: string, durable: boolean): Promise<void> {
  const worker = new Worker(script, { workerData: { dataDir, durable } });
  try {
    await new Promise<void>((resolve, reject) => {
      worker.once('message', () => resolve());
      worker.once('error', reject);
      worker.once('exit', (code) => reject(new Error(`setting up the embedded database in ${dataDir} failed (worker exit ${code})`)));
    });
  } finally {
    await worker.terminate();
  }
}

/**
 * A `SqlDb` over an open PGlite instance (what `pgliteDb` returns; exported for the tests,
 * which restore migrated databases from one `dumpDataDir` instead of running initdb each time).
 */
export function wrapPglite(db: PGlite): SqlDb {
  // A full or read-only data directory reaches PostgreSQL as an I/O failure of its own
  // (53100 "could not extend file ... No space left on device", 58030): `STORAGE_UNAVAILABLE`.
  const wrap = (q: Pick<PGlite, 'query' | 'exec'>): SqlQueryable => ({
    async query<R>(text: string, params?: readonly unknown[]) {
      try {
        const result = await q.query<R>(text, params === undefined ? undefined : [...params]);
        return { rows: result.rows, rowCount: result.affectedRows ?? result.rows.length };
      } catch (err) {
        throw unavailable(err);
      }
    },
    async exec(script: string) {
      await q.exec(script).catch((err: unknown) => { throw unavailable(err); });
    },
  });
  const root = wrap(db);
  return {
    engine: 'pglite',
    query: root.query,
    exec: root.exec,
    transaction: (fn) => db.transaction((tx) => fn(wrap(tx))).catch((err: unknown) => { throw unavailable(err); }),
    close: () => db.close(),
  };
}

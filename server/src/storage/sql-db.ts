/**
 * One small SQL interface over the two PostgreSQL engines the service runs on: PGlite (the
 * WASM build of PostgreSQL, embedded, no server) and a PostgreSQL server through `pg`. The
 * repository and the PostgreSQL blob store are written once against `SqlDb`, in one dialect.
 */
import { PGlite } from '@electric-sql/pglite';
import pg from 'pg';

/** A query result: rows as plain objects. */
export interface SqlResult<R> {
  rows: R[];
  rowCount: number;
}

/** Something that runs parameterised SQL (`$1`, `$2`, ...). */
export interface SqlQueryable {
  query<R = Record<string, unknown>>(text: string, params?: readonly unknown[]): Promise<SqlResult<R>>;
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

/** A `SqlDb` over a `pg` pool. */
export function postgresDb(connectionString: string, max = 10): SqlDb {
  const pool = new pg.Pool({ connectionString, max });
  // An idle client that loses its connection must not crash the process.
  pool.on('error', () => {});
  const run = async <R>(client: pg.Pool | pg.PoolClient, text: string, params?: readonly unknown[]) => {
    const result = await client.query(text, toPgParams(params));
    return { rows: result.rows as R[], rowCount: result.rowCount ?? 0 };
  };
  return {
    engine: 'postgres',
    query: (text, params) => run(pool, text, params),
    exec: async (script) => { await pool.query(script); },
    async transaction(fn) {
      const client = await pool.connect();
      try {
        await client.query('BEGIN');
        const value = await fn({
          query: (text, params) => run(client, text, params),
          exec: async (script) => { await client.query(script); },
        });
        await client.query('COMMIT');
        return value;
      } catch (err) {
        await client.query('ROLLBACK').catch(() => {});
        throw err;
      } finally {
        client.release();
      }
    },
    close: () => pool.end(),
  };
}

/**
 * A `SqlDb` over PGlite stored in `dataDir` (in memory when undefined). PGlite runs one
 * transaction at a time, which makes every transaction serializable by construction.
 */
export async function pgliteDb(dataDir: string | undefined): Promise<SqlDb> {
  const db = dataDir === undefined ? await PGlite.create() : await PGlite.create(dataDir);
  const wrap = (q: Pick<PGlite, 'query' | 'exec'>): SqlQueryable => ({
    async query<R>(text: string, params?: readonly unknown[]) {
      const result = await q.query<R>(text, params === undefined ? undefined : [...params]);
      return { rows: result.rows, rowCount: result.affectedRows ?? result.rows.length };
    },
    async exec(script: string) {
      await q.exec(script);
    },
  });
  const root = wrap(db);
  return {
    engine: 'pglite',
    query: root.query,
    exec: root.exec,
    transaction: (fn) => db.transaction((tx) => fn(wrap(tx))),
    close: () => db.close(),
  };
}

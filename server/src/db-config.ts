/**
 * Time bounds of the PostgreSQL pool (issue 23 item 1), read by `storage-config.ts`: a
 * database that stops answering (a frozen server, a lost network path) makes requests fail
 * with 503 `STORAGE_UNAVAILABLE` within these bounds instead of hanging for as long as the
 * fault lasts. PGlite runs in the process and needs none of them.
 */

/** The pool's time bounds, in milliseconds (0: off). */
export interface DbTimeouts {
  /** Getting a connection, from the pool or a new one with its start-up (`IKI_DB_CONNECT_TIMEOUT_MS`). */
  connectMs: number;
  /**
   * Waiting for a query's answer, measured by the service (`IKI_DB_QUERY_TIMEOUT_MS`): what
   * bounds a frozen server, which cannot enforce anything itself. The connection is then
   * discarded.
   */
  queryMs: number;
  /**
   * PostgreSQL's own `statement_timeout` (`IKI_DB_STATEMENT_TIMEOUT_MS`): the server cancels a
   * statement running longer (a lock wait, a slow plan) and the connection stays usable. Below
   * the query timeout, so a working server answers first.
   */
  statementMs: number;
  /** TCP keepalive probes on idle connections start after this (`IKI_DB_KEEPALIVE_MS`). */
  keepAliveMs: number;
}

/**
 * Defaults and why. Every query of a request is short (the key release is one statement of a
 * few milliseconds; a master's row of the PostgreSQL blob store is one container chunk); 10 s
 * of silence means the server is not working. Migrations and pruning set their own bounds.
 */
export const DB_TIMEOUT_DEFAULTS: DbTimeouts = { connectMs: 5000, queryMs: 10_000, statementMs: 8000, keepAliveMs: 10_000 };

type IntReader = (name: string, fallback: number, min: number, max: number) => number;

/** Reads the bounds; a statement timeout at or past the query timeout is a problem. */
export function readDbTimeouts(int: IntReader, problems: string[]): DbTimeouts {
  const d = DB_TIMEOUT_DEFAULTS;
  const hour = 3600_000;
  const t: DbTimeouts = {
    connectMs: int('IKI_DB_CONNECT_TIMEOUT_MS', d.connectMs, 100, hour),
    queryMs: int('IKI_DB_QUERY_TIMEOUT_MS', d.queryMs, 100, hour),
    statementMs: int('IKI_DB_STATEMENT_TIMEOUT_MS', d.statementMs, 0, hour),
    keepAliveMs: int('IKI_DB_KEEPALIVE_MS', d.keepAliveMs, 0, hour),
  };
  if (t.statementMs >= t.queryMs) {
    problems.push('IKI_DB_STATEMENT_TIMEOUT_MS must be below IKI_DB_QUERY_TIMEOUT_MS (the server should cancel first)');
  }
  return t;
}

/**
 * Bounds on connections and transfers (issue 22 items 1 and 2), read by `config.ts` with its
 * validating reader: how long a request's head, its body and a stalled answer may take, and
 * how many connections one client and all clients together may hold. Applied by
 * `ops/connections.ts` (the server) and `ops/transfer-guard.ts` (each request). The
 * environment gives seconds; the configuration holds milliseconds, so tests can use short ones.
 */
import { readFileSync } from 'node:fs';

/** The connection and transfer bounds. */
export interface ConnectionLimits {
  /**
   * A request's head must arrive within this, counted from the connection's first byte (or
   * from its opening, for a connection that sends nothing); then 408 and the connection closes.
   */
  headersTimeoutMs: number;
  /** A whole request, head and body, upload included, must arrive within this. */
  requestTimeoutMs: number;
  /**
   * A body that makes no progress for this long is cut (408), on every route; a body other
   * than an upload or an identify image (a JSON body of at most 64 KiB) must arrive whole
   * within it.
   */
  bodyTimeoutMs: number;
  /**
   * An answer whose client takes nothing for this long (a license copy nobody reads) is cut,
   * which frees its download slot and its worker; logged and counted in `/metrics`.
   */
  transferStallMs: number;
  /**
   * Connections one client address may hold at once (an IPv6 client counts by its /64,
   * `services/client-address.ts`). A trusted proxy (IKI_TRUST_PROXY) is not capped: it
   * carries every client's connections; each client it names has at most this many requests
   * in flight instead (`ops/transfer-guard.ts`).
   */
  perClient: number;
  /** Connections of all clients together, kept below the process's file-descriptor limit. */
  maxConnections: number;
}

/** File descriptors kept for the database, master files, workers and logs. */
const RESERVED_FDS = 512;

/** The soft limit on open files (`/proc/self/limits`), or undefined where it cannot be read. */
export function openFileLimit(): number | undefined {
  try {
    const line = readFileSync('/proc/self/limits', 'utf8').split('\n').find((l) => l.startsWith('Max open files'));
    const soft = line === undefined ? undefined : /^Max open files\s+(\d+|unlimited)/.exec(line)?.[1];
    return soft === undefined || soft === 'unlimited' ? undefined : Number(soft);
  } catch {
    return undefined;
  }
}

/**
 * Defaults and why. Headers: a browser or `curl` sends its head in one packet; 20 s covers a
 * slow mobile link and frees a silent connection 3x sooner than Node's 60 s. Body: 30 s of
 * silence is not a slow link but a stopped client, and a 64 KiB JSON body needs 30 s only below
 * 17 kbit/s. Request: an hour covers a 1 GiB master at 2.4 Mbit/s. Stall: the same 30 s as a
 * body. Per client: a browser opens at most 6 per host; 64 leaves room for a NAT of users.
 */
export const CONNECTION_DEFAULTS = {
  headersTimeoutSeconds: 20,
  requestTimeoutSeconds: 3600,
  bodyTimeoutSeconds: 30,
  transferStallSeconds: 30,
  perClient: 64,
} as const;

/** The default total under a descriptor `limit`: what it leaves after `RESERVED_FDS` (10000 when unknown). */
export function maxConnectionsUnder(limit: number | undefined): number {
  return limit === undefined ? 10_000 : Math.max(64, limit - RESERVED_FDS);
}

/** The default total under this process's descriptor limit. */
export function defaultMaxConnections(): number {
  return maxConnectionsUnder(openFileLimit());
}

/** Reads an integer variable within [min, max] (config.ts's validating reader). */
export type IntReader = (name: string, fallback: number, min: number, max: number) => number;

/** Reads the connection bounds through `int`. */
export function readConnectionLimits(int: IntReader): ConnectionLimits {
  const d = CONNECTION_DEFAULTS;
  const ms = (name: string, fallback: number, max: number) => int(name, fallback, 1, max) * 1000;
  return {
    headersTimeoutMs: ms('IKI_HEADERS_TIMEOUT_SECONDS', d.headersTimeoutSeconds, 300),
    requestTimeoutMs: ms('IKI_REQUEST_TIMEOUT_SECONDS', d.requestTimeoutSeconds, 24 * 3600),
    bodyTimeoutMs: ms('IKI_BODY_TIMEOUT_SECONDS', d.bodyTimeoutSeconds, 3600),
    transferStallMs: ms('IKI_TRANSFER_STALL_SECONDS', d.transferStallSeconds, 3600),
    perClient: int('IKI_MAX_CONNECTIONS_PER_CLIENT', d.perClient, 1, 1_000_000),
    maxConnections: int('IKI_MAX_CONNECTIONS', defaultMaxConnections(), 1, 10_000_000),
  };
}

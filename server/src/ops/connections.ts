/**
 * Connection bounds of the HTTP server (issue 22 item 2), applied in `main.ts`:
 *
 * - the head of a request must arrive within `headersTimeoutMs` (Node counts from the
 *   connection's opening, so a connection that sends nothing is closed too), the whole request
 *   within `requestTimeoutMs`; both are checked every `checkingIntervalMs(limits)`;
 * - one client address holds at most `perClient` connections: the next one is answered 503
 *   `TOO_MANY_CONNECTIONS` and closed. The address is the TCP peer's, keyed as the per-client
 *   limits key it (`services/client-address.ts`: an IPv6 client by its /64). A peer that is a
 *   trusted proxy (IKI_TRUST_PROXY) is not capped: its connections are many clients';
 * - all clients together hold at most `maxConnections`, below the file-descriptor limit, so
 *   that the database, master files and the workers always have descriptors left.
 *
 * Refusals come in bursts (one client opening thousands of connections): each kind is logged
 * once when a burst starts and once, with its count, when it has been quiet for
 * `BURST_QUIET_MS`. Running out of descriptors (EMFILE, ENFILE) while accepting is logged the
 * same way instead of failing the server. Every refusal counts in
 * `iki_connections_refused_total{reason}`.
 */
import type { Server } from 'node:http';
import type { Socket } from 'node:net';
import express from 'express';
import { Counter } from 'prom-client';
import type { ConnectionLimits } from '../connection-config.js';
import type { TrustProxy } from '../config.js';
import type { Logger } from '../logger.js';
import { clientKey } from '../services/client-address.js';
import type { Metrics } from './metrics.js';

/** A burst of refusals ends after this long without one. */
export const BURST_QUIET_MS = 10_000;

/** Why a connection was refused. */
export type RefusalReason = 'per_client' | 'max_connections' | 'descriptors';

const MESSAGES: Record<RefusalReason, string> = {
  per_client: 'connections refused: one client address holds IKI_MAX_CONNECTIONS_PER_CLIENT connections',
  max_connections: 'connections dropped: the service holds IKI_MAX_CONNECTIONS connections',
  descriptors: 'connections dropped: the process ran out of file descriptors (EMFILE); raise its limit (ulimit -n)',
};

/** How often Node checks the header and request timeouts: a quarter of the shorter, 50 ms to 1 s. */
export function checkingIntervalMs(limits: ConnectionLimits): number {
  return Math.max(50, Math.min(1000, Math.floor(Math.min(limits.headersTimeoutMs, limits.requestTimeoutMs) / 4)));
}

/** Logs a kind of refusal once per burst. */
class Bursts {
  private readonly open = new Map<RefusalReason, { count: number; timer: NodeJS.Timeout; fields: Record<string, unknown> }>();

  constructor(private readonly logger: Logger, private readonly counter: Counter<'reason'> | undefined,
    private readonly quietMs: number) {}

  note(reason: RefusalReason, fields: Record<string, unknown> = {}): void {
    this.counter?.inc({ reason });
    const burst = this.open.get(reason);
    if (burst !== undefined) {
      burst.count += 1;
      burst.timer.refresh();
      return;
    }
    this.logger.warn(MESSAGES[reason], { reason, ...fields });
    const timer = setTimeout(() => {
      const ended = this.open.get(reason);
      this.open.delete(reason);
      this.logger.warn('burst of refused connections ended', { reason, refused: ended?.count ?? 0 });
    }, this.quietMs);
    timer.unref();
    this.open.set(reason, { count: 1, timer, fields });
  }

  close(): void {
    for (const burst of this.open.values()) clearTimeout(burst.timer);
    this.open.clear();
  }
}

/** Whether the TCP peer `address` is a proxy trusted to name clients (Express's own rule). */
function trustedPeer(trust: TrustProxy): (address: string) => boolean {
  if (trust === false) return () => false;
  const app = express();
  app.set('trust proxy', trust);
  const fn = app.get('trust proxy fn') as (address: string, hop: number) => boolean;
  return (address) => fn(address, 0);
}

/** The guarded server's refusals; `close` stops its burst timers. */
export interface ConnectionGuard {
  close(): void;
}

/** Applies the bounds to `server` (created with `connectionsCheckingInterval: checkingIntervalMs(limits)`). */
export function guardConnections(server: Server, limits: ConnectionLimits, options: {
  trustProxy: TrustProxy; logger: Logger; metrics?: Metrics; quietMs?: number;
}): ConnectionGuard {
  // The head is part of the request: it cannot have longer than the whole.
  server.headersTimeout = Math.min(limits.headersTimeoutMs, limits.requestTimeoutMs);
  server.requestTimeout = limits.requestTimeoutMs;
  server.maxConnections = limits.maxConnections;
  const counter = options.metrics === undefined ? undefined : new Counter({ name: 'iki_connections_refused_total',
    help: 'Connections refused: per_client, max_connections, descriptors (EMFILE)', labelNames: ['reason'],
    registers: [options.metrics.registry] });
  const bursts = new Bursts(options.logger, counter, options.quietMs ?? BURST_QUIET_MS);
  const trusted = trustedPeer(options.trustProxy);
  const held = new Map<string, number>();
  // Before the HTTP server's own listener: a refused socket never reaches it.
  server.prependListener('connection', (socket: Socket) => {
    const address = socket.remoteAddress;
    if (address === undefined || trusted(address)) return;
    const key = clientKey(address);
    const count = (held.get(key) ?? 0) + 1;
    if (count > limits.perClient) {
      bursts.note('per_client', { limit: limits.perClient });
      refuse(socket);
      return;
    }
    held.set(key, count);
    socket.once('close', () => {
      const left = (held.get(key) ?? 1) - 1;
      if (left <= 0) held.delete(key);
      else held.set(key, left);
    });
  });
  server.on('drop', () => bursts.note('max_connections', { limit: limits.maxConnections }));
  server.on('error', (err: NodeJS.ErrnoException) => {
    if (err.code === 'EMFILE' || err.code === 'ENFILE') bursts.note('descriptors', { code: err.code });
    else options.logger.error('server error', { code: err.code, error: err.message });
  });
  return { close: () => bursts.close() };
}

/**
 * Answers 503 on the raw socket and closes it once the kernel has the answer: before the
 * next turn of the event loop, so the HTTP server (whose listener runs after this one) never
 * reads a request from it.
 */
function refuse(socket: Socket): void {
  const body = JSON.stringify({ error: { code: 'TOO_MANY_CONNECTIONS',
    message: 'too many connections from this address; close some and retry', requestId: 'none' } });
  socket.on('error', () => {});
  socket.write(`HTTP/1.1 503 Service Unavailable\r\nContent-Type: application/json\r\nRetry-After: 5\r\n`
    + `Connection: close\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`, () => socket.destroy());
  socket.pause();
}

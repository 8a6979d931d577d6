/**
 * Graceful stop (issue 13 item 3, issue 23 item 3), in two steps a load balancer can follow:
 *
 * 1. For `delayMs` (IKI_DRAIN_DELAY_SECONDS) the listener stays open: `/readyz` answers 503
 *    `draining`, so health checks see the instance going and stop routing to it, and any new
 *    request is refused cleanly (503 `SERVICE_DRAINING`, `Retry-After`, `Connection: close`)
 *    instead of meeting a closed port. Requests already running go on.
 * 2. Then the listener closes, idle keep-alive connections are closed, running requests
 *    (uploads, license-copy downloads) get up to `graceMs` (IKI_DRAIN_SECONDS) to finish, and
 *    what is left is cut; each cut request is logged as cut by the drain (not as a client that
 *    went away).
 */
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { RequestHandler } from 'express';
import { ApiError } from '../errors.js';
import type { Logger } from '../logger.js';

/** How often idle keep-alive connections are closed while draining. */
const IDLE_SWEEP_MS = 100;
/** Seconds a client refused during the drain is asked to wait (another instance takes it). */
const DRAINING_RETRY_SECONDS = 5;
/** Paths answered while draining: what health checks and scrapers ask. */
const OPS_PATHS = new Set(['/healthz', '/readyz', '/metrics']);

/** The two steps' lengths. */
export interface DrainTimes {
  /** Step 1: `/readyz` 503 with the listener open, new work refused. */
  delayMs?: number;
  /** Step 2: running requests may finish for this long after the listener closed. */
  graceMs: number;
}

/** A running request: Express's, or the key release's own handler's (routes/release-fast.ts). */
interface Running {
  req: IncomingMessage;
  res: ServerResponse;
  locals: Record<string, unknown>;
  path: string;
}

/** The drain state of one server. */
export class Drain {
  #draining = false;
  readonly #running = new Set<Running>();

  /** True once `drain` was called. */
  draining(): boolean {
    return this.#draining;
  }

  /**
   * Tracks running requests; while draining, marks answers `Connection: close` and refuses
   * new work (every path but the operational ones).
   */
  readonly middleware: RequestHandler = (req, res, next) => {
    if (this.#draining) {
      res.setHeader('Connection', 'close');
      if (!OPS_PATHS.has(req.path)) {
        next(new ApiError('SERVICE_DRAINING', 'this instance is shutting down; retry, another instance will answer',
          { retryAfterSeconds: DRAINING_RETRY_SECONDS }, { 'Retry-After': String(DRAINING_RETRY_SECONDS) }));
        return;
      }
    }
    this.track({ req, res, locals: res.locals, path: req.path });
    next();
  };

  /** Tracks a running request until its answer closes (the caller checked `draining()` first). */
  track(entry: Running): void {
    this.#running.add(entry);
    entry.res.once('close', () => this.#running.delete(entry));
  }

  /**
   * Drains `server` (see the module comment). Resolves when the server is closed; says whether
   * anything was cut.
   */
  async drain(server: Server, times: DrainTimes, logger: Logger): Promise<{ cut: boolean }> {
    this.#draining = true;
    const { delayMs = 0, graceMs } = times;
    if (delayMs > 0) {
      logger.info('draining: /readyz answers 503 and new requests are refused; the listener closes after the delay',
        { delayMs, running: this.#running.size });
      await new Promise((resolve) => setTimeout(resolve, delayMs));
    }
    const closed = new Promise<void>((resolve) => server.close(() => resolve()));
    const sweep = setInterval(() => server.closeIdleConnections(), IDLE_SWEEP_MS);
    server.closeIdleConnections();
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<'late'>((resolve) => { timer = setTimeout(() => resolve('late'), graceMs); });
    try {
      const outcome = await Promise.race([closed.then(() => 'closed' as const), late]);
      if (outcome === 'closed') return { cut: false };
      if (graceMs > 0) logger.warn('drain grace period over: closing the connections still open', { graceMs });
      this.#logCuts(logger, graceMs);
      server.closeAllConnections();
      await closed;
      return { cut: true };
    } finally {
      clearInterval(sweep);
      clearTimeout(timer);
    }
  }

  /** One line per request still running at the drain limit; errors.ts then logs no "client closed". */
  #logCuts(logger: Logger, graceMs: number): void {
    for (const { req, res, locals, path } of this.#running) {
      if (res.writableFinished) continue;
      locals['cutByDrain'] = true;
      logger.warn('request cut by the drain: still running at the end of IKI_DRAIN_SECONDS', {
        requestId: locals['requestId'], method: req.method, path, graceMs,
        bytesSent: req.socket.bytesWritten, bytesReceived: req.socket.bytesRead });
    }
  }
}

/**
 * Graceful stop (issue 13 item 3): on SIGTERM the service stops accepting connections, reports
 * not ready, marks every further answer `Connection: close`, lets running requests (uploads,
 * license-copy downloads) finish for up to the grace period, then cuts what is left.
 */
import type { Server } from 'node:http';
import type { RequestHandler } from 'express';
import type { Logger } from '../logger.js';

/** How often idle keep-alive connections are closed while draining. */
const IDLE_SWEEP_MS = 100;

/** The drain state of one server. */
export class Drain {
  #draining = false;

  /** True once `drain` was called. */
  draining(): boolean {
    return this.#draining;
  }

  /** Marks answers given while draining `Connection: close`, so keep-alive clients move on. */
  readonly middleware: RequestHandler = (_req, res, next) => {
    if (this.#draining) res.setHeader('Connection', 'close');
    next();
  };

  /**
   * Stops `server` accepting, waits for running requests for at most `graceMs`, then closes
   * every connection. Resolves when the server is closed; says whether anything was cut.
   */
  async drain(server: Server, graceMs: number, logger: Logger): Promise<{ cut: boolean }> {
    this.#draining = true;
    const closed = new Promise<void>((resolve) => server.close(() => resolve()));
    const sweep = setInterval(() => server.closeIdleConnections(), IDLE_SWEEP_MS);
    server.closeIdleConnections();
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<'late'>((resolve) => { timer = setTimeout(() => resolve('late'), graceMs); });
    try {
      const outcome = await Promise.race([closed.then(() => 'closed' as const), late]);
      if (outcome === 'closed') return { cut: false };
      if (graceMs > 0) logger.warn('drain grace period over: closing the connections still open', { graceMs });
      server.closeAllConnections();
      await closed;
      return { cut: true };
    } finally {
      clearInterval(sweep);
      clearTimeout(timer);
    }
  }
}

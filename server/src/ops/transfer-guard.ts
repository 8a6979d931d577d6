/**
 * Bounds on a request's body and on its answer while they flow (issue 22 items 1 and 2): a
 * slow or silent client must not hold a connection, an upload slot, a download slot or a
 * worker for longer than the configured bound (`connection-config.ts`).
 *
 * - Body: a body that makes no progress for `bodyTimeoutMs` is cut, on every route; a large
 *   upload may take up to the request timeout, but never idle that long. Any other body (a
 *   JSON body) must arrive whole within `bodyTimeoutMs`. Time the service itself holds unread
 *   bytes (it has not started reading, or its disk is slow) is not the client's and does not
 *   count. A cut body is answered 408 `REQUEST_TIMEOUT` with `Connection: close`.
 * - Answer: an answer with bytes waiting to go out of which the client took nothing for
 *   `transferStallMs` (a license copy whose reader stopped reading) is cut. The copy's stream
 *   then ends, which cancels its worker job and frees its download slot.
 *
 * Each cut is one `warn` line (request id, route, reason; never a header or a body) and counts
 * in `iki_transfers_cut_total{reason}`. One timer checks every request in flight, each tick.
 *
 * Requests in flight per client: at most `perClient` per client address as Express resolves it
 * (`req.ip`, through X-Forwarded-For from a trusted proxy; keyed by `clientKey`), the next one
 * is answered 503 `TOO_MANY_CONNECTIONS`. Directly connected clients are capped per connection
 * already (`connections.ts`); behind a proxy, whose connections carry every client's requests,
 * this is the cap that holds per client. Counted in `iki_requests_refused_total`.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { Request, RequestHandler } from 'express';
import { Counter } from 'prom-client';
import type { ConnectionLimits } from '../connection-config.js';
import type { ErrorCode } from '../errors.js';
import type { Logger } from '../logger.js';
import { clientKey } from '../services/client-address.js';
import type { Metrics } from './metrics.js';

/** Why a transfer was cut. */
export type CutReason = 'body_idle' | 'body_slow' | 'answer_stalled';

/** Routes whose body may be large and take long (but never idle): uploads and identify images. */
const STREAMED_BODY = /^\/api\/licenses\/masters(\/[^/]+\/identify)?\/?$/;

/**
 * What the guard needs of a request: Express's, or the key release's own handler's
 * (routes/release-fast.ts), which has no `res.locals` or matched route of Express's.
 */
export interface Guarded {
  req: IncomingMessage;
  res: ServerResponse;
  /** The request's `res.locals` (`requestId` is read, `errorCode` and `cut` are set). */
  locals: Record<string, unknown>;
  /** The path without its query string. */
  path: string;
  /** The matched route's pattern, or `other`. */
  route: () => string;
}

interface Flight extends Guarded {
  socket: Socket;
  started: number;
  /** Whether the body must arrive whole within the body timeout (not an upload). */
  small: boolean;
  hasBody: boolean;
  readMark: number;
  lastRead: number;
  writeMark: number;
  lastWrite: number;
}

function declaresBody(req: IncomingMessage): boolean {
  const length = req.headers['content-length'];
  return length !== undefined ? length !== '0' : req.headers['transfer-encoding'] !== undefined;
}

/** A small JSON answer, as Express's `res.json` writes it. */
function answerJson(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.statusCode = status;
  res.setHeader('Content-Type', 'application/json; charset=utf-8');
  res.setHeader('Content-Length', Buffer.byteLength(text));
  res.end(text);
}

function expressRoute(req: Request): string {
  const route = (req as { route?: { path?: unknown } }).route;
  return typeof route?.path === 'string' ? `${req.baseUrl}${route.path}` : 'other';
}

/** The guard of one service; `middleware` goes first among the operational handlers. */
export class TransferGuard {
  private readonly flights = new Set<Flight>();
  private timer: NodeJS.Timeout | undefined;
  private readonly tickMs: number;
  private readonly cuts: Counter<'reason'> | undefined;
  private readonly refused: Counter | undefined;
  /** Requests in flight per client key. */
  private readonly perClient = new Map<string, number>();

  constructor(private readonly limits: ConnectionLimits, private readonly logger: Logger, metrics?: Metrics) {
    // Four looks per bound: a cut comes at most a quarter of the bound late.
    this.tickMs = Math.max(20, Math.min(1000, Math.floor(Math.min(limits.bodyTimeoutMs, limits.transferStallMs) / 4)));
    this.cuts = metrics === undefined ? undefined : new Counter({ name: 'iki_transfers_cut_total',
      help: 'Requests cut because their body or their client stalled: body_idle, body_slow, answer_stalled',
      labelNames: ['reason'], registers: [metrics.registry] });
    this.refused = metrics === undefined ? undefined : new Counter({ name: 'iki_requests_refused_total',
      help: 'Requests refused because their client had IKI_MAX_CONNECTIONS_PER_CLIENT requests in flight',
      registers: [metrics.registry] });
  }

  readonly middleware: RequestHandler = (req, res, next) => {
    if (this.admit({ req, res, locals: res.locals, path: req.path, route: () => expressRoute(req) }, req.ip)) next();
  };

  /**
   * Counts the request against its client's cap (`ip` as Express resolves it) and watches its
   * body and answer until it ends; false when refused, which it has then answered.
   */
  admit(guarded: Guarded, ip: string | undefined): boolean {
    const { req, res, locals } = guarded;
    const client = clientKey(ip);
    const held = (this.perClient.get(client) ?? 0) + 1;
    if (held > this.limits.perClient) {
      this.refused?.inc();
      const code: ErrorCode = 'TOO_MANY_CONNECTIONS';
      locals['errorCode'] = code;
      res.setHeader('Connection', 'close');
      res.setHeader('Retry-After', '5');
      answerJson(res, 503, { error: { code, message: 'too many requests from this client at once; retry when some end',
        requestId: locals['requestId'] } });
      return false;
    }
    this.perClient.set(client, held);
    const socket = req.socket;
    const now = Date.now();
    const flight: Flight = { ...guarded, socket, started: now, small: !STREAMED_BODY.test(guarded.path),
      hasBody: declaresBody(req), readMark: socket.bytesRead, lastRead: now, writeMark: 0, lastWrite: now };
    this.flights.add(flight);
    let ended = false;
    const done = () => {
      if (!ended) {
        ended = true;
        const left = (this.perClient.get(client) ?? 1) - 1;
        if (left <= 0) this.perClient.delete(client);
        else this.perClient.set(client, left);
      }
      // The watch stops at its next look that finds nothing in flight, not here: one request
      // after the other (one keep-alive connection) would otherwise start and stop a timer
      // each (issue 28 item 1).
      this.flights.delete(flight);
    };
    res.once('finish', done);
    res.once('close', done);
    if (this.timer === undefined) {
      this.timer = setInterval(() => this.tick(), this.tickMs);
      this.timer.unref();
    }
    return true;
  }

  private tick(): void {
    if (this.flights.size === 0) {
      clearInterval(this.timer);
      this.timer = undefined;
      return;
    }
    const now = Date.now();
    for (const f of this.flights) {
      const reason = this.bodyStall(f, now) ?? this.answerStall(f, now);
      if (reason !== undefined) this.cut(f, reason);
    }
  }

  private bodyStall(f: Flight, now: number): CutReason | undefined {
    if (!f.hasBody || f.req.complete || f.req.destroyed) return undefined;
    const read = f.socket.bytesRead;
    // Unread bytes held by the service: the wait is the service's, not the client's.
    if (read !== f.readMark || f.req.readableLength > 0) {
      f.readMark = read;
      f.lastRead = now;
    } else if (now - f.lastRead >= this.limits.bodyTimeoutMs) {
      return 'body_idle';
    }
    return f.small && now - f.started >= this.limits.bodyTimeoutMs ? 'body_slow' : undefined;
  }

  private answerStall(f: Flight, now: number): CutReason | undefined {
    const pending = f.socket.writableLength;
    // Bytes the kernel took: what was written, less what still waits in this process.
    const taken = f.socket.bytesWritten - pending;
    if (pending === 0 || taken !== f.writeMark) {
      f.writeMark = taken;
      f.lastWrite = now;
      return undefined;
    }
    return now - f.lastWrite >= this.limits.transferStallMs ? 'answer_stalled' : undefined;
  }

  private cut(f: Flight, reason: CutReason): void {
    this.flights.delete(f);
    const { req, res, socket, locals } = f;
    this.logger.warn('transfer cut: the client stalled', { requestId: locals['requestId'], method: req.method,
      route: f.route(), reason,
      boundMs: reason === 'answer_stalled' ? this.limits.transferStallMs : this.limits.bodyTimeoutMs });
    this.cuts?.inc({ reason });
    locals['cut'] = reason;
    if (reason === 'answer_stalled' || res.headersSent) {
      socket.destroy();
      return;
    }
    const code: ErrorCode = 'REQUEST_TIMEOUT';
    locals['errorCode'] = code;
    res.setHeader('Connection', 'close');
    answerJson(res, 408, { error: { code, message: reason === 'body_idle'
      ? 'the request body stopped arriving' : 'the request body took too long', requestId: locals['requestId'] } });
    // The answer is small: once the kernel has it (or a second later), the request is ended,
    // which fails the handler's read (an upload then frees its slot) and closes the connection.
    // Not sooner: that would cut the answer; and Node no longer ends a request itself once its
    // answer is finished.
    const abort = () => {
      clearTimeout(close);
      req.destroy(Object.assign(new Error('the request body timed out'), { code: 'ECONNABORTED' }));
    };
    const close = setTimeout(abort, 1000);
    close.unref();
    res.once('finish', abort);
  }
}

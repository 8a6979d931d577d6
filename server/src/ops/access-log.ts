/**
 * One structured JSON line per request (issue 13 item 3), written when the answer ends or the
 * connection closes under it, and the same facts into the metrics. The line carries the
 * request id (also in `X-Request-Id` and in every error body), method, route pattern, path
 * WITHOUT its query string, status, error code, duration, bytes sent and whether the client
 * went away. Never logged: headers (tokens), query strings (verification links carry their
 * token there), bodies (passwords, keys), and the token of a Gumroad ping URL (issue 26 item 5:
 * `/api/shops/{id}/gumroad/{token}`, the URL is the credential), which the path shows as `…`.
 */
import type { Request, RequestHandler, Response } from 'express';
import type { Logger } from '../logger.js';
import type { Metrics } from './metrics.js';

const KEY_RELEASE = 'POST /api/licenses/:licenseId/key';
const COPY = 'GET /api/licenses/:licenseId/model';
const UPLOAD = 'POST /api/licenses/masters';

/** The path without its query string, and with a path-borne secret (the Gumroad ping token) replaced by `…`. */
export const loggedPath = (url: string): string =>
  (url.split('?')[0] ?? '').replace(/^(\/api\/shops\/[^/]*\/gumroad\/)[^/]+/, '$1…');

/** The matched route's pattern, or `other` (pages, unknown paths). */
function routeOf(req: Request): string {
  const route = (req as { route?: { path?: unknown } }).route;
  return typeof route?.path === 'string' ? `${req.baseUrl}${route.path}` : 'other';
}

/** Counts what a response writes; `onBytes` sees each piece as it goes out. */
function countBytes(res: Response, onBytes: (n: number) => void): void {
  const size = (chunk: unknown, encoding?: unknown): number => {
    if (typeof chunk === 'string') return Buffer.byteLength(chunk, typeof encoding === 'string' ? encoding as BufferEncoding : 'utf8');
    return chunk instanceof Uint8Array ? chunk.byteLength : 0;
  };
  const write = res.write.bind(res) as (...args: unknown[]) => boolean;
  const end = res.end.bind(res) as (...args: unknown[]) => Response;
  res.write = ((chunk: unknown, ...rest: unknown[]) => {
    onBytes(size(chunk, rest[0]));
    return write(chunk, ...rest);
  }) as Response['write'];
  res.end = ((chunk?: unknown, ...rest: unknown[]) => {
    if (typeof chunk !== 'function') onBytes(size(chunk, rest[0]));
    return end(chunk, ...rest);
  }) as Response['end'];
}

/** What one answered request leaves in the access log and the metrics. */
export interface RequestRecord {
  requestId: unknown;
  method: string;
  /** The route's pattern (`POST /api/licenses/:licenseId/key` is method and route). */
  route: string;
  /** Already passed through `loggedPath`. */
  path: string;
  status: number;
  /** The error code of a refusal. */
  code: string | undefined;
  seconds: number;
  bytes: number;
  /** The answer did not finish (the client went away, or it was cut). */
  aborted: boolean;
}

/**
 * Writes the access-log line and counts the request in the metrics: the one place both the
 * middleware below and the key release's own handler (routes/release-fast.ts) go through.
 */
export function recordRequest(logger: Logger | undefined, metrics: Metrics | undefined, r: RequestRecord): void {
  const { method, route, status, code } = r;
  logger?.info('request', {
    requestId: r.requestId, method, route, path: r.path,
    status, ...(code === undefined ? {} : { code }), durationMs: Math.round(r.seconds * 1000 * 10) / 10,
    bytesOut: r.bytes, ...(r.aborted ? { aborted: true } : {}),
  });
  if (metrics === undefined) return;
  metrics.requests.inc({ method, route, status: String(status) });
  metrics.latency.observe({ method, route }, r.seconds);
  const op = `${method} ${route}`;
  const outcome = status < 300 ? undefined : code ?? String(status);
  if (op === KEY_RELEASE) metrics.keyReleases.inc({ outcome: outcome ?? 'released' });
  if (op === UPLOAD) metrics.uploadChecks.inc({ result: outcome ?? 'accepted' });
}

/** The access-log and metrics middleware; mounted right after the request id. */
export function accessLog(logger: Logger | undefined, metrics: Metrics | undefined): RequestHandler {
  return (req, res, next) => {
    const started = process.hrtime.bigint();
    let bytes = 0;
    countBytes(res, (n) => {
      bytes += n;
      if (metrics !== undefined && n > 0 && `${req.method} ${routeOf(req)}` === COPY && res.statusCode === 200) {
        metrics.copyBytes.inc(n);
      }
    });
    let logged = false;
    const done = () => {
      if (logged) return;
      logged = true;
      const code = typeof res.locals['errorCode'] === 'string' ? res.locals['errorCode'] : undefined;
      recordRequest(logger, metrics, { requestId: res.locals['requestId'], method: req.method, route: routeOf(req),
        path: loggedPath(req.originalUrl), status: res.statusCode, code,
        seconds: Number(process.hrtime.bigint() - started) / 1e9, bytes, aborted: !res.writableFinished });
    };
    res.once('finish', done);
    res.once('close', done);
    next();
  };
}

/**
 * The key release (`POST /api/licenses/{licenseId}/key`, behaviour rule 4) answered on the
 * raw `http.Server` 'request' event, in front of Express (issue 28 item 1): the product's
 * hottest path, where Express's middleware chain, router and `res.json` were a third of the
 * service's CPU per release.
 *
 * It keeps every check, answer, log line and metric of the Express path, which stays mounted
 * for everything this handler declines:
 * - It takes only the plain shape: `POST`, exactly `/api/licenses/<16 hex>/key` (no query, no
 *   escape, no trailing slash), a `Bearer` access token that is not an API key, no `Origin`
 *   other than the service's own, and no `X-Forwarded-For` while `trust proxy` is off (the
 *   warning of routes/proxy-warning.ts). Anything else (and every request while the instance
 *   drains) goes to Express, before a byte of the body is read, and is answered there as before:
 *   a missing token, an API key, a cross-origin call, a malformed path.
 * - What it takes goes through the same steps in the same order: request id, the per-client
 *   cap and the body and answer timeouts (ops/transfer-guard.ts), the drain's tracking
 *   (ops/drain.ts), the security headers and `Vary: Origin` (app.ts, routes/cors.ts), the
 *   access token (`AccountService.authenticate`, its session deferred to `iki_release` as
 *   `sessionCheckedByHandler` says), the bounded JSON body (routes/http.ts), the body's schema,
 *   `LicenseService.releaseKey` (the one release call), the RateLimit headers, and the access
 *   log line and metrics (`recordRequest`). Errors are answered with Express's error handler's
 *   rules (errors.ts), byte for byte the same bodies; test/release-route.test.ts compares both.
 *
 * The answer is written with one `writeHead` and one `end(body)` of a string: Node sends the
 * head and the body in one write.
 */
import { createRequire } from 'node:module';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { ApiError, clientWentAway, errorBody, frameworkError, fromPortError } from '../errors.js';
import type { Logger } from '../logger.js';
import type { Drain } from '../ops/drain.js';
import type { Metrics } from '../ops/metrics.js';
import { recordRequest } from '../ops/access-log.js';
import type { TransferGuard } from '../ops/transfer-guard.js';
import type { BodyLimits, ReleaseLimits } from '../config.js';
import { API_KEY_PREFIX } from '../services/api-keys.js';
import type { LicenseService } from '../services/licenses.js';
import { newRequestId } from '../services/ids.js';
import { keyReleaseBody, type KeyReleaseInput } from '../schemas/requests.js';
import { decodeBase64Url, validate } from '../schemas/validate.js';
import { requireJson } from './http.js';
import { releaseAnswer } from './licenses.js';

/** `proxy-addr`, the resolver behind Express's `req.ip` (same package, same version). */
const proxyaddr = createRequire(import.meta.url)('proxy-addr') as
  (req: IncomingMessage, trust: (addr: string, i: number) => boolean) => string;

const PREFIX = '/api/licenses/';
const SUFFIX = '/key';
const ID_LENGTH = 16;
const URL_LENGTH = PREFIX.length + ID_LENGTH + SUFFIX.length;
const HEX_ID = /^[0-9a-f]{16}$/;
const BEARER = /^Bearer ([A-Za-z0-9._~+/-]+=*)$/;
/** The route as the access log and the metrics name it (Express's pattern). */
const ROUTE = '/api/licenses/:licenseId/key';

/** What the handler needs: the services and the operational pieces main.ts wires. */
export interface ReleaseFastDeps {
  licenses: LicenseService;
  /** `AccountService.authenticate(token, false, true)`: the Express path's bearer check. */
  authenticate: (token: string) => Promise<{ accountId: string; sessionId: string | undefined }>;
  bodyLimits: BodyLimits;
  releaseLimits: ReleaseLimits;
  now: () => Date;
  /** The public URL: its origin is the one `Origin` taken here, https adds HSTS. */
  service: string;
  /** Express's compiled `trust proxy` (`app.get('trust proxy fn')`), and whether it is off. */
  trust: { off: boolean; fn: (addr: string, i: number) => boolean };
  logger: Logger;
  /** The access log (undefined when IKI_ACCESS_LOG is off) and the metrics. */
  accessLogger: Logger | undefined;
  metrics: Metrics | undefined;
  transfers: TransferGuard | undefined;
  drain: Drain | undefined;
}

/** Per request: the locals Express keeps in `res.locals`. */
interface Exchange {
  req: IncomingMessage;
  res: ServerResponse;
  locals: Record<string, unknown>;
  path: string;
  /**
   * The route the access log names: `other` until the transfer guard admitted the request, as
   * on the Express path, where the guard runs before the router.
   */
  route: string;
  started: bigint;
  bytes: number;
}

/**
 * The handler: returns false, having touched nothing, for a request it leaves to Express;
 * otherwise answers it (asynchronously) and returns true.
 */
export function releaseFastPath(deps: ReleaseFastDeps): (req: IncomingMessage, res: ServerResponse) => boolean {
  const own = new URL(deps.service).origin;
  const hsts = deps.service.startsWith('https:');
  return (req, res) => {
    const url = req.url;
    if (req.method !== 'POST' || url === undefined || url.length !== URL_LENGTH || !url.startsWith(PREFIX)
      || !url.endsWith(SUFFIX)) return false;
    const id = url.slice(PREFIX.length, PREFIX.length + ID_LENGTH);
    if (!HEX_ID.test(id) || deps.drain?.draining() === true) return false;
    const { headers } = req;
    if (headers.origin !== undefined && headers.origin !== own) return false;
    if (deps.trust.off && headers['x-forwarded-for'] !== undefined) return false;
    const token = BEARER.exec(headers.authorization ?? '')?.[1];
    if (token === undefined || token.startsWith(API_KEY_PREFIX)) return false;
    const ex: Exchange = { req, res, locals: { requestId: newRequestId() }, path: url, route: 'other',
      started: process.hrtime.bigint(), bytes: 0 };
    res.setHeader('X-Request-Id', ex.locals['requestId'] as string);
    res.once('close', () => done(deps, ex));
    const ip = deps.trust.off ? req.socket.remoteAddress : proxyaddr(req, deps.trust.fn);
    if (deps.transfers !== undefined
      && !deps.transfers.admit({ req, res, locals: ex.locals, path: url, route: () => ex.route }, ip)) return true;
    ex.route = ROUTE;
    deps.drain?.track({ req, res, locals: ex.locals, path: url });
    res.setHeader('X-Content-Type-Options', 'nosniff');
    res.setHeader('Cache-Control', 'no-store');
    if (hsts) res.setHeader('Strict-Transport-Security', 'max-age=31536000');
    res.setHeader('Vary', 'Origin');
    release(deps, ex, id, token, ip).catch((err: unknown) => answerError(deps.logger, ex, err));
    return true;
  };
}

/** The route's work, as `licenseRoutes`' handler and `bearerAuth` (routes/licenses.ts, http.ts) do it. */
async function release(deps: ReleaseFastDeps, ex: Exchange, id: string, token: string, ip: string | undefined): Promise<void> {
  const { res } = ex;
  let caller: { accountId: string; sessionId: string | undefined };
  try {
    caller = await deps.authenticate(token);
  } catch (err) {
    res.setHeader('WWW-Authenticate', 'Bearer realm="iki", error="invalid_token"');
    throw err;
  }
  const input = validate<KeyReleaseInput>(keyReleaseBody, await requireJson(ex.req, deps.bodyLimits.jsonBytes));
  const publicKey = decodeBase64Url(input.publicKey, 'publicKey', 32);
  // Issue 29: the client's address (as Express's `req.ip` gives it) and the player's device id.
  const device = ex.req.headers['x-iki-device'];
  const result = await deps.licenses.releaseKey(caller.accountId, id, publicKey, caller.sessionId,
    { ip, device: Array.isArray(device) ? device[0] : device });
  const answer = releaseAnswer(id, result, deps.releaseLimits, deps.now());
  for (const [name, value] of answer.headers) res.setHeader(name, value);
  if (answer.error !== undefined) throw answer.error;
  send(ex, 200, answer.body);
}

/**
 * One write of head and body: Node joins the head and a string body into one string and one
 * `write` (a Buffer body goes out with the head as a `writev` of two buffers, which cost more).
 */
function send(ex: Exchange, status: number, body: string): void {
  const length = Buffer.byteLength(body);
  ex.bytes += length;
  ex.res.writeHead(status, ['Content-Type', 'application/json; charset=utf-8', 'Content-Length', String(length)]);
  ex.res.end(body);
}

/** Express's error handler (errors.ts `errorHandler`) for this route, rule for rule. */
function answerError(logger: Logger, ex: Exchange, err: unknown): void {
  const { req, res, locals, path } = ex;
  const requestId = String(locals['requestId']);
  const ported = fromPortError(err);
  const apiError = (ported instanceof ApiError ? ported : undefined) ?? frameworkError(err);
  if (apiError === undefined && locals['cutByDrain'] === true) {
    res.destroy();
    return;
  }
  if (apiError === undefined && clientWentAway(err, req)) {
    logger.info('client closed the connection', { requestId, method: req.method, path, code: (err as { code?: unknown }).code });
    res.destroy();
    return;
  }
  if (apiError === undefined) {
    logger.error('unexpected error', { requestId, method: req.method, path, error: err });
  } else if (apiError.code === 'STORAGE_UNAVAILABLE') {
    logger.warn('storage unavailable', { requestId, method: req.method, path, cause: (apiError as { outage?: unknown }).outage });
  }
  const answer = apiError ?? new ApiError('INTERNAL', 'internal error');
  locals['errorCode'] = answer.code;
  if (res.headersSent) {
    if (apiError !== undefined) {
      logger.error('streamed response aborted', { requestId, method: req.method, path, code: apiError.code, message: apiError.message });
    }
    res.destroy();
    return;
  }
  for (const [name, value] of Object.entries(answer.headers)) res.setHeader(name, value);
  if (answer.status === 413 || !req.complete) res.setHeader('Connection', 'close');
  send(ex, answer.status, JSON.stringify(errorBody(answer, requestId)));
}

/** The access log line and the metrics, once the answer is done or the connection closed. */
function done(deps: ReleaseFastDeps, ex: Exchange): void {
  const { res, locals } = ex;
  const code = locals['errorCode'];
  recordRequest(deps.accessLogger, deps.metrics, { requestId: locals['requestId'], method: 'POST', route: ex.route,
    path: ex.path, status: res.statusCode, code: typeof code === 'string' ? code : undefined,
    seconds: Number(process.hrtime.bigint() - ex.started) / 1e9,
    // A refusal of the transfer guard is written by it, with its length.
    bytes: ex.bytes === 0 && res.writableFinished ? Number(res.getHeader('Content-Length') ?? 0) : ex.bytes,
    aborted: !res.writableFinished });
}

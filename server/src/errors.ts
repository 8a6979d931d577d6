/**
 * The HTTP error model (STYLE.md "One error model across Rust, WASM, TS and HTTP").
 *
 * Every error body is `{error: {code, message, details?, requestId}}`. This module holds the
 * one table that maps a stable SCREAMING_SNAKE code to its HTTP status. Services throw
 * `ApiError` with a code; routes never pick a status themselves. The container codes of
 * docs/format.md §11, reported by the crypto port, map here too. Anything that is not an
 * `ApiError` is logged with the request id and answered as `INTERNAL` without internals.
 */
import type { ErrorRequestHandler, RequestHandler } from 'express';
import type { Logger } from './logger.js';

/** Code → HTTP status. Codes never change; messages may. */
export const ERROR_STATUS = {
  // Request shape.
  // A request the HTTP layer could not take apart (a malformed %-escape in the path).
  MALFORMED_REQUEST: 400,
  MALFORMED_JSON: 400,
  VALIDATION_FAILED: 400,
  VERIFICATION_INVALID: 400,
  WEAK_KEY: 400,
  INVALID_ARGUMENT: 400,
  // Authentication and authorization (kept coarse on purpose).
  UNAUTHENTICATED: 401,
  INVALID_CREDENTIALS: 401,
  FORBIDDEN: 403,
  EMAIL_NOT_VERIFIED: 403,
  // A sign-up link used away from the browser that signed up, without a password chosen there.
  SIGN_UP_PASSWORD_REQUIRED: 403,
  // Uploading a master needs an active signing key registered to the account.
  SIGNING_KEY_REQUIRED: 403,
  LICENSE_REVOKED: 403,
  // A request from another site's page that IKI_CORS_ORIGINS does not list (routes/cors.ts).
  ORIGIN_NOT_ALLOWED: 403,
  // Issue 26 item 3: suspended by its seller (reversible), or past its expiresAt.
  LICENSE_SUSPENDED: 403,
  LICENSE_EXPIRED: 403,
  // Issue 26 item 1: an API key on an operation no API key may do (sign-in, account changes,
  // key release, copies, unwrap, ...), and one without the scope the operation needs.
  API_KEY_NOT_ALLOWED: 403,
  INSUFFICIENT_SCOPE: 403,
  // Missing resources (also used when the caller may not know a resource exists).
  NOT_FOUND: 404,
  ACCOUNT_NOT_FOUND: 404,
  MASTER_NOT_FOUND: 404,
  LICENSE_NOT_FOUND: 404,
  SIGNING_KEY_NOT_FOUND: 404,
  SESSION_NOT_FOUND: 404,
  API_KEY_NOT_FOUND: 404,
  // A webhook endpoint or delivery the caller has none such of (issue 26 item 4).
  WEBHOOK_NOT_FOUND: 404,
  WEBHOOK_DELIVERY_NOT_FOUND: 404,
  SHOP_NOT_FOUND: 404,
  // A flag the caller has none such of (issue 29 item 3).
  FLAG_NOT_FOUND: 404,
  // A shop's event whose signature header does not verify with the connection's secret (issue 26 item 5).
  SHOP_SIGNATURE_INVALID: 400,
  METHOD_NOT_ALLOWED: 405,
  // Conflicts with stored state.
  EMAIL_TAKEN: 409,
  SIGNING_KEY_TAKEN: 409,
  SIGNING_KEY_REVOKED: 409,
  // Licensing by e-mail when several accounts (a local and an external one) have the address.
  ACCOUNT_AMBIGUOUS: 409,
  // A master is kept while any license of it exists.
  MASTER_HAS_LICENSES: 409,
  // An archived master takes no new license.
  MASTER_ARCHIVED: 409,
  // An Idempotency-Key the seller used before for another license request (issue 26 item 2).
  IDEMPOTENCY_KEY_REUSED: 409,
  // Suspending or reinstating a revoked license: revocation is final.
  LICENSE_STATE_CONFLICT: 409,
  // The account holds the most active API keys it may.
  API_KEY_LIMIT_REACHED: 409,
  WEBHOOK_LIMIT_REACHED: 409,
  // Body framing.
  PAYLOAD_TOO_LARGE: 413,
  // The upload would take the account's stored masters past its storage quota.
  STORAGE_QUOTA_EXCEEDED: 413,
  UNSUPPORTED_MEDIA_TYPE: 415,
  // A master upload that fails the complete check (container codes, docs/format.md §11).
  SIGNER_NOT_SELLER: 422,
  MASTER_NAME_TOO_LONG: 422,
  BAD_MAGIC: 422,
  WRONG_KIND: 422,
  UNSUPPORTED_VERSION: 422,
  TRUNCATED: 422,
  TRAILING_BYTES: 422,
  LIMIT_EXCEEDED: 422,
  CHUNK_ORDER: 422,
  UNKNOWN_CRITICAL_CHUNK: 422,
  MALFORMED_CHUNK: 422,
  UNSUPPORTED_ALGORITHM: 422,
  BAD_MANIFEST: 422,
  DATA_SEQUENCE: 422,
  BAD_DATA: 422,
  HASH_MISMATCH: 422,
  DECRYPT_FAILED: 422,
  BAD_SIGNATURE: 422,
  BAD_CERTIFICATE: 422,
  KEY_REQUIRED: 422,
  KDF_PARAMS_REFUSED: 422,
  // iki-license's own codes (docs/format.md §11): a sound container that is not a master for
  // this service, and an identify image that cannot be decoded or is too large to decode.
  NOT_A_MASTER: 422,
  IMAGE_DECODE_FAILED: 422,
  IMAGE_TOO_LARGE: 422,
  // Release limits (SPEC "Limits").
  RATE_LIMITED: 429,
  // Too many failed sign-ins for the address or from the client; names neither the limit
  // nor whether the address has an account.
  SIGN_IN_THROTTLED: 429,
  // Too many verification e-mails requested for the address or from the client (sign-up and
  // resend); says nothing about whether the address has an account.
  MAIL_THROTTLED: 429,
  // Too many licenses created by the seller within the hour (licensing by e-mail tells whether
  // an address has a verified account).
  LICENSE_CREATION_THROTTLED: 429,
  // Per-account and per-license limits of uploads, license copies and identify
  // (`services/usage-limits.ts`): running at once, and started within a window.
  TOO_MANY_UPLOADS: 429,
  TOO_MANY_DOWNLOADS: 429,
  COPY_RATE_LIMITED: 429,
  IDENTIFY_RATE_LIMITED: 429,
  // A request whose body stopped arriving, or came too slowly (ops/transfer-guard.ts); the
  // connection closes.
  REQUEST_TIMEOUT: 408,
  // A Range past the end of a license copy; Content-Range names its size.
  RANGE_NOT_SATISFIABLE: 416,
  // Server side.
  INTERNAL: 500,
  // A stored master no longer matches its record (storage damage); found while copying it.
  MASTER_MISMATCH: 500,
  CRYPTO_UNAVAILABLE: 503,
  // The database or the blob store cannot be reached (storage/unavailable.ts); with Retry-After.
  STORAGE_UNAVAILABLE: 503,
  // Answered by main.ts while storage opens, before the app is mounted.
  SERVICE_STARTING: 503,
  // One client address holds IKI_MAX_CONNECTIONS_PER_CLIENT connections (ops/connections.ts).
  TOO_MANY_CONNECTIONS: 503,
  // A new request while the instance drains after SIGTERM (ops/drain.ts); with Retry-After.
  SERVICE_DRAINING: 503,
} as const satisfies Record<string, number>;

/** Every code the HTTP interface can answer with. */
export type ErrorCode = keyof typeof ERROR_STATUS;

/** Container and iki-license error codes (docs/format.md §11) that the crypto port may report. */
export const FORMAT_ERROR_CODES: ReadonlySet<string> = new Set([
  'BAD_MAGIC', 'WRONG_KIND', 'UNSUPPORTED_VERSION', 'TRUNCATED', 'TRAILING_BYTES',
  'LIMIT_EXCEEDED', 'CHUNK_ORDER', 'UNKNOWN_CRITICAL_CHUNK', 'MALFORMED_CHUNK',
  'UNSUPPORTED_ALGORITHM', 'BAD_MANIFEST', 'DATA_SEQUENCE', 'BAD_DATA', 'HASH_MISMATCH',
  'DECRYPT_FAILED', 'BAD_SIGNATURE', 'BAD_CERTIFICATE', 'KEY_REQUIRED', 'KDF_PARAMS_REFUSED',
  'WEAK_KEY', 'INVALID_ARGUMENT',
  'NOT_A_MASTER', 'MASTER_MISMATCH', 'IMAGE_DECODE_FAILED', 'IMAGE_TOO_LARGE',
]);

/** Small, non-secret context attached to an error (which limit, which field). */
export type ErrorDetails = Record<string, unknown>;

/** An expected failure with a stable code; its message is safe to show to the caller. */
export class ApiError extends Error {
  readonly code: ErrorCode;
  readonly details: ErrorDetails | undefined;
  /** Extra response headers, e.g. `Retry-After` on the 429 codes. */
  readonly headers: Readonly<Record<string, string>>;

  constructor(code: ErrorCode, message: string, details?: ErrorDetails,
    headers: Record<string, string> = {}) {
    super(message);
    this.name = 'ApiError';
    this.code = code;
    this.details = details;
    this.headers = headers;
  }

  /** The HTTP status for this error's code. */
  get status(): number {
    return ERROR_STATUS[this.code];
  }
}

/**
 * Turns an error raised by the crypto port (an `Error` whose `code` is a docs/format.md §11
 * code) into an `ApiError`; anything else is returned unchanged and ends up as `INTERNAL`.
 * `INVALID_STATE` is deliberately not translated: it means this service misused the port.
 */
export function fromPortError(err: unknown): unknown {
  if (!(err instanceof Error) || err instanceof ApiError) return err;
  const code = (err as { code?: unknown }).code;
  if (typeof code !== 'string' || !FORMAT_ERROR_CODES.has(code)) return err;
  const raw = (err as { details?: unknown }).details;
  const details = raw !== null && typeof raw === 'object' ? { ...raw as ErrorDetails } : undefined;
  return new ApiError(code as ErrorCode, err.message.toLowerCase(), details);
}

/** The JSON body of every error response. */
export interface ErrorBody {
  error: { code: ErrorCode; message: string; details?: ErrorDetails; requestId: string };
}

/** Builds the error body for a request id. */
export function errorBody(err: ApiError, requestId: string): ErrorBody {
  const error: ErrorBody['error'] = { code: err.code, message: err.message, requestId };
  if (err.details !== undefined) error.details = err.details;
  return { error };
}

/** Answers routes that do not exist with `NOT_FOUND`. */
export const notFoundHandler: RequestHandler = (_req, _res, next) => {
  next(new ApiError('NOT_FOUND', 'no such route'));
};

/** Codes of the 4xx statuses the HTTP framework raises itself; any other 4xx is `MALFORMED_REQUEST`. */
const FRAMEWORK_CODES: Readonly<Record<number, ErrorCode>> = {
  404: 'NOT_FOUND', 405: 'METHOD_NOT_ALLOWED', 413: 'PAYLOAD_TOO_LARGE', 415: 'UNSUPPORTED_MEDIA_TYPE',
};

/**
 * An error the HTTP framework raised with a 4xx status, such as the router's failure to
 * percent-decode a path parameter (`/api/licenses/%E0%A4%A`, raised while matching, before any
 * authentication): the client's mistake, answered like every other refusal, with no stack
 * trace and no log line.
 */
export function frameworkError(err: unknown): ApiError | undefined {
  if (!(err instanceof Error) || err instanceof ApiError) return undefined;
  const { status, statusCode } = err as { status?: unknown; statusCode?: unknown };
  const found = typeof status === 'number' ? status : statusCode;
  if (typeof found !== 'number' || !Number.isInteger(found) || found < 400 || found > 499) return undefined;
  const code = FRAMEWORK_CODES[found] ?? 'MALFORMED_REQUEST';
  return new ApiError(code, code === 'MALFORMED_REQUEST'
    ? 'the request is malformed (for example a bad %-escape in its path)' : 'the request was refused');
}

/** Express error handler: the only place that writes error responses. */
export function errorHandler(logger: Logger): ErrorRequestHandler {
  return (err: unknown, req, res, _next) => {
    const requestId = String(res.locals['requestId'] ?? 'unknown');
    const apiError = asApiError(fromPortError(err)) ?? frameworkError(err);
    if (apiError === undefined && res.locals['cutByDrain'] === true) {
      // Cut at the drain limit and logged as such by ops/drain.ts; not a client going away.
      res.destroy();
      return;
    }
    if (apiError === undefined && clientWentAway(err, req)) {
      // Not a fault of the service: one info line, no stack.
      logger.info('client closed the connection', { requestId, method: req.method, path: req.path,
        code: (err as { code?: unknown }).code });
      res.destroy();
      return;
    }
    if (apiError === undefined) {
      logger.error('unexpected error', { requestId, method: req.method, path: req.path, error: err });
    } else if (apiError.code === 'STORAGE_UNAVAILABLE') {
      // An operator's matter (a full disk, a hung database): one line with the errno or
      // SQLSTATE (storage/unavailable.ts), no stack, no path.
      logger.warn('storage unavailable', { requestId, method: req.method, path: req.path,
        cause: (apiError as { outage?: unknown }).outage });
    }
    const answer = apiError ?? new ApiError('INTERNAL', 'internal error');
    // For the access log and the metrics (ops/access-log.ts).
    res.locals['errorCode'] = answer.code;
    if (res.headersSent) {
      // A streamed answer already started (a license copy whose master failed its check at
      // the end): the only honest signal left is a broken stream. Logged, since the client
      // only sees a cut connection.
      if (apiError !== undefined) {
        logger.error('streamed response aborted', { requestId, method: req.method, path: req.path,
          code: apiError.code, message: apiError.message });
      }
      res.destroy();
      return;
    }
    for (const [name, value] of Object.entries(answer.headers)) res.setHeader(name, value);
    // A refusal before the body was read (an upload refused on its headers, a body past its
    // limit) closes the connection instead of draining what the client still sends.
    if (answer.status === 413 || !req.complete) res.setHeader('Connection', 'close');
    res.status(answer.status).json(errorBody(answer, requestId));
  };
}

/** Errors of a response stream whose client went away (closed, reset, timed out). */
const CLIENT_GONE = new Set(['ERR_STREAM_PREMATURE_CLOSE', 'ECONNRESET', 'EPIPE', 'ERR_STREAM_DESTROYED', 'ECONNABORTED']);

/** Whether `err` only says that the client of `req` went away. */
export function clientWentAway(err: unknown, req: { destroyed?: boolean; socket?: { destroyed?: boolean } | null }): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' && CLIENT_GONE.has(code)
    && (req.destroyed === true || req.socket?.destroyed === true || code === 'ERR_STREAM_PREMATURE_CLOSE');
}

function asApiError(err: unknown): ApiError | undefined {
  return err instanceof ApiError ? err : undefined;
}

/**
 * Storage outages as honest answers (issue 16 item 5, issue 23 items 1 and 2): a database or
 * blob store that cannot be reached, does not answer in time, or cannot take a write (disk
 * full, quota, read-only) is `STORAGE_UNAVAILABLE` (503 with `Retry-After`), not an internal
 * error, since the request may well succeed a little later or on another instance. Anything
 * else passes through unchanged.
 *
 * This is the one mapping every store uses: `unavailable(err)` for an error of the file
 * system, `pg` or PGlite; `storageUnavailable(cause)` for a store whose errors are classified
 * by the store itself (an object store's throttling or 5xx answers).
 */
import { ApiError } from '../errors.js';

/** Seconds a client is asked to wait before retrying after an outage. */
export const OUTAGE_RETRY_SECONDS = 5;

/** Socket errors that mean "cannot reach the store now". */
const UNREACHABLE_ERRNO = new Set([
  'ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'ENOTFOUND', 'EAI_AGAIN', 'EPIPE',
  'EHOSTDOWN', 'ENOTCONN', 'ESTALE', 'EIO',
]);

/**
 * File-system errors that mean "the store cannot take this now": full (ENOSPC), over a quota
 * (EDQUOT), read-only (EROFS), a file past the file system's or the process's size limit
 * (EFBIG), out of file descriptors (EMFILE, ENFILE), or a directory the service may no longer
 * write (EACCES, EPERM: an operator's mistake, but the request was sound and another instance
 * may take it). Only raised by storage calls here (the callers of `unavailable` are stores).
 */
const UNWRITABLE_ERRNO = new Set(['ENOSPC', 'EDQUOT', 'EROFS', 'EFBIG', 'EMFILE', 'ENFILE', 'EACCES', 'EPERM']);

/**
 * SQLSTATEs of a server that is unreachable, refusing or unable to write for now: class 08
 * (connection exception), 57P01-57P03 (shutting down, crash recovery, cannot connect now),
 * 57014 (statement timeout: `IKI_DB_STATEMENT_TIMEOUT_MS`), class 53 (insufficient resources:
 * disk full, out of memory, too many connections), 58030 (I/O error), 25006 (read-only
 * transaction: a standby, or `default_transaction_read_only`).
 */
function unreachableSqlState(code: string): boolean {
  return code.startsWith('08') || code.startsWith('53') || ['57P01', '57P02', '57P03', '57014', '58030', '25006'].includes(code);
}

/** The errno or SQLSTATE of `err` when it names an outage; undefined otherwise. */
export function outageCode(err: unknown): string | undefined {
  if (!(err instanceof Error)) return undefined;
  const code = (err as { code?: unknown }).code;
  if (typeof code === 'string' && (UNREACHABLE_ERRNO.has(code) || UNWRITABLE_ERRNO.has(code)
    || (/^[0-9A-Z]{5}$/.test(code) && unreachableSqlState(code)))) return code;
  // pg's own messages when the socket goes away, no connection comes within the connect
  // timeout, or no answer within the query timeout (IKI_DB_QUERY_TIMEOUT_MS).
  return /Connection terminated|timeout exceeded when trying to connect|Client has encountered a connection error|is not currently accepting connections|the database system is (starting up|shutting down|in recovery mode)|Query read timeout|timeout expired/i
    .test(err.message) ? 'timeout' : undefined;
}

/** Whether `err` says the store cannot be reached or written now. */
export function isUnreachable(err: unknown): boolean {
  return outageCode(err) !== undefined;
}

/**
 * The `STORAGE_UNAVAILABLE` answer (503, `Retry-After`). `cause` (an errno, a SQLSTATE or a
 * store's own short code, never a path or host) is kept (as `outage`) for errors.ts's log line, not the body.
 */
export function storageUnavailable(cause?: string): ApiError {
  const err = new ApiError('STORAGE_UNAVAILABLE', 'storage is unavailable (unreachable, not answering, full or read-only); '
    + 'retry shortly', { retryAfterSeconds: OUTAGE_RETRY_SECONDS }, { 'Retry-After': String(OUTAGE_RETRY_SECONDS) });
  if (cause !== undefined) Object.defineProperty(err, 'outage', { value: cause, enumerable: false });
  return err;
}

/** `STORAGE_UNAVAILABLE` for an outage; `err` unchanged otherwise. */
export function unavailable(err: unknown): unknown {
  if (err instanceof ApiError) return err;
  // The answer as it crossed from a worker thread (worker-pool/protocol.ts `fromWire`) keeps its code only.
  if (err instanceof Error && (err as { code?: unknown }).code === 'STORAGE_UNAVAILABLE') return storageUnavailable('worker');
  const code = outageCode(err);
  return code === undefined ? err : storageUnavailable(code);
}

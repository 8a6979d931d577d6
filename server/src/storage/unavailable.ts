/**
 * Storage outages as honest answers (issue 16 item 5): a database or blob store that cannot be
 * reached is `STORAGE_UNAVAILABLE` (503 with `Retry-After`), not an internal error, since the
 * request may well succeed a little later. Anything else passes through unchanged.
 */
import { ApiError } from '../errors.js';

/** Seconds a client is asked to wait before retrying after an outage. */
export const OUTAGE_RETRY_SECONDS = 5;

/** Socket and file-system errors that mean "cannot reach the store now". */
const UNREACHABLE_ERRNO = new Set([
  'ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'ENOTFOUND', 'EAI_AGAIN', 'EPIPE',
  'EHOSTDOWN', 'ENOTCONN', 'ESTALE', 'EIO',
]);

/**
 * SQLSTATEs of a server that is unreachable or refusing for now: class 08 (connection
 * exception), 57P01-57P03 (shutting down, crash recovery, cannot connect now), 53300 (too many
 * connections).
 */
function unreachableSqlState(code: string): boolean {
  return code.startsWith('08') || code === '57P01' || code === '57P02' || code === '57P03' || code === '53300';
}

/** Whether `err` says the store cannot be reached now. */
export function isUnreachable(err: unknown): boolean {
  if (!(err instanceof Error)) return false;
  const code = (err as { code?: unknown }).code;
  if (typeof code === 'string' && (UNREACHABLE_ERRNO.has(code) || (/^[0-9A-Z]{5}$/.test(code) && unreachableSqlState(code)))) {
    return true;
  }
  // pg's own messages when the socket goes away or no connection comes within the timeout.
  return /Connection terminated|timeout exceeded when trying to connect|Client has encountered a connection error|is not currently accepting connections|the database system is (starting up|shutting down|in recovery mode)/i
    .test(err.message);
}

/** The `STORAGE_UNAVAILABLE` answer: 503, retry after `OUTAGE_RETRY_SECONDS`. */
export function storageUnavailable(): ApiError {
  return new ApiError('STORAGE_UNAVAILABLE', 'the database or blob store cannot be reached; retry shortly',
    { retryAfterSeconds: OUTAGE_RETRY_SECONDS }, { 'Retry-After': String(OUTAGE_RETRY_SECONDS) });
}

/** `STORAGE_UNAVAILABLE` for an unreachable store; `err` unchanged otherwise. */
export function unavailable(err: unknown): unknown {
  if (err instanceof ApiError) return err;
  // The answer as it crossed from a worker thread (worker-pool/protocol.ts `fromWire`) keeps its code only.
  if (err instanceof Error && (err as { code?: unknown }).code === 'STORAGE_UNAVAILABLE') return storageUnavailable();
  return isUnreachable(err) ? storageUnavailable() : err;
}

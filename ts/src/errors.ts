/**
 * The TS side of the one error model (STYLE.md "One error model").
 *
 * The WASM adapter throws a plain JS `Error` carrying `code` (a stable
 * SCREAMING_SNAKE string from docs/format.md section 11), `message` and a
 * small `details` object. {@link fromWasmError} turns that into an
 * {@link IkiError}; anything else (a trap, a bug) is passed through as-is so
 * it is never mistaken for an expected, documented failure.
 */
import { ERROR_CODES, type IkiErrorCode } from './codes.js';

export type { IkiErrorCode } from './codes.js';

/** Non-secret context of an error, such as `{ limit, value, max }`. */
export type IkiErrorDetails = Record<string, string | number>;

/** An expected, documented failure of an iki operation. */
export class IkiError extends Error {
  /** Stable code; messages may change, codes never do. */
  readonly code: IkiErrorCode;
  /** Non-secret context, when the error has any. */
  readonly details?: IkiErrorDetails;

  constructor(code: IkiErrorCode, message: string, details?: IkiErrorDetails, options?: ErrorOptions) {
    super(message, options);
    this.name = 'IkiError';
    this.code = code;
    if (details !== undefined) this.details = details;
  }
}

/** Whether `value` is one of the stable error codes. */
export function isIkiErrorCode(value: unknown): value is IkiErrorCode {
  return typeof value === 'string' && (ERROR_CODES as readonly string[]).includes(value);
}

/** Keeps only string and finite-number entries of a `details` object. */
function readDetails(value: unknown): IkiErrorDetails | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const details: IkiErrorDetails = {};
  for (const [key, v] of Object.entries(value)) {
    if (typeof v === 'string' || (typeof v === 'number' && Number.isFinite(v))) details[key] = v;
  }
  return Object.keys(details).length > 0 ? details : undefined;
}

/**
 * Converts what a WASM export threw into the error callers should see: an
 * {@link IkiError} when it carries a known code, otherwise the original
 * `Error` (or a new `Error` describing a non-error value).
 */
export function fromWasmError(thrown: unknown): Error {
  if (typeof thrown === 'object' && thrown !== null && 'code' in thrown) {
    const { code, message, details } = thrown as { code: unknown; message?: unknown; details?: unknown };
    if (isIkiErrorCode(code)) {
      const text = typeof message === 'string' && message !== '' ? message : code.toLowerCase();
      return new IkiError(code, text, readDetails(details), { cause: thrown });
    }
  }
  if (thrown instanceof Error) return thrown;
  return new Error(`iki: WebAssembly threw a non-error value: ${String(thrown)}`);
}

/** Runs a WASM call and rethrows its failure through {@link fromWasmError}. */
export function callWasm<T>(fn: () => T): T {
  try {
    return fn();
  } catch (thrown) {
    throw fromWasmError(thrown);
  }
}

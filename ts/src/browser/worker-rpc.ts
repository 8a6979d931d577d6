/**
 * The contract between a page and a Web Worker (STYLE.md "Browser modules": heavy work in a
 * worker with its own WASM instance, behind a typed RPC). Comlink carries the calls; this
 * module holds what both sides share: the shape of a task, the endpoint the worker exposes,
 * and errors as plain data, because structured cloning keeps only an `Error`'s name and
 * message and the pages need an {@link ApiProblem}'s status and request id or an
 * `IkiError`'s code on the other side.
 *
 * `worker-host.ts` is the worker's side, `worker-client.ts` the page's.
 */
import { IkiError, isIkiErrorCode, type IkiErrorDetails } from '../errors.js';
import { ApiProblem, type ApiProblemFields } from './api.js';
import { DamagedCopy } from './package-assembler.js';

/** What a task gets besides its arguments. */
export interface TaskContext<P> {
  /** Aborted when the page cancels the task or closes the worker. */
  readonly signal: AbortSignal;
  /** Reports progress to the page (one message per call: throttle fast loops). */
  progress(update: P): void;
  /**
   * Moves these buffers to the page with the result instead of copying them; they are
   * detached (empty) in the worker afterwards.
   */
  transfer(buffers: readonly Transferable[]): void;
}

/** A function the worker runs for the page: arguments and result are structured-cloneable. */
export type Task<A, R, P = never> = (args: A, context: TaskContext<P>) => Promise<R>;

/** The tasks one worker offers, by name. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type TaskMap = Record<string, Task<any, any, any>>;

export type TaskArgs<T> = T extends Task<infer A, unknown, unknown> ? A : never;
export type TaskResult<T> = T extends Task<never, infer R, unknown> ? R : never;
export type TaskProgress<T> = T extends Task<never, unknown, infer P> ? P : never;

/** An error as plain data. */
export interface WireError {
  name: string;
  message: string;
  code?: string;
  details?: unknown;
  /** The fields of an {@link ApiProblem}. */
  problem?: ApiProblemFields;
  cause?: WireError;
}

/** A task's outcome on the wire: thrown errors travel as values, see {@link WireError}. */
export type WireOutcome = { ok: true; value: unknown } | { ok: false; error: WireError };

/** What a worker exposes through Comlink (see `worker-host.ts`). */
export interface TaskEndpoint {
  /** Loads the worker's own WASM instance from `wasmUrl`; resolves when it is ready. */
  init(wasmUrl: string): Promise<void>;
  run(name: string, id: number, args: unknown, progress: ((update: unknown) => void) | undefined): Promise<WireOutcome>;
  cancel(id: number): void;
}

/** `err` as plain data (at most two levels of `cause`). */
export function errorToWire(err: unknown, depth = 0): WireError {
  if (!(err instanceof Error) && !(typeof DOMException !== 'undefined' && err instanceof DOMException)) {
    return { name: 'Error', message: String(err) };
  }
  const error = err as Error & { code?: unknown; details?: unknown };
  const wire: WireError = { name: error.name, message: error.message };
  if (typeof error.code === 'string') wire.code = error.code;
  if (err instanceof ApiProblem) wire.problem = err.toJSON();
  else if (error.details !== undefined) wire.details = structuredCloneable(error.details);
  if (error.cause !== undefined && depth < 2) wire.cause = errorToWire(error.cause, depth + 1);
  return wire;
}

/** `value` if it survives structured cloning, else undefined (details are best effort). */
function structuredCloneable(value: unknown): unknown {
  try {
    return structuredClone(value);
  } catch {
    return undefined;
  }
}

/** The error `wire` describes, as the class the page checks for. */
export function errorFromWire(wire: WireError): Error {
  const cause = wire.cause === undefined ? undefined : errorFromWire(wire.cause);
  const options = cause === undefined ? undefined : { cause };
  switch (wire.name) {
    case 'ApiProblem':
      if (wire.problem !== undefined) return new ApiProblem(wire.problem);
      break;
    case 'IkiError':
      if (isIkiErrorCode(wire.code)) return new IkiError(wire.code, wire.message, wire.details as IkiErrorDetails | undefined, options);
      break;
    case 'DamagedCopy':
      return new DamagedCopy(wire.message, options);
    case 'AbortError':
      return new DOMException(wire.message, 'AbortError');
    default:
      break;
  }
  const error = new Error(wire.message, options) as Error & { code?: string; details?: unknown };
  error.name = wire.name;
  if (wire.code !== undefined) error.code = wire.code;
  // Another class's context (a ProjectError names the account a file is for).
  if (wire.details !== undefined) error.details = wire.details;
  return error;
}

/** The error a cancelled or closed task rejects with. */
export function abortError(message = 'the work was cancelled'): DOMException {
  return new DOMException(message, 'AbortError');
}

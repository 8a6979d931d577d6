/**
 * When the worker pool (`pool.ts`) replaces a worker for its memory (issue 28 item 5).
 * WebAssembly memory grows and never shrinks, so a worker that once checked a large master or
 * ran an identify keeps that high-water mark for the life of the process; the pool replaces
 * such a worker with a fresh one once it is idle (IKI_WORKER_RECYCLE_MB,
 * IKI_WORKER_RECYCLE_IDLE_SECONDS).
 */
import type { Logger } from '../../logger.js';

/** When a worker is replaced for its memory (issue 28 item 5). */
export interface RecycleOptions {
  /** A worker whose WebAssembly memory passed this many bytes is replaced once idle; 0: never. */
  recycleBytes: number;
  /** How long such a worker must be idle first. */
  recycleIdleMs: number;
  /** Where a recycle is logged. */
  logger?: Logger;
}

/** No recycling: the pool as it was (tests of other things). */
export const NO_RECYCLE: RecycleOptions = { recycleBytes: 0, recycleIdleMs: 0 };

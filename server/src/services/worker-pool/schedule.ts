/**
 * Which queued job the worker pool (`pool.ts`) starts next, and on which worker (issue 22
 * item 1). Pure arithmetic over counts, so that the rules are tested without threads.
 *
 * Two lanes. Interactive jobs (Argon2id for sign-in, sign-up and password changes: about
 * 0.2 s of CPU each) never wait behind bulk jobs (copies, upload checks, identify, which run
 * for seconds and, for a copy, for as long as its client reads): each worker keeps
 * `INTERACTIVE_PER_WORKER` places that only interactive jobs may take, and the queue serves
 * interactive jobs first. Bulk jobs share the rest under three caps:
 *
 * - a worker runs at most `JOBS_PER_WORKER` bulk jobs (their streams interleave);
 * - copies together take at most `copies` of the pool's bulk places, so an upload check or an
 *   identify always finds one even while every buyer downloads;
 * - one owner (the account a job works for: the licensee of a copy, the seller of an upload
 *   check or an identify) runs at most `perOwner`
 *   bulk jobs in the whole pool, whatever its per-account limits in the database allow, and
 *   among the owners whose jobs wait, the one running the fewest goes first (fair queueing:
 *   an owner with many queued jobs cannot push another owner's single job back).
 */
import type { JobSpec } from './protocol.js';

/** Bulk jobs one worker runs at once before further ones queue. */
export const JOBS_PER_WORKER = 4;
/**
 * Places per worker kept for interactive jobs only. Two: a burst of sign-ins shares a core
 * with the copies already on it rather than queueing, and at ~0.2 s each (OWASP's 19 MiB,
 * t=2) two per core answer ten sign-ins a second.
 */
export const INTERACTIVE_PER_WORKER = 2;

/** The lane of a job. */
export type Lane = 'interactive' | 'bulk';

/** Password hashing and checks are interactive; everything else is bulk. */
export function laneOf(op: JobSpec['op']): Lane {
  return op === 'hash' || op === 'check' ? 'interactive' : 'bulk';
}

/** The pool-wide caps of bulk jobs for `workers` workers. */
export interface Capacity {
  /** Bulk places of the whole pool. */
  bulk: number;
  /** Of those, the most copies may take: all but one per worker (at least one). */
  copies: number;
  /** Bulk jobs one owner may run at once: a quarter of the bulk places (at least one). */
  perOwner: number;
}

export function capacity(workers: number): Capacity {
  const bulk = workers * JOBS_PER_WORKER;
  return { bulk, copies: Math.max(1, bulk - workers), perOwner: Math.max(1, Math.floor(bulk / 4)) };
}

/** A job waiting for a place. */
export interface Waiting {
  lane: Lane;
  op: JobSpec['op'];
  /** The account the job works for; jobs without one are not capped per owner. */
  owner: string | undefined;
}

/** What one ready worker runs now. */
export interface WorkerLoad {
  bulk: number;
  interactive: number;
}

/** What the pool runs now, over all workers. */
export interface PoolLoad {
  copies: number;
  /** Running bulk jobs per owner. */
  byOwner: ReadonlyMap<string, number>;
}

/** The least loaded worker that has a place in `lane`, or -1. */
function workerFor(lane: Lane, workers: readonly WorkerLoad[]): number {
  let best = -1;
  let bestLoad = Number.POSITIVE_INFINITY;
  workers.forEach((w, i) => {
    const total = w.bulk + w.interactive;
    const fits = lane === 'interactive'
      ? total < JOBS_PER_WORKER + INTERACTIVE_PER_WORKER
      : w.bulk < JOBS_PER_WORKER && total < JOBS_PER_WORKER + INTERACTIVE_PER_WORKER;
    if (fits && total < bestLoad) {
      best = i;
      bestLoad = total;
    }
  });
  return best;
}

/**
 * The next job to start and its worker: the first interactive job that has a place, else the
 * bulk job within the caps whose owner runs the fewest (the earliest among equals).
 */
export function pick(queue: readonly Waiting[], workers: readonly WorkerLoad[], load: PoolLoad,
  cap: Capacity): { job: number; worker: number } | undefined {
  const interactive = queue.findIndex((w) => w.lane === 'interactive');
  if (interactive >= 0) {
    const worker = workerFor('interactive', workers);
    if (worker >= 0) return { job: interactive, worker };
  }
  const worker = workerFor('bulk', workers);
  if (worker < 0) return undefined;
  let job = -1;
  let fewest = Number.POSITIVE_INFINITY;
  queue.forEach((w, i) => {
    if (w.lane !== 'bulk' || (w.op === 'copy' && load.copies >= cap.copies)) return;
    const running = w.owner === undefined ? 0 : load.byOwner.get(w.owner) ?? 0;
    if (w.owner !== undefined && running >= cap.perOwner) return;
    if (running < fewest) {
      job = i;
      fewest = running;
    }
  });
  return job < 0 ? undefined : { job, worker };
}

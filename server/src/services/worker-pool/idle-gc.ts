/**
 * A full garbage collection when the service goes idle after work (issue 28 item 5). A master
 * upload or a license copy leaves dead `Buffer`s behind (request bodies, chunks on their way to
 * and from the workers, database rows). V8 schedules collections by allocation, so an instance
 * that goes idle after a large job never collects them: their memory stays resident until
 * traffic resumes. The pool (`pool.ts`) calls {@link collectGarbage} on the main thread and has
 * each idle worker do the same, once per idle period, after the idle delay of recycling
 * (IKI_WORKER_RECYCLE_IDLE_SECONDS). Measured in bench/RESULTS.md ("Workers give memory back").
 *
 * Node exposes `gc()` only with `--expose-gc`; the flag is set at run time and the function
 * taken from a fresh context, as jest's leak detector does. A collection of the main thread's
 * heap costs tens of milliseconds, once per idle period, when no request is waiting.
 */
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

let gc: (() => void) | null | undefined;

/** This thread's full collection, or null where it cannot be had. */
function collector(): (() => void) | null {
  if (gc !== undefined) return gc;
  try {
    setFlagsFromString('--expose-gc');
    const found = runInNewContext('gc') as unknown;
    gc = typeof found === 'function' ? (found as () => void) : null;
  } catch {
    gc = null;
  }
  return gc;
}

/** Runs a full collection of this thread's heap; false when none is available. */
export function collectGarbage(): boolean {
  const run = collector();
  if (run === null) return false;
  run();
  return true;
}

/**
 * One collection per idle period: {@link IdleCollector.arm} when the last job ended (restarts
 * the delay), {@link IdleCollector.disarm} when a job starts; `collect` runs once the delay
 * passed with no job in between.
 */
export class IdleCollector {
  private timer: NodeJS.Timeout | undefined;
  /** Collections run so far. */
  count = 0;

  constructor(private readonly delayMs: number, private readonly collect: () => void) {}

  arm(): void {
    clearTimeout(this.timer);
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.count += 1;
      this.collect();
    }, this.delayMs);
    this.timer.unref();
  }

  disarm(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
  }
}

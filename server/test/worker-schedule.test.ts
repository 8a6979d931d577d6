/**
 * The worker pool's scheduling rules (issue 22 item 1, `services/worker-pool/schedule.ts`),
 * without threads: password hashing takes a place even when bulk jobs fill every bulk place,
 * and goes first; copies never take every bulk place; one owner runs at most its share; the
 * owner running the fewest jobs goes first, whatever the order of the queue.
 */
import { describe, expect, it } from 'vitest';
import {
  capacity, INTERACTIVE_PER_WORKER, JOBS_PER_WORKER, pick, type Waiting, type WorkerLoad,
} from '../src/services/worker-pool/schedule.js';

const copy = (owner?: string): Waiting => ({ lane: 'bulk', op: 'copy', owner });
const verify: Waiting = { lane: 'bulk', op: 'verify', owner: undefined };
const hash: Waiting = { lane: 'interactive', op: 'hash', owner: undefined };
const idle = (n: number): WorkerLoad[] => Array.from({ length: n }, () => ({ bulk: 0, interactive: 0 }));
const none = { copies: 0, byOwner: new Map<string, number>() };

describe('the worker pool schedule', () => {
  it('sizes the caps from the worker count', () => {
    expect(capacity(2)).toEqual({ bulk: 8, copies: 6, perOwner: 2 });
    expect(capacity(1)).toEqual({ bulk: 4, copies: 3, perOwner: 1 });
    expect(capacity(8)).toEqual({ bulk: 32, copies: 24, perOwner: 8 });
  });

  it('starts a password hash while bulk jobs fill every bulk place, and before waiting bulk jobs', () => {
    const full: WorkerLoad[] = [{ bulk: JOBS_PER_WORKER, interactive: 0 }, { bulk: JOBS_PER_WORKER, interactive: 1 }];
    expect(pick([verify, hash], full, { copies: 6, byOwner: new Map() }, capacity(2))).toEqual({ job: 1, worker: 0 });
    // A bulk job finds no place on full workers.
    expect(pick([verify], full, none, capacity(2))).toBeUndefined();
    // The interactive places are bounded too.
    const busy: WorkerLoad[] = [{ bulk: JOBS_PER_WORKER, interactive: INTERACTIVE_PER_WORKER }];
    expect(pick([hash], busy, none, capacity(1))).toBeUndefined();
    // Interactive jobs may use idle bulk places: the worker is not held back.
    expect(pick([hash], [{ bulk: 0, interactive: INTERACTIVE_PER_WORKER }], none, capacity(1))).toEqual({ job: 0, worker: 0 });
  });

  it('keeps copies below the whole pool: an upload check still starts', () => {
    const load: WorkerLoad[] = [{ bulk: 3, interactive: 0 }, { bulk: 3, interactive: 0 }];
    const running = { copies: 6, byOwner: new Map([['a', 2], ['b', 2], ['c', 2]]) };
    expect(pick([copy('d')], load, running, capacity(2))).toBeUndefined();
    expect(pick([copy('d'), verify], load, running, capacity(2))).toEqual({ job: 1, worker: 0 });
    expect(pick([copy('d')], load, { ...running, copies: 5 }, capacity(2))).toEqual({ job: 0, worker: 0 });
  });

  it('caps one owner at its share and serves the owner running the fewest first', () => {
    const running = { copies: 2, byOwner: new Map([['a', 2]]) };
    // Owner a is at its cap: its copies wait although places are free.
    expect(pick([copy('a'), copy('a')], idle(2), running, capacity(2))).toBeUndefined();
    // Owner b's later job goes before a's earlier ones.
    expect(pick([copy('a'), copy('a'), copy('b')], idle(2), running, capacity(2))).toEqual({ job: 2, worker: 0 });
    // Among owners below the cap, the one running fewer goes first; the earliest among equals.
    const some = { copies: 1, byOwner: new Map([['a', 1]]) };
    expect(pick([copy('a'), copy('b'), copy('c')], idle(2), some, capacity(2))).toEqual({ job: 1, worker: 0 });
  });

  it('puts a job on the least loaded worker', () => {
    expect(pick([copy('a')], [{ bulk: 2, interactive: 0 }, { bulk: 1, interactive: 0 }], none, capacity(2))?.worker).toBe(1);
  });
});

/**
 * The worker pool (issue 13 item 1): `size` worker threads (IKI_WORKERS, default one per
 * core), each with its own WebAssembly instance and service keys (`crypto-worker.ts`). Jobs go
 * to the worker with the fewest running; further jobs wait in a queue (`queued()`, a metric).
 * `schedule.ts` decides which waiting job starts next (issue 22 item 1): password hashing in
 * a lane of its own that bulk jobs cannot fill, copies capped below the whole pool, and a cap
 * and fair turns per account. A worker that dies fails its running jobs and is replaced;
 * `healthy()` is false until the replacement is up.
 *
 * Memory (issue 28 item 5): WebAssembly memory never shrinks, so a worker keeps the high-water
 * mark of its largest job. Each worker reports its memory after every job; one past
 * `recycleBytes` is recycled once it has been idle for `recycleIdleMs`: a fresh worker is
 * started first, and only when it is up does the old one stop taking jobs and exit (after the
 * jobs it still runs, if one arrived meanwhile). No job fails and capacity has no gap.
 *
 * Garbage (issue 28 item 5, idle-gc.ts): when recycling is on, the pool going idle after work
 * (no job running or waiting) for `recycleIdleMs` collects garbage on the main thread and in
 * every worker, once per idle period, so the dead buffers of a large job are given back.
 *
 * Streams: the worker pulls input chunks (`sources[stream]`) one at a time and the pool reads
 * the next only on such a pull; output pieces are acknowledged as the consumer takes them
 * (protocol.ts). Neither side ever holds a whole file.
 */
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import type { RootSecret } from '../../secrets.js';
import { NO_RECYCLE, type RecycleOptions } from './recycle.js';
import { collectGarbage, IdleCollector } from './idle-gc.js';
import { fromWire, transferable, type FromWorker, type JobSpec, type ToWorker, type WorkerInit } from './protocol.js';
import { capacity, laneOf, pick, type Capacity, type Lane, type WorkerLoad } from './schedule.js';

export { JOBS_PER_WORKER } from './schedule.js';

/** How long a worker may take to free its keys and exit before it is terminated. */
const CLOSE_TIMEOUT_MS = 2000;

/**
 * The compiled worker script. Run from `dist/` it sits beside this file; run from `src/` (the
 * tests, through vitest) it is the compiled one in `dist/`, which `make build` writes first.
 */
function workerScript(): URL {
  const here = new URL('./crypto-worker.js', import.meta.url);
  if (import.meta.url.endsWith('.js')) return here;
  const built = new URL(here.href.replace('/server/src/', '/server/dist/'));
  if (!existsSync(fileURLToPath(built))) throw new Error(`the worker pool needs the compiled ${built.pathname}: run make build`);
  return built;
}

interface Pending {
  spec: JobSpec;
  lane: Lane;
  /** The account the job works for (fair queueing, `schedule.ts`). */
  owner: string | undefined;
  sources: (() => AsyncIterable<Uint8Array>)[];
  onOut?: (chunk: Uint8Array) => void;
  resolve(value: unknown): void;
  reject(err: Error): void;
}

interface Running extends Pending {
  id: number;
  slot: Slot;
  iterators: Map<number, AsyncIterator<Uint8Array>>;
  finished: boolean;
}

interface Slot {
  worker: Worker;
  ready: boolean;
  jobs: Map<number, Running>;
  /** The worker's WebAssembly memory in bytes, as it last reported. */
  memory: number;
  /** Idle past the memory limit: recycled when this fires. */
  idleTimer?: NodeJS.Timeout;
  /** Its replacement is starting. */
  replacing: boolean;
  /** Replaced: takes no more jobs, exits once its running jobs are done. */
  retiring: boolean;
}


/** A running job as its caller sees it. */
export interface JobHandle {
  /** Settles with the job's result. */
  result: Promise<unknown>;
  /** Acknowledges one output piece (the consumer took it). */
  ack(): void;
  /** Stops the job (the consumer went away); its sources are closed. */
  cancel(): void;
}

export class WorkerPool {
  private readonly slots: Slot[] = [];
  private readonly queue: { pending: Pending; handle: (r: Running) => void }[] = [];
  private nextId = 1;
  private closing = false;
  private readonly script = workerScript();
  private readonly cap: Capacity;
  private recycled = 0;
  /** The idle collection (idle-gc.ts): here and in every worker. */
  private readonly idleGc: IdleCollector;

  private constructor(private readonly init: () => WorkerInit, readonly size: number,
    private readonly recycling: RecycleOptions) {
    this.cap = capacity(size);
    this.idleGc = new IdleCollector(recycling.recycleIdleMs, () => {
      for (const slot of this.slots) if (slot.ready) this.post(slot, { t: 'gc' });
      collectGarbage();
    });
  }

  /** Starts `size` workers with keys derived from `root` for `service`; resolves when all are up. */
  static async start(root: RootSecret, service: string, size: number,
    recycling: RecycleOptions = NO_RECYCLE): Promise<WorkerPool> {
    const pool = new WorkerPool(() => ({ root: root.expose(), service }), size, recycling);
    try {
      await Promise.all(Array.from({ length: size }, () => pool.spawn()));
    } catch (err) {
      await pool.close();
      throw err;
    }
    return pool;
  }

  /** Jobs waiting for a worker. */
  queued(): number {
    return this.queue.length;
  }

  /** Jobs running on the workers. */
  running(): number {
    return this.slots.reduce((n, s) => n + s.jobs.size, 0);
  }

  /** Every worker is up (a retiring one has its replacement up). */
  healthy(): boolean {
    return !this.closing && this.serving().length >= this.size;
  }

  /** Workers replaced for their memory since the start (a metric). */
  recycles(): number {
    return this.recycled;
  }

  /** Idle collections run since the start (idle-gc.ts). */
  idleGcs(): number {
    return this.idleGc.count;
  }

  /** WebAssembly memory of the serving workers, in bytes, as each last reported. */
  memory(): number[] {
    return this.serving().map((s) => s.memory);
  }

  /** The workers that take jobs: up and not retiring. */
  private serving(): Slot[] {
    return this.slots.filter((s) => s.ready && !s.retiring);
  }

  /** Running jobs of one lane. */
  runningIn(lane: Lane): number {
    return this.slots.reduce((n, s) => n + [...s.jobs.values()].filter((j) => j.lane === lane).length, 0);
  }

  /**
   * Runs `spec` for `owner` (the account it works for, when there is one); `sources[i]` is
   * opened on the worker's first pull of stream i.
   */
  run(spec: JobSpec, sources: (() => AsyncIterable<Uint8Array>)[] = [], onOut?: (chunk: Uint8Array) => void,
    owner?: string): JobHandle {
    let running: Running | undefined;
    let entry: { pending: Pending; handle: (r: Running) => void } | undefined;
    const result = new Promise<unknown>((resolve, reject) => {
      const pending: Pending = { spec, lane: laneOf(spec.op), owner, sources, resolve, reject,
        ...(onOut === undefined ? {} : { onOut }) };
      entry = { pending, handle: (r: Running) => { running = r; } };
      if (this.closing) reject(new Error('the worker pool is closed'));
      else this.queue.push(entry);
      this.dispatch();
    });
    return {
      result,
      ack: () => { if (running !== undefined && !running.finished) this.post(running.slot, { t: 'ack', id: running.id }); },
      cancel: () => {
        if (running !== undefined) {
          this.cancel(running);
          return;
        }
        const i = entry === undefined ? -1 : this.queue.indexOf(entry);
        if (i >= 0) {
          this.queue.splice(i, 1);
          entry?.pending.reject(new Error('job cancelled'));
        }
      },
    };
  }

  /** Stops every worker (each frees its keys first); running jobs fail. */
  async close(): Promise<void> {
    this.closing = true;
    this.idleGc.disarm();
    for (const q of this.queue.splice(0)) q.pending.reject(new Error('the worker pool is closed'));
    await Promise.all(this.slots.splice(0).map(async (slot) => {
      clearTimeout(slot.idleTimer);
      this.failAll(slot, new Error('the worker pool is closed'));
      const exited = new Promise<void>((resolve) => slot.worker.once('exit', () => resolve()));
      if (!slot.ready) {
        await slot.worker.terminate();
        return;
      }
      this.post(slot, { t: 'close' });
      const timer = setTimeout(() => void slot.worker.terminate(), CLOSE_TIMEOUT_MS);
      await exited;
      clearTimeout(timer);
    }));
  }

  private spawn(): Promise<void> {
    const init = this.init();
    const worker = new Worker(this.script, { workerData: init });
    // workerData was cloned into the worker by the constructor: this copy goes at once.
    init.root.fill(0);
    const slot: Slot = { worker, ready: false, jobs: new Map(), memory: 0, replacing: false, retiring: false };
    this.slots.push(slot);
    return new Promise<void>((resolve, reject) => {
      worker.on('message', (message: FromWorker) => {
        if (message.t === 'ready') {
          slot.ready = true;
          resolve();
          this.dispatch();
        } else if (message.t === 'failed') {
          reject(fromWire(message.error));
        } else if (message.t === 'memory') {
          slot.memory = message.bytes;
          this.considerRecycle(slot);
        } else {
          this.onMessage(slot, message);
        }
      });
      worker.on('error', (err) => {
        reject(err);
        this.failAll(slot, err);
      });
      worker.on('exit', () => {
        clearTimeout(slot.idleTimer);
        const i = this.slots.indexOf(slot);
        if (i >= 0) this.slots.splice(i, 1);
        this.failAll(slot, new Error('a crypto worker stopped'));
        reject(new Error('a crypto worker stopped while starting'));
        // A retiring worker was replaced already; one whose replacement is starting gets that one.
        if (!this.closing && slot.ready && !slot.retiring && !slot.replacing) void this.spawn().catch(() => {});
      });
    });
  }

  /** Starts waiting jobs while `schedule.ts` finds a place for one. */
  private dispatch(): void {
    while (this.queue.length > 0) {
      const ready = this.serving();
      const loads: WorkerLoad[] = ready.map((s) => {
        const jobs = [...s.jobs.values()];
        const interactive = jobs.filter((j) => j.lane === 'interactive').length;
        return { interactive, bulk: jobs.length - interactive };
      });
      const byOwner = new Map<string, number>();
      let copies = 0;
      for (const s of ready) {
        for (const j of s.jobs.values()) {
          if (j.spec.op === 'copy') copies += 1;
          if (j.lane === 'bulk' && j.owner !== undefined) byOwner.set(j.owner, (byOwner.get(j.owner) ?? 0) + 1);
        }
      }
      const next = pick(this.queue.map(({ pending: p }) => ({ lane: p.lane, op: p.spec.op, owner: p.owner })), loads, { copies, byOwner }, this.cap);
      const slot = next === undefined ? undefined : ready[next.worker];
      if (next === undefined || slot === undefined) return;
      const [{ pending, handle }] = this.queue.splice(next.job, 1) as [{ pending: Pending; handle: (r: Running) => void }];
      this.idleGc.disarm();
      const job: Running = { ...pending, id: this.nextId++, slot, iterators: new Map(), finished: false };
      slot.jobs.set(job.id, job);
      handle(job);
      this.post(slot, { t: 'job', id: job.id, spec: job.spec });
    }
  }

  private post(slot: Slot, message: ToWorker, transfer: ArrayBuffer[] = []): void {
    slot.worker.postMessage(message, transfer);
  }

  private onMessage(slot: Slot, message: Exclude<FromWorker, { t: 'ready' | 'failed' | 'memory' }>): void {
    const job = slot.jobs.get(message.id);
    if (job === undefined) return;
    switch (message.t) {
      case 'pull':
        void this.pull(job, message.stream);
        return;
      case 'out':
        job.onOut?.(message.chunk);
        return;
      case 'result':
        this.finish(job);
        job.resolve(message.value);
        return;
      case 'error':
        this.finish(job);
        job.reject(fromWire(message.error));
    }
  }

  /** Reads the next chunk of one of a job's sources and sends it (or the end) to the worker. */
  private async pull(job: Running, stream: number): Promise<void> {
    try {
      let it = job.iterators.get(stream);
      if (it === undefined) {
        const source = job.sources[stream];
        if (source === undefined) throw new Error(`job has no source ${stream}`);
        it = source()[Symbol.asyncIterator]();
        job.iterators.set(stream, it);
      }
      const next = await it.next();
      if (job.finished) return;
      if (next.done === true) {
        this.post(job.slot, { t: 'end', id: job.id, stream });
        return;
      }
      const chunk = transferable(next.value);
      this.post(job.slot, { t: 'chunk', id: job.id, stream, chunk }, [chunk.buffer as ArrayBuffer]);
    } catch (err) {
      if (!job.finished) {
        this.post(job.slot, { t: 'end', id: job.id, stream, error: { name: 'Error', message: 'source failed' } });
        // The source's own error is what the caller should see (a cut upload, a storage fault).
        this.finish(job);
        job.reject(err instanceof Error ? err : new Error(String(err)));
      }
    }
  }

  private cancel(job: Running): void {
    if (job.finished) return;
    this.post(job.slot, { t: 'cancel', id: job.id });
    this.finish(job);
    job.reject(new Error('job cancelled'));
  }

  /** Marks a job done, closes its sources and frees its place. */
  private finish(job: Running): void {
    if (job.finished) return;
    job.finished = true;
    job.slot.jobs.delete(job.id);
    for (const it of job.iterators.values()) void it.return?.()?.catch?.(() => {});
    if (job.slot.retiring && job.slot.jobs.size === 0) this.retire(job.slot);
    else this.considerRecycle(job.slot);
    this.dispatch();
    // Idle after work: one collection once the idle delay passed (idle-gc.ts).
    if (this.recycling.recycleBytes > 0 && !this.closing && this.running() === 0 && this.queue.length === 0) this.idleGc.arm();
  }

  /** Starts the idle delay of a worker past the memory limit with no jobs. */
  private considerRecycle(slot: Slot): void {
    const { recycleBytes, recycleIdleMs } = this.recycling;
    if (recycleBytes <= 0 || this.closing || !slot.ready || slot.replacing || slot.retiring) return;
    if (slot.memory <= recycleBytes || slot.jobs.size > 0 || slot.idleTimer !== undefined) return;
    slot.idleTimer = setTimeout(() => {
      slot.idleTimer = undefined;
      void this.recycle(slot);
    }, recycleIdleMs);
    slot.idleTimer.unref();
  }

  /**
   * Replaces a worker still idle past the memory limit: the new one first, then the old one
   * stops taking jobs and exits once those it took meanwhile are done.
   */
  private async recycle(slot: Slot): Promise<void> {
    if (this.closing || slot.jobs.size > 0 || slot.replacing || slot.retiring || !this.slots.includes(slot)) return;
    slot.replacing = true;
    try {
      await this.spawn();
    } catch (err) {
      slot.replacing = false;
      this.recycling.logger?.warn('a crypto worker past its memory limit could not be replaced; it stays',
        { error: err instanceof Error ? err.message : String(err) });
      // The old one died while its replacement failed to start: start another as a crash would.
      if (!this.closing && !this.slots.includes(slot)) void this.spawn().catch(() => {});
      return;
    }
    if (this.closing || !this.slots.includes(slot)) return;
    slot.retiring = true;
    this.recycled += 1;
    this.recycling.logger?.info('recycled a crypto worker past its memory limit',
      { memoryMiB: Math.round(slot.memory / (1024 * 1024)), limitMiB: Math.round(this.recycling.recycleBytes / (1024 * 1024)),
        runningJobs: slot.jobs.size });
    if (slot.jobs.size === 0) this.retire(slot);
  }

  /** Lets a replaced worker with no jobs left free its keys and exit. */
  private retire(slot: Slot): void {
    const i = this.slots.indexOf(slot);
    if (i < 0) return;
    this.slots.splice(i, 1);
    this.post(slot, { t: 'close' });
    const timer = setTimeout(() => void slot.worker.terminate(), CLOSE_TIMEOUT_MS);
    timer.unref();
    slot.worker.once('exit', () => clearTimeout(timer));
  }

  private failAll(slot: Slot, err: Error): void {
    for (const job of [...slot.jobs.values()]) {
      this.finish(job);
      job.reject(err);
    }
  }
}

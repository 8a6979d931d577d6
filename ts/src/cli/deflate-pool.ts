/**
 * `iki pack`'s pool of deflate workers (`--jobs N`, by default the cores beyond the writer's, `defaultJobs`):
 * worker threads running deflate-worker.js, each with its own WASM instance of the module this
 * thread compiled (posted to them, so no worker compiles it again), deflate the
 * chunks of the folder's textures and files while the writer in this thread checks, seals and
 * signs them in order (container-write.ts with a `deflater`). Keys stay in this thread.
 *
 * The worker is the compiled `deflate-worker.js` beside this module (in `ts/dist/cli/`, and
 * beside `main.js` in the CLI tarball); running from the TypeScript sources (the tests), it is
 * the built one in `ts/dist/cli/` (`make build`).
 */
import { availableParallelism } from 'node:os';
import { Worker } from 'node:worker_threads';
import type { ChunkDeflater, DeflateChunkOptions } from '../deflate-chunk.js';
import { IkiError, isIkiErrorCode } from '../errors.js';
import { loadWasm, wasmModule } from '../wasm.js';

/** What a worker starts with: the compiled WASM module to instantiate. */
export interface PoolWorkerData { module: WebAssembly.Module }

/** A request to a worker: a copy of the chunk's bytes is moved to it. */
export interface PoolRequest { id: number; raw: Uint8Array; options: DeflateChunkOptions }

/** A worker's answer (`id` -1: the worker is ready). */
export type PoolReply =
  | { id: number; data: Uint8Array }
  | { id: number; error: { code: string; message: string } }
  | { id: -1 };

/** Most workers `--jobs` may ask for. */
export const MAX_JOBS = 64;

/**
 * The pool's size when `--jobs` is not given: one thread per core this process may use beyond
 * the one the writer needs (it checks, seals and signs every chunk), two on two cores, and none
 * on one. On two cores two deflate threads beside the writer were measured slower than
 * deflating in the main thread until a texture's chunks started deflating while the next
 * textures were decoded (deflate-ahead.ts); since then they are faster on real and on
 * incompressible textures (bench/RESULTS.md, "Master export: textures deflated ahead").
 */
export function defaultJobs(cores = availableParallelism()): number {
  return cores >= 2 ? Math.min(MAX_JOBS, Math.max(2, cores - 1)) : 1;
}

function workerUrl(): URL {
  const here = import.meta.url;
  return here.endsWith('.ts') ? new URL('../../dist/cli/deflate-worker.js', here) : new URL('./deflate-worker.js', here);
}

interface Waiting { resolve(stream: Uint8Array): void; reject(error: Error): void }

/** A started pool; `close()` ends its threads. */
export class DeflatePool implements ChunkDeflater {
  readonly concurrency: number;
  private readonly workers: Worker[];
  private readonly busy: number[];
  private readonly waiting = new Map<number, Waiting & { worker: number }>();
  private nextId = 0;
  private failure: Error | undefined;

  private constructor(workers: Worker[]) {
    this.workers = workers;
    this.concurrency = workers.length;
    this.busy = workers.map(() => 0);
    workers.forEach((worker, index) => {
      worker.on('message', (reply: PoolReply) => this.answer(index, reply));
      worker.on('error', (error) => this.fail(error));
      worker.on('exit', (code) => {
        if (code !== 0) this.fail(new Error(`a deflate worker stopped (exit code ${code})`));
      });
    });
  }

  /**
   * Starts `jobs` workers and waits until each has loaded WASM: this thread's compiled module
   * (loaded here first if it is not yet), instantiated by each worker without compiling it.
   */
  static async start(jobs: number): Promise<DeflatePool> {
    const workers: Worker[] = [];
    try {
      await loadWasm();
      const module = wasmModule();
      if (module === undefined) throw new IkiError('INVALID_STATE', 'the WebAssembly module was not compiled in this thread');
      const workerData: PoolWorkerData = { module };
      for (let i = 0; i < jobs; i += 1) workers.push(new Worker(workerUrl(), { workerData }));
      await Promise.all(workers.map((worker) => new Promise<void>((resolve, reject) => {
        const stopped = () => reject(new Error('a deflate worker stopped while starting'));
        worker.once('error', reject).once('exit', stopped).once('message', () => {
          worker.off('error', reject).off('exit', stopped);
          resolve();
        });
      })));
    } catch (error) {
      await Promise.all(workers.map((w) => w.terminate()));
      throw error;
    }
    return new DeflatePool(workers);
  }

  deflate(raw: Uint8Array, options: DeflateChunkOptions): Promise<Uint8Array> {
    if (this.failure !== undefined) return Promise.reject(this.failure);
    // The least busy worker (the first of equals).
    const index = this.busy.indexOf(Math.min(...this.busy));
    const id = this.nextId++;
    this.busy[index] = (this.busy[index] ?? 0) + 1;
    return new Promise((resolve, reject) => {
      this.waiting.set(id, { resolve, reject, worker: index });
      const own = raw.byteOffset === 0 && raw.byteLength === raw.buffer.byteLength ? raw : raw.slice();
      this.workers[index]?.postMessage({ id, raw: own, options } satisfies PoolRequest, [own.buffer as ArrayBuffer]);
    });
  }

  /** Ends the workers (chunks still in flight are rejected). */
  async close(): Promise<void> {
    this.fail(new Error('the deflate pool was closed'));
    await Promise.all(this.workers.map((w) => w.terminate()));
  }

  private answer(worker: number, reply: PoolReply): void {
    const waiting = this.waiting.get(reply.id);
    if (waiting === undefined) return;
    this.waiting.delete(reply.id);
    this.busy[worker] = (this.busy[worker] ?? 1) - 1;
    if ('error' in reply) {
      const { code, message } = reply.error;
      waiting.reject(isIkiErrorCode(code) ? new IkiError(code, message) : new Error(message));
    } else if ('data' in reply) {
      waiting.resolve(reply.data);
    }
  }

  private fail(error: Error): void {
    this.failure ??= error;
    for (const waiting of this.waiting.values()) waiting.reject(this.failure);
    this.waiting.clear();
  }
}

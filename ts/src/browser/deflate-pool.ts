/**
 * The seller page's deflate workers (issue 28 item 2): the export worker starts up to
 * `navigator.hardwareConcurrency` - 1 (at least one) module Web Workers, each with its own WASM instance, that
 * deflate the master's chunks ({@link deflateTasks}, `deflateChunk`) while the export worker's
 * writer checks, seals and signs them in order (container-write.ts with a `deflater`). The
 * workers get plaintext chunks only; the content key and the signing key stay where they were.
 * A copy of each chunk moves to a worker and its stream back (transferred, not copied again); the
 * writer checks the stream against the bytes it kept.
 */
import { deflateChunk, type ChunkDeflater, type DeflateChunkOptions } from '../deflate-chunk.js';
import { startModuleWorker } from './trusted-worker.js';
import { WorkerClient } from './worker-client.js';
import type { TaskContext } from './worker-rpc.js';

/** Most deflate workers one export starts, whatever the machine reports. */
export const MAX_DEFLATE_WORKERS = 16;

/** Where the deflate workers come from (server/web/workers/deflate.ts and the page's `.wasm`). */
export interface DeflateWorkersOption {
  workerUrl: string;
  wasmUrl: string;
  /** How many (default: {@link defaultDeflateWorkers}, at most {@link MAX_DEFLATE_WORKERS}). */
  workers?: number;
}

/** The one task of a deflate worker. */
async function deflateChunkTask(args: { raw: Uint8Array; options: DeflateChunkOptions }, context: TaskContext<never>): Promise<Uint8Array> {
  const data = deflateChunk(args.raw, args.options);
  context.transfer([data.buffer]);
  return data;
}

/** The tasks of a deflate worker (server/web/workers/deflate.ts exposes them). */
export const deflateTasks = { deflateChunk: deflateChunkTask };

/** Their types, for `WorkerClient<DeflateTasks>`. */
export type DeflateTasks = typeof deflateTasks;

/**
 * The number of workers an export starts by default: one per core beyond the one the export
 * worker's writer keeps busy (it checks, seals and signs every chunk), and one on two cores.
 */
export function defaultDeflateWorkers(cores = Math.floor(globalThis.navigator?.hardwareConcurrency ?? 1)): number {
  return Math.min(MAX_DEFLATE_WORKERS, Math.max(1, cores - 1));
}

/** A pool of deflate workers; `terminate()` ends them. */
export class WorkerDeflatePool implements ChunkDeflater {
  readonly concurrency: number;
  readonly #clients: WorkerClient<DeflateTasks>[];
  readonly #busy: number[];

  constructor(option: DeflateWorkersOption) {
    const count = Math.min(MAX_DEFLATE_WORKERS, Math.max(1, Math.floor(option.workers ?? defaultDeflateWorkers())));
    this.#clients = Array.from({ length: count }, (_, i) =>
      new WorkerClient<DeflateTasks>(startModuleWorker(option.workerUrl, `iki-deflate-${i}`), { wasmUrl: option.wasmUrl }));
    this.#busy = this.#clients.map(() => 0);
    this.concurrency = count;
  }

  /** Resolves once every worker has loaded WASM. */
  async ready(): Promise<void> {
    await Promise.all(this.#clients.map((c) => c.ready()));
  }

  async deflate(raw: Uint8Array, options: DeflateChunkOptions): Promise<Uint8Array> {
    const index = this.#busy.indexOf(Math.min(...this.#busy));
    const client = this.#clients[index] as WorkerClient<DeflateTasks>;
    this.#busy[index] = (this.#busy[index] ?? 0) + 1;
    const own = raw.byteOffset === 0 && raw.byteLength === raw.buffer.byteLength ? raw : raw.slice();
    try {
      return await client.run('deflateChunk', { raw: own, options }, { transfer: [own.buffer] });
    } finally {
      this.#busy[index] = (this.#busy[index] ?? 1) - 1;
    }
  }

  /** Ends every worker (their WASM memory goes with them); chunks in flight reject. */
  terminate(): void {
    for (const client of this.#clients) client.terminate();
  }
}

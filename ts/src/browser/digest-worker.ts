/**
 * The project page's digest worker (issue 28 item 4): a module Web Worker with its own WASM
 * instance that hashes a file's bytes for its signature while the saving worker writes them
 * (file-digest.ts has the design and who is trusted with what). The saving worker starts it
 * ({@link WorkerDigests}) and keeps it between saves; batches move to it (transferred, not
 * copied) and the digest comes back. It holds no key and sees only the file's bytes.
 */
import { BatchingFileDigester, DigestHashes, type DigestTransport, type FileDigest, type FileDigester } from '../file-digest.js';
import { startModuleWorker } from './trusted-worker.js';
import { WorkerClient } from './worker-client.js';
import type { TaskContext } from './worker-rpc.js';

/** Where the digest worker comes from (server/web/workers/digest.ts and the page's `.wasm`). */
export interface DigestWorkerOption {
  workerUrl: string;
  wasmUrl: string;
}

const hashes = new DigestHashes();

/** The tasks of a digest worker (server/web/workers/digest.ts exposes them). */
export const digestTasks = {
  digestStart: async (_args: Record<string, never>): Promise<number> => hashes.start(),
  /** Hashes a batch and moves its buffer back, so the sender reuses it (no new buffer per batch). */
  digestUpdate: async (args: { id: number; seq: number; bytes: Uint8Array }, context: TaskContext<never>): Promise<Uint8Array> => {
    const bytes = hashes.update(args.id, args.seq, args.bytes);
    context.transfer([bytes.buffer]);
    return bytes;
  },
  digestFinish: async (args: { id: number; batches: number }): Promise<FileDigest> => hashes.finish(args.id, args.batches),
  digestDrop: async (args: { id: number }): Promise<void> => hashes.drop(args.id),
};

/** Their types, for `WorkerClient<DigestTasks>`. */
export type DigestTasks = typeof digestTasks;

/** One digest worker, started on first use and kept; {@link WorkerDigests.digester} per file. */
export class WorkerDigests {
  readonly #option: DigestWorkerOption;
  #client: WorkerClient<DigestTasks> | undefined;

  constructor(option: DigestWorkerOption) {
    this.#option = option;
  }

  /** A digester for one file. */
  digester(): FileDigester {
    this.#client ??= new WorkerClient<DigestTasks>(startModuleWorker(this.#option.workerUrl, 'iki-digest'), { wasmUrl: this.#option.wasmUrl });
    const client = this.#client;
    // A failure (the worker crashed, or refused a batch) ends this worker: the next save starts
    // a new one rather than failing on a dead one.
    const guarded = <T>(run: Promise<T>): Promise<T> => run.catch((error: unknown) => {
      if (this.#client === client) this.terminate();
      throw error;
    });
    const transport: DigestTransport = {
      start: () => guarded(client.run('digestStart', {})),
      // The batch's whole buffer moves (the digester's to move, file-digest.ts), without a copy.
      update: (id, seq, bytes) => guarded(client.run('digestUpdate', { id, seq, bytes }, { transfer: [bytes.buffer] })),
      finish: (id, batches) => guarded(client.run('digestFinish', { id, batches })),
      drop: (id) => void client.run('digestDrop', { id }).catch(() => undefined),
    };
    return new BatchingFileDigester(transport);
  }

  /** Ends the worker (a save in flight fails). */
  terminate(): void {
    this.#client?.terminate();
    this.#client = undefined;
  }
}

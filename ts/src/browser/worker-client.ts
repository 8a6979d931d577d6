/**
 * The page's side of the page–worker RPC (`worker-rpc.ts`): a {@link WorkerClient} starts
 * nothing by itself; give it a module `Worker` whose entry called `exposeTasks`, and it
 * loads the worker's own WASM instance, then runs typed tasks there with progress and
 * cancellation. Errors come back as the classes the page checks for (`ApiProblem`,
 * `IkiError`, `DamagedCopy`, `AbortError`).
 *
 *     const worker = new WorkerClient<LicenseTasks>(
 *       startModuleWorker('/assets/js/license-worker.js'), { wasmUrl });
 *     const pkg = await worker.run('openLicenseCopy', args, { onProgress, signal });
 *     worker.terminate();
 */
import * as Comlink from 'comlink';
import {
  abortError, errorFromWire, type TaskArgs, type TaskEndpoint, type TaskMap, type TaskProgress, type TaskResult, type WireOutcome,
} from './worker-rpc.js';

/** Options of a {@link WorkerClient}. */
export interface WorkerClientOptions {
  /** Where the worker fetches the `.wasm` from (the same file the service uses). */
  wasmUrl: string | URL;
}

/** Options of one {@link WorkerClient.run}. */
export interface RunOptions<P> {
  /** Cancels the task: the promise rejects with the signal's reason, the worker aborts it. */
  signal?: AbortSignal;
  /** Progress the task reports. */
  onProgress?: (update: P) => void;
  /** Buffers in the arguments to move to the worker rather than copy. */
  transfer?: Transferable[];
}

/** A worker serving `T`'s tasks, with its own WASM instance. */
export class WorkerClient<T extends TaskMap> {
  readonly #worker: Worker;
  readonly #remote: Comlink.Remote<TaskEndpoint>;
  readonly #ready: Promise<void>;
  readonly #pending = new Set<(reason: unknown) => void>();
  #nextId = 1;
  #closed = false;

  constructor(worker: Worker, options: WorkerClientOptions) {
    this.#worker = worker;
    this.#remote = Comlink.wrap<TaskEndpoint>(worker);
    const crashed = new Promise<never>((_resolve, reject) => {
      worker.addEventListener('error', (event) => {
        event.preventDefault();
        const error = new Error(`the worker stopped${event.message ? `: ${event.message}` : ' (it could not be loaded or it crashed)'}`);
        reject(error);
        this.#failAll(error);
      }, { once: true });
    });
    this.#ready = Promise.race([this.#remote.init(String(options.wasmUrl)), crashed]);
    // Reported by the first run; not an unhandled rejection before one.
    this.#ready.catch(() => {});
  }

  /** Resolves once the worker's WASM instance is loaded; rejects if it cannot be. */
  ready(): Promise<void> {
    return this.#ready;
  }

  /** Runs task `name` in the worker. */
  run<K extends keyof T & string>(name: K, args: TaskArgs<T[K]>,
    options: RunOptions<TaskProgress<T[K]>> = {}): Promise<TaskResult<T[K]>> {
    if (this.#closed) return Promise.reject(abortError('the worker was closed'));
    if (options.signal?.aborted === true) return Promise.reject(options.signal.reason ?? abortError());
    const id = this.#nextId++;
    return new Promise<TaskResult<T[K]>>((resolve, reject) => {
      const { signal } = options;
      const done = (): void => {
        this.#pending.delete(fail);
        signal?.removeEventListener('abort', onAbort);
      };
      const fail = (reason: unknown): void => {
        done();
        reject(reason);
      };
      const onAbort = (): void => {
        this.#remote.cancel(id).catch(() => {});
        fail(signal?.reason ?? abortError());
      };
      this.#pending.add(fail);
      signal?.addEventListener('abort', onAbort, { once: true });
      const progress = options.onProgress === undefined ? undefined
        : Comlink.proxy(options.onProgress as (update: unknown) => void);
      const payload = options.transfer === undefined ? args : Comlink.transfer(args, options.transfer);
      this.#ready
        .then(() => this.#remote.run(name, id, payload, progress) as Promise<WireOutcome>)
        .then((outcome) => {
          done();
          if (outcome.ok) resolve(outcome.value as TaskResult<T[K]>);
          else reject(errorFromWire(outcome.error));
        }, fail);
    });
  }

  /**
   * Stops the worker at once: its WASM memory (and every key in it) goes with it, and every
   * task still running rejects with an `AbortError`.
   */
  terminate(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#worker.terminate();
    this.#failAll(abortError('the worker was closed'));
  }

  #failAll(reason: unknown): void {
    for (const fail of [...this.#pending]) fail(reason);
  }
}

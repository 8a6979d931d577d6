/**
 * The worker's side of the page–worker RPC (`worker-rpc.ts`): {@link exposeTasks} makes a
 * Web Worker answer a {@link WorkerClient}. Each worker loads its own WebAssembly instance
 * (`init`, from the URL the page names), so keys it makes stay in that worker's memory and
 * die with it; each task runs with an `AbortSignal` the page can fire, reports progress
 * through a proxied callback, and moves its result's buffers to the page instead of copying.
 *
 * A worker entry is three lines (server/web/workers/ has them):
 *
 *     import { exposeTasks, licenseTasks } from '@iki/core/browser/worker';
 *     exposeTasks(licenseTasks);
 */
import * as Comlink from 'comlink';
import { loadWasm } from '../wasm.js';
import { abortError, errorToWire, type TaskContext, type TaskEndpoint, type TaskMap, type WireOutcome } from './worker-rpc.js';

/** Serves `tasks` to the page that started this worker (call once, in the worker's entry). */
export function exposeTasks(tasks: TaskMap): void {
  const running = new Map<number, AbortController>();
  const endpoint: TaskEndpoint = {
    async init(wasmUrl) {
      await loadWasm(new URL(wasmUrl, globalThis.location.href));
    },
    async run(name, id, args, progress): Promise<WireOutcome> {
      const task = Object.hasOwn(tasks, name) ? tasks[name] : undefined;
      if (task === undefined) return { ok: false, error: { name: 'Error', message: `this worker has no task "${name}"` } };
      const controller = new AbortController();
      running.set(id, controller);
      const transfers: Transferable[] = [];
      const context: TaskContext<unknown> = {
        signal: controller.signal,
        progress(update) {
          // The page may have gone on; a lost progress message is harmless.
          if (!controller.signal.aborted) Promise.resolve(progress?.(update)).catch(() => {});
        },
        transfer(buffers) {
          transfers.push(...buffers);
        },
      };
      try {
        const value: unknown = await task(args, context);
        controller.signal.throwIfAborted();
        return Comlink.transfer({ ok: true, value }, transfers);
      } catch (err) {
        return { ok: false, error: errorToWire(err) };
      } finally {
        running.delete(id);
      }
    },
    cancel(id) {
      running.get(id)?.abort(abortError());
    },
  };
  Comlink.expose(endpoint);
}

// A worker for worker-rpc-browser.test.ts: tasks that exercise the RPC (transfer both ways,
// progress, cancellation, errors) and this worker's own WASM instance.
import { ApiProblem } from '../../../src/browser/api.js';
import { exposeTasks } from '../../../src/browser/worker-host.js';
import type { TaskContext } from '../../../src/browser/worker-rpc.js';
import { IkiError } from '../../../src/errors.js';
import { SigningKey, toBase64Url } from '../../../src/keys.js';

let lastSent: Uint8Array | undefined;
let cancelled = false;

const tasks = {
  /** `size` bytes of `value`, moved to the page. */
  async fill(args: { size: number; value: number }, context: TaskContext<never>): Promise<Uint8Array> {
    lastSent = new Uint8Array(args.size).fill(args.value);
    context.transfer([lastSent.buffer]);
    return lastSent;
  },
  /** What is left in the worker of the last `fill` (0 once moved). */
  async lastSentLength(): Promise<number> {
    return lastSent?.byteLength ?? -1;
  },
  /** The length and sum of bytes the page moved here. */
  async sum(args: { bytes: Uint8Array }): Promise<{ length: number; sum: number }> {
    return { length: args.bytes.length, sum: args.bytes.reduce((a, b) => a + b, 0) };
  },
  /** Counts to `to`, one progress report per step, until cancelled. */
  async count(args: { to: number; stepMs: number }, context: TaskContext<number>): Promise<number> {
    cancelled = false;
    for (let i = 0; i < args.to; i += 1) {
      if (context.signal.aborted) {
        cancelled = true;
        context.signal.throwIfAborted();
      }
      context.progress(i);
      await new Promise((resolve) => setTimeout(resolve, args.stepMs));
    }
    return args.to;
  },
  async wasCancelled(): Promise<boolean> {
    return cancelled;
  },
  async fail(args: { kind: 'api' | 'iki' | 'type' }): Promise<never> {
    if (args.kind === 'api') {
      throw ApiProblem.fromAnswer(429, { error: { code: 'RATE_LIMITED', message: 'too many key releases',
        requestId: 'req_0123', details: { scope: 'license' } } }, new Headers({ 'retry-after': '30' }));
    }
    if (args.kind === 'iki') throw new IkiError('DECRYPT_FAILED', 'decryption failed', { chunk: 3 });
    throw new TypeError('not a license id');
  },
  /** The Ed25519 public key of `seed`, made by this worker's WASM instance. */
  async publicKey(args: { seed: Uint8Array }): Promise<string> {
    const key = SigningKey.fromSeed(args.seed);
    try {
      return toBase64Url(key.publicKey);
    } finally {
      key.free();
    }
  },
};

export type TestTasks = typeof tasks;
exposeTasks(tasks);

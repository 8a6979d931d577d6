/**
 * A crypto worker (`worker_threads`): its own WebAssembly instance and service keys, derived
 * from the root secret it is started with (zero-filled at once), running the heavy jobs of
 * the pool (`pool.ts`): master checks, license copies, identify and Argon2id password hashes.
 * Several jobs interleave on one worker: each waits on its streams, not on the others.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { wasmMemoryBytes } from '@iki/core';
import { argon2id, argon2Verify } from 'hash-wasm';
import { randomBytes } from 'node:crypto';
import { wasmCrypto, type WasmLicenseCrypto } from '../wasm-crypto.js';
import { RootSecret } from '../../secrets.js';
import { collectGarbage } from './idle-gc.js';
import { readStored, type ObjectRef } from '../../storage/blobs.js';
import { OUT_WINDOW_BYTES, toWire, transferable, type FromWorker, type JobSpec, type ToWorker, type WorkerInit } from './protocol.js';

const port = parentPort;
if (port === null) throw new Error('crypto-worker.ts runs as a worker thread');

const send = (message: FromWorker, transfer: ArrayBuffer[] = []) => port.postMessage(message, transfer);

/** One input stream of a job: pieces arrive after each `pull`. */
class Inbox {
  private waiting: ((r: { chunk?: Uint8Array; error?: Error; end?: boolean }) => void) | undefined;

  constructor(private readonly id: number, private readonly stream: number) {}

  deliver(item: { chunk?: Uint8Array; error?: Error; end?: boolean }): void {
    const resolve = this.waiting;
    this.waiting = undefined;
    resolve?.(item);
  }

  async *read(job: Job): AsyncGenerator<Uint8Array> {
    for (;;) {
      if (job.cancelled) throw new Error('job cancelled');
      const item = await new Promise<{ chunk?: Uint8Array; error?: Error; end?: boolean }>((resolve) => {
        this.waiting = resolve;
        send({ t: 'pull', id: this.id, stream: this.stream });
      });
      if (item.error !== undefined) throw item.error;
      if (item.end === true || item.chunk === undefined) return;
      yield item.chunk;
    }
  }
}

class Job {
  cancelled = false;
  /** Sizes of the pieces sent and not yet acknowledged, oldest first. */
  private readonly unacked: number[] = [];
  private unackedBytes = 0;
  private credit: (() => void) | undefined;
  readonly inboxes = new Map<number, Inbox>();

  constructor(readonly id: number) {}

  inbox(stream: number): Inbox {
    let inbox = this.inboxes.get(stream);
    if (inbox === undefined) this.inboxes.set(stream, inbox = new Inbox(this.id, stream));
    return inbox;
  }

  ack(): void {
    this.unackedBytes -= this.unacked.shift() ?? 0;
    const resolve = this.credit;
    this.credit = undefined;
    resolve?.();
  }

  cancel(): void {
    this.cancelled = true;
    for (const inbox of this.inboxes.values()) inbox.deliver({ error: new Error('job cancelled') });
    this.ack();
  }

  /** Sends one output piece, first waiting while the window is full. */
  async out(chunk: Uint8Array): Promise<void> {
    while (this.unackedBytes >= OUT_WINDOW_BYTES && !this.cancelled) {
      await new Promise<void>((resolve) => { this.credit = resolve; });
    }
    if (this.cancelled) throw new Error('job cancelled');
    const piece = transferable(chunk);
    this.unacked.push(piece.byteLength);
    this.unackedBytes += piece.byteLength;
    send({ t: 'out', id: this.id, chunk: piece }, [piece.buffer as ArrayBuffer]);
  }
}

const jobs = new Map<number, Job>();

/** Sends a job's outcome; one that cannot be cloned becomes a plain error rather than a silent hang. */
function answer(id: number, message: FromWorker): void {
  try {
    send(message);
  } catch (err) {
    // An error's details, or a result, that structured clone refuses: the error without them.
    const { name, message: text, code } = message.t === 'error' ? message.error : toWire(err);
    send({ t: 'error', id, error: { name, message: text, ...(code === undefined ? {} : { code }) } });
  }
}

/** An S3 object read by this worker (the AWS SDK is loaded on the first such job). */
async function* readObjectHere(ref: ObjectRef): AsyncGenerator<Uint8Array> {
  const { readObject } = await import('../../storage/s3-read.js');
  yield* readObject(ref);
}

/** A job's source: its stored file or S3 object, read here, or stream 0 pulled from the pool. */
function sourceOf(job: Job, spec: { file?: string; object?: ObjectRef }): AsyncIterable<Uint8Array> {
  if (spec.file !== undefined) return readStored(spec.file);
  if (spec.object !== undefined) return readObjectHere(spec.object);
  return job.inbox(0).read(job);
}

async function run(crypto: WasmLicenseCrypto, job: Job, spec: JobSpec): Promise<unknown> {
  switch (spec.op) {
    case 'verify':
      return crypto.verifyMasterStream(sourceOf(job, spec),
        spec.maxDecodedBytes === undefined ? {} : { maxDecodedBytes: spec.maxDecodedBytes });
    case 'copy': {
      // A stored file or object is read here, as WASM wants more: its bytes never cross the event loop.
      const source = sourceOf(job, spec);
      for await (const piece of crypto.streamLicenseCopy(source, spec.master, spec.license, spec.service)) {
        await job.out(piece);
      }
      return undefined;
    }
    case 'identify':
      return crypto.identify(spec.master, spec.image, spec.mediaType, () => job.inbox(1).read(job), spec.options);
    case 'hash':
      return argon2id({ password: spec.password, salt: randomBytes(16), hashLength: 32,
        memorySize: spec.params.memoryKiB, iterations: spec.params.iterations, parallelism: spec.params.parallelism,
        outputType: 'encoded' });
    case 'check':
      return argon2Verify({ password: spec.password, hash: spec.encoded }).catch(() => false);
  }
}

async function start(): Promise<void> {
  const init = workerData as WorkerInit;
  const root = new RootSecret(init.root);
  init.root.fill(0);
  const crypto = await wasmCrypto(root, init.service);
  root.destroy();
  port!.on('message', (message: ToWorker) => {
    if (message.t === 'close') {
      crypto.free();
      process.exit(0);
    }
    if (message.t === 'gc') {
      if (jobs.size === 0) collectGarbage();
      return;
    }
    if (message.t === 'job') {
      const job = new Job(message.id);
      jobs.set(message.id, job);
      run(crypto, job, message.spec).then(
        (value) => { if (!job.cancelled) answer(job.id, { t: 'result', id: job.id, value }); },
        (err: unknown) => { if (!job.cancelled) answer(job.id, { t: 'error', id: job.id, error: toWire(err) }); },
      ).finally(() => {
        jobs.delete(job.id);
        // WebAssembly memory only grows: the pool replaces a worker that grew past its limit.
        send({ t: 'memory', bytes: wasmMemoryBytes() });
      });
      return;
    }
    const job = jobs.get(message.id);
    if (job === undefined) return;
    if (message.t === 'chunk') job.inbox(message.stream).deliver({ chunk: message.chunk });
    else if (message.t === 'end') {
      job.inbox(message.stream).deliver(message.error === undefined ? { end: true } : { error: new Error(message.error.message) });
    } else if (message.t === 'ack') job.ack();
    else job.cancel();
  });
  send({ t: 'ready' });
  send({ t: 'memory', bytes: wasmMemoryBytes() });
}

start().catch((err: unknown) => send({ t: 'failed', error: toWire(err) }));

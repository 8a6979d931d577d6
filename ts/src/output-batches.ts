/**
 * The writer's output in batches for a digester that passes them on (issue 28 item 4;
 * file-digest.ts, `FileDigester.passOn`): each chunk's bytes are copied out of WASM memory
 * straight into the current batch (`takeOutputInto`, one copy), and a full batch goes to the
 * digester as it is, which hashes it elsewhere and hands it back to be written. Before this the
 * output crossed as a new array per chunk, was copied into the digester's batch and again into
 * the saver's batch for the file: three copies of every byte where there is now one.
 *
 * Memory: one batch being filled (a few MiB) beside the digester's batches in flight.
 *
 * A new batch is a fresh allocation of a few MiB, whose pages the kernel maps and zeroes as the
 * batch is filled (the saving worker's thread spends about a third of its time in page faults:
 * bench/RESULTS.md). With a {@link BatchPool} a batch that was written is reused instead: the
 * consumer of the stream gives each batch back once its sink is done with it (save.ts does for a
 * file of the File System Access API, which copies what it is given before its write resolves).
 */
import type { WasmWriter } from '../../pkg/iki_wasm.js';
import { callWasm } from './errors.js';
import type { FileDigester } from './file-digest.js';

/** Batch buffers most kept for reuse: as many as can be in flight (filled, hashed, queued, written). */
export const MAX_POOLED_BATCHES = 8;

/**
 * Buffers of batches that were written, for the next batches (see the module comment). Only a
 * whole buffer of the size asked for is reused; anything else is left to the garbage collector.
 */
export class BatchPool {
  readonly #free: ArrayBuffer[] = [];
  /** The sizes of the buffers handed out: only those are taken back. */
  readonly #sizes = new Set<number>();
  #reused = 0;

  /** Batches that reused a buffer given back. */
  get reused(): number {
    return this.#reused;
  }

  /** A buffer of `bytes` bytes: one given back, else a new one. */
  take(bytes: number): Uint8Array {
    const index = this.#free.findIndex((b) => b.byteLength === bytes);
    if (index < 0) {
      this.#sizes.add(bytes);
      return new Uint8Array(bytes);
    }
    const [buffer] = this.#free.splice(index, 1) as [ArrayBuffer];
    this.#reused += 1;
    return new Uint8Array(buffer);
  }

  /**
   * Gives back the buffer under `batch`, a batch that was written and that nothing else holds
   * any more (its bytes will be overwritten). Only a buffer of a size this pool handed out is
   * kept: not one that was moved away (detached), nor a view of part of another buffer, nor the
   * other pieces of the stream (the last short batch, the signature).
   */
  give(batch: Uint8Array): void {
    const buffer = batch.buffer;
    if (!(buffer instanceof ArrayBuffer) || !this.#sizes.has(buffer.byteLength) || batch.byteOffset !== 0) return;
    if (this.#free.length < MAX_POOLED_BATCHES && !this.#free.includes(buffer)) this.#free.push(buffer);
  }
}

/** Batches of the writer's output, given whole to a passing digester. */
export class OutputBatches {
  readonly #writer: WasmWriter;
  readonly #digester: FileDigester;
  readonly #batchBytes: number;
  readonly #capacity: number;
  readonly #pool: BatchPool | undefined;
  #batch: Uint8Array | undefined;
  #filled = 0;

  /**
   * A batch is given once it holds `batchBytes`; it is allocated with room for `slackBytes`
   * more (one chunk's output, so a chunk is seldom split over a short batch), from `pool` when
   * there is one.
   */
  constructor(writer: WasmWriter, digester: FileDigester, batchBytes: number, slackBytes: number, pool?: BatchPool) {
    this.#writer = writer;
    this.#digester = digester;
    this.#batchBytes = batchBytes;
    this.#capacity = batchBytes + slackBytes;
    this.#pool = pool;
  }

  /** Moves what the writer produced into batches; whether there was anything. */
  async drain(): Promise<boolean> {
    const length = callWasm(() => this.#writer.outputLength());
    if (length === 0) return false;
    const batch = await this.#room(length);
    this.#filled += callWasm(() => this.#writer.takeOutputInto(batch, this.#filled));
    if (this.#filled >= this.#batchBytes) await this.flush();
    return true;
  }

  /** Adds bytes that did not come through the writer's output (SIGN's prefix). */
  async add(bytes: Uint8Array): Promise<void> {
    const batch = await this.#room(bytes.length);
    batch.set(bytes, this.#filled);
    this.#filled += bytes.length;
  }

  /** Gives the batch being filled, if any, to the digester. */
  async flush(): Promise<void> {
    if (this.#batch === undefined || this.#filled === 0) return;
    const batch = this.#batch.subarray(0, this.#filled);
    this.#batch = undefined;
    this.#filled = 0;
    await this.#digester.update(batch);
  }

  /** The current batch, with room for `length` more bytes (the last one given when it had not). */
  async #room(length: number): Promise<Uint8Array> {
    if (this.#batch !== undefined && this.#filled + length > this.#batch.length) await this.flush();
    const bytes = Math.max(this.#capacity, length);
    this.#batch ??= this.#pool?.take(bytes) ?? new Uint8Array(bytes);
    return this.#batch;
  }
}

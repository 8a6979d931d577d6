/**
 * The writer's output in batches for a digester that passes them on (issue 28 item 4;
 * file-digest.ts, `FileDigester.passOn`): each chunk's bytes are copied out of WASM memory
 * straight into the current batch (`takeOutputInto`, one copy), and a full batch goes to the
 * digester as it is, which hashes it elsewhere and hands it back to be written. Before this the
 * output crossed as a new array per chunk, was copied into the digester's batch and again into
 * the saver's batch for the file: three copies of every byte where there is now one.
 *
 * Memory: one batch being filled (a few MiB) beside the digester's batches in flight.
 */
import type { WasmWriter } from '../../pkg/iki_wasm.js';
import { callWasm } from './errors.js';
import type { FileDigester } from './file-digest.js';

/** Batches of the writer's output, given whole to a passing digester. */
export class OutputBatches {
  readonly #writer: WasmWriter;
  readonly #digester: FileDigester;
  readonly #batchBytes: number;
  readonly #capacity: number;
  #batch: Uint8Array | undefined;
  #filled = 0;

  /**
   * A batch is given once it holds `batchBytes`; it is allocated with room for `slackBytes`
   * more (one chunk's output, so a chunk is seldom split over a short batch).
   */
  constructor(writer: WasmWriter, digester: FileDigester, batchBytes: number, slackBytes: number) {
    this.#writer = writer;
    this.#digester = digester;
    this.#batchBytes = batchBytes;
    this.#capacity = batchBytes + slackBytes;
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
    this.#batch ??= new Uint8Array(Math.max(this.#capacity, length));
    return this.#batch;
  }
}

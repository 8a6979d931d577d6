/**
 * Chunks deflated away from the writer (docs/format.md section 6): {@link deflateChunk} is the
 * stateless "deflate this chunk" of a worker (a Node worker thread, a Web Worker), and
 * {@link ChunkFeed} cuts one entry into chunks, keeps a bounded number of them with a
 * {@link ChunkDeflater} at once, and hands their streams back in order for the writer's
 * `writeDeflated`, which checks each against its claimed length and SHA-256 before sealing it.
 * A chunk's stream depends only on its bytes, the level, the chunk size and whether the file is
 * encrypted, so the file is byte for byte the one a single writer makes. Keys stay with the
 * writer: workers see only the plaintext chunks they deflate.
 */
import { callWasm } from './errors.js';
import { checkByteSource, checkInteger, pieces, type ByteSource } from './streams.js';
import { MAX_CHUNK_SIZE_BYTES, MIN_CHUNK_SIZE_BYTES } from './limits.js';
import { wasm } from './wasm.js';

/** DEFLATE level of a writer told nothing else (crates/iki-format `DEFAULT_DEFLATE_LEVEL`). */
export const DEFAULT_DEFLATE_LEVEL = 6 as const;

/** How the writer deflates: its level, its chunk size and whether it encrypts. */
export interface DeflateChunkOptions {
  deflateLevel: number;
  chunkSize: number;
  encrypted: boolean;
}

/** One chunk's raw DEFLATE stream with the decoded length and SHA-256 the writer checks. */
export interface DeflatedChunk {
  rawLength: number;
  /** 32 bytes. */
  rawSha256: Uint8Array;
  data: Uint8Array;
}

/** Deflates chunks somewhere else (a pool of workers); the writer awaits them in order. */
export interface ChunkDeflater {
  /** Chunks worth keeping with it at once (its workers); an entry keeps twice that in flight. */
  readonly concurrency: number;
  /** Deflates `raw` (which it may take over: the caller does not use it afterwards). */
  deflate(raw: Uint8Array, options: DeflateChunkOptions): Promise<DeflatedChunk>;
}

/** Throws a `TypeError`/`RangeError` unless `options` is a valid {@link DeflateChunkOptions}. */
export function checkDeflateOptions(options: unknown): asserts options is DeflateChunkOptions {
  if (typeof options !== 'object' || options === null) throw new TypeError('options must be an object');
  const o = options as Record<string, unknown>;
  checkInteger(o.deflateLevel, 'options.deflateLevel', 0, 10);
  checkInteger(o.chunkSize, 'options.chunkSize', MIN_CHUNK_SIZE_BYTES, MAX_CHUNK_SIZE_BYTES);
  if (typeof o.encrypted !== 'boolean') throw new TypeError('options.encrypted must be a boolean');
}

/**
 * Deflates one chunk's decoded bytes exactly as a writer with `options` would (WASM must be
 * loaded). Holds no key; any worker with the module can run it.
 */
export function deflateChunk(raw: Uint8Array, options: DeflateChunkOptions): DeflatedChunk {
  if (!(raw instanceof Uint8Array)) throw new TypeError('raw must be a Uint8Array');
  checkDeflateOptions(options);
  const out = callWasm(() => wasm().deflateChunk(raw, options.deflateLevel, options.chunkSize, options.encrypted));
  return { rawLength: raw.length, rawSha256: out.subarray(0, 32), data: out.subarray(32) };
}

/** A deflater that runs {@link deflateChunk} in this thread (tests, and a pool of one). */
export const inThreadDeflater: ChunkDeflater = {
  concurrency: 1,
  deflate: async (raw, options) => deflateChunk(raw, options),
};

/**
 * One entry's chunks through a {@link ChunkDeflater}: `next()` reads the source ahead into
 * chunks of `step` bytes, keeps up to `2 × concurrency` of them with the deflater (the memory
 * bound: that many chunks, raw or deflated, plus what the source holds), and resolves to the
 * next chunk in order, or `undefined` after the last.
 */
export class ChunkFeed {
  private readonly source: AsyncIterator<Uint8Array>;
  private readonly inFlight: Promise<DeflatedChunk>[] = [];
  private readonly limit: number;
  private sourceDone = false;
  private carry: Uint8Array | undefined;

  constructor(data: ByteSource, name: string, private readonly step: number, private readonly deflater: ChunkDeflater,
    private readonly options: DeflateChunkOptions) {
    checkByteSource(data, name);
    checkInteger(step, 'step', 1, MAX_CHUNK_SIZE_BYTES);
    this.source = pieces(data, name, step)[Symbol.asyncIterator]();
    this.limit = Math.max(1, Math.floor(deflater.concurrency)) * 2;
  }

  async next(): Promise<DeflatedChunk | undefined> {
    while (this.inFlight.length < this.limit && !this.sourceDone) {
      const raw = await this.readChunk();
      if (raw === undefined) break;
      const deflated = this.deflater.deflate(raw, this.options);
      // Awaited in order below; one that fails while an earlier one is awaited is reported then.
      deflated.catch(() => undefined);
      this.inFlight.push(deflated);
    }
    return this.inFlight.shift();
  }

  /** Stops reading the source (after an error or a cancel); chunks in flight are dropped. */
  close(): void {
    this.inFlight.length = 0;
    this.source.return?.().catch(() => undefined);
  }

  /** The next `step` bytes of the source in a buffer of their own (shorter at the end). */
  private async readChunk(): Promise<Uint8Array | undefined> {
    const chunk = new Uint8Array(this.step);
    let filled = 0;
    while (filled < this.step) {
      let part = this.carry;
      this.carry = undefined;
      if (part === undefined) {
        const next = await this.source.next();
        if (next.done) {
          this.sourceDone = true;
          break;
        }
        part = next.value;
      }
      const take = Math.min(part.length, this.step - filled);
      chunk.set(part.subarray(0, take), filled);
      filled += take;
      if (take < part.length) this.carry = part.subarray(take);
    }
    if (filled === 0) return undefined;
    return filled === this.step ? chunk : chunk.slice(0, filled);
  }
}

/**
 * Chunks deflated away from the writer (docs/format.md section 6): {@link deflateChunk} is the
 * stateless "deflate this chunk" of a worker (a Node worker thread, a Web Worker), and
 * {@link ChunkFeed} cuts one entry into chunks, keeps a bounded number of them with a
 * {@link ChunkDeflater} at once, and hands their streams back in order, each beside the bytes it
 * read, for the writer's `writeDeflated`, which checks that each stream decodes to exactly those
 * bytes (a byte-for-byte comparison, no digest) before sealing it.
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

/** One chunk as {@link ChunkFeed} hands it to the writer: the bytes it read, and their raw DEFLATE stream. */
export interface DeflatedChunk {
  /**
   * The chunk's bytes, as read from the entry's source (the writer compares the decoded stream
   * with them); empty from a feed whose writer keeps the bytes itself (`ownsPieces`).
   */
  raw: Uint8Array;
  /** The raw DEFLATE stream the deflater made of a copy of them. */
  data: Uint8Array;
}

const NOTHING = new Uint8Array(0);

/** Deflates chunks somewhere else (a pool of workers); the writer awaits them in order. */
export interface ChunkDeflater {
  /** Chunks worth keeping with it at once (its workers); an entry keeps twice that in flight. */
  readonly concurrency: number;
  /**
   * Deflates `raw` into its raw DEFLATE stream ({@link deflateChunk}). `raw` is a copy it may
   * take over (move to a worker): the caller keeps its own bytes to check the stream against.
   */
  deflate(raw: Uint8Array, options: DeflateChunkOptions): Promise<Uint8Array>;
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
 * Deflates one chunk's decoded bytes exactly as a writer with `options` would, into the raw
 * DEFLATE stream (in a buffer of its own, to move back to the writer) that the writer's
 * `writeDeflated` takes beside those bytes (WASM must be loaded). Holds no key; any worker with
 * the module can run it.
 */
export function deflateChunk(raw: Uint8Array, options: DeflateChunkOptions): Uint8Array {
  if (!(raw instanceof Uint8Array)) throw new TypeError('raw must be a Uint8Array');
  checkDeflateOptions(options);
  return callWasm(() => wasm().deflateChunk(raw, options.deflateLevel, options.chunkSize, options.encrypted));
}

/** A deflater that runs {@link deflateChunk} in this thread (tests, and a pool of one). */
export const inThreadDeflater: ChunkDeflater = {
  concurrency: 1,
  deflate: async (raw, options) => deflateChunk(raw, options),
};

/**
 * One entry's chunks through a {@link ChunkDeflater}: `next()` reads the source ahead into
 * chunks of `step` bytes, gives a copy of each to the deflater and keeps the bytes it read, up
 * to `2 × concurrency` chunks in flight (the memory bound: that many chunks read, and as many
 * copies or streams with the deflater, plus what the source holds), and resolves to the next
 * chunk in order with its stream, or `undefined` after the last.
 */
export class ChunkFeed {
  private readonly source: AsyncIterator<Uint8Array>;
  private readonly inFlight: { raw: Uint8Array; data: Promise<Uint8Array> }[] = [];
  private readonly limit: number;
  private sourceDone = false;
  private carry: Uint8Array | undefined;

  /**
   * With `ownsPieces`, `data` yields buffers of its own (fresh copies nobody else holds) and the
   * writer checks the streams against bytes it keeps itself (a texture in WASM memory): a piece
   * of exactly one chunk goes to the deflater as it is, and no bytes are kept here (`raw` is
   * empty).
   */
  constructor(data: ByteSource, name: string, private readonly step: number, private readonly deflater: ChunkDeflater,
    private readonly options: DeflateChunkOptions, private readonly ownsPieces = false) {
    checkByteSource(data, name);
    checkInteger(step, 'step', 1, MAX_CHUNK_SIZE_BYTES);
    this.source = pieces(data, name, step)[Symbol.asyncIterator]();
    this.limit = Math.max(1, Math.floor(deflater.concurrency)) * 2;
  }

  async next(): Promise<DeflatedChunk | undefined> {
    while (this.inFlight.length < this.limit && !this.sourceDone) {
      const raw = await this.readChunk();
      if (raw === undefined) break;
      // A copy goes to the deflater (which may move it to a worker); the writer checks the
      // stream against the bytes read here, not against anything the deflater says.
      const data = this.deflater.deflate(this.ownsPieces ? raw : raw.slice(), this.options);
      // Awaited in order below; one that fails while an earlier one is awaited is reported then.
      data.catch(() => undefined);
      this.inFlight.push({ raw: this.ownsPieces ? NOTHING : raw, data });
    }
    const first = this.inFlight.shift();
    return first === undefined ? undefined : { raw: first.raw, data: await first.data };
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
        // A fresh buffer of exactly one chunk is the chunk.
        if (this.ownsPieces && filled === 0 && part.length === this.step) return part;
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

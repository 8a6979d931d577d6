/**
 * Textures deflated while the manifest pass is still decoding the next ones (issue 28 item 2).
 *
 * A master export reads every texture twice: once to hash its pixels for the manifest, which
 * precedes the data, and once when the writer reaches it. A chunk's DEFLATE stream depends only
 * on its bytes and the writer's options (deflate-chunk.ts), not on the manifest, so the workers
 * of a {@link ChunkDeflater} need not wait for the write: each texture kept decoded after its
 * hash (package/texture-source.ts) is handed to {@link DeflateAhead}, which gives copies of its
 * chunks to the deflater in order while the manifest pass decodes and hashes the textures after
 * it. When the writer takes the texture it writes the streams made so far
 * ({@link AheadStreams}), each still checked against the texture's own pixels
 * (`writeTextureDeflated`), and deflates the rest as before. The file is byte for byte the one
 * a writer without any of this makes.
 *
 * Memory stays bounded: at most `inFlight` chunk copies are with the deflater at once, and no
 * chunk is started while the streams made and not yet written hold more than `heldBytes`
 * (a texture that does not compress gives streams as large as its chunks).
 */
import type { DecodedTexture } from '../../pkg/iki_wasm.js';
import type { ChunkDeflater, DeflateChunkOptions } from './deflate-chunk.js';
import { callWasm } from './errors.js';

/** Chunks with the deflater at once by default: enough to keep its workers busy through a texture's decode. */
export const AHEAD_IN_FLIGHT = 8;

/** Bytes of streams made and not yet written past which no chunk is started (64 MiB). */
export const AHEAD_HELD_BYTES = 64 * 1024 * 1024;

/** The streams of a texture's first chunks, made ahead of the writer, in chunk order. */
export class AheadStreams {
  private readonly streams: Promise<Uint8Array>[] = [];
  private closed = false;

  /** `step`: decoded bytes per chunk they were cut at; `options`: what the chunks were deflated with. */
  constructor(readonly step: number, readonly options: DeflateChunkOptions, private readonly owner: DeflateAhead) {}

  /** Streams started so far. */
  get count(): number {
    return this.streams.length;
  }

  /**
   * Ends this texture's part in the work ahead: no further chunk of it is started (the texture
   * is about to be written, or freed). Streams already started stay.
   */
  close(): void {
    this.closed = true;
  }

  /** The next stream in chunk order, or `undefined` after the last one started. */
  next(): Promise<Uint8Array> | undefined {
    const stream = this.streams.shift();
    return stream?.then((bytes) => {
      this.owner.written(bytes.byteLength);
      return bytes;
    });
  }

  /** Drops the streams not handed out (the writer will not use them): their bytes no longer count. */
  discard(): void {
    this.closed = true;
    for (const stream of this.streams.splice(0)) stream.then((bytes) => this.owner.written(bytes.byteLength), () => undefined);
  }

  /** Whether a further chunk of it may be started. */
  get open(): boolean {
    return !this.closed;
  }

  /** Adds a started chunk's stream. */
  push(stream: Promise<Uint8Array>): void {
    this.streams.push(stream);
  }
}

/** A texture whose chunks are being started; `size` is read once (a texture the writer took has none to read). */
interface Job { texture: DecodedTexture; size: number; streams: AheadStreams; at: number }

/** Starts the chunks of kept textures on a deflater ahead of the writer (see the module comment). */
export class DeflateAhead {
  private readonly jobs: Job[] = [];
  private inFlight = 0;
  private held = 0;
  private stopped = false;

  constructor(private readonly deflater: ChunkDeflater, private readonly options: DeflateChunkOptions,
    private readonly limits = { inFlight: AHEAD_IN_FLIGHT, heldBytes: AHEAD_HELD_BYTES }) {}

  /**
   * Starts deflating `texture` (kept decoded, the caller's until it closes the result) in chunks
   * of whole rows, as the writer cuts an `rgba8` entry; `undefined` when a row does not fit a
   * chunk (the writer refuses that entry anyway) or after {@link stop}.
   */
  add(texture: DecodedTexture): AheadStreams | undefined {
    const row = texture.width * 4;
    if (this.stopped || row === 0 || row > this.options.chunkSize) return undefined;
    const streams = new AheadStreams(Math.floor(this.options.chunkSize / row) * row, this.options, this);
    this.jobs.push({ texture, size: texture.byteLength, streams, at: 0 });
    this.pump();
    return streams;
  }

  /** Starts nothing more (the export ended or failed); streams already started stay. */
  stop(): void {
    this.stopped = true;
    this.jobs.length = 0;
  }

  /** A stream made ahead was handed to the writer: its bytes no longer count. */
  written(bytes: number): void {
    this.held -= bytes;
    this.pump();
  }

  private pump(): void {
    while (!this.stopped && this.inFlight < this.limits.inFlight && this.held < this.limits.heldBytes) {
      const job = this.jobs[0];
      if (job === undefined) return;
      if (!job.streams.open || job.at >= job.size) {
        this.jobs.shift();
        continue;
      }
      const length = Math.min(job.streams.step, job.size - job.at);
      let raw: Uint8Array;
      try {
        raw = callWasm(() => job.texture.bytes(job.at, length));
      } catch {
        // Not readable any more: the writer deflates the rest itself, as it would without this.
        job.streams.close();
        continue;
      }
      job.at += length;
      this.inFlight += 1;
      const stream = this.deflater.deflate(raw, this.options);
      stream.then((bytes) => {
        this.held += bytes.byteLength;
      }, () => undefined).finally(() => {
        this.inFlight -= 1;
        this.pump();
      }).catch(() => undefined);
      job.streams.push(stream);
    }
  }
}

/** Whether streams made with `ahead` are what a writer cutting chunks of `step` bytes with `options` would make. */
export function aheadMatches(ahead: AheadStreams, step: number, options: DeflateChunkOptions): boolean {
  return ahead.step === step && ahead.options.deflateLevel === options.deflateLevel
    && ahead.options.chunkSize === options.chunkSize && ahead.options.encrypted === options.encrypted;
}

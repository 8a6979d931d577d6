/**
 * Texture entries decoded once (issue 28 item 2). A master export needs each texture's
 * pixels twice: their SHA-256 for the manifest, which precedes the data, and the pixels
 * themselves when the writer reaches the entry. Decoding a PNG costs about as much as the
 * level-6 deflate of an atlas, so the decoded texture of the manifest pass is kept in WASM
 * memory (a `DecodedTexture` handle) while a budget allows, and handed whole to the writer
 * (`WasmWriter.beginTexture`), which checks the digest taken at decoding against the manifest
 * and writes the pixels chunk by chunk without them crossing into JS. A texture past the
 * budget is dropped after hashing and decoded again when the writer reaches it (as every
 * texture was before), so memory stays at the budget plus one texture however many there are.
 *
 * The source is also an ordinary `AsyncIterable<Uint8Array>` (copies of 1 MiB ranges), for
 * writers that need the bytes in JS (chunks spread over deflate workers).
 */
import type { DecodedTexture } from '../../../pkg/iki_wasm.js';
import type { AheadStreams, DeflateAhead } from '../deflate-ahead.js';
import { callWasm } from '../errors.js';

/**
 * Decoded texture bytes `iki pack` keeps between its two passes by default: 256 MiB (the
 * four fixture atlases are 85 MiB; a 4096 x 4096 texture is 64 MiB). The CLI exits after one
 * export, so WebAssembly memory that grows to this is given back to the system at exit.
 */
export const CLI_KEEP_DECODED_BYTES = 256 * 1024 * 1024;

/**
 * The browser's export worker's budget: 64 MiB. The worker lives as long as the seller page and
 * its WebAssembly memory keeps its high-water mark (issue 28 item 5): with 128 MiB the export of
 * the four fixture atlases left it at 140 MiB against 55 MiB when every texture was decoded
 * twice (make bench-export --atlas, bench/RESULTS.md), for no CPU saving the bench could tell.
 */
export const BROWSER_KEEP_DECODED_BYTES = 64 * 1024 * 1024;

/** Bytes of each copy the iterable fallback hands out. */
const COPY_BYTES = 1024 * 1024;

const TEXTURE = Symbol('iki.decodedTexture');
const AHEAD = Symbol('iki.deflatedAhead');

/** A texture entry's data: the decoded texture for a WASM writer, or its bytes for anyone else. */
export interface TextureSource extends AsyncIterable<Uint8Array> {
  /** The decoded texture, the caller's to hand to a writer or to free; asked once. */
  [TEXTURE](): Promise<DecodedTexture>;
  /** Streams of its first chunks deflated ahead of the writer (deflate-ahead.ts), if any. */
  readonly [AHEAD]?: AheadStreams | undefined;
}

/** The texture behind an entry's data, if it is a {@link TextureSource}. */
export function decodedTextureOf(data: unknown): (() => Promise<DecodedTexture>) | undefined {
  if (typeof data !== 'object' || data === null || !(TEXTURE in data)) return undefined;
  const source = data as TextureSource;
  return () => source[TEXTURE]();
}

/** The streams deflated ahead of the writer for an entry's data, if it is a {@link TextureSource} that has them. */
export function deflatedAheadOf(data: unknown): AheadStreams | undefined {
  if (typeof data !== 'object' || data === null || !(AHEAD in data)) return undefined;
  return (data as TextureSource)[AHEAD];
}

/** How many decoded bytes may be kept between the passes; shared by one export's textures. */
export class DecodedBudget {
  private left: number;

  constructor(bytes: number) {
    this.left = bytes;
  }

  /** Reserves `bytes` when they fit. */
  take(bytes: number): boolean {
    if (bytes > this.left) return false;
    this.left -= bytes;
    return true;
  }

  /** Returns `bytes` taken before. */
  give(bytes: number): void {
    this.left += bytes;
  }
}

/**
 * The data of a texture entry whose manifest pass decoded `first`: kept when `budget` has
 * room for it (and freed otherwise), decoded again with `decodeAgain` when not. A kept texture
 * is also handed to `ahead`, when given, whose deflater starts on its chunks before the writer
 * reaches it. `dispose()` frees a texture never asked for (an export that stopped early).
 */
export function textureSource(first: DecodedTexture, budget: DecodedBudget,
  decodeAgain: () => Promise<DecodedTexture>, ahead?: DeflateAhead): TextureSource & { dispose(): void } {
  const size = first.byteLength;
  let kept: DecodedTexture | undefined = first;
  if (!budget.take(size)) {
    first.free();
    kept = undefined;
  }
  const streams = kept === undefined ? undefined : ahead?.add(kept);
  const take = async (): Promise<DecodedTexture> => {
    // No chunk of it is copied out once the writer has it.
    streams?.close();
    const texture = kept;
    if (texture === undefined) return decodeAgain();
    kept = undefined;
    budget.give(size);
    return texture;
  };
  return {
    [TEXTURE]: take,
    [AHEAD]: streams,
    async *[Symbol.asyncIterator]() {
      const texture = await take();
      try {
        for (let at = 0; at < size; at += COPY_BYTES) {
          const length = Math.min(COPY_BYTES, size - at);
          yield callWasm(() => texture.bytes(at, length));
        }
      } finally {
        texture.free();
      }
    },
    dispose() {
      streams?.close();
      if (kept === undefined) return;
      kept.free();
      kept = undefined;
      budget.give(size);
    },
  };
}

/** `source` with `onTaken` told the size of the texture the writer takes (a progress bar). */
export function countedTexture(source: AsyncIterable<Uint8Array>, take: () => Promise<DecodedTexture>,
  onTaken: (bytes: number) => void, ahead?: AheadStreams): TextureSource {
  return {
    [TEXTURE]: async () => {
      const texture = await take();
      onTaken(texture.byteLength);
      return texture;
    },
    [AHEAD]: ahead,
    [Symbol.asyncIterator]: () => source[Symbol.asyncIterator](),
  };
}

// The copy's pixel encoder inside WASM, where it tokenizes with simd128 (natively the tests
// exercise the scalar tokenizer): benchPixelsCrossCheck encodes pseudo-random pixels of many
// shapes (rows at and past DEFLATE's window, tails shorter than a pixel, two 1 MiB blocks)
// with the module's encoder and with one using the scalar tokenizer, and compares the
// streams. The streams are also inflated here by zlib, a reader that is not iki's.
import { inflateRawSync } from 'node:zlib';
import { beforeAll, describe, expect, it } from 'vitest';
import { loadWasm } from '../src/wasm.js';

type Wasm = Awaited<ReturnType<typeof loadWasm>>;
let w: Wasm;
beforeAll(async () => {
  w = await loadWasm();
});

/** Flat colour moved by -2, 0 or +2 per channel (a watermark on flat art), with runs. */
function markedFlat(width: number, height: number, seed: number): Uint8Array {
  const px = new Uint8Array(width * height * 4);
  let s = seed >>> 0;
  const rand = () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return s >>> 16;
  };
  for (let i = 0; i < px.length; i += 4) {
    const flat = (i >> 9) % 3 === 0;
    px[i] = 120 + (flat ? 0 : ((rand() % 3) - 1) * 2);
    px[i + 1] = 80 + ((rand() % 3) - 1) * 2;
    px[i + 2] = 200 + ((rand() % 3) - 1) * 2;
    px[i + 3] = 255;
  }
  return px;
}

describe('pixel encoder inside WASM', () => {
  it.each([1, 2, 3])('gives the scalar tokenizer streams (seed %i)', (seed) => {
    expect(w.benchPixelsCrossCheck(seed)).toBe(true);
  });

  it.each([
    [8, 40],
    [333, 17],
    [1024, 300],
    [8192, 3],
  ])('writes DEFLATE that zlib reads back (%i px rows)', (width, height) => {
    const px = markedFlat(width, height, width);
    const codec = new w.BenchCodec(1);
    try {
      const stream = codec.deflatePixels(px, width * 4);
      expect(stream.length).toBeLessThan(px.length);
      // Buffer.compare: toEqual walks a megabyte element by element.
      expect(Buffer.compare(inflateRawSync(stream), px)).toBe(0);
    } finally {
      codec.free();
    }
  });
});

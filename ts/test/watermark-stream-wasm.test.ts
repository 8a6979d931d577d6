// The watermark's row keystream inside WASM, where it comes from iki-crypto's simd128
// ChaCha8 (four blocks per vector) instead of rand_chacha (natively the tests exercise
// rand_chacha): benchWatermarkStreamCrossCheck loads rows of many widths and row numbers up
// to 2^32 - 1, and keystream ranges with partial groups of blocks and a counter that carries
// into its high word, and compares every byte with rand_chacha inside the module.
import { beforeAll, describe, expect, it } from 'vitest';
import { loadWasm } from '../src/wasm.js';

type Wasm = Awaited<ReturnType<typeof loadWasm>>;
let w: Wasm;
beforeAll(async () => {
  w = await loadWasm();
});

describe('watermark keystream inside WASM', () => {
  it.each([1, 2, 3])('is rand_chacha ChaCha8 (seed %i)', (seed) => {
    expect(w.benchWatermarkStreamCrossCheck(seed)).toBe(true);
  });
});

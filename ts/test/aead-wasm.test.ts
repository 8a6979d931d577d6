// The chunk AEAD inside WASM, where iki-crypto runs its own simd128 ChaCha20 and Poly1305
// (natively the tests exercise RustCrypto's code paths): benchAeadCrossCheck seals and opens
// every length 0..=1024 and a few larger ones under random keys, nonces and aad with both
// iki's kernels and RustCrypto's scalar XChaCha20-Poly1305 inside the module, and compares
// ciphertexts, tags and Poly1305 outputs. Several seeds, so different random inputs.
import { beforeAll, describe, expect, it } from 'vitest';
import { loadWasm } from '../src/wasm.js';

type Wasm = Awaited<ReturnType<typeof loadWasm>>;
let w: Wasm;
beforeAll(async () => {
  w = await loadWasm();
});

describe('XChaCha20-Poly1305 inside WASM', () => {
  it.each([1, 2, 3])('agrees with RustCrypto on random inputs (seed %i)', (seed) => {
    expect(w.benchAeadCrossCheck(seed)).toBe(true);
  });
});

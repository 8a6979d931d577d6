// Argon2id v0x13 through WASM (iki_crypto::argon2id, which on wasm32 runs iki-argon2 with
// its simd128 compression function) against answers computed natively: the P-H-C Argon2id
// cases of ../shared/vectors/argon2 (read in place) and tags pinned from RustCrypto's
// `argon2` crate natively (which iki-argon2's portable scalar code also matches, in its
// Rust tests). Equal bytes here show the SIMD path gives what the scalar path gives.
import { readFileSync } from 'node:fs';
import { beforeAll, describe, expect, it } from 'vitest';
import { loadWasm } from '../src/wasm.js';

type Wasm = Awaited<ReturnType<typeof loadWasm>>;
let w: Wasm;
beforeAll(async () => {
  w = await loadWasm();
});

const hex = (bytes: Uint8Array): string => Buffer.from(bytes).toString('hex');
const unhex = (s: string): Uint8Array => new Uint8Array(Buffer.from(s, 'hex'));
const utf8 = (s: string): Uint8Array => new TextEncoder().encode(s);

interface Vector {
  type: string;
  version: number;
  iterations: number;
  memory_kib: number;
  parallelism: number;
  tag_length: number;
  password_utf8?: string;
  password_hex?: string;
  salt_utf8?: string;
  salt_hex?: string;
  secret_hex: string;
  associated_data_hex: string;
  tag_hex: string;
}

const VECTORS = new URL('../../../shared/vectors/argon2/argon2id_vectors.json', import.meta.url);
const phc = (JSON.parse(readFileSync(VECTORS, 'utf8')) as { phc_reference_tests: Vector[] }).phc_reference_tests;
const bytesOf = (h?: string, s?: string): Uint8Array => (h !== undefined ? unhex(h) : utf8(s ?? ''));

// [m_kib, t, p, password hex, salt hex, tag hex]: from the `argon2` crate 0.5.3 natively
// (Argon2id v0x13, 32-byte tag); p > 1 and m not a multiple of 4p included; the last row
// is the password slot's default cost, as bench/cases/argon2.mjs runs it.
const PINNED: [number, number, number, string, string, string][] = [
  [8, 1, 1, '', 'a5a4a7a6a1a0a3a2', '51b43cbc0dc2a964c15965706fe394fec3ce529ed40c49d7d7f560b5ffef4908'],
  [9, 1, 1, '01203f5e7d', 'a5a4a7a6a1a0a3a2ad', 'e11516d898c93c244a7487e932a8b1585b94bb829390967d694d24052acad732'],
  [33, 2, 1, '0221405f7e9dbcdbfa19', 'a5a4a7a6a1a0a3a2adac', '3e826ce3c2fadec9a0259df6275f31508c0bf726ca5be2aeea969cf107998f7d'],
  [64, 3, 2, '032241607f9ebddcfb1a39587796b5', 'a5a4a7a6a1a0a3a2adacaf', '76cc8453632ea0eb8d9211ba3880a85167ebbee74817da8141e067d41f23f0c1'],
  [100, 1, 3, '04234261809fbeddfc1b3a597897b6d5f4133251', 'a5a4a7a6a1a0a3a2adacafae', '6a3b798f6ddd2cbb23f809dcaed52a57d47f6dd8499fd386703dea35df320417'],
  [256, 2, 4, '0524436281a0bfdefd1c3b5a7998b7d6f51433527190afceed', 'a5a4a7a6a1a0a3a2adacafaea9', '2752f332c131ed9624bfc0b240445185506b887760098eb1d73791588c74f9df'],
  [1030, 3, 5, '0625446382a1c0dffe1d3c5b7a99b8d7f61534537291b0cfee0d2c4b6a89', 'a5a4a7a6a1a0a3a2adacafaea9a8', 'bc15ed1d77d7ce7c6af27b91e56f9e76616fc4cec50e46f070fc6e1256c90d8e'],
  [2048, 1, 2, '0726456483a2c1e0ff1e3d5c7b9ab9d8f71635547392b1d0ef0e2d4c6b8aa9c8e70625', 'a5a4a7a6a1a0a3a2adacafaea9a8ab', 'a1011cf3da8f563276fea14d5a7bd6fbdbb93717811cf7abeb6eaaf5fc0e0f48'],
  [4096, 2, 1, '0827466584a3c2e1001f3e5d7c9bbad9f81736557493b2d1f00f2e4d6c8baac9e80726456483a2c1', 'a5a4a7a6a1a0a3a2adacafaea9a8abaa', '913d709c75a1e74e5a8d4d12d7b1e30950fac5beab12e5de999de3770544d2b8'],
  [65536, 3, 1, '636f727265637420686f727365206261747465727920737461706c65', '5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a', 'b5d354876f658cde1a5d125c43b4a60465890d322a2394066a3428b0d1fa231a'],
];

describe('Argon2id through WASM', () => {
  it('gives the P-H-C Argon2id v0x13 tags of shared/vectors/argon2', () => {
    expect(phc).toHaveLength(8);
    for (const v of phc) {
      expect([v.type, v.version, v.tag_length, v.secret_hex, v.associated_data_hex]).toEqual(['argon2id', 0x13, 32, '', '']);
      const tag = w.benchArgon2id(bytesOf(v.password_hex, v.password_utf8), bytesOf(v.salt_hex, v.salt_utf8), v.memory_kib, v.iterations, v.parallelism);
      expect(hex(tag), `m=${v.memory_kib} t=${v.iterations} p=${v.parallelism}`).toBe(v.tag_hex);
    }
  }, 60_000);

  it.each(PINNED)('m=%i t=%i p=%i matches the native tag', (m, t, p, password, salt, tag) => {
    expect(hex(w.benchArgon2id(unhex(password), unhex(salt), m, t, p))).toBe(tag);
  }, 30_000);

  it.each([
    [8, 1, 0],
    [8, 0, 1],
    [7, 1, 1],
    [31, 1, 4],
    [64, 1, 2 ** 24],
    [2 ** 32 - 1, 1, 1],
  ])('refuses m=%i t=%i p=%i with KDF_PARAMS_REFUSED', (m, t, p) => {
    expect(() => w.benchArgon2id(utf8('pw'), new Uint8Array(16), m, t, p)).toThrow(expect.objectContaining({ code: 'KDF_PARAMS_REFUSED' }));
  });

  it('refuses a 7-byte salt with INVALID_LENGTH', () => {
    expect(() => w.benchArgon2id(utf8('pw'), new Uint8Array(7), 8, 1, 1)).toThrow(expect.objectContaining({ code: 'INVALID_LENGTH' }));
  });
});

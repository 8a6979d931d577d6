// The WASM pipeline in Node: pkg/ loads from the file next to the glue, and
// hashing through WASM agrees with node:crypto.
import { createHash, randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { IkiError, callWasm } from '../src/errors.js';
import { loadWasm, wasm, wasmMemoryBytes } from '../src/wasm.js';

const nodeSha256 = (bytes: Uint8Array): string => createHash('sha256').update(bytes).digest('hex');
const hex = (bytes: Uint8Array): string => Buffer.from(bytes).toString('hex');

describe('loadWasm in Node', () => {
  it('throws INVALID_STATE from wasm() before loading', () => {
    expect(() => wasm()).toThrow(IkiError);
    try {
      wasm();
    } catch (e) {
      expect((e as IkiError).code).toBe('INVALID_STATE');
    }
  });

  it('loads once and returns the same module every time', async () => {
    expect(wasmMemoryBytes()).toBe(0);
    const [a, b] = await Promise.all([loadWasm(), loadWasm()]);
    // The module's linear memory, whole 64 KiB WebAssembly pages (the server's pool reads it).
    expect(wasmMemoryBytes()).toBeGreaterThan(0);
    expect(wasmMemoryBytes() % 65_536).toBe(0);
    expect(a).toBe(b);
    expect(await loadWasm()).toBe(a);
    expect(wasm()).toBe(a);
  });

  it('reports the crate version from the workspace Cargo.toml', async () => {
    const cargo = readFileSync(new URL('../../Cargo.toml', import.meta.url), 'utf8');
    const version = /\[workspace\.package\][^[]*?version = "([^"]+)"/.exec(cargo)?.[1];
    expect(version).toMatch(/^\d+\.\d+\.\d+$/);
    expect((await loadWasm()).version()).toBe(version);
  });
});

describe('sha256 through WASM', () => {
  it.each([
    ['empty', new Uint8Array(0)],
    ['abc', new TextEncoder().encode('abc')],
    ['one block boundary (64 bytes)', new Uint8Array(64).fill(0x61)],
    ['1 MiB of random bytes', new Uint8Array(randomBytes(1 << 20))],
  ])('matches node:crypto for %s', async (_name, input) => {
    const { sha256 } = await loadWasm();
    const digest = sha256(input);
    expect(digest).toBeInstanceOf(Uint8Array);
    expect(digest.length).toBe(32);
    expect(hex(digest)).toBe(nodeSha256(input));
  });

  it('FIPS 180-2 vector for "abc"', async () => {
    const { sha256 } = await loadWasm();
    expect(hex(sha256(new TextEncoder().encode('abc')))).toBe(
      'ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad',
    );
  });

  it('streams chunk by chunk to the same digest', async () => {
    const { Sha256Hasher } = await loadWasm();
    const input = new Uint8Array(randomBytes(300_001));
    const hasher = new Sha256Hasher();
    try {
      for (let at = 0; at < input.length; at += 65_536) hasher.update(input.subarray(at, at + 65_536));
      expect(hex(hasher.finish())).toBe(nodeSha256(input));
    } finally {
      hasher.free();
    }
  });

  it('throws INVALID_STATE with details when a finished hasher is reused', async () => {
    const { Sha256Hasher } = await loadWasm();
    const hasher = new Sha256Hasher();
    try {
      hasher.finish();
      let caught: unknown;
      try {
        callWasm(() => hasher.update(new Uint8Array([1])));
      } catch (e) {
        caught = e;
      }
      expect(caught).toBeInstanceOf(IkiError);
      const error = caught as IkiError;
      expect(error.code).toBe('INVALID_STATE');
      expect(error.message).toBe('invalid state: update after finish');
      expect(error.details).toEqual({ operation: 'update after finish' });
      expect(() => callWasm(() => hasher.finish())).toThrow('finish after finish');
    } finally {
      hasher.free();
    }
  });
});

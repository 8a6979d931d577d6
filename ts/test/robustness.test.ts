// Malformed input through the TS API ends in an IkiError with a documented
// code, never a trap (WebAssembly.RuntimeError) or another exception: every
// truncation and every single-bit flip of small signed files (plain, and
// encrypted with a cheap password slot), random byte soup and random chunk
// sequences (SPEC "Container": a reader never panics).
import { beforeAll, describe, expect, it } from 'vitest';
import { type Kind, type Unlock, openContainer } from '../src/container.js';
import { IkiError } from '../src/errors.js';
import { SigningKey } from '../src/keys.js';
import { loadWasm } from '../src/wasm.js';
import { CHEAP, FAKE_SEED, PASSWORD, entry, isKnownIkiError, options, sample, writeAll } from './container-support.js';

interface Case {
  name: string;
  file: Uint8Array;
  unlock?: Unlock;
}

const cases: Case[] = [];

beforeAll(async () => {
  await loadWasm();
  const key = SigningKey.fromSeed(FAKE_SEED);
  const entries = [entry('a.txt', 'deflate', sample(300, 1)), entry('b.bin', 'stored', new Uint8Array([0x78]))];
  cases.push({ name: 'plain', file: await writeAll(entries, options('project', key, { chunkSize: 4096 })) });
  const protection = { password: PASSWORD, passwordCost: CHEAP };
  cases.push({
    name: 'password',
    file: await writeAll(entries, options('project', key, { chunkSize: 4096, protection })),
    unlock: { password: PASSWORD },
  });
  key.free();
});

/** The code an attempt ends with; anything but a documented IkiError fails the test. */
async function codeOf(file: Uint8Array, unlock?: Unlock, kind: Kind = 'project'): Promise<string> {
  try {
    await openContainer(file, { kind, ...(unlock ? { unlock } : {}) });
    return 'ok';
  } catch (error) {
    if (!isKnownIkiError(error)) throw new Error(`not a documented IkiError: ${String(error)}`, { cause: error });
    return (error as IkiError).code;
  }
}

/** A small seeded generator (xorshift32) so failures reproduce. */
function rng(seed: number): () => number {
  let x = seed >>> 0 || 1;
  return () => {
    x ^= x << 13;
    x >>>= 0;
    x ^= x >>> 17;
    x ^= x << 5;
    x >>>= 0;
    return x;
  };
}

describe.each(['plain', 'password'])('a small signed %s file', (name) => {
  const get = (): Case => cases.find((c) => c.name === name)!;

  it('opens as written', async () => {
    expect(await codeOf(get().file, get().unlock)).toBe('ok');
  });

  it('every truncation is an error, TRUNCATED once past the magic', async () => {
    const { file, unlock } = get();
    const codes = new Map<string, number>();
    for (let length = 0; length < file.length; length++) {
      const code = await codeOf(file.subarray(0, length), unlock);
      expect(code, `truncated to ${length}`).not.toBe('ok');
      codes.set(code, (codes.get(code) ?? 0) + 1);
    }
    expect([...codes.keys()]).toEqual(['TRUNCATED']);
  });

  it('every single-bit flip is an error with a documented code', async () => {
    const { file, unlock } = get();
    const codes = new Set<string>();
    const copy = file.slice();
    for (let bit = 0; bit < file.length * 8; bit++) {
      const at = bit >> 3;
      copy[at]! ^= 1 << (bit & 7);
      const code = await codeOf(copy, unlock);
      copy[at]! ^= 1 << (bit & 7);
      expect(code, `bit ${bit}`).not.toBe('ok');
      codes.add(code);
    }
    expect(codes).toContain('BAD_SIGNATURE');
    if (name === 'password') expect(codes).toContain('DECRYPT_FAILED');
  }, 60_000);
});

describe('random input', () => {
  it('random byte soup, with and without a valid preamble', async () => {
    const next = rng(0x1c0ffee);
    const preamble = [0x89, 0x49, 0x4b, 0x49, 0x0d, 0x0a, 0x1a, 0x0a, 1, 0, 0, 0];
    for (let i = 0; i < 400; i++) {
      const soup = new Uint8Array(next() % 3000);
      for (let j = 0; j < soup.length; j++) soup[j] = next() & 0xff;
      if (i % 2 === 1) soup.set(preamble.slice(0, Math.min(preamble.length, soup.length)));
      expect(await codeOf(soup, { password: PASSWORD })).not.toBe('ok');
      expect(await codeOf(soup, undefined, 'model')).not.toBe('ok');
    }
  });

  it('random chunk sequences after a valid preamble', async () => {
    const next = rng(42);
    const types = ['HEAD', 'KEYS', 'MANI', 'DATA', 'SIGN', 'aNCL', 'ZZZZ', '1abc'];
    for (let i = 0; i < 300; i++) {
      const parts: number[] = [0x89, 0x49, 0x4b, 0x49, 0x0d, 0x0a, 0x1a, 0x0a, 1, 0, 0, 0];
      const count = 1 + (next() % 6);
      for (let c = 0; c < count; c++) {
        const type = types[next() % types.length]!;
        const length = next() % 3 === 0 ? next() : next() % 200;
        parts.push(...[...type].map((ch) => ch.charCodeAt(0)), length & 0xff, (length >> 8) & 0xff, (length >> 16) & 0xff, length >>> 24);
        for (let b = 0; b < Math.min(length, 200); b++) parts.push(next() & 0xff);
      }
      expect(await codeOf(new Uint8Array(parts))).not.toBe('ok');
    }
  });
});

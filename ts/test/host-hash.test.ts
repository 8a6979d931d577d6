// The core's SHA-256 backend in Node (ts/src/host-hash.ts, crates/iki-wasm/src/hash.rs):
// the loader installs node:crypto; digests are identical with it and with WASM's own
// SHA-256 (FIPS 180-2 vectors, random lengths and piece sizes across the thresholds, a
// whole container written and opened); a host that throws or answers a wrong-sized digest
// gives INVALID_STATE, never a digest; IKI_SHA256=wasm and useHostSha256(false) keep WASM's.
import { createHash, randomBytes } from 'node:crypto';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { openContainer } from '../src/container.js';
import { IkiError } from '../src/errors.js';
import { HOST_SHA256_MIN_BYTES, hooksOver, setHostSha256, type HostSha256Hooks } from '../src/host-hash.js';
import { SigningKey } from '../src/keys.js';
import { loadWasm, useHostSha256, type IkiWasm } from '../src/wasm.js';
import { FAKE_SEED, entry, imageEntry, options, sample, writeAll } from './container-support.js';

const hex = (bytes: Uint8Array): string => Buffer.from(bytes).toString('hex');
const nodeHex = (bytes: Uint8Array): string => createHash('sha256').update(bytes).digest('hex');

const FIPS: [string, Uint8Array, string][] = [
  ['empty', new Uint8Array(0), 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855'],
  ['B.1 abc', new TextEncoder().encode('abc'), 'ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad'],
  [
    'B.2 448 bits',
    new TextEncoder().encode('abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq'),
    '248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1',
  ],
  ['B.3 a million a', new Uint8Array(1_000_000).fill(0x61), 'cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0'],
];

/** node:crypto hooks that count calls, and can be told to misbehave. */
function countingHooks(misbehave?: 'start' | 'update' | 'finish' | 'short-digest'): HostSha256Hooks & { calls: Record<string, number> } {
  const inner = hooksOver((a) => createHash(a));
  const calls: Record<string, number> = { start: 0, update: 0, fork: 0, finish: 0, release: 0 };
  const count = (name: string): void => {
    calls[name] = (calls[name] ?? 0) + 1;
    if (misbehave === name) throw new Error(`host ${name} failed on purpose`);
  };
  return {
    calls,
    start: () => (count('start'), inner.start()),
    update: (h, b) => (count('update'), inner.update(h, b)),
    fork: (h) => (count('fork'), inner.fork(h)),
    finish: (h) => {
      count('finish');
      const digest = inner.finish(h);
      return misbehave === 'short-digest' ? digest.subarray(0, 31) : digest;
    },
    release: (h) => (count('release'), inner.release(h)),
  };
}

function streamed(core: IkiWasm, data: Uint8Array, piece: (i: number) => number): string {
  const hasher = new core.Sha256Hasher();
  try {
    let at = 0;
    for (let i = 0; at < data.length; i++) {
      const n = Math.max(1, piece(i));
      hasher.update(data.subarray(at, at + n));
      at += n;
    }
    return hex(hasher.finish());
  } finally {
    hasher.free();
  }
}

let core: IkiWasm;
beforeAll(async () => {
  core = await loadWasm();
});
afterEach(async () => {
  await useHostSha256(true);
});

describe('the Node loader', () => {
  it('installs node:crypto, and useHostSha256(false) removes it', async () => {
    expect(core.hostSha256Installed()).toBe(process.env.IKI_SHA256 !== 'wasm');
    expect(await useHostSha256(false)).toBe(false);
    expect(core.hostSha256Installed()).toBe(false);
    expect(await useHostSha256(true)).toBe(true);
  });

  it('keeps WASM when IKI_SHA256=wasm', async () => {
    const before = process.env.IKI_SHA256;
    process.env.IKI_SHA256 = 'wasm';
    try {
      expect(await setHostSha256(core, 'auto')).toBe(false);
      expect(core.hostSha256Installed()).toBe(false);
    } finally {
      if (before === undefined) delete process.env.IKI_SHA256;
      else process.env.IKI_SHA256 = before;
    }
  });
});

describe.each([
  ['node:crypto', true],
  ['WASM', false],
])('SHA-256 with %s', (_name, host) => {
  it.each(FIPS)('FIPS 180-2 %s, one shot and streamed', async (_v, message, expected) => {
    expect(await useHostSha256(host)).toBe(host);
    expect(hex(core.sha256(message))).toBe(expected);
    expect(streamed(core, message, () => 65_536)).toBe(expected);
  });

  it('random lengths in random pieces across the thresholds', async () => {
    await useHostSha256(host);
    const data = new Uint8Array(randomBytes(400_000));
    const lengths = [0, 1, 55, 56, 63, 64, 65, HOST_SHA256_MIN_BYTES - 1, HOST_SHA256_MIN_BYTES, HOST_SHA256_MIN_BYTES + 1, 4095, 4096, 4097, 65_536, 65_537];
    for (let i = 0; i < 30; i++) lengths.push(Math.floor(Math.random() * data.length));
    for (const len of lengths) {
      const message = data.subarray(0, len);
      const max = [1, 100, 4096, 70_000][len % 4] ?? 1;
      expect(streamed(core, message, () => Math.floor(Math.random() * max) + 1), `length ${len}`).toBe(nodeHex(message));
      expect(hex(core.sha256(message))).toBe(nodeHex(message));
    }
  });

  it('writes and opens a container whose entry hashes and signature verify', async () => {
    await useHostSha256(host);
    const key = SigningKey.fromSeed(FAKE_SEED);
    const entries = [entry('a.bin', 'stored', sample(300_000, 3)), entry('b.bin', 'deflate', sample(200_001, 4)), imageEntry('t.rgba', 64, 48, 5)];
    const file = await writeAll(entries, options('model', key));
    await useHostSha256(!host);
    const opened = await openContainer(file, { kind: 'model' });
    expect(opened.verified).toBeDefined();
    expect(nodeHex(opened.entries.get('a.bin') ?? new Uint8Array())).toBe(nodeHex(sample(300_000, 3)));
  });
});

describe('a host that fails', () => {
  it.each(['start', 'update', 'finish', 'short-digest'] as const)('gives INVALID_STATE when %s misbehaves', (how) => {
    const hooks = countingHooks(how);
    core.installHostSha256(hooks, 0);
    const big = new Uint8Array(100_000).fill(7);
    let thrown: unknown;
    try {
      core.sha256(big);
    } catch (error) {
      thrown = error;
    }
    expect((thrown as { code?: string }).code).toBe('INVALID_STATE');
    expect(() => streamed(core, big, () => 10_000)).toThrow();
  });

  it('a container read fails as INVALID_STATE, not as a bad signature or a wrong hash', async () => {
    const key = SigningKey.fromSeed(FAKE_SEED);
    const file = await writeAll([entry('a.bin', 'stored', sample(300_000, 9))], options('model', key));
    core.installHostSha256(countingHooks('update'), 0);
    const error = await openContainer(file, { kind: 'model' }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(IkiError);
    expect((error as IkiError).code).toBe('INVALID_STATE');
  });

  it('short messages never reach the host and large updates cross without extra calls', () => {
    const hooks = countingHooks();
    core.installHostSha256(hooks, HOST_SHA256_MIN_BYTES);
    core.sha256(new Uint8Array(HOST_SHA256_MIN_BYTES - 1));
    expect(hooks.calls.start).toBe(0);
    const data = new Uint8Array(randomBytes(10 * 65_536));
    expect(streamed(core, data, () => 65_536)).toBe(nodeHex(data));
    expect(hooks.calls).toMatchObject({ start: 1, update: 10, finish: 1 });
  });
});

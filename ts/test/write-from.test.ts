// WasmWriter.writeFrom (crates/iki-wasm/src/writer/input.rs, issue 28 item 4): a stored
// entry's whole chunk is copied from the caller's Uint8Array straight into the writer's output
// (and sealed there when the file is encrypted); anything else is written as `write` would. The
// DATA chunks are those `write` makes, pieces of any size are taken, the source may be reused
// as soon as the call returns, and an encrypted file reads back.
import { beforeAll, describe, expect, it } from 'vitest';
import { openContainer, type NewEntry } from '../src/container.js';
import { callWasm } from '../src/errors.js';
import { handleOf, SigningKey } from '../src/keys.js';
import { loadWasm, wasm } from '../src/wasm.js';
import { CHEAP, FAKE_SEED, PASSWORD, dataChunks, entry, metaFor, sample, sha256hex } from './container-support.js';

const CHUNK = 64 * 1024;
beforeAll(async () => {
  await loadWasm();
});

/** A writer of `entries` (their data left out) signed by the fake key (copied into the options), with a password slot when given. */
function newWriter(entries: NewEntry[], password?: string) {
  const key = SigningKey.fromSeed(FAKE_SEED);
  const o = new (wasm().WasmWriterOptions)('project', handleOf(key), JSON.stringify({ kind: 'device', name: 't' }), 1_700_000_000_000);
  key.free();
  try {
    o.setChunkSize(CHUNK);
    if (password !== undefined) o.addPassword(new TextEncoder().encode(password), CHEAP.mKib, CHEAP.t, CHEAP.p);
    const listed = entries.map(({ data: _, ...rest }) => rest);
    return callWasm(() => new (wasm().WasmWriter)(o, JSON.stringify({ entries: listed, meta: metaFor('project') })));
  } finally {
    o.free();
  }
}

/** A stored entry over several chunks (a short last one), a deflated one, a one-byte stored one. */
const ENTRIES: NewEntry[] = [
  entry('a/stored.png', 'stored', sample(2 * CHUNK + 777, 1, true)),
  entry('a/text.txt', 'deflate', sample(100_000, 2)),
  entry('a/one.bin', 'stored', sample(1, 3, true)),
];

/**
 * The file of {@link ENTRIES}, each given in pieces of `piece` bytes (0: a whole chunk) through
 * `how`; with `reuse`, every piece's array is overwritten right after the call.
 */
function written(how: 'write' | 'writeFrom', piece: number, password?: string, reuse = false): Uint8Array {
  const writer = newWriter(ENTRIES, password);
  const parts: Uint8Array[] = [];
  try {
    parts.push(writer.takeOutput());
    for (const e of ENTRIES) {
      const bytes = e.data as Uint8Array;
      const step = piece === 0 ? CHUNK : piece;
      for (let at = 0; at < bytes.length; at += step) {
        const copy = bytes.slice(at, at + step);
        callWasm(() => (how === 'write' ? writer.write(copy) : writer.writeFrom(copy)));
        if (reuse) copy.fill(0xaa);
        parts.push(writer.takeOutput());
      }
      callWasm(() => writer.endEntry());
    }
    parts.push(callWasm(() => writer.finish()));
  } finally {
    writer.free();
  }
  return Buffer.concat(parts);
}

describe('WasmWriter.writeFrom', () => {
  it('gives the DATA chunks that write gives, whole chunks or pieces, with the source reused at once', () => {
    const reference = dataChunks(written('write', 0));
    expect(reference.length).toBe(6);
    for (const piece of [0, 10_000, CHUNK + 1]) {
      expect(dataChunks(written('writeFrom', piece, undefined, true))).toEqual(reference);
    }
  });

  it('writes an encrypted file that reads back', { timeout: 30_000 }, async () => {
    for (const piece of [0, 10_000]) {
      const file = written('writeFrom', piece, PASSWORD, true);
      const opened = await openContainer(file, { kind: 'project', unlock: { password: PASSWORD } });
      for (const e of ENTRIES) expect(sha256hex(opened.entries.get(e.path) ?? new Uint8Array(1))).toBe(sha256hex(e.data as Uint8Array));
    }
  });

  it('refuses what write refuses: more bytes than the entry, after finish', () => {
    const writer = newWriter([entry('x.bin', 'stored', sample(10, 4, true))]);
    try {
      expect(() => callWasm(() => writer.writeFrom(new Uint8Array(11)))).toThrow(expect.objectContaining({ code: 'INVALID_ARGUMENT' }));
    } finally {
      writer.free();
    }
  });
});

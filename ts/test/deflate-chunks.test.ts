// Chunks deflated away from the writer (deflate-chunk.ts, `writeDeflated`): with an in-thread
// deflater, one that answers out of order, and iki pack's pool of worker threads (the built
// ts/dist/cli/deflate-worker.js, `make build`), the DATA chunks are byte for byte those of the
// sequential writer and the contents read back; a stream that does not decode to exactly the
// chunk's bytes is refused.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openContainer, type NewEntry } from '../src/container.js';
import { DeflatePool, defaultJobs } from '../src/cli/deflate-pool.js';
import { defaultDeflateWorkers } from '../src/browser/deflate-pool.js';
import { deflateChunk, inThreadDeflater, type ChunkDeflater, type DeflateChunkOptions } from '../src/deflate-chunk.js';
import { callWasm } from '../src/errors.js';
import { SigningKey, X25519Identity, handleOf } from '../src/keys.js';
import { loadWasm, wasm, wasmModule } from '../src/wasm.js';
import { dataChunks, entry, FAKE_SEED, imageEntry, options, rejection, sample, sha256hex, writeAll } from './container-support.js';

const CHUNK = 64 * 1024;

let key: SigningKey;
let pool: DeflatePool;
beforeAll(async () => {
  await loadWasm();
  key = SigningKey.fromSeed(FAKE_SEED);
  pool = await DeflatePool.start(3);
});
afterAll(async () => {
  key.free();
  await pool.close();
});

/** A texture that compresses (gradients) with a noise column, so chunks take every path. */
function gradientEntry(width: number, height: number): NewEntry {
  const noise = sample(width * height, 9, true);
  const px = new Uint8Array(width * height * 4);
  for (let i = 0; i < width * height; i++) px.set([i % width, (i / width) & 255, i % width > 200 ? noise[i] ?? 0 : 0, 255], i * 4);
  return entry('g.png', 'rgba8', px, { kind: 'texture', width, height, source: 'image/png' });
}

function entries(): NewEntry[] {
  return [
    gradientEntry(300, 190),
    imageEntry('n.png', 256, 200, 3),
    entry('a.txt', 'deflate', sample(150_000, 4)),
    entry('s.bin', 'stored', sample(70_000, 5)),
    entry('e.txt', 'deflate', new Uint8Array(0)),
  ];
}

/** Answers later chunks first: the writer must still emit them in order. */
const shuffling: ChunkDeflater = {
  concurrency: 4,
  deflate: (raw, o) => new Promise((resolve) => {
    const chunk = deflateChunk(raw, o);
    setTimeout(() => resolve(chunk), raw.length % 7 === 0 ? 0 : 20 - (raw[0] ?? 0) % 15);
  }),
};

describe('chunks deflated elsewhere', () => {
  it.each([
    ['in this thread', () => inThreadDeflater],
    ['out of order', () => shuffling],
    ['by a pool of worker threads', () => pool],
  ])('give the sequential writer\'s DATA chunks, %s', async (_name, deflater) => {
    const sequential = await writeAll(entries(), options('model', key, { chunkSize: CHUNK }));
    const spread = await writeAll(entries(), options('model', key, { chunkSize: CHUNK, deflater: deflater() }));
    // Compared by digest: element-wise equality of megabytes is slow in expect().
    const [a, b] = [dataChunks(sequential).map(sha256hex), dataChunks(spread).map(sha256hex)];
    expect(a.length).toBeGreaterThan(8);
    expect(b).toEqual(a);
    expect(spread.length).toBe(sequential.length);
    const opened = await openContainer(spread, { kind: 'model' });
    for (const e of entries()) expect(sha256hex(opened.entries.get(e.path) ?? new Uint8Array(1))).toBe(e.sha256);
  });

  it('give the same contents and size when encrypted', async () => {
    const identity = X25519Identity.generate();
    try {
      const protection = { recipients: [identity.publicKey] };
      const sequential = await writeAll(entries(), options('model', key, { chunkSize: CHUNK, protection }));
      const spread = await writeAll(entries(), options('model', key, { chunkSize: CHUNK, protection, deflater: pool }));
      expect(spread.length).toBe(sequential.length);
      const opened = await openContainer(spread, { kind: 'model', unlock: { identity } });
      for (const e of entries()) expect(sha256hex(opened.entries.get(e.path) ?? new Uint8Array(1))).toBe(e.sha256);
    } finally {
      identity.free();
    }
  });
});

/** A deflater that deflates what `lie` makes of each chunk's bytes, or changes its stream. */
function lying(lie: (raw: Uint8Array, o: DeflateChunkOptions) => Uint8Array): ChunkDeflater {
  return { concurrency: 1, deflate: async (raw, o) => lie(raw, o) };
}

/** `bytes` with one byte changed at `at`. */
function flipped(bytes: Uint8Array, at: number): Uint8Array {
  const out = bytes.slice();
  out[at] = (out[at] ?? 0) ^ 0x55;
  return out;
}

describe('a stream that is not the chunk\'s', () => {
  it.each([
    ['the stream of one byte less', (raw: Uint8Array, o: DeflateChunkOptions) => deflateChunk(raw.subarray(1), o)],
    ['the stream of other bytes of the same length', (raw: Uint8Array, o: DeflateChunkOptions) => deflateChunk(flipped(raw, raw.length >> 1), o)],
    ['a damaged stream', (raw: Uint8Array, o: DeflateChunkOptions) => { const d = deflateChunk(raw, o); return flipped(d, d.length - 1); }],
  ])('fails the write with BAD_DATA: %s', async (_name, lie) => {
    const error = await rejection(writeAll(entries(), options('model', key, { chunkSize: CHUNK, deflater: lying(lie) })));
    expect(error).toMatchObject({ name: 'IkiError', code: 'BAD_DATA' });
  });

  it('is refused by the WASM writer with nothing written, and the writer goes on', async () => {
    const text = sample(10_000, 6);
    const [e] = [entry('a.txt', 'deflate', text)];
    const signer = JSON.stringify({ kind: 'device', name: 'test' });
    const o = new (wasm().WasmWriterOptions)('model', handleOf(key), signer, 1_700_000_000_000);
    const manifest = JSON.stringify({ entries: [{ path: 'a.txt', type: e?.type, size: text.length, encoding: 'deflate', sha256: e?.sha256 }],
      meta: { format: 'iki-model', version: 1, name: 'Test model', role: 'master' } });
    const writer = new (wasm().WasmWriter)(o, manifest);
    o.free();
    try {
      writer.takeOutput();
      const o = { deflateLevel: 6, chunkSize: 1024 * 1024, encrypted: false };
      const good = deflateChunk(text, o);
      // Other bytes of the same length (level 0: stored blocks, the same framing).
      for (const level of [0, 6]) {
        const other = deflateChunk(flipped(text, 5_000), { ...o, deflateLevel: level });
        expect(() => callWasm(() => writer.writeDeflated(text, other))).toThrow(expect.objectContaining({ code: 'BAD_DATA' }));
        expect(writer.takeOutput().length).toBe(0);
      }
      expect(() => callWasm(() => writer.writeDeflated(text.subarray(1), good))).toThrow(expect.objectContaining({ code: 'INVALID_ARGUMENT' }));
      expect(writer.takeOutput().length).toBe(0);
      callWasm(() => writer.writeDeflated(text, good));
      expect(writer.takeOutput().length).toBeGreaterThan(good.length);
      callWasm(() => writer.endEntry());
      expect(writer.finish().length).toBeGreaterThan(64);
    } finally {
      writer.free();
    }
  });
});

describe('iki pack\'s deflate pool', () => {
  it('posts this thread\'s compiled module to its workers instead of having each compile it', async () => {
    const module = wasmModule();
    expect(module).toBeInstanceOf(WebAssembly.Module);
    // The workers instantiated the module posted to them (the pool above deflated with it).
    const stream = await pool.deflate(sample(5_000, 8), { deflateLevel: 6, chunkSize: CHUNK, encrypted: false });
    expect(stream).toEqual(deflateChunk(sample(5_000, 8), { deflateLevel: 6, chunkSize: CHUNK, encrypted: false }));
  });
});

describe('the default number of deflate threads', () => {
  it('leaves a core to the writer, takes two on two cores, deflates in the main thread on one, and keeps within the bounds', () => {
    expect([1, 2, 3, 4, 8, 65, 200].map((cores) => defaultJobs(cores))).toEqual([1, 2, 2, 3, 7, 64, 64]);
    expect([0, 1, 2, 3, 8, 17, 64].map((cores) => defaultDeflateWorkers(cores))).toEqual([1, 1, 1, 2, 7, 16, 16]);
  });
});

// Reused output batches (output-batches.ts BatchPool, project/save.ts; issue 28 item 4): a batch
// given back once its sink wrote it is the buffer of a later batch, so a save to a file of the
// File System Access API (which copies what it is given before its write resolves) fills a few
// buffers over and over instead of a fresh one per 4 MiB; the file is the same, and only
// buffers of the pool's own size, whole and not moved away, are taken back.
import { afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { BatchingFileDigester, localDigestTransport } from '../src/file-digest.js';
import { BatchPool, MAX_POOLED_BATCHES } from '../src/output-batches.js';
import { openProject, saveProject } from '../src/project/index.js';
import { loadWasm } from '../src/wasm.js';
import { sample, sha256hex } from './container-support.js';
import { browserSigner } from './project-support.js';

const MIB = 1024 * 1024;
// Output of about 40 MiB: ten batches of 4 MiB (save.ts hands batches that size on without a copy).
const ASSETS = [sample(24 * MIB + 5, 21, true), sample(16 * MIB, 22, true)];

beforeAll(async () => {
  await loadWasm();
});

describe('BatchPool', () => {
  it('hands a buffer given back out again, and keeps only whole buffers of its own sizes', () => {
    const pool = new BatchPool();
    const first = pool.take(1024);
    expect(pool.take(1024).buffer).not.toBe(first.buffer);
    pool.give(first.subarray(0, 100));
    const again = pool.take(1024);
    expect(again.buffer).toBe(first.buffer);
    expect(again.length).toBe(1024);
    expect(pool.reused).toBe(1);
    // Not its size, a view into the middle, a detached buffer.
    pool.give(new Uint8Array(2048));
    pool.give(again.subarray(1));
    const moved = pool.take(1024);
    structuredClone(moved.buffer, { transfer: [moved.buffer] });
    pool.give(moved);
    expect(pool.take(1024).buffer).not.toBe(again.buffer);
    expect(pool.reused).toBe(1);
    // At most MAX_POOLED_BATCHES kept, each once.
    const many = Array.from({ length: MAX_POOLED_BATCHES + 2 }, () => pool.take(1024));
    for (const b of many) pool.give(b);
    pool.give(many[0] as Uint8Array);
    const back = new Set(Array.from({ length: MAX_POOLED_BATCHES + 2 }, () => pool.take(1024).buffer));
    expect(many.filter((b) => back.has(b.buffer)).length).toBe(MAX_POOLED_BATCHES);
  });
});

describe('a project saved to a file that copies its chunks', () => {
  const globals = globalThis as { FileSystemWritableFileStream?: unknown };
  afterEach(() => {
    delete globals.FileSystemWritableFileStream;
    vi.restoreAllMocks();
  });

  /**
   * A stand-in for the File System Access API's file, which is done with a chunk once its write
   * resolves: this one copies the chunk only at the end of its write, so a batch reused before
   * that would leave other bytes in the file.
   */
  function fileLike() {
    class FileSystemWritableFileStream extends WritableStream<Uint8Array> {}
    globals.FileSystemWritableFileStream = FileSystemWritableFileStream;
    const parts: Uint8Array[] = [];
    const stream = new FileSystemWritableFileStream({
      async write(chunk) {
        await new Promise((done) => setTimeout(done, 2));
        parts.push(chunk.slice());
      },
    });
    return { stream, bytes: () => new Uint8Array(Buffer.concat(parts)) };
  }

  async function save(output: WritableStream<Uint8Array>) {
    const { signer } = await browserSigner();
    return saveProject({
      snapshot: { layers: 2 }, signer, app: 'iki-tests 1', name: 'Pooled', canvas: { width: 1, height: 1 }, chunkSize: MIB,
      assets: ASSETS.map((bytes, i) => ({ name: `images/${i}.png`, data: bytes })), now: () => 1_700_000_000_000,
      fileDigest: new BatchingFileDigester(localDigestTransport()), output,
    });
  }

  it('reuses the batches it wrote, and the file reads back', { timeout: 30_000 }, async () => {
    const taken: ArrayBufferLike[] = [];
    const take = BatchPool.prototype.take;
    vi.spyOn(BatchPool.prototype, 'take').mockImplementation(function (this: BatchPool, bytes: number) {
      const batch = take.call(this, bytes);
      taken.push(batch.buffer);
      return batch;
    });
    const file = fileLike();
    const saved = await save(file.stream);
    const bytes = file.bytes();
    expect(bytes.length).toBe(saved.bytes);
    // Ten batches in a handful of buffers, each filled again.
    expect(taken.length).toBeGreaterThan(8);
    expect(taken.length - new Set(taken).size).toBeGreaterThanOrEqual(3);
    const opened = await openProject(new Blob([bytes]));
    expect(opened.verdict.kind).toBe('device');
    for (const [i, asset] of ASSETS.entries()) expect(sha256hex(await opened.readAsset(`images/${i}.png`))).toBe(sha256hex(asset));
    opened.close();
  });

  it('takes no batch back from any other sink', async () => {
    const spy = vi.spyOn(BatchPool.prototype, 'give');
    const parts: Uint8Array[] = [];
    await save(new WritableStream<Uint8Array>({ write(chunk) { parts.push(chunk); } }));
    expect(spy).not.toHaveBeenCalled();
    expect(parts.length).toBeGreaterThan(0);
  });
});

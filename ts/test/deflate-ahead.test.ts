// Textures deflated ahead of the writer (deflate-ahead.ts, issue 28 item 2): while the manifest
// pass decodes the next textures, a kept texture's chunks are already with the deflater; the
// writer then writes those streams (each still checked against the texture's pixels) and
// deflates only the rest, for the very DATA chunks of a writer without any of this. The work
// ahead stays within its limits and stops for a texture the writer has taken.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { NewEntry } from '../src/container.js';
import { AHEAD_HELD_BYTES, DeflateAhead } from '../src/deflate-ahead.js';
import { deflateChunk, type ChunkDeflater, type DeflateChunkOptions } from '../src/deflate-chunk.js';
import { encodePng } from '../src/image.js';
import { SigningKey } from '../src/keys.js';
import { decodeTextureHandle } from '../src/package/model-plan.js';
import { readModelFolder } from '../src/package/model.js';
import { DecodedBudget, deflatedAheadOf, textureSource } from '../src/package/texture-source.js';
import { loadWasm } from '../src/wasm.js';
import { dataChunks, FAKE_SEED, options, rejection, sample, sha256hex, writeAll } from './container-support.js';

const CHUNK = 16 * 1024;
const [WIDTH, HEIGHT] = [200, 150];
/** Whole rows of 800 bytes per 16 KiB chunk: 20 rows, 16,000 bytes; 150 rows make 8 chunks. */
const STEP = 16_000;
const CHUNKS = Math.ceil((WIDTH * HEIGHT * 4) / STEP);
const AHEAD_OPTIONS: DeflateChunkOptions = { deflateLevel: 6, chunkSize: CHUNK, encrypted: false };

let key: SigningKey;
beforeAll(async () => {
  await loadWasm();
  key = SigningKey.fromSeed(FAKE_SEED);
});
afterAll(() => key.free());

/** A 200 x 150 texture (gradients and a noise band) as PNG and as pixels. */
function texture(seed = 3): { png: Uint8Array; rgba: Uint8Array } {
  const noise = sample(WIDTH * HEIGHT, seed, true);
  const rgba = new Uint8Array(WIDTH * HEIGHT * 4);
  for (let i = 0; i < WIDTH * HEIGHT; i++) rgba.set([i % WIDTH, (i / WIDTH) & 255, i % WIDTH > 150 ? noise[i] ?? 0 : 0, 255], i * 4);
  return { png: encodePng(WIDTH, HEIGHT, rgba), rgba };
}

function entryOf(data: NewEntry['data'], rgba: Uint8Array): NewEntry {
  return { path: 't.png', type: 'image/x-rgba8', encoding: 'rgba8', size: rgba.length, sha256: sha256hex(rgba), data,
    meta: { kind: 'texture', width: WIDTH, height: HEIGHT, source: 'image/png' } };
}

/** A deflater in this thread that counts its calls and the most it had at once; `held` keeps each call waiting until released. */
function countingDeflater(transform: (raw: Uint8Array) => Uint8Array = (raw) => raw) {
  const state = { calls: 0, now: 0, most: 0, held: false, waiting: [] as (() => void)[] };
  const deflater: ChunkDeflater = {
    concurrency: 2,
    deflate: async (raw, o) => {
      state.calls += 1;
      state.now += 1;
      state.most = Math.max(state.most, state.now);
      if (state.held) await new Promise<void>((resolve) => state.waiting.push(resolve));
      state.now -= 1;
      return deflateChunk(transform(raw), o);
    },
  };
  const release = async (): Promise<void> => {
    state.held = false;
    for (const go of state.waiting.splice(0)) go();
    await new Promise((resolve) => setTimeout(resolve, 10));
  };
  return { deflater, state, release };
}

/** The source of a kept texture whose chunks start on `ahead`. */
function keptSource(png: Uint8Array, ahead: DeflateAhead) {
  return textureSource(decodeTextureHandle(png, 't.png', WIDTH, HEIGHT, true), new DecodedBudget(1 << 20),
    () => Promise.reject(new Error('kept, not decoded again')), ahead);
}

describe('textures deflated ahead of the writer', () => {
  it('give the DATA chunks of a writer without them, every chunk deflated once', { timeout: 30_000 }, async () => {
    const { png, rgba } = texture();
    const plain = await writeAll([entryOf(rgba, rgba)], options('model', key, { chunkSize: CHUNK }));
    const { deflater, state, release } = countingDeflater();
    state.held = true;
    const ahead = new DeflateAhead(deflater, AHEAD_OPTIONS, { inFlight: 3, heldBytes: AHEAD_HELD_BYTES });
    const source = keptSource(png, ahead);
    // Started before any writer: as many as the limit allows, and no more while they are out.
    expect(deflatedAheadOf(source)?.count).toBe(3);
    expect(state.calls).toBe(3);
    await release();
    // Each one back makes room for the next: all of the texture's chunks, at most 3 at once.
    expect(deflatedAheadOf(source)?.count).toBe(CHUNKS);
    expect(state.most).toBeLessThanOrEqual(3);
    const file = await writeAll([entryOf(source, rgba)], options('model', key, { chunkSize: CHUNK, deflater }));
    expect(dataChunks(file)).toEqual(dataChunks(plain));
    expect(state.calls).toBe(CHUNKS);
  });

  it('stop for a texture the writer takes: its other chunks are deflated by the writer\'s feed', { timeout: 30_000 }, async () => {
    const { png, rgba } = texture();
    const plain = await writeAll([entryOf(rgba, rgba)], options('model', key, { chunkSize: CHUNK }));
    const { deflater, state, release } = countingDeflater();
    state.held = true;
    const ahead = new DeflateAhead(deflater, AHEAD_OPTIONS, { inFlight: 2, heldBytes: AHEAD_HELD_BYTES });
    const source = keptSource(png, ahead);
    expect(deflatedAheadOf(source)?.count).toBe(2);
    const writing = writeAll([entryOf(source, rgba)], options('model', key, { chunkSize: CHUNK, deflater }));
    // Only once the writer has taken the texture (no chunk of it starts ahead any more) let the deflater go.
    for (let waited = 0; deflatedAheadOf(source)?.open === true; waited += 5) {
      if (waited > 5000) throw new Error('the writer never reached the texture');
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    await release();
    const file = await writing;
    expect(dataChunks(file)).toEqual(dataChunks(plain));
    // The two started ahead, then the other six once each through the writer's feed: none
    // started ahead once the writer had the texture, although the deflater was free again.
    expect(deflatedAheadOf(source)?.count).toBe(0);
    expect(state.calls).toBe(CHUNKS);
  });

  it('start nothing past the bytes held for the writer, and go on once it takes them', { timeout: 30_000 }, async () => {
    const { png, rgba } = texture();
    const { deflater, state } = countingDeflater();
    // Streams of this texture are about 1-6 KiB; after the first is back, the bound is reached.
    const ahead = new DeflateAhead(deflater, AHEAD_OPTIONS, { inFlight: 1, heldBytes: 1 });
    const source = keptSource(png, ahead);
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(deflatedAheadOf(source)?.count).toBe(1);
    expect(state.calls).toBe(1);
    const plain = await writeAll([entryOf(rgba, rgba)], options('model', key, { chunkSize: CHUNK }));
    const file = await writeAll([entryOf(source, rgba)], options('model', key, { chunkSize: CHUNK, deflater }));
    expect(dataChunks(file)).toEqual(dataChunks(plain));
    expect(state.calls).toBe(CHUNKS);
  });

  it('are not used when made for other options, and a stream that is not the chunk is refused', { timeout: 30_000 }, async () => {
    const { png, rgba } = texture();
    const plain = await writeAll([entryOf(rgba, rgba)], options('model', key, { chunkSize: CHUNK }));
    // Made for a level the writer does not use: left aside, every chunk deflated again.
    const { deflater, state } = countingDeflater();
    const other = new DeflateAhead(deflater, { ...AHEAD_OPTIONS, deflateLevel: 1 });
    const source = keptSource(png, other);
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(deflatedAheadOf(source)?.count).toBe(CHUNKS);
    const file = await writeAll([entryOf(source, rgba)], options('model', key, { chunkSize: CHUNK, deflater }));
    expect(dataChunks(file)).toEqual(dataChunks(plain));
    expect(state.calls).toBe(2 * CHUNKS);
    // Streams made ahead from other bytes: BAD_DATA, as from any deflater.
    const lying = countingDeflater((raw) => raw.map((b) => b ^ 1));
    const source2 = keptSource(png, new DeflateAhead(lying.deflater, AHEAD_OPTIONS));
    const honest = countingDeflater();
    const error = await rejection(writeAll([entryOf(source2, rgba)], options('model', key, { chunkSize: CHUNK,
      deflater: honest.deflater })));
    expect(error).toMatchObject({ code: 'BAD_DATA' });
  });

  it('start nothing after stop, and nothing for a texture that is not kept', async () => {
    const { png } = texture();
    const { deflater, state } = countingDeflater();
    const ahead = new DeflateAhead(deflater, AHEAD_OPTIONS);
    const notKept = textureSource(decodeTextureHandle(png, 't.png', WIDTH, HEIGHT, true), new DecodedBudget(0),
      () => Promise.reject(new Error('unused')), ahead);
    expect(deflatedAheadOf(notKept)).toBeUndefined();
    ahead.stop();
    const afterStop = keptSource(png, ahead);
    expect(deflatedAheadOf(afterStop)).toBeUndefined();
    expect(state.calls).toBe(0);
    afterStop.dispose();
  });

  it('are what iki pack\'s folder reader starts for the textures it keeps', { timeout: 30_000 }, async () => {
    const dir = mkdtempSync(join(tmpdir(), 'iki-ahead-'));
    const [a, b] = [texture(5), texture(6)];
    writeFileSync(join(dir, 'm.model3.json'), JSON.stringify({ Version: 3, FileReferences: { Moc: 'm.moc3', Textures: ['a.png', 'b.png'] } }));
    writeFileSync(join(dir, 'm.moc3'), new Uint8Array([0x4d, 0x4f, 0x43, 0x33, 3, 1, 2, 3]));
    writeFileSync(join(dir, 'a.png'), a.png);
    writeFileSync(join(dir, 'b.png'), b.png);
    const { deflater, state } = countingDeflater();
    const ahead = new DeflateAhead(deflater, AHEAD_OPTIONS);
    // Room for one decoded texture: the first is kept and deflated ahead, the second is not.
    const pkg = await readModelFolder(dir, { keepDecodedBytes: WIDTH * HEIGHT * 4, deflateAhead: ahead });
    const [first, second] = pkg.entries.filter((e) => e.encoding === 'rgba8');
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(deflatedAheadOf(first?.data)?.count).toBe(CHUNKS);
    expect(deflatedAheadOf(second?.data)).toBeUndefined();
    expect(state.calls).toBe(CHUNKS);
    for (const entry of pkg.entries) (entry.data as { dispose?: () => void }).dispose?.();
  });
});

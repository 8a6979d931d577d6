// Textures decoded once (package/texture-source.ts, WASM DecodedTexture, WasmWriter.beginTexture):
// an entry written from a texture kept in WASM memory gives the very DATA chunks of the same
// pixels written from JS and reads back; a digest that is not the manifest's is refused before
// any byte; the writer refuses other writes while a texture is in progress; the budget decides
// which textures are kept and which are decoded again; `iki pack`'s folder reader keeps them.
import { createHash } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openContainer, type NewEntry } from '../src/container.js';
import { deflateChunk, inThreadDeflater, type ChunkDeflater } from '../src/deflate-chunk.js';
import { callWasm } from '../src/errors.js';
import { encodePng } from '../src/image.js';
import { handleOf, SigningKey } from '../src/keys.js';
import { decodeTextureHandle } from '../src/package/model-plan.js';
import { readModelFolder } from '../src/package/model.js';
import { DecodedBudget, decodedTextureOf, textureSource } from '../src/package/texture-source.js';
import { loadWasm, wasm } from '../src/wasm.js';
import { dataChunks, FAKE_SEED, options, rejection, sample, sha256hex, writeAll } from './container-support.js';

const CHUNK = 64 * 1024;
let key: SigningKey;
beforeAll(async () => {
  await loadWasm();
  key = SigningKey.fromSeed(FAKE_SEED);
});
afterAll(() => key.free());

/** A 200 x 150 texture (gradients and a noise band) as PNG and as pixels. */
function texture(seed = 3): { png: Uint8Array; rgba: Uint8Array; width: number; height: number } {
  const [width, height] = [200, 150];
  const noise = sample(width * height, seed, true);
  const rgba = new Uint8Array(width * height * 4);
  for (let i = 0; i < width * height; i++) rgba.set([i % width, (i / width) & 255, i % width > 150 ? noise[i] ?? 0 : 0, 255], i * 4);
  return { png: encodePng(width, height, rgba), rgba, width, height };
}

/**
 * Counts the bytes node:crypto's SHA-256 takes in this thread: the iki module's host hasher
 * (host-hash.ts) hashes every long input there, pixels and output alike.
 */
function countHostHashing(): { bytes: number; restore(): void } {
  const proto = Object.getPrototypeOf(createHash('sha256')) as { update: (data: Uint8Array, ...rest: unknown[]) => unknown };
  const update = proto.update;
  const counter = {
    bytes: 0,
    restore: () => { proto.update = update; },
  };
  proto.update = function (this: unknown, data: Uint8Array, ...rest: unknown[]) {
    counter.bytes += data.byteLength;
    return update.call(this, data, ...rest);
  };
  return counter;
}

function textureEntry(data: NewEntry['data'], rgba: Uint8Array, width: number, height: number): NewEntry {
  return { path: 't.png', type: 'image/x-rgba8', encoding: 'rgba8', size: rgba.length, sha256: sha256hex(rgba), data,
    meta: { kind: 'texture', width, height, source: 'image/png' } };
}

describe('a texture written from WASM memory', () => {
  it('gives the DATA chunks of the same pixels written from JS, hashed or not, and reads back', { timeout: 30_000 }, async () => {
    const { png, rgba, width, height } = texture();
    const plain = await writeAll([textureEntry(rgba, rgba, width, height)], options('model', key, { chunkSize: CHUNK }));
    for (const hash of [true, false]) {
      const source = textureSource(decodeTextureHandle(png, 't.png', width, height, hash), new DecodedBudget(1 << 20),
        () => Promise.reject(new Error('kept, not decoded again')));
      const file = await writeAll([textureEntry(source, rgba, width, height)], options('model', key, { chunkSize: CHUNK }));
      expect(dataChunks(file)).toEqual(dataChunks(plain));
      expect(dataChunks(file).length).toBeGreaterThan(1);
      const opened = await openContainer(file, { kind: 'model' });
      expect(sha256hex(opened.entries.get('t.png') as Uint8Array)).toBe(sha256hex(rgba));
    }
  });

  it('is refused with HASH_MISMATCH when its pixels are not the manifest\'s', async () => {
    const { png, width, height } = texture();
    const other = texture(4).rgba;
    const source = textureSource(decodeTextureHandle(png, 't.png', width, height, true), new DecodedBudget(1 << 20),
      () => Promise.reject(new Error('unused')));
    const error = await rejection(writeAll([textureEntry(source, other, width, height)], options('model', key)));
    expect(error).toMatchObject({ code: 'HASH_MISMATCH' });
  });

  it('with a deflater: the same DATA chunks, each stream checked against the texture, its pixels hashed once', { timeout: 30_000 }, async () => {
    const { png, rgba, width, height } = texture();
    const plain = await writeAll([textureEntry(rgba, rgba, width, height)], options('model', key, { chunkSize: CHUNK }));
    const hashed = countHostHashing();
    try {
      const source = textureSource(decodeTextureHandle(png, 't.png', width, height, true), new DecodedBudget(1 << 20),
        () => Promise.reject(new Error('kept, not decoded again')));
      const entry = textureEntry(source, rgba, width, height);
      hashed.bytes = 0;
      const file = await writeAll([entry], options('model', key, { chunkSize: CHUNK, deflater: inThreadDeflater }));
      expect(dataChunks(file)).toEqual(dataChunks(plain));
      // The output file is hashed for its signature; the 120,000 bytes of pixels are not hashed again.
      expect(hashed.bytes).toBeGreaterThan(0);
      expect(hashed.bytes).toBeLessThan(file.length + 1024);
    } finally {
      hashed.restore();
    }
    // A stream that does not decode to the texture's chunk is refused, whatever the worker says.
    const lying: ChunkDeflater = { concurrency: 2, deflate: async (raw, o) => deflateChunk(raw.map((b) => b ^ 1), o) };
    const source = textureSource(decodeTextureHandle(png, 't.png', width, height, true), new DecodedBudget(1 << 20),
      () => Promise.reject(new Error('unused')));
    const error = await rejection(writeAll([textureEntry(source, rgba, width, height)],
      options('model', key, { chunkSize: CHUNK, deflater: lying })));
    expect(error).toMatchObject({ code: 'BAD_DATA' });
  });

  it('with a deflater, is refused with HASH_MISMATCH before any chunk when its pixels are not the manifest\'s', async () => {
    const { png, width, height } = texture();
    let asked = 0;
    const counting: ChunkDeflater = { concurrency: 1, deflate: async (raw, o) => { asked += 1; return deflateChunk(raw, o); } };
    const source = textureSource(decodeTextureHandle(png, 't.png', width, height, true), new DecodedBudget(1 << 20),
      () => Promise.reject(new Error('unused')));
    const error = await rejection(writeAll([textureEntry(source, texture(4).rgba, width, height)],
      options('model', key, { chunkSize: CHUNK, deflater: counting })));
    expect(error).toMatchObject({ code: 'HASH_MISMATCH' });
    expect(asked).toBe(0);
  });

  it('leaves no other write in while a texture is in progress, and spends the JS handle', () => {
    const { png, rgba, width, height } = texture();
    const handle = decodeTextureHandle(png, 't.png', width, height, true);
    expect(handle.sha256).toEqual(new Uint8Array(createHash('sha256').update(rgba).digest()));
    expect(handle.bytes(0, 8)).toEqual(rgba.subarray(0, 8));
    expect(() => callWasm(() => handle.bytes(rgba.length - 4, 8))).toThrow(expect.objectContaining({ code: 'INVALID_ARGUMENT' }));
    const o = new (wasm().WasmWriterOptions)('model', handleOf(key), JSON.stringify({ kind: 'device', name: 't' }), 1_700_000_000_000);
    o.setChunkSize(CHUNK);
    const { data: _, ...listed } = textureEntry(rgba, rgba, width, height);
    const writer = new (wasm().WasmWriter)(o, JSON.stringify({ entries: [listed], meta: options('model', key).meta }));
    o.free();
    try {
      writer.beginTexture(handle);
      expect(() => handle.byteLength).toThrow();
      const state = expect.objectContaining({ code: 'INVALID_STATE' });
      expect(() => callWasm(() => writer.write(rgba.subarray(0, 4)))).toThrow(state);
      expect(() => callWasm(() => writer.endEntry())).toThrow(state);
      expect(() => callWasm(() => writer.beginTexture(decodeTextureHandle(png, 't.png', width, height, true)))).toThrow(state);
      expect(callWasm(() => writer.textureBytes(4, 8))).toEqual(rgba.subarray(4, 12));
      expect(() => callWasm(() => writer.textureBytes(rgba.length - 4, 8))).toThrow(expect.objectContaining({ code: 'INVALID_ARGUMENT' }));
      let chunks = 0;
      while (!callWasm(() => writer.writeTextureChunk())) chunks += 1;
      expect(chunks).toBeGreaterThan(0);
      callWasm(() => writer.endEntry());
      expect(() => callWasm(() => writer.writeTextureChunk())).toThrow(state);
      expect(() => callWasm(() => writer.writeTextureDeflated(new Uint8Array(3)))).toThrow(state);
      expect(() => callWasm(() => writer.textureBytes(0, 8))).toThrow(state);
    } finally {
      writer.free();
    }
  });
});

describe('DecodedBudget and textureSource', () => {
  it('keep the textures that fit and decode the others again; dispose frees what was kept', async () => {
    const { png, rgba, width, height } = texture();
    const budget = new DecodedBudget(rgba.length + 10);
    let again = 0;
    const decodeAgain = async () => {
      again += 1;
      return decodeTextureHandle(png, 't.png', width, height, false);
    };
    const first = textureSource(decodeTextureHandle(png, 't.png', width, height, false), budget, decodeAgain);
    const second = textureSource(decodeTextureHandle(png, 't.png', width, height, false), budget, decodeAgain);
    const take = (s: unknown) => (decodedTextureOf(s) as () => Promise<{ byteLength: number; free(): void }>)();
    (await take(first)).free();
    expect(again).toBe(0);
    (await take(second)).free();
    expect(again).toBe(1);
    // Taking the first gave its bytes back: a third fits, and dispose returns them again.
    const third = textureSource(decodeTextureHandle(png, 't.png', width, height, false), budget, decodeAgain);
    third.dispose();
    const parts: Uint8Array[] = [];
    const fourth = textureSource(decodeTextureHandle(png, 't.png', width, height, false), budget, decodeAgain);
    for await (const part of fourth) parts.push(part);
    expect(again).toBe(1);
    expect(sha256hex(Buffer.concat(parts))).toBe(sha256hex(rgba));
  });

  it('is what iki pack\'s folder reader gives its textures, decoded once within its budget', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'iki-decoded-'));
    const { png, rgba } = texture();
    writeFileSync(join(dir, 'm.moc3'), new Uint8Array([0x4d, 0x4f, 0x43, 0x33, 3]));
    writeFileSync(join(dir, 't.png'), png);
    writeFileSync(join(dir, 'm.model3.json'), JSON.stringify({ Version: 3, FileReferences: { Moc: 'm.moc3', Textures: ['t.png'] } }));
    for (const keepDecodedBytes of [undefined, 0]) {
      const pkg = await readModelFolder(dir, keepDecodedBytes === undefined ? {} : { keepDecodedBytes });
      const tex = pkg.entries.find((e) => e.path === 't.png') as NewEntry;
      expect(decodedTextureOf(tex.data)).toBeDefined();
      expect(tex.sha256).toBe(sha256hex(rgba));
      const file = await writeAll(pkg.entries, options('model', key));
      const opened = await openContainer(file, { kind: 'model' });
      expect(sha256hex(opened.entries.get('t.png') as Uint8Array)).toBe(sha256hex(rgba));
    }
  });
});

describe('decodeTextureHandle', () => {
  it('refuses a texture whose pixels are not the size its header said, and what is not an image', () => {
    const { png, width, height } = texture();
    // The size it decoded to is named (the texture is freed only after the message is made).
    expect(() => decodeTextureHandle(png, 'a.png', width, height + 1, true))
      .toThrow(expect.objectContaining({ code: 'NOT_PNG', path: 'a.png', message: `a.png decodes to 200 x 150, not its header's 200 x 151` }));
    expect(() => decodeTextureHandle(new Uint8Array([0x89, 0x50]), 'b.png', 1, 1, false))
      .toThrow(expect.objectContaining({ code: 'NOT_PNG', path: 'b.png' }));
  });

  it('gives the pixels\' size, and their SHA-256 when asked', () => {
    const { png, rgba, width, height } = texture();
    const hashed = decodeTextureHandle(png, 't.png', width, height, true);
    expect(hashed.byteLength).toBe(rgba.length);
    expect(Buffer.from(hashed.sha256 as Uint8Array).toString('hex')).toBe(sha256hex(rgba));
    hashed.free();
  });
});

// A save reads every asset once when its digest was remembered at the pick (issue 28 item 4):
// reads counted on real Files (every read of a File's bytes goes through `slice` or
// `arrayBuffer`), a changed file hashed again, and a remembered digest that does not match the
// bytes (another file of the same name, size and time) refused without a file and forgotten.
import { beforeAll, describe, expect, it } from 'vitest';
import { AssetDigests, openProject, saveProject, type ProjectAsset } from '../src/project/index.js';
import { loadWasm } from '../src/wasm.js';
import { sample, sha256hex } from './container-support.js';
import { browserSigner } from './project-support.js';

/** Bytes read from each file name, over every File object of that name. */
const reads = new Map<string, number>();

/** A File that counts the bytes read from it (whole, or by slices as a save streams it). */
class CountedFile extends File {
  override async arrayBuffer(): Promise<ArrayBuffer> {
    reads.set(this.name, (reads.get(this.name) ?? 0) + this.size);
    return super.arrayBuffer();
  }

  override slice(start?: number, end?: number, type?: string): Blob {
    const part = super.slice(start, end, type);
    const name = this.name;
    return Object.assign(part, {
      arrayBuffer: async () => {
        reads.set(name, (reads.get(name) ?? 0) + part.size);
        return Blob.prototype.arrayBuffer.call(part);
      },
    });
  }

  override stream(): ReadableStream<Uint8Array<ArrayBuffer>> {
    throw new Error('a save reads Files by slices, not by stream()');
  }
}

const MIB = 1024 * 1024;
/** Sizes across the 2 MiB slice a save reads at once: one slice, several. */
const SIZES = [70_000, 5 * MIB + 3];

function picked(seed: number, lastModified = 1_700_000_000_000): CountedFile[] {
  return SIZES.map((size, i) => new CountedFile([sample(size, seed + i, true) as BlobPart], `asset-${i}.png`, { lastModified }));
}

/** The same files as a page posts them to its worker again: new objects, same name, size and time. */
async function posted(files: File[]): Promise<CountedFile[]> {
  return Promise.all(files.map(async (f) => new CountedFile([await Blob.prototype.arrayBuffer.call(f)], f.name, { lastModified: f.lastModified })));
}

const assets = (files: File[]): ProjectAsset[] => files.map((f) => ({ name: `images/${f.name}`, data: f }));

async function save(files: File[], digests: AssetDigests, output?: WritableStream<Uint8Array>) {
  const { signer } = await browserSigner();
  return saveProject({ snapshot: { layers: files.length }, assets: assets(files), signer, app: 'iki-tests 1', name: 'Counted',
    canvas: { width: 1, height: 1 }, chunkSize: 256 * 1024, digests, ...(output === undefined ? {} : { output }) });
}

async function storedDigests(blob: Blob): Promise<Record<string, string>> {
  const opened = await openProject(blob);
  const out: Record<string, string> = {};
  for (const a of opened.assets) out[a.name] = sha256hex(await opened.readAsset(a.name));
  opened.close();
  return out;
}

beforeAll(async () => {
  await loadWasm();
});

describe('remembered digests', () => {
  it('a save after the pick reads each asset exactly once, also for files posted anew', async () => {
    const digests = new AssetDigests();
    const files = picked(1);
    reads.clear();
    await digests.remember(files);
    expect(Object.fromEntries(reads)).toEqual({ 'asset-0.png': SIZES[0], 'asset-1.png': SIZES[1] });
    expect(digests.hashes).toBe(2);
    for (const round of [files, await posted(files)]) {
      reads.clear();
      const saved = await save(round, digests);
      expect(Object.fromEntries(reads)).toEqual({ 'asset-0.png': SIZES[0], 'asset-1.png': SIZES[1] });
      expect(digests.hashes).toBe(2);
      const expected = Object.fromEntries(await Promise.all(files.map(async (f) =>
        [`images/${f.name}`, sha256hex(new Uint8Array(await Blob.prototype.arrayBuffer.call(f)))])));
      expect(await storedDigests(saved.blob as Blob)).toEqual(expected);
    }
  });

  it('a save of files never seen reads them twice, and remembers them for the next save', async () => {
    const digests = new AssetDigests();
    const files = picked(2);
    reads.clear();
    await save(files, digests);
    expect(Object.fromEntries(reads)).toEqual({ 'asset-0.png': 2 * (SIZES[0] as number), 'asset-1.png': 2 * (SIZES[1] as number) });
    reads.clear();
    await save(await posted(files), digests);
    expect(Object.fromEntries(reads)).toEqual({ 'asset-0.png': SIZES[0], 'asset-1.png': SIZES[1] });
  });

  it('a changed file (same name, new bytes and time) is hashed again and saved with its new bytes', async () => {
    const digests = new AssetDigests();
    await digests.remember(picked(3));
    const changed = picked(4, 1_700_000_000_999);
    reads.clear();
    const saved = await save(changed, digests);
    expect(digests.hashes).toBe(4);
    expect(Object.fromEntries(reads)).toEqual({ 'asset-0.png': 2 * (SIZES[0] as number), 'asset-1.png': 2 * (SIZES[1] as number) });
    const stored = await storedDigests(saved.blob as Blob);
    expect(stored['images/asset-0.png']).toBe(sha256hex(sample(SIZES[0] as number, 4, true)));
    expect(stored['images/asset-1.png']).toBe(sha256hex(sample(SIZES[1] as number, 5, true)));
  });

  it('new bytes under the same name, size and time: refused (HASH_MISMATCH, nothing kept), forgotten, then saved right', async () => {
    const digests = new AssetDigests();
    await digests.remember(picked(5));
    const impostor = picked(6);
    const written: Uint8Array[] = [];
    let aborted = false;
    const output = new WritableStream<Uint8Array>({ write(chunk) { written.push(chunk); }, close() { throw new Error('closed'); },
      abort() { aborted = true; } });
    await expect(save(impostor, digests, output)).rejects.toMatchObject({ code: 'HASH_MISMATCH' });
    expect(aborted).toBe(true);
    await expect(save(impostor, digests)).resolves.toBeDefined();
    const saved = await save(await posted(impostor), digests);
    expect((await storedDigests(saved.blob as Blob))['images/asset-1.png']).toBe(sha256hex(sample(SIZES[1] as number, 7, true)));
  });

  it('two files of one name, size and time in one pick are both hashed (two folders), and both kept', async () => {
    const digests = new AssetDigests();
    const [a] = picked(8);
    const [b] = picked(9);
    await digests.remember([a as File, b as File]);
    expect(digests.hashes).toBe(2);
    const { signer } = await browserSigner();
    const saved = await saveProject({ snapshot: {}, signer, app: 'iki-tests 1', name: 'Two', canvas: { width: 1, height: 1 }, digests,
      assets: [{ name: 'one/asset-0.png', data: await posted([a as File]).then((x) => x[0] as File) },
        { name: 'two/asset-0.png', data: await posted([b as File]).then((x) => x[0] as File) }] });
    const stored = await storedDigests(saved.blob as Blob);
    expect(stored['one/asset-0.png']).toBe(sha256hex(sample(SIZES[0] as number, 8, true)));
    expect(stored['two/asset-0.png']).toBe(sha256hex(sample(SIZES[0] as number, 9, true)));
  });
});

/**
 * A texture of the browser's master export (master-export.ts): decoded once into WASM memory,
 * hashed by the browser's native SHA-256 (native-digest.ts) over one copy of its pixels, and
 * kept for the writer up to the export's budget (package/texture-source.ts), its chunks deflated
 * ahead of the writer when the export has deflate workers (deflate-ahead.ts).
 */
import type { NewEntry } from '../container-write.js';
import type { DeflateAhead } from '../deflate-ahead.js';
import { callWasm } from '../errors.js';
import { hashBytes } from '../native-digest.js';
import { decodeTextureHandle, RGBA8_TYPE, textureSize } from '../package/model-plan.js';
import { textureSource, type DecodedBudget } from '../package/texture-source.js';

/**
 * A texture entry: its PNG decoded into WASM memory now, its pixels copied out once to hash
 * them natively (the writer trusts this worker's hashes), and the decoded texture kept for the
 * writer while `budget` allows (texture-source.ts), else decoded again when the writer reaches it.
 */
export async function textureEntry(path: string, png: Blob, budget: DecodedBudget, ahead?: DeflateAhead): Promise<{ entry: NewEntry; width: number; height: number;
  dispose(): void }> {
  const bytes = new Uint8Array(await png.arrayBuffer());
  const { width, height } = textureSize(bytes, path);
  const first = decodeTextureHandle(bytes, path, width, height, false);
  let sha256: string;
  try {
    const rgba = callWasm(() => first.bytes(0, first.byteLength));
    sha256 = (await hashBytes(rgba)).sha256;
    rgba.fill(0);
  } catch (err) {
    first.free();
    throw err;
  }
  const data = textureSource(first, budget,
    async () => decodeTextureHandle(new Uint8Array(await png.arrayBuffer()), path, width, height, false), ahead);
  return {
    width, height, dispose: () => data.dispose(),
    entry: { path, type: RGBA8_TYPE, encoding: 'rgba8', size: width * height * 4, sha256, data,
      meta: { kind: 'texture', width, height, source: 'image/png' } },
  };
}

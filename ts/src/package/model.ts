/**
 * Reads a Cubism model folder into the entries of a protected model file (docs/format.md
 * section 5.2): the one `*.model3.json` at the folder's top and every file it refers to as
 * `deflate` under its package path, each PNG texture decoded to `rgba8` under its PNG path
 * with `meta {kind: 'texture', width, height, source: 'image/png'}`, and the model meta
 * `{format: 'iki-model', version: 1, name, role: 'master'}`.
 *
 * Each texture is decoded into WASM memory and its pixels hashed there (through node:crypto)
 * for the manifest, which precedes the data; the decoded texture is kept for the write while
 * `keepDecodedBytes` allows (texture-source.ts: the writer takes it whole and its pixels never
 * cross into JS) and decoded again when the writer reaches it otherwise, so memory stays at
 * that budget plus one texture whatever the number of textures. With `deflateAhead`, the chunks
 * of a kept texture start deflating on other threads while the next textures are decoded.
 */
import { readFile, readdir } from 'node:fs/promises';
import type { DeflateAhead } from '../deflate-ahead.js';
import { loadWasm } from '../wasm.js';
import { listFiles, realFolder, type FolderPackage, type PackageEntry } from './entry.js';
import { mediaTypeOf } from './media.js';
import { decodeTextureHandle, hexOf, modelMeta, pickModel3, planModel, RGBA8_TYPE } from './model-plan.js';
import { realpathInside } from './paths.js';
import { pngSize } from './png.js';
import { fileSource, hashFile } from './sources.js';
import { CLI_KEEP_DECODED_BYTES, DecodedBudget, textureSource } from './texture-source.js';

/** Options of {@link readModelFolder}. */
export interface ModelFolderOptions {
  /** `meta.name`; by default the model3.json's name without `.model3.json`. */
  name?: string;
  /**
   * Decoded texture bytes kept in WASM memory between the manifest pass and the write, so
   * those textures are decoded once (default {@link CLI_KEEP_DECODED_BYTES}, 256 MiB; 0
   * decodes every texture twice).
   */
  keepDecodedBytes?: number;
  /**
   * Where the chunks of each texture kept decoded start deflating while the next textures are
   * decoded and hashed (deflate-ahead.ts; `iki pack` with deflate workers).
   */
  deflateAhead?: DeflateAhead;
}

export { RGBA8_TYPE } from './model-plan.js';

async function findModel3(dir: string): Promise<string> {
  const names = (await readdir(dir, { withFileTypes: true }))
    .filter((item) => item.isFile() || item.isSymbolicLink()).map((item) => item.name);
  return pickModel3(names, dir);
}

async function textureEntry(root: string, realRoot: string, path: string, budget: DecodedBudget,
  ahead: DeflateAhead | undefined): Promise<PackageEntry> {
  const file = await realpathInside(root, realRoot, path);
  const png = new Uint8Array(await readFile(file));
  const { width, height } = pngSize(png, path);
  const first = decodeTextureHandle(png, path, width, height, true);
  const sha256 = hexOf(first.sha256 as Uint8Array);
  const data = textureSource(first, budget,
    async () => decodeTextureHandle(new Uint8Array(await readFile(file)), path, width, height, true), ahead);
  return {
    path, type: RGBA8_TYPE, encoding: 'rgba8', size: width * height * 4, sha256, data,
    meta: { kind: 'texture', width, height, source: 'image/png' },
  };
}

async function fileEntry(root: string, realRoot: string, path: string): Promise<PackageEntry> {
  const file = await realpathInside(root, realRoot, path);
  const { size, sha256 } = await hashFile(file, path);
  return { path, type: mediaTypeOf(path), encoding: 'deflate', size, sha256, data: fileSource(file) };
}

/**
 * Reads the model folder `dir`. Refuses (with {@link PackageError}) a folder without exactly
 * one model3.json, references that leave the folder or are missing, non-PNG textures.
 */
export async function readModelFolder(dir: string, options: ModelFolderOptions = {}): Promise<FolderPackage> {
  const realRoot = await realFolder(dir);
  const model3 = await findModel3(dir);
  const model3File = await realpathInside(dir, realRoot, model3);
  const text = await readFile(model3File, 'utf8');
  // The checks are model-plan.ts's, shared with the browser's master export; a missing file
  // is refused below, by the disk read that also refuses links leading outside.
  const plan = planModel(model3, text, await listFiles(dir, realRoot, () => undefined), options.name);
  await loadWasm();
  const entries: PackageEntry[] = [];
  for (const path of plan.files) entries.push(await fileEntry(dir, realRoot, path));
  const budget = new DecodedBudget(options.keepDecodedBytes ?? CLI_KEEP_DECODED_BYTES);
  for (const path of plan.textures) entries.push(await textureEntry(dir, realRoot, path, budget, options.deflateAhead));
  return { kind: 'model', entries, meta: modelMeta(plan), ignored: plan.ignored };
}

/**
 * Reads a Cubism model folder into the entries of a protected model file (docs/format.md
 * section 5.2): the one `*.model3.json` at the folder's top and every file it refers to as
 * `deflate` under its package path, each PNG texture decoded to `rgba8` under its PNG path
 * with `meta {kind: 'texture', width, height, source: 'image/png'}`, and the model meta
 * `{format: 'iki-model', version: 1, name, role: 'master'}`.
 *
 * Textures are decoded twice (once to hash the pixels for the manifest, which precedes the
 * data, and again while the container is written) so that only one decoded texture is in
 * memory at a time, whatever the number of textures. The first pass keeps the pixels in WASM
 * memory and hashes them there (`textureDigest`, through node:crypto), so only the digest
 * crosses to JS.
 */
import { readFile, readdir } from 'node:fs/promises';
import { loadWasm } from '../wasm.js';
import { listFiles, realFolder, type FolderPackage, type PackageEntry } from './entry.js';
import { mediaTypeOf } from './media.js';
import { decodeTexture, modelMeta, pickModel3, planModel, RGBA8_TYPE, textureDigest } from './model-plan.js';
import { realpathInside } from './paths.js';
import { pngSize } from './png.js';
import { fileSource, hashFile } from './sources.js';

/** Options of {@link readModelFolder}. */
export interface ModelFolderOptions {
  /** `meta.name`; by default the model3.json's name without `.model3.json`. */
  name?: string;
}

export { RGBA8_TYPE } from './model-plan.js';

async function findModel3(dir: string): Promise<string> {
  const names = (await readdir(dir, { withFileTypes: true }))
    .filter((item) => item.isFile() || item.isSymbolicLink()).map((item) => item.name);
  return pickModel3(names, dir);
}

async function textureEntry(root: string, realRoot: string, path: string): Promise<PackageEntry> {
  const file = await realpathInside(root, realRoot, path);
  const png = new Uint8Array(await readFile(file));
  const { width, height } = pngSize(png, path);
  const sha256 = textureDigest(png, path, width, height);
  const data = {
    async *[Symbol.asyncIterator]() {
      const again = new Uint8Array(await readFile(file));
      yield decodeTexture(again, path, width, height);
    },
  };
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
  for (const path of plan.textures) entries.push(await textureEntry(dir, realRoot, path));
  return { kind: 'model', entries, meta: modelMeta(plan), ignored: plan.ignored };
}

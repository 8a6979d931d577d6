/**
 * Reads a Cubism model folder into the entries of a protected model file (docs/format.md
 * section 5.2): the one `*.model3.json` at the folder's top and every file it refers to as
 * `deflate` under its package path, each PNG texture decoded to `rgba8` under its PNG path
 * with `meta {kind: 'texture', width, height, source: 'image/png'}`, and the model meta
 * `{format: 'iki-model', version: 1, name, role: 'master'}`.
 *
 * Textures are decoded twice (once to hash the pixels for the manifest, which precedes the
 * data, and again while the container is written) so that only one decoded texture is in
 * memory at a time, whatever the number of textures.
 */
import { readFile, readdir } from 'node:fs/promises';
import { decodeImage } from '../image.js';
import { loadWasm } from '../wasm.js';
import { listFiles, realFolder, type FolderPackage, type PackageEntry } from './entry.js';
import { PackageError } from './errors.js';
import { mediaTypeOf } from './media.js';
import { modelReferences } from './model3.js';
import { realpathInside } from './paths.js';
import { pngSize } from './png.js';
import { fileSource, hashFile, sha256Hex } from './sources.js';

/** Options of {@link readModelFolder}. */
export interface ModelFolderOptions {
  /** `meta.name`; by default the model3.json's name without `.model3.json`. */
  name?: string;
}

const MODEL3_SUFFIX = '.model3.json';

/** The media type of `image/x-rgba8` entries (docs/format.md section 5). */
export const RGBA8_TYPE = 'image/x-rgba8';

async function findModel3(dir: string): Promise<string> {
  const found = (await readdir(dir, { withFileTypes: true }))
    .filter((item) => item.name.endsWith(MODEL3_SUFFIX) && (item.isFile() || item.isSymbolicLink()))
    .map((item) => item.name);
  if (found.length !== 1) {
    throw new PackageError('BAD_MODEL', found.length === 0
      ? `${dir} has no *${MODEL3_SUFFIX} at its top level`
      : `${dir} has ${found.length} *${MODEL3_SUFFIX} files (${found.sort().join(', ')}); a model folder has exactly one`);
  }
  return found[0] as string;
}

/** Decodes a PNG with the iki module and checks it against its header. */
function decodeTexture(png: Uint8Array, path: string, width: number, height: number): Uint8Array {
  let image: { width: number; height: number; rgba: Uint8Array };
  try {
    image = decodeImage(png);
  } catch (error) {
    // A valid PNG beyond the decoder's bounds is too large, not "not a PNG".
    const code = (error as { code?: unknown }).code === 'IMAGE_TOO_LARGE' ? 'TOO_LARGE' : 'NOT_PNG';
    throw new PackageError(code, `${path} cannot be decoded: ${(error as Error).message}`, path);
  }
  if (image.width !== width || image.height !== height || image.rgba.length !== width * height * 4) {
    throw new PackageError('NOT_PNG', `${path} decodes to ${image.width} x ${image.height}, not its header's ${width} x ${height}`, path);
  }
  return image.rgba;
}

async function textureEntry(root: string, realRoot: string, path: string): Promise<PackageEntry> {
  const file = await realpathInside(root, realRoot, path);
  const png = new Uint8Array(await readFile(file));
  const { width, height } = pngSize(png, path);
  const rgba = decodeTexture(png, path, width, height);
  const data = {
    async *[Symbol.asyncIterator]() {
      const again = new Uint8Array(await readFile(file));
      yield decodeTexture(again, path, width, height);
    },
  };
  return {
    path, type: RGBA8_TYPE, encoding: 'rgba8', size: rgba.length, sha256: sha256Hex(rgba), data,
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
  const refs = modelReferences(await readFile(model3File, 'utf8'));
  if (refs.files.includes(model3) || refs.textures.includes(model3)) {
    throw new PackageError('BAD_MODEL', `${model3} refers to itself`, model3);
  }
  await loadWasm();
  const entries: PackageEntry[] = [await fileEntry(dir, realRoot, model3)];
  for (const path of refs.files) entries.push(await fileEntry(dir, realRoot, path));
  for (const path of refs.textures) entries.push(await textureEntry(dir, realRoot, path));
  const packed = new Set(entries.map((e) => e.path));
  const ignored = (await listFiles(dir, realRoot, () => undefined)).filter((p) => !packed.has(p));
  const name = options.name ?? model3.slice(0, -MODEL3_SUFFIX.length);
  return { kind: 'model', entries, meta: { format: 'iki-model', version: 1, name, role: 'master' }, ignored };
}

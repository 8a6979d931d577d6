/**
 * The checks `iki pack` makes on a Cubism model folder, without any file system, so the CLI
 * (model.ts, reading a folder on disk) and the browser's master export (reading a dropped
 * folder) apply the very same rules (issue 12 item 1): exactly one `*.model3.json` at the
 * top, its references valid and inside the folder (model3.ts), none of them the model JSON
 * itself, which referenced files are missing and which files of the folder are left out, the
 * model meta, and each texture a PNG that decodes to its header's size.
 */
import type { DecodedTexture } from '../../../pkg/iki_wasm.js';
import { callWasm } from '../errors.js';
import { wasm } from '../wasm.js';
import { PackageError } from './errors.js';
import { mediaTypeOf } from './media.js';
import { modelReferences } from './model3.js';
import { pngSize } from './png.js';

/** The name every model JSON ends with. */
export const MODEL3_SUFFIX = '.model3.json';

/** The media type of `rgba8` texture entries (docs/format.md section 5). */
export const RGBA8_TYPE = 'image/x-rgba8';

/** What a model folder packs into, before any file is read beyond the model JSON. */
export interface ModelPlan {
  /** The model JSON's path (at the folder's top). */
  model3: string;
  /** `meta.name`. */
  name: string;
  /** The model JSON, then every other referenced file (stored `deflate`), in reference order. */
  files: string[];
  /** The referenced PNG textures (stored `rgba8`), in reference order. */
  textures: string[];
  /** Referenced files the folder does not have. */
  missing: string[];
  /** Files of the folder that are not packed (sorted as given). */
  ignored: string[];
}

/**
 * The one model JSON among the names at the folder's top; `BAD_MODEL` when there is none or
 * more than one. `where` names the folder in the message.
 */
export function pickModel3(topLevelNames: readonly string[], where: string): string {
  const found = topLevelNames.filter((name) => name.endsWith(MODEL3_SUFFIX));
  if (found.length !== 1) {
    throw new PackageError('BAD_MODEL', found.length === 0
      ? `${where} has no *${MODEL3_SUFFIX} at its top level`
      : `${where} has ${found.length} *${MODEL3_SUFFIX} files (${[...found].sort().join(', ')}); a model folder has exactly one`);
  }
  return found[0] as string;
}

/**
 * The plan for the folder whose files are `folderFiles` (relative, `/`-separated) and whose
 * model JSON `model3` reads `text`. Throws {@link PackageError} for a model JSON that is not
 * usable (`BAD_MODEL`, `BAD_PATH`, `PATH_ESCAPES`); missing files are listed, not thrown, so a
 * preview can show them all (the packers refuse them: `MISSING_FILE`).
 */
export function planModel(model3: string, text: string, folderFiles: readonly string[], name?: string): ModelPlan {
  const refs = modelReferences(text);
  if (refs.files.includes(model3) || refs.textures.includes(model3)) {
    throw new PackageError('BAD_MODEL', `${model3} refers to itself`, model3);
  }
  const present = new Set(folderFiles);
  const files = [model3, ...refs.files];
  const packed = new Set([...files, ...refs.textures]);
  return {
    model3, name: name ?? model3.slice(0, -MODEL3_SUFFIX.length), files, textures: refs.textures,
    missing: [...files, ...refs.textures].filter((p) => !present.has(p)),
    ignored: folderFiles.filter((p) => !packed.has(p)),
  };
}

/** The manifest meta of a master made from `plan` (docs/format.md section 5.2). */
export function modelMeta(plan: Pick<ModelPlan, 'name'>): Record<string, unknown> {
  return { format: 'iki-model', version: 1, name: plan.name, role: 'master' };
}

/** The media type of a referenced non-texture file (stored `deflate`). */
export const modelFileType = mediaTypeOf;

/** Width and height from a texture's PNG header (`NOT_PNG`, `TOO_LARGE`). */
export const textureSize = pngSize;

/**
 * Decodes a texture with `decode` (the iki module's decoder) and checks it against its header's size: `TOO_LARGE` past the decoder's bounds, else `NOT_PNG`.
 */
function decodeChecked<T extends { width: number; height: number }>(decode: () => T, path: string, width: number,
  height: number, wipe: (image: T) => void = () => {}): T {
  let image: T;
  try {
    image = decode();
  } catch (error) {
    // A valid PNG beyond the decoder's bounds is too large, not "not a PNG".
    const code = (error as { code?: unknown }).code === 'IMAGE_TOO_LARGE' ? 'TOO_LARGE' : 'NOT_PNG';
    throw new PackageError(code, `${path} cannot be decoded: ${(error as Error).message}`, path);
  }
  if (image.width !== width || image.height !== height) {
    // The message first: `wipe` may free the image (a WASM object then has no size to read).
    const message = `${path} decodes to ${image.width} x ${image.height}, not its header's ${width} x ${height}`;
    wipe(image);
    throw new PackageError('NOT_PNG', message, path);
  }
  return image;
}

/**
 * Decodes a texture into WASM memory (texture-source.ts) and checks it against its header's
 * size; with `hash`, the SHA-256 of its pixels is taken there too (`sha256`).
 */
export function decodeTextureHandle(png: Uint8Array, path: string, width: number, height: number, hash: boolean): DecodedTexture {
  const texture = decodeChecked(() => callWasm(() => wasm().DecodedTexture.decode(png, hash)), path, width, height,
    (t) => t.free());
  if (texture.byteLength !== width * height * 4) {
    texture.free();
    throw new PackageError('NOT_PNG', `${path} decodes to ${texture.byteLength} bytes, not ${width} x ${height} x 4`, path);
  }
  return texture;
}

/** Lowercase hex of a digest. */
export function hexOf(digest: Uint8Array): string {
  return Array.from(digest, (b) => b.toString(16).padStart(2, '0')).join('');
}

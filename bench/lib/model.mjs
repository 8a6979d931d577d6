// @ts-check
/**
 * The model the pipeline case works on: the test suite's generated Cubism-like package
 * (tests/fixtures/packages.mjs, with the whole 1024 x 2048 CC0 atlas as texture_00), plus,
 * in a full run, two more CC0 atlases as extra textures, so that the model is texture-heavy
 * like real ones. Textures become `rgba8` entries (decoded pixels), everything else
 * `deflate`, as `iki pack` stores them.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createHash } from 'node:crypto';
import { writeModelPackage } from '../../tests/fixtures/packages.mjs';
import { decodePng } from '../../tests/fixtures/png.mjs';
import { atlas } from './textures.mjs';

const EXTRA = ['kenney-top-down-shooter_spritesheet_tiles.png', 'kenney-top-down-shooter_tilesheet_complete_2X.png'];

/**
 * @returns {Promise<{path: string, type: string, encoding: 'rgba8' | 'deflate', data: Uint8Array,
 *   width?: number, height?: number}[]>}
 */
export async function modelFiles(quick) {
  const dir = mkdtempSync(join(tmpdir(), 'iki-bench-'));
  try {
    const pkg = await writeModelPackage(dir, { name: 'Bench', atlasSize: 0 });
    const files = pkg.files.map((path) => {
      const data = new Uint8Array(readFileSync(join(dir, ...path.split('/'))));
      if (!path.endsWith('.png')) return { path, type: path.endsWith('.json') ? 'application/json' : 'application/octet-stream', encoding: /** @type {const} */ ('deflate'), data };
      const { width, height, rgba } = decodePng(data);
      return { path, type: 'image/png', encoding: /** @type {const} */ ('rgba8'), data: rgba, width, height };
    });
    if (!quick) {
      EXTRA.forEach((name, i) => {
        const { width, height, rgba } = atlas(name);
        files.push({ path: `Bench.4096/texture_0${i + 2}.png`, type: 'image/png', encoding: 'rgba8', data: rgba, width, height });
      });
    }
    return files;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** The files as writer entries (sha256 on every entry, as a packer writes them). */
export function entries(files) {
  return files.map((f) => ({
    path: f.path,
    type: f.type,
    encoding: f.encoding,
    data: f.data,
    size: f.data.length,
    sha256: createHash('sha256').update(f.data).digest('hex'),
    ...(f.encoding === 'rgba8' ? { meta: { kind: 'texture', width: f.width, height: f.height, source: 'image/png' } } : {}),
  }));
}

/**
 * How the container cuts each file into DATA chunks (docs/format.md section 6): every
 * `chunkSize` bytes, or every `floor(chunkSize / (width * 4))` rows for rgba8.
 */
export function chunkPlan(files, chunkSize) {
  return files.map((f) => {
    const step = f.encoding === 'rgba8' ? Math.floor(chunkSize / (f.width * 4)) * f.width * 4 : chunkSize;
    const parts = [];
    for (let at = 0; at < f.data.length; at += step) parts.push(f.data.subarray(at, Math.min(at + step, f.data.length)));
    return { file: f, parts };
  });
}

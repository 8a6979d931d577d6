// @ts-check
/**
 * Texture data for the DEFLATE cases: the CC0 atlases of ../shared/fixtures/textures,
 * read in place and decoded to RGBA8 with the test suite's independent PNG decoder.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { CC0_TEXTURES } from '../../tests/fixtures/packages.mjs';
import { decodePng } from '../../tests/fixtures/png.mjs';

export const ATLASES = [
  'kenney-platformer-pack-redux_spritesheet_players.png',
  'kenney-top-down-shooter_spritesheet_tiles.png',
  'kenney-top-down-shooter_tilesheet_complete_2X.png',
  'kenney-platformer-pack-redux_spritesheet_complete.png',
];

/** @type {Map<string, {name: string, width: number, height: number, rgba: Uint8Array}>} */
const cache = new Map();

/** One atlas decoded (cached per process). */
export function atlas(name) {
  let image = cache.get(name);
  if (image === undefined) {
    const { width, height, rgba } = decodePng(new Uint8Array(readFileSync(join(CC0_TEXTURES, name))));
    image = { name, width, height, rgba };
    cache.set(name, image);
  }
  return image;
}

/** The first `count` atlases decoded. */
export function atlases(count = ATLASES.length) {
  return ATLASES.slice(0, count).map(atlas);
}

/** `bytes` cut into pieces of `size` (views). */
export function chunks(bytes, size) {
  const out = [];
  for (let at = 0; at < bytes.length; at += size) out.push(bytes.subarray(at, Math.min(at + size, bytes.length)));
  return out;
}

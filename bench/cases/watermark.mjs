// @ts-check
/**
 * The license watermark through the TS API (embedWatermark, detectWatermark in
 * ts/src/watermark.ts): embedding in megapixels per second and blind detection in ms, on a
 * 4096 x 4096 texture (the 4096 x 2048 CC0 atlas stacked twice). Checked: the mark is read
 * back with its license id, and the unmarked texture has none.
 */
import { compare, fmt, table } from '../lib/harness.mjs';
import { api } from '../lib/iki.mjs';
import { atlas } from '../lib/textures.mjs';

const SIDE = 4096;

export async function run(options) {
  const source = atlas('kenney-platformer-pack-redux_spritesheet_complete.png');
  const rgba = new Uint8Array(SIDE * SIDE * 4);
  rgba.set(source.rgba, 0);
  rgba.set(source.rgba, source.rgba.length);
  const key = api.WatermarkKey.fromBytes(new Uint8Array(32).fill(0x42));
  const licenseId = 0x0123456789abcdefn;
  const marked = api.embedWatermark(key, licenseId, SIDE, SIDE, rgba);
  const how = { rounds: options.quick ? 3 : 5, minMs: 1 };
  const embed = await compare([{
    name: 'iki (WASM, TS API)',
    run: () => api.embedWatermark(key, licenseId, SIDE, SIDE, rgba),
    check: () => {
      const found = api.detectWatermark(key, SIDE, SIDE, marked);
      if (!found.found || found.licenseId !== '0123456789abcdef') throw new Error('the mark was not read back');
      if (api.detectWatermark(key, SIDE, SIDE, rgba).found) throw new Error('a mark was read from the unmarked texture');
    },
  }], { ...how, unit: 'MB/s', bytes: SIDE * SIDE }); // "MB/s" of pixels = megapixels per second
  const detect = await compare([{ name: 'iki (WASM, TS API)', run: () => api.detectWatermark(key, SIDE, SIDE, marked) }], { ...how, unit: 'ms' });
  key.free();
  const md = [
    '## Watermark (4096 x 4096 RGBA8)',
    '',
    'Embedding returns a marked copy; detection reads the mark blind (no original). Both through the TS API, including the copies across the boundary.',
    '',
    '| operation | median | CPU ms/call | rounds min-max ms/call |',
    '|---|---:|---:|---|',
    `| embed | ${fmt(embed[0].value)} MP/s (${fmt(embed[0].ms)} ms) | ${fmt(embed[0].cpuMs)} | ${fmt(embed[0].spread[0])}-${fmt(embed[0].spread[1])} |`,
    `| detect | ${fmt(detect[0].value)} ms | ${fmt(detect[0].cpuMs)} | ${fmt(detect[0].spread[0])}-${fmt(detect[0].spread[1])} |`,
  ].join('\n');
  return { md, data: { embed, detect } };
}

/**
 * The in-memory PNG encoder of the package URLs (`@iki/core/browser/service-worker`,
 * png-stored.ts): what it writes is a valid PNG (checked by an independent decoder over
 * node:zlib, which verifies the Adler-32, and by recomputing every chunk's CRC-32), the
 * pixels come back exact, stored blocks split at 65535 bytes, and bad dimensions or a PNG
 * past the 2 GiB limit are refused before anything is allocated. The WASM encoder the license
 * worker runs (`pngStored`, crates/iki-wasm stored_png.rs) makes the same bytes.
 */
import { crc32 } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { MAX_PNG_BYTES, encodePngStored, storedPngSize } from '../src/browser/png-stored.js';
import { loadWasm } from '../src/wasm.js';
import { decodePng } from '../../tests/fixtures/png.mjs';

function pixels(width: number, height: number, seed: number): Uint8Array {
  const out = new Uint8Array(width * height * 4);
  let x = seed;
  for (let i = 0; i < out.length; i++) {
    x = (x * 1103515245 + 12345) >>> 0;
    out[i] = x >>> 24;
  }
  return out;
}

/** Every chunk's CRC-32 recomputed. */
function chunkCrcsHold(png: Uint8Array): boolean {
  const view = new DataView(png.buffer, png.byteOffset, png.byteLength);
  for (let at = 8; at < png.length;) {
    const length = view.getUint32(at);
    if (crc32(png.subarray(at + 4, at + 8 + length)) !== view.getUint32(at + 8 + length)) return false;
    at += 12 + length;
  }
  return true;
}

describe('encodePngStored', () => {
  for (const [width, height] of [[1, 1], [3, 2], [256, 256], [200, 120], [16384, 2]] as const) {
    it(`${width} x ${height}: decodes to the same pixels, with valid checksums and the size it says`, () => {
      const rgba = pixels(width, height, width * 31 + height);
      const png = encodePngStored(width, height, rgba);
      expect(png.length).toBe(storedPngSize(width, height));
      expect(chunkCrcsHold(png)).toBe(true);
      const decoded = decodePng(png);
      expect([decoded.width, decoded.height]).toEqual([width, height]);
      expect(Buffer.from(decoded.rgba).equals(Buffer.from(rgba))).toBe(true);
    });
  }

  it('splits stored blocks at 65535 bytes, at and just past one block', () => {
    // A row of 16383 pixels is 65533 bytes: one row (65533 + 1 filter byte) fits one block;
    // 16384 pixels (65537 bytes) needs two.
    expect(storedPngSize(16383, 1) - 16383 * 4 - 1).toBe(storedPngSize(1, 1) - 5);
    expect(storedPngSize(16384, 1) - 16384 * 4 - 1).toBe(storedPngSize(1, 1) - 5 + 5);
    for (const width of [16383, 16384]) {
      const rgba = pixels(width, 1, 7);
      expect(Buffer.from(decodePng(encodePngStored(width, 1, rgba)).rgba).equals(Buffer.from(rgba))).toBe(true);
    }
  });

  it('refuses bad dimensions and pixels that do not match them', () => {
    for (const [w, h] of [[0, 1], [1, 0], [-1, 1], [1.5, 1], [Number.NaN, 1], [2 ** 31, 1]]) {
      expect(() => encodePngStored(w!, h!, new Uint8Array(4))).toThrow(RangeError);
    }
    expect(() => encodePngStored(2, 2, new Uint8Array(15))).toThrow(/rgba holds 15 bytes, not 2 x 2 x 4/);
    expect(() => encodePngStored(2, 2, new Uint8Array(17))).toThrow(RangeError);
  });

  it('refuses a PNG past MAX_PNG_BYTES before allocating (at the limit it only checks the pixels)', () => {
    // One row of width w makes 4w + 1 raw bytes; find the widest single row whose PNG fits.
    let w = Math.floor((MAX_PNG_BYTES - storedPngSize(1, 1)) / 4);
    while (storedPngSize(w, 1) > MAX_PNG_BYTES) w -= 1;
    expect(storedPngSize(w + 1, 1)).toBeGreaterThan(MAX_PNG_BYTES);
    // At the limit the size passes and the (tiny) pixels are what is refused; just past it, the size.
    expect(() => encodePngStored(w, 1, new Uint8Array(4))).toThrow(/rgba holds 4 bytes/);
    expect(() => encodePngStored(w + 1, 1, new Uint8Array(4))).toThrow(/the PNG would be \d+ bytes \(limit 2147483647\)/);
    expect(() => encodePngStored(16384, 32768, new Uint8Array(4))).toThrow(/limit 2147483647/);
  });
});

describe('pngStored (WASM, the license worker\'s encoder: package-png-task.ts)', () => {
  it('makes the same bytes as encodePngStored, which decode to the same pixels (rows past 5552 bytes, blocks split mid-row)', async () => {
    const core = await loadWasm();
    // 1500 pixels: 6001-byte rows (past one Adler-32 run); 64 x 255: exactly one stored block.
    for (const [width, height] of [[1, 1], [64, 255], [64, 256], [1500, 50], [16384, 2]] as const) {
      const rgba = pixels(width, height, width + height * 7);
      const png = core.pngStored(width, height, rgba);
      expect(png.length).toBe(storedPngSize(width, height));
      expect(Buffer.from(png).equals(Buffer.from(encodePngStored(width, height, rgba)))).toBe(true);
      expect(chunkCrcsHold(png)).toBe(true);
      const decoded = decodePng(png);
      expect([decoded.width, decoded.height]).toEqual([width, height]);
      expect(Buffer.from(decoded.rgba).equals(Buffer.from(rgba))).toBe(true);
      // The pixels are read, not changed (the caller wipes them).
      expect(Buffer.from(rgba).equals(Buffer.from(pixels(width, height, width + height * 7)))).toBe(true);
    }
  });

  it('refuses bad dimensions and pixels that do not match them with INVALID_ARGUMENT', async () => {
    const core = await loadWasm();
    for (const [w, h, n] of [[0, 1, 0], [1, 0, 0], [2, 2, 15], [2, 2, 17], [2 ** 31, 1, 4], [16384, 32768, 4]] as const) {
      let thrown: unknown;
      try {
        core.pngStored(w, h, new Uint8Array(n));
      } catch (err) {
        thrown = err;
      }
      expect((thrown as { code?: string }).code).toBe('INVALID_ARGUMENT');
    }
    expect(() => core.pngStored(16384, 32768, new Uint8Array(4))).toThrow(/limit 2147483647/);
  });
});

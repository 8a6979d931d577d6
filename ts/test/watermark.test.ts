// The watermark through WASM on a CC0 texture read in place from
// ../shared/fixtures/textures (decoded with decodeImage), and the image codecs.
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { beforeAll, describe, expect, it } from 'vitest';
import { IkiError } from '../src/errors.js';
import { decodeImage, encodePng } from '../src/image.js';
import { WatermarkKey, detectWatermark, embedWatermark } from '../src/watermark.js';
import { loadWasm } from '../src/wasm.js';
import { issuedIds, matchLicenses, MAX_ISSUED_LICENSES } from '../src/license-match.js';

const ATLAS = new URL('../../../shared/fixtures/textures/kenney-platformer-pack-redux_spritesheet_players.png', import.meta.url);
const LICENSE_ID = 0x0123_4567_89ab_cdefn;

/** CRC-32 of PNG chunks (ISO 3309, as in the PNG specification, section 5.5). */
function crc32(bytes: Uint8Array): number {
  let crc = 0xffffffff;
  for (const byte of bytes) {
    crc ^= byte;
    for (let k = 0; k < 8; k++) crc = (crc >>> 1) ^ (0xedb88320 & -(crc & 1));
  }
  return (crc ^ 0xffffffff) >>> 0;
}

let image: { width: number; height: number; rgba: Uint8Array };
let key: WatermarkKey;
let marked: Uint8Array;

beforeAll(async () => {
  await loadWasm();
  image = decodeImage(new Uint8Array(readFileSync(ATLAS)));
  key = WatermarkKey.fromBytes(new Uint8Array(32).fill(7));
  marked = embedWatermark(key, LICENSE_ID, image.width, image.height, image.rgba);
});

describe('the WASM build (simd128 embedding) gives the native bytes', () => {
  const katKey = () => WatermarkKey.fromBytes(Uint8Array.from({ length: 32 }, (_, i) => i));

  it('on the known-answer vector of docs/watermark.md section 10', () => {
    const input = Buffer.from(
      '3c1ec3074623b908ffffffff000000ff64329bff6e3791ff783c87ff82417dff8c4673ff964b69ffa0505fffaa5555ff' +
        '4120beff4b25b4ff552aaaff5f2fa0ff693496ff73398cff7d3e82ff874378ff91486eff9b4d64ffa5525affaf5750ff',
      'hex',
    );
    const out = embedWatermark(katKey(), LICENSE_ID, 12, 2, new Uint8Array(input));
    expect(Buffer.from(out).toString('hex')).toBe(
      '3c1ec3074825bb08fdfdfdff000000ff623099ff6c358fff763a85ff84437fff8a4471ff984d6bffa25261ffac5757ff' +
        '4322c0ff4d27b6ff572cacff5d2d9eff6b3698ff71378aff7f4084ff89457aff934a70ff994b62ffa7545cffb15952ff',
    );
  });

  it('on the larger vector pinned by crates/iki-watermark/tests/vector.rs', () => {
    const [width, height] = [203, 3];
    const input = Uint8Array.from({ length: width * height * 4 }, (_, k) => (k * 131 + Math.floor(k / 32)) % 256);
    const out = embedWatermark(katKey(), LICENSE_ID, width, height, input);
    expect(createHash('sha256').update(out).digest('hex')).toBe('db9ae1bc013c696b21505b8cfd8878a09c5e559d863dcf184fce1c24248db598');
  });
});

describe('watermark on a CC0 atlas', () => {
  it('decodes the atlas at its documented size', () => {
    expect([image.width, image.height]).toEqual([1024, 2048]);
    expect(image.rgba).toHaveLength(1024 * 2048 * 4);
  });

  it('marks a copy: alpha untouched, colour moved by at most 2 levels', () => {
    expect(marked).not.toBe(image.rgba);
    // Plain counters: an expect() per byte of 8 MiB would take minutes.
    let changed = 0;
    let alphaChanged = 0;
    let largest = 0;
    for (let i = 0; i < marked.length; i++) {
      const d = Math.abs(marked[i]! - image.rgba[i]!);
      if (d === 0) continue;
      if (i % 4 === 3) alphaChanged++;
      changed++;
      largest = Math.max(largest, d);
    }
    expect({ alphaChanged, largest }).toEqual({ alphaChanged: 0, largest: 2 });
    expect(changed).toBeGreaterThan(100_000);
  });

  it('reads the license id back, also after a PNG round trip', () => {
    const read = detectWatermark(key, image.width, image.height, marked);
    expect(read).toEqual({ found: true, licenseId: '0123456789abcdef', confidence: expect.any(Number) });
    expect(read.confidence).toBeGreaterThan(10);
    const png = encodePng(image.width, image.height, marked);
    const again = decodeImage(png);
    expect(Buffer.compare(again.rgba, marked)).toBe(0);
    expect(detectWatermark(key, again.width, again.height, again.rgba).licenseId).toBe('0123456789abcdef');
  });

  it('finds nothing in the original or with another key', () => {
    expect(detectWatermark(key, image.width, image.height, image.rgba).found).toBe(false);
    const other = WatermarkKey.fromBytes(new Uint8Array(32).fill(8));
    const read = detectWatermark(other, image.width, image.height, marked);
    expect(read.found).toBe(false);
    expect(read.licenseId).toBeUndefined();
    other.free();
  });
});

describe('image codecs', () => {
  it('refuse what is not an image as IMAGE_DECODE_FAILED', () => {
    for (const bytes of [new Uint8Array(0), new TextEncoder().encode('not an image'), new Uint8Array(readFileSync(ATLAS)).subarray(0, 200)]) {
      expect(() => decodeImage(bytes)).toThrow(IkiError);
      try {
        decodeImage(bytes);
      } catch (error) {
        expect((error as IkiError).code).toBe('IMAGE_DECODE_FAILED');
      }
    }
  });

  it('refuse a PNG whose header claims too many pixels as IMAGE_TOO_LARGE, before decoding', () => {
    // 60000 x 60000 RGBA8 does not fit wasm32's address space: the header must still be read
    // and answered as too large, not as a decoder failure.
    for (const [width, height] of [[20_000, 1], [60_000, 60_000], [65_535, 65_535]] as const) {
      const png = encodePng(1, 1, new Uint8Array([1, 2, 3, 4]));
      const view = new DataView(png.buffer, png.byteOffset);
      view.setUint32(16, width); // IHDR width
      view.setUint32(20, height); // IHDR height
      view.setUint32(29, crc32(png.subarray(12, 29))); // IHDR CRC over type and data
      expect(() => decodeImage(png)).toThrow(expect.objectContaining({ code: 'IMAGE_TOO_LARGE',
        details: expect.objectContaining({ width: String(width), height: String(height) }) }));
    }
  });
});

describe('argument checks name the argument before WASM is called', () => {
  it('watermark', () => {
    expect(() => WatermarkKey.fromBytes(new Uint8Array(31))).toThrow(RangeError);
    expect(() => WatermarkKey.fromBytes('k' as unknown as Uint8Array)).toThrow(/key/);
    const rgba = new Uint8Array(16);
    expect(() => embedWatermark({} as WatermarkKey, 1n, 2, 2, rgba)).toThrow(TypeError);
    expect(() => embedWatermark(key, 1 as unknown as bigint, 2, 2, rgba)).toThrow(/licenseId/);
    expect(() => embedWatermark(key, -1n, 2, 2, rgba)).toThrow(RangeError);
    expect(() => embedWatermark(key, 1n << 64n, 2, 2, rgba)).toThrow(RangeError);
    expect(() => embedWatermark(key, 1n, 0, 2, rgba)).toThrow(/width/);
    expect(() => embedWatermark(key, 1n, 2, 2.5, rgba)).toThrow(TypeError);
    expect(() => detectWatermark(key, 2, 3, rgba)).toThrow(/rgba/);
    expect(() => detectWatermark(key, 2, 2, [0] as unknown as Uint8Array)).toThrow(TypeError);
  });

  it('images', () => {
    expect(() => decodeImage('png' as unknown as Uint8Array)).toThrow(TypeError);
    expect(() => encodePng(2, 2, new Uint8Array(15))).toThrow(RangeError);
    expect(() => encodePng(-1, 2, new Uint8Array(0))).toThrow(/width/);
  });

  it('a freed key is INVALID_STATE', () => {
    const k = WatermarkKey.fromBytes(new Uint8Array(32));
    k.free();
    expect(() => detectWatermark(k, 1, 1, new Uint8Array(4))).toThrow(expect.objectContaining({ code: 'INVALID_STATE' }));
  });
});

describe('issued license ids (docs/watermark.md section 12)', () => {
  it('takes up to MAX_ISSUED_LICENSES ids and refuses one more, or a malformed id', () => {
    const ids = new Array<string>(MAX_ISSUED_LICENSES).fill('0123456789ABCDEF');
    expect(issuedIds(ids)).toHaveLength(MAX_ISSUED_LICENSES);
    expect(issuedIds(['0123456789ABCDEF'])[0]).toBe(0x0123456789abcdefn);
    expect(() => issuedIds([...ids, '0123456789abcdef'])).toThrow(RangeError);
    expect(() => issuedIds(['0123'])).toThrow(TypeError);
    expect(() => issuedIds(['0123456789abcdeg'])).toThrow(TypeError);
  });

  it('scores a read: the license whose signs it carries is named, others are not', () => {
    const id = 0x5eed0000c0ffee42n;
    const bits = new Float64Array(80);
    for (let i = 0; i < 80; i++) {
      const bit = i < 64 ? (id >> BigInt(63 - i)) & 1n : 0n;
      bits[i] = i < 64 ? (bit === 1n ? 20 : -20) : 0;
    }
    // Confidence below 10: not a mix (the 16 CRC bits read nothing here).
    const match = matchLicenses(bits, 5, ['5eed0000c0ffee42', '0000000000000001'], 1);
    expect(match.mixed).toBe(false);
    expect(match.candidates[0]).toMatchObject({ licenseId: '5eed0000c0ffee42', named: true });
    expect(match.candidates[1]?.named).toBe(false);
    expect(() => matchLicenses(new Float64Array(79), 1, [])).toThrow(TypeError);
    expect(() => matchLicenses(bits, 1, [], 0.5)).toThrow(RangeError);
  });
});

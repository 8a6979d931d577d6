/**
 * The license watermark through WASM (SPEC "Watermark", docs/watermark.md):
 * embedding a license id into a copy of a straight-alpha RGBA8 texture and
 * reading it back blind. The key stays in WASM ({@link WatermarkKey}).
 */
import type { WasmWatermarkKey } from '../../pkg/iki_wasm.js';
import { callWasm } from './errors.js';
import { WasmOwned, handleOf } from './keys.js';
import { checkBytes, checkInteger } from './streams.js';
import { wasm } from './wasm.js';

/** What {@link detectWatermark} read. */
export interface Detection {
  /** Whether a mark was read: the CRC matched and the confidences passed. */
  found: boolean;
  /** The license id as 16 lowercase hex digits, when found. */
  licenseId?: string;
  /** Overall confidence: about N(0, 1) on unmarked images, in the hundreds on marked ones. */
  confidence: number;
}

/** A per-master 256-bit watermark key. */
export class WatermarkKey extends WasmOwned<WasmWatermarkKey> {
  /** The key from its 32 bytes. */
  static fromBytes(key: Uint8Array): WatermarkKey {
    checkBytes(key, 'key', 32);
    return new WatermarkKey(callWasm(() => wasm().WasmWatermarkKey.fromBytes(key)));
  }
}

function checkImage(width: unknown, height: unknown, rgba: unknown): void {
  checkInteger(width, 'width', 1, 2 ** 32 - 1);
  checkInteger(height, 'height', 1, 2 ** 32 - 1);
  checkBytes(rgba, 'rgba');
  if (rgba.length !== width * height * 4) {
    throw new RangeError(`rgba must be width * height * 4 = ${width * height * 4} bytes, not ${rgba.length}`);
  }
}

/** A marked copy of a `width x height` straight-alpha RGBA8 texture carrying `licenseId` (64 bits). */
export function embedWatermark(key: WatermarkKey, licenseId: bigint, width: number, height: number, rgba: Uint8Array): Uint8Array {
  if (!(key instanceof WatermarkKey)) throw new TypeError('key must be a WatermarkKey');
  if (typeof licenseId !== 'bigint') throw new TypeError('licenseId must be a bigint');
  if (licenseId < 0n || licenseId >= 1n << 64n) throw new RangeError('licenseId must be from 0 to 2^64 - 1');
  checkImage(width, height, rgba);
  return callWasm(() => wasm().embedWatermark(handleOf(key), licenseId, width, height, rgba));
}

/** Reads the watermark of a `width x height` straight-alpha RGBA8 texture; needs no original. */
export function detectWatermark(key: WatermarkKey, width: number, height: number, rgba: Uint8Array): Detection {
  if (!(key instanceof WatermarkKey)) throw new TypeError('key must be a WatermarkKey');
  checkImage(width, height, rgba);
  return callWasm(() => wasm().detectWatermark(handleOf(key), width, height, rgba) as Detection);
}

/**
 * The license watermark through WASM (SPEC "Watermark", docs/watermark.md):
 * embedding a license id into a copy of a straight-alpha RGBA8 texture and
 * reading it back blind. The key stays in WASM ({@link WatermarkKey}). Scoring a read against
 * issued licenses is in `license-match.ts`.
 */
import type { WasmSuspect, WasmWatermarkKey } from '../../pkg/iki_wasm.js';
import type { Capacity, Registration } from './service.js';
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

/** A read of a {@link Suspect}, with its per-bit scores for {@link matchLicenses}. */
export interface SuspectDetection extends Detection {
  /** The 80 per-bit scores `z_i` (the sign is the bit read); absent when nothing was read. */
  bits?: Float64Array;
}

/** What {@link Suspect.readInformed} found on one original texture. */
export interface InformedDetection extends SuspectDetection {
  /** Where the image sits on the texture, when it matched. */
  registration?: Registration;
  /** Registrations read. */
  candidates: number;
  /** False when the time budget stopped the search. */
  complete: boolean;
}

/**
 * A leaked image prepared for reading against unmarked original textures
 * (docs/watermark.md section 11): resized (25 % to 400 %), turned (up to 5 degrees),
 * cropped (keeping a tenth of a texture) or composited leaks are registered on the original
 * and read there.
 */
export class Suspect extends WasmOwned<WasmSuspect> {
  /** A `width x height` straight-alpha RGBA8 image (copied into WASM). */
  static of(width: number, height: number, rgba: Uint8Array): Suspect {
    checkImage(width, height, rgba);
    return new Suspect(callWasm(() => new (wasm().WasmSuspect)(width, height, rgba)));
  }

  /** The blind read of the image as it is. */
  detect(key: WatermarkKey): SuspectDetection {
    if (!(key instanceof WatermarkKey)) throw new TypeError('key must be a WatermarkKey');
    const inner = handleOf(this);
    return callWasm(() => inner.detect(handleOf(key)) as SuspectDetection);
  }

  /** Registers the image on the unmarked `width x height` original and reads through it. */
  readInformed(key: WatermarkKey, width: number, height: number, original: Uint8Array, budgetMs: number): InformedDetection {
    if (!(key instanceof WatermarkKey)) throw new TypeError('key must be a WatermarkKey');
    checkImage(width, height, original);
    if (typeof budgetMs !== 'number' || !Number.isFinite(budgetMs) || budgetMs < 0) {
      throw new RangeError('budgetMs must be a non-negative number');
    }
    const inner = handleOf(this);
    return callWasm(() => inner.readInformed(handleOf(key), width, height, original, budgetMs) as InformedDetection);
  }

  /** How well the image could carry the mark (a marked copy read blind). */
  capacity(key: WatermarkKey): Capacity {
    if (!(key instanceof WatermarkKey)) throw new TypeError('key must be a WatermarkKey');
    const inner = handleOf(this);
    return callWasm(() => inner.capacity(handleOf(key)) as Capacity);
  }
}

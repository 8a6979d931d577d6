/**
 * Image codecs through WASM: PNG, JPEG and WebP to straight RGBA8, and RGBA8
 * to PNG (crates/iki-license, image.rs). Dimensions are checked against the
 * limits before any pixel is decoded (`IMAGE_TOO_LARGE`); anything else that
 * does not decode is `IMAGE_DECODE_FAILED`.
 */
import { callWasm } from './errors.js';
import { checkBytes, checkInteger } from './streams.js';
import { wasm } from './wasm.js';

/** A decoded image: straight-alpha RGBA8, rows top to bottom. */
export interface DecodedImage {
  width: number;
  height: number;
  rgba: Uint8Array;
}

/** Decodes a PNG, JPEG or WebP image. */
export function decodeImage(bytes: Uint8Array): DecodedImage {
  checkBytes(bytes, 'bytes');
  return callWasm(() => wasm().decodeImage(bytes) as DecodedImage);
}

/** Encodes `width * height * 4` bytes of straight RGBA8 as a PNG. */
export function encodePng(width: number, height: number, rgba: Uint8Array): Uint8Array {
  checkInteger(width, 'width', 1, 2 ** 32 - 1);
  checkInteger(height, 'height', 1, 2 ** 32 - 1);
  checkBytes(rgba, 'rgba');
  if (rgba.length !== width * height * 4) {
    throw new RangeError(`rgba must be width * height * 4 = ${width * height * 4} bytes, not ${rgba.length}`);
  }
  return callWasm(() => wasm().encodePng(width, height, rgba));
}

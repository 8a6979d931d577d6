/**
 * The PNG facts a packer needs before decoding: the signature (a model texture must be a PNG,
 * docs/format.md section 5.2) and the IHDR dimensions (the manifest, which precedes the data,
 * needs width and height). W3C PNG 3rd edition, sections 5.2 and 11.2.2.
 */
import { MAX_IMAGE_DIMENSION_PX, MAX_IMAGE_RGBA_BYTES, MAX_IMAGE_SIDE_PX } from '../limits.js';
import { PackageError } from './errors.js';

const SIGNATURE = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a] as const;

/** Whether `bytes` starts with the PNG signature. */
export function isPng(bytes: Uint8Array): boolean {
  return bytes.length >= SIGNATURE.length && SIGNATURE.every((b, i) => bytes[i] === b);
}

/**
 * Why a `width` x `height` texture is beyond what the image codecs decode or encode (16384
 * pixels a side, 1 GiB of RGBA8), or `undefined` when it is within. `pack`, `unpack`,
 * `verify` and `inspect` refuse such a texture (`TOO_LARGE`) before any pixel is handled.
 */
export function textureTooLarge(width: number, height: number): string | undefined {
  if (width <= MAX_IMAGE_SIDE_PX && height <= MAX_IMAGE_SIDE_PX && width * height * 4 <= MAX_IMAGE_RGBA_BYTES) return undefined;
  return `${width} x ${height} is beyond iki's textures of at most ${MAX_IMAGE_SIDE_PX} pixels a side `
    + `(${MAX_IMAGE_RGBA_BYTES} bytes of RGBA8)`;
}

/**
 * Width and height from the IHDR chunk, which must come first. `NOT_PNG` when `bytes` is not
 * a PNG; `TOO_LARGE` when a side is outside 1 to 65535 (the manifest's image bounds) or the
 * image is beyond {@link textureTooLarge}.
 */
export function pngSize(bytes: Uint8Array, path: string): { width: number; height: number } {
  const ascii = (from: number, to: number) => String.fromCharCode(...bytes.subarray(from, to));
  if (!isPng(bytes) || bytes.length < 24 || ascii(12, 16) !== 'IHDR') {
    throw new PackageError('NOT_PNG', `${path} is not a PNG file`, path);
  }
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const width = view.getUint32(16);
  const height = view.getUint32(20);
  for (const side of [width, height]) {
    if (side < 1 || side > MAX_IMAGE_DIMENSION_PX) {
      throw new PackageError('TOO_LARGE', `${path} is ${width} x ${height}; each side must be 1 to ${MAX_IMAGE_DIMENSION_PX}`, path);
    }
  }
  const tooLarge = textureTooLarge(width, height);
  if (tooLarge !== undefined) throw new PackageError('TOO_LARGE', `${path}: ${tooLarge}`, path);
  return { width, height };
}

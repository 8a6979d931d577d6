/**
 * A PNG encoder for the package URLs (issue 25 item 1): a texture stored as `rgba8` is asked
 * for by its PNG path, and answered with a PNG made in memory on request.
 *
 * W3C PNG (3rd edition): colour type 6 (RGBA, 8 bits), filter 0 on every row, one IDAT whose
 * zlib stream (RFC 1950) holds *stored* deflate blocks (RFC 1951 section 3.2.4): no
 * compression at all, because the bytes only travel from memory to memory and the runtime
 * decodes them at once. The cost is two checksums over the pixels (CRC-32 and Adler-32) and
 * one copy; the output is `height + 5 * ceil(rows / 65535) + 57` bytes more than the pixels.
 */

/** Largest stored deflate block (its LEN is 16 bits). */
const STORED_BLOCK_BYTES = 0xffff;
/** PNG limits a width and a height to 2^31 - 1; the buffer limit below is what binds. */
const MAX_PNG_DIMENSION = 0x7fffffff;
/** The PNG is one buffer: refuse pixels whose PNG would pass 2 GiB. */
export const MAX_PNG_BYTES = 2 ** 31 - 1;

const SIGNATURE = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a];

/** CRC-32 (ISO 3309), sliced by 8 tables of 256 (about 4x the single table in JS). */
const CRC_TABLES = (() => {
  const t = new Uint32Array(256 * 8);
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    t[n] = c >>> 0;
  }
  for (let n = 0; n < 256; n++) {
    for (let k = 1; k < 8; k++) t[k * 256 + n] = (t[(k - 1) * 256 + n]! >>> 8) ^ t[t[(k - 1) * 256 + n]! & 0xff]!;
  }
  return t;
})();

/** Continues a CRC-32 (`crc` is the running value before the final xor). */
function crcUpdate(crc: number, bytes: Uint8Array, start: number, end: number): number {
  const t = CRC_TABLES;
  let c = crc;
  let i = start;
  for (; i + 8 <= end; i += 8) {
    c ^= bytes[i]! | (bytes[i + 1]! << 8) | (bytes[i + 2]! << 16) | (bytes[i + 3]! << 24);
    c = t[1792 + (c & 0xff)]! ^ t[1536 + ((c >>> 8) & 0xff)]! ^ t[1280 + ((c >>> 16) & 0xff)]! ^ t[1024 + (c >>> 24)]!
      ^ t[768 + bytes[i + 4]!]! ^ t[512 + bytes[i + 5]!]! ^ t[256 + bytes[i + 6]!]! ^ t[bytes[i + 7]!]!;
  }
  for (; i < end; i++) c = t[(c ^ bytes[i]!) & 0xff]! ^ (c >>> 8);
  return c >>> 0;
}

/** Adler-32 (RFC 1950 section 8.2), summed in runs short enough not to overflow. */
function adler32(bytes: Uint8Array): number {
  let a = 1;
  let b = 0;
  for (let i = 0; i < bytes.length;) {
    const end = Math.min(bytes.length, i + 5552);
    for (; i < end; i++) {
      a += bytes[i]!;
      b += a;
    }
    a %= 65521;
    b %= 65521;
  }
  return ((b << 16) | a) >>> 0;
}

/** The size of the PNG {@link encodePngStored} makes for these dimensions. */
export function storedPngSize(width: number, height: number): number {
  const raw = (width * 4 + 1) * height;
  const blocks = Math.max(1, Math.ceil(raw / STORED_BLOCK_BYTES));
  // signature + IHDR chunk + IDAT header/crc + zlib header/adler + block headers + IEND chunk
  return 8 + 25 + 12 + 6 + blocks * 5 + raw + 12;
}

/**
 * Encodes straight-alpha RGBA8 rows (top to bottom, no padding) as a PNG. Throws `RangeError`
 * when the dimensions are not positive integers, the PNG would pass {@link MAX_PNG_BYTES}, or
 * the pixels do not match the dimensions; nothing is allocated before those checks.
 */
export function encodePngStored(width: number, height: number, rgba: Uint8Array): Uint8Array {
  if (!Number.isSafeInteger(width) || !Number.isSafeInteger(height) || width < 1 || height < 1
    || width > MAX_PNG_DIMENSION || height > MAX_PNG_DIMENSION) {
    throw new RangeError(`a PNG needs a positive width and height, not ${width} x ${height}`);
  }
  const size = storedPngSize(width, height);
  if (size > MAX_PNG_BYTES) throw new RangeError(`the PNG would be ${size} bytes (limit ${MAX_PNG_BYTES})`);
  if (rgba.length !== width * height * 4) {
    throw new RangeError(`rgba holds ${rgba.length} bytes, not ${width} x ${height} x 4`);
  }
  const out = new Uint8Array(size);
  const view = new DataView(out.buffer);
  out.set(SIGNATURE, 0);
  // IHDR: width, height, bit depth 8, colour type 6, compression 0, filter 0, interlace 0.
  view.setUint32(8, 13);
  out.set([0x49, 0x48, 0x44, 0x52], 12);
  view.setUint32(16, width);
  view.setUint32(20, height);
  out.set([8, 6, 0, 0, 0], 24);
  view.setUint32(29, crcUpdate(0xffffffff, out, 12, 29) ^ 0xffffffff);
  // IDAT: the zlib stream, written in place.
  const idat = 33;
  const stride = width * 4;
  const raw = (stride + 1) * height;
  view.setUint32(idat, size - 33 - 12 - 12);
  out.set([0x49, 0x44, 0x41, 0x54], idat + 4);
  let at = idat + 8;
  out[at++] = 0x78; // CM 8 (deflate), CINFO 7 (32 KiB window)
  out[at++] = 0x01; // FLEVEL 0 (fastest), no dictionary; 0x7801 % 31 === 0
  const rows = new Uint8Array(raw);
  for (let y = 0; y < height; y++) rows.set(rgba.subarray(y * stride, (y + 1) * stride), y * (stride + 1) + 1);
  for (let from = 0; from < raw; from += STORED_BLOCK_BYTES) {
    const len = Math.min(STORED_BLOCK_BYTES, raw - from);
    out[at] = from + len >= raw ? 1 : 0; // BFINAL, BTYPE 00 (stored)
    view.setUint16(at + 1, len, true);
    view.setUint16(at + 3, len ^ 0xffff, true);
    out.set(rows.subarray(from, from + len), at + 5);
    at += 5 + len;
  }
  view.setUint32(at, adler32(rows));
  rows.fill(0);
  at += 4;
  view.setUint32(at, crcUpdate(0xffffffff, out, idat + 4, at) ^ 0xffffffff);
  at += 4;
  // IEND
  view.setUint32(at, 0);
  out.set([0x49, 0x45, 0x4e, 0x44, 0xae, 0x42, 0x60, 0x82], at + 4);
  return out;
}

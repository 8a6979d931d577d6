/**
 * Images that claim far more pixels than they carry bytes, as an attacker sends them to
 * identify: a real PNG decompression bomb (about 1 MB that inflates to 16384 x 16384 RGBA8,
 * 1 GiB), and PNG, JPEG and WebP headers that claim any size. Built by hand, no encoder needed.
 */
import { crc32, deflateRawSync, constants } from 'node:zlib';

function pngChunk(type: string, data: Uint8Array): Buffer {
  const body = Buffer.concat([Buffer.from(type, 'latin1'), data]);
  const length = Buffer.alloc(4);
  length.writeUInt32BE(data.length);
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(body));
  return Buffer.concat([length, body, crc]);
}

function ihdr(width: number, height: number): Buffer {
  const data = Buffer.alloc(13);
  data.writeUInt32BE(width, 0);
  data.writeUInt32BE(height, 4);
  data.set([8, 6, 0, 0, 0], 8); // 8-bit RGBA, deflate, adaptive filtering, no interlace
  return pngChunk('IHDR', data);
}

const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

/**
 * A complete, valid `side` x `side` RGBA8 PNG of transparent black. Every scanline (filter byte
 * and pixels) is zeros, so the zlib stream is one sync-flushed DEFLATE segment of one
 * scanline repeated for each row: DEFLATE's back-references only reach zeros already written,
 * so the segments concatenate. 16384 rows of 65537 zero bytes: about 1.1 MB in, 1 GiB out.
 */
export function pngBomb(side: number): Buffer {
  const row = side * 4 + 1;
  const segment = deflateRawSync(Buffer.alloc(row), { level: 9, finishFlush: constants.Z_SYNC_FLUSH });
  const total = row * side;
  // Adler-32 of `total` zeros: a stays 1, b adds 1 per byte.
  const adler = Buffer.alloc(4);
  adler.writeUInt32BE((((total % 65521) << 16) | 1) >>> 0);
  const idat = Buffer.concat([Buffer.from([0x78, 0xda]), ...Array.from({ length: side }, () => segment),
    Buffer.from([0x03, 0x00]), adler]);
  return Buffer.concat([PNG_SIGNATURE, ihdr(side, side), pngChunk('IDAT', idat), pngChunk('IEND', new Uint8Array(0))]);
}

/** A PNG whose IHDR claims `width` x `height` and whose IDAT holds a few bytes. */
export function pngClaiming(width: number, height: number): Buffer {
  return Buffer.concat([PNG_SIGNATURE, ihdr(width, height), pngChunk('IDAT', Buffer.from([0x78, 0x9c, 0x03, 0x00])),
    pngChunk('IEND', new Uint8Array(0))]);
}

function jpegSegment(marker: number, data: number[]): number[] {
  const length = data.length + 2;
  return [0xff, marker, length >> 8, length & 0xff, ...data];
}

/**
 * A baseline JPEG (ITU T.81) whose SOF0 claims `width` x `height`, one grey component, one
 * quantisation table, one-code Huffman tables and a scan of a few bytes.
 */
export function jpegClaiming(width: number, height: number): Buffer {
  const huffman = (tableClass: number) => [tableClass << 4, 1, ...new Array<number>(15).fill(0), 0];
  return Buffer.from([
    0xff, 0xd8,
    ...jpegSegment(0xdb, [0, ...new Array<number>(64).fill(1)]),
    ...jpegSegment(0xc0, [8, height >> 8, height & 0xff, width >> 8, width & 0xff, 1, 1, 0x11, 0]),
    ...jpegSegment(0xc4, huffman(0)),
    ...jpegSegment(0xc4, huffman(1)),
    ...jpegSegment(0xda, [1, 1, 0x00, 0, 63, 0]),
    0x3f, 0xff, 0xd9,
  ]);
}

/** An extended WebP (RFC 9649 2.7) whose VP8X canvas claims `width` x `height` (each up to 2^24). */
export function webpClaiming(width: number, height: number): Buffer {
  const vp8x = Buffer.alloc(10);
  vp8x.writeUIntLE(width - 1, 4, 3);
  vp8x.writeUIntLE(height - 1, 7, 3);
  const vp8l = Buffer.from([0x2f, 0, 0, 0, 0]);
  const chunk = (type: string, data: Buffer) => {
    const length = Buffer.alloc(4);
    length.writeUInt32LE(data.length);
    return Buffer.concat([Buffer.from(type, 'latin1'), length, data, data.length % 2 === 1 ? Buffer.alloc(1) : Buffer.alloc(0)]);
  };
  const body = Buffer.concat([Buffer.from('WEBP'), chunk('VP8X', vp8x), chunk('VP8L', vp8l)]);
  const size = Buffer.alloc(4);
  size.writeUInt32LE(body.length);
  return Buffer.concat([Buffer.from('RIFF'), size, body]);
}

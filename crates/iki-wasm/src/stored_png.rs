//! The stored-block PNG of the package URLs (issue 25 item 1): a texture kept as `rgba8` is
//! asked for by its PNG path and answered with a PNG made in memory on request. This is the
//! WASM twin of `ts/src/browser/png-stored.ts` (same bytes), run by the license worker, which
//! already holds a WASM instance, so the service worker only wraps the bytes in a `Response`.
//!
//! W3C PNG (3rd edition): colour type 6 (RGBA, 8 bits), filter 0 on every row, one IDAT whose
//! zlib stream (RFC 1950) holds *stored* deflate blocks (RFC 1951 section 3.2.4). The cost is
//! one pass over the pixels with two checksums: CRC-32 (`crc32fast`, slice-by-16 on wasm32)
//! and Adler-32 (sums reduced once per 5552 bytes, the longest run that cannot overflow u32).
//!
//! [`encode_stored`] reads the pixels and writes the PNG through two callbacks, one stored
//! block (at most 64 KiB) at a time: the export [`png_stored`] reads from and writes into JS
//! `Uint8Array`s, so neither the whole pixel buffer nor the whole PNG is ever in WASM memory,
//! and the one block buffer is zero-filled before it is freed.

use core::fmt;

use js_sys::Uint8Array;
use wasm_bindgen::prelude::*;
use zeroize::Zeroize;

use crate::error::{js_error, BoundaryError, Detail};

/// Largest stored deflate block (its LEN is 16 bits).
pub const STORED_BLOCK_BYTES: usize = 0xffff;
/// The PNG is one JS buffer: refuse pixels whose PNG would pass 2 GiB.
pub const MAX_PNG_BYTES: u64 = (1 << 31) - 1;

const SIGNATURE: [u8; 8] = [0x89, b'P', b'N', b'G', 0x0d, 0x0a, 0x1a, 0x0a];
const IEND: [u8; 12] = [0, 0, 0, 0, b'I', b'E', b'N', b'D', 0xae, 0x42, 0x60, 0x82];
/// CM 8 (deflate), CINFO 7 (32 KiB window), FLEVEL 0 (fastest), no dictionary; 0x7801 % 31 == 0.
const ZLIB_HEADER: [u8; 2] = [0x78, 0x01];
/// Adler-32's modulus (RFC 1950 section 8.2).
const ADLER_MOD: u32 = 65521;
/// The most bytes summed before `b` could pass 2^32 - 1 (zlib's NMAX).
const ADLER_NMAX: usize = 5552;

/// Why pixels cannot become a PNG (`INVALID_ARGUMENT`); nothing was allocated.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PngError {
    /// A width or height of 0, or one past 2^31 - 1.
    Dimensions {
        /// The width asked for.
        width: u32,
        /// The height asked for.
        height: u32,
    },
    /// The PNG would pass [`MAX_PNG_BYTES`].
    TooLarge {
        /// The PNG's size.
        size: u64,
    },
    /// The pixels are not `width * height * 4` bytes.
    Length {
        /// The bytes given.
        given: u64,
        /// The bytes the dimensions need.
        expected: u64,
    },
}

impl fmt::Display for PngError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Dimensions { width, height } => {
                write!(
                    f,
                    "a PNG needs a positive width and height, not {width} x {height}"
                )
            }
            Self::TooLarge { size } => {
                write!(f, "the PNG would be {size} bytes (limit {MAX_PNG_BYTES})")
            }
            Self::Length { given, expected } => {
                write!(f, "rgba holds {given} bytes, not {expected}")
            }
        }
    }
}

impl BoundaryError for PngError {
    fn code(&self) -> &'static str {
        "INVALID_ARGUMENT"
    }

    fn details(&self) -> Vec<(&'static str, Detail)> {
        // Every value is below 2^53 (u32 products and sizes checked against 2^31).
        match *self {
            Self::Dimensions { width, height } => vec![
                ("width", Detail::Num(width.into())),
                ("height", Detail::Num(height.into())),
            ],
            Self::TooLarge { size } => vec![
                ("value", Detail::Num(size as f64)),
                ("max", Detail::Num(MAX_PNG_BYTES as f64)),
            ],
            Self::Length { given, expected } => vec![
                ("value", Detail::Num(given as f64)),
                ("expected", Detail::Num(expected as f64)),
            ],
        }
    }
}

/// The size of the stored PNG of `width x height` pixels (u64: never overflows for u32 sides).
pub fn stored_png_size(width: u32, height: u32) -> u64 {
    let raw = (u64::from(width) * 4 + 1) * u64::from(height);
    let blocks = raw.div_ceil(STORED_BLOCK_BYTES as u64).max(1);
    // signature + IHDR chunk + IDAT length/type/crc + zlib header/adler + block headers + IEND
    8 + 25 + 12 + 6 + blocks * 5 + raw + 12
}

/// Checks the dimensions and the pixel count; the PNG's size when they fit.
pub fn check(width: u32, height: u32, rgba_len: u64) -> Result<u64, PngError> {
    if width == 0 || height == 0 || width > 0x7fff_ffff || height > 0x7fff_ffff {
        return Err(PngError::Dimensions { width, height });
    }
    let size = stored_png_size(width, height);
    if size > MAX_PNG_BYTES {
        return Err(PngError::TooLarge { size });
    }
    let expected = u64::from(width) * u64::from(height) * 4;
    if rgba_len != expected {
        return Err(PngError::Length {
            given: rgba_len,
            expected,
        });
    }
    Ok(size)
}

/// A running Adler-32 (RFC 1950 section 8.2).
#[derive(Debug, Clone, Copy)]
pub struct Adler32 {
    a: u32,
    b: u32,
}

impl Default for Adler32 {
    fn default() -> Self {
        Self { a: 1, b: 0 }
    }
}

impl Adler32 {
    /// Adds `bytes`: plain sums, reduced modulo 65521 once per 5552 bytes (a multiple of 16).
    pub fn update(&mut self, bytes: &[u8]) {
        let (mut a, mut b) = (self.a, self.b);
        for run in bytes.chunks(ADLER_NMAX) {
            let mut lanes = run.chunks_exact(16);
            for chunk in &mut lanes {
                // Over 16 bytes, b gains a sixteen times plus the bytes weighted 16, 15, ..., 1:
                // fixed-size sums LLVM turns into simd128 on wasm32.
                let (mut sum, mut weighted) = (0u32, 0u32);
                for (i, &byte) in chunk.iter().enumerate() {
                    sum += u32::from(byte);
                    weighted += (16 - i as u32) * u32::from(byte);
                }
                b += 16 * a + weighted;
                a += sum;
            }
            for &byte in lanes.remainder() {
                a += u32::from(byte);
                b += a;
            }
            a %= ADLER_MOD;
            b %= ADLER_MOD;
        }
        self.a = a;
        self.b = b;
    }

    /// The checksum so far.
    pub fn finish(&self) -> u32 {
        (self.b << 16) | self.a
    }
}

/// A PNG chunk's CRC-32 (over type and data) as it is written.
fn crc(parts: &[&[u8]]) -> [u8; 4] {
    let mut hasher = crc32fast::Hasher::new();
    for part in parts {
        hasher.update(part);
    }
    hasher.finalize().to_be_bytes()
}

/// Encodes `width x height` straight-alpha RGBA8 pixels as a stored PNG.
///
/// `read(offset, dest)` fills `dest` with the pixel bytes from `offset` (rows top to bottom,
/// no padding); `write(bytes)` appends to the PNG, [`stored_png_size`] bytes in all. The
/// dimensions are checked against `rgba_len` before anything is allocated. `E` is the
/// callbacks' own error, passed through.
pub fn encode_stored<E>(
    width: u32,
    height: u32,
    rgba_len: u64,
    mut read: impl FnMut(usize, &mut [u8]) -> Result<(), E>,
    mut write: impl FnMut(&[u8]) -> Result<(), E>,
) -> Result<Result<(), E>, PngError> {
    let size = check(width, height, rgba_len)?;
    Ok(encode_checked(width, height, size, &mut read, &mut write))
}

fn encode_checked<E>(
    width: u32,
    height: u32,
    size: u64,
    read: &mut impl FnMut(usize, &mut [u8]) -> Result<(), E>,
    write: &mut impl FnMut(&[u8]) -> Result<(), E>,
) -> Result<(), E> {
    // Every size fits usize: the PNG is below 2^31 bytes (checked).
    let stride = width as usize * 4;
    let raw = (stride + 1) * height as usize;
    let mut head = [0u8; 8 + 25 + 8 + 2];
    head[..8].copy_from_slice(&SIGNATURE);
    head[8..12].copy_from_slice(&13u32.to_be_bytes());
    head[12..16].copy_from_slice(b"IHDR");
    head[16..20].copy_from_slice(&width.to_be_bytes());
    head[20..24].copy_from_slice(&height.to_be_bytes());
    // bit depth 8, colour type 6, compression 0, filter 0, interlace 0
    head[24..29].copy_from_slice(&[8, 6, 0, 0, 0]);
    let ihdr_crc = crc(&[&head[12..29]]);
    head[29..33].copy_from_slice(&ihdr_crc);
    let idat_len = (size - 8 - 25 - 12 - 12) as u32;
    head[33..37].copy_from_slice(&idat_len.to_be_bytes());
    head[37..41].copy_from_slice(b"IDAT");
    head[41..43].copy_from_slice(&ZLIB_HEADER);
    write(&head)?;

    let mut idat_crc = crc32fast::Hasher::new();
    idat_crc.update(&head[37..43]);
    let mut adler = Adler32::default();
    let mut block = vec![0u8; 5 + STORED_BLOCK_BYTES.min(raw)];
    // A block's pixels are one run of `rgba` (the filter bytes sit between rows): read at once.
    let mut pixels = vec![0u8; STORED_BLOCK_BYTES.min(raw)];
    let result = (|| {
        // Where the stream is: row `row`, byte `col` of its `stride + 1` (0 is the filter byte).
        let (mut row, mut col) = (0usize, 0usize);
        let mut from = 0;
        while from < raw {
            let len = STORED_BLOCK_BYTES.min(raw - from);
            block[0] = u8::from(from + len == raw); // BFINAL, BTYPE 00 (stored)
            block[1..3].copy_from_slice(&(len as u16).to_le_bytes());
            block[3..5].copy_from_slice(&(!(len as u16)).to_le_bytes());
            let data = &mut block[5..5 + len];
            // Rows that start in this block, counting one whose filter byte opens it.
            let starts = if col == 0 {
                1 + (len - 1) / (stride + 1)
            } else {
                let first = stride + 1 - col;
                if len > first {
                    1 + (len - first - 1) / (stride + 1)
                } else {
                    0
                }
            };
            let run = &mut pixels[..len - starts];
            let mut taken = 0;
            read(row * stride + col.saturating_sub(1), run)?;
            let mut filled = 0;
            while filled < len {
                if col == 0 {
                    data[filled] = 0; // filter type 0 (None)
                    filled += 1;
                    col = 1;
                    continue;
                }
                let n = (stride + 1 - col).min(len - filled);
                data[filled..filled + n].copy_from_slice(&run[taken..taken + n]);
                taken += n;
                filled += n;
                col += n;
                if col == stride + 1 {
                    col = 0;
                    row += 1;
                }
            }
            adler.update(&block[5..5 + len]);
            idat_crc.update(&block[..5 + len]);
            write(&block[..5 + len])?;
            from += len;
        }
        Ok(())
    })();
    block.zeroize();
    pixels.zeroize();
    result?;
    let mut tail = [0u8; 4 + 4 + 12];
    tail[..4].copy_from_slice(&adler.finish().to_be_bytes());
    idat_crc.update(&tail[..4]);
    tail[4..8].copy_from_slice(&idat_crc.finalize().to_be_bytes());
    tail[8..].copy_from_slice(&IEND);
    write(&tail)
}

/// Encodes straight-alpha RGBA8 rows (top to bottom, no padding) as a stored PNG, into a new
/// `Uint8Array` of `storedPngSize(width, height)` bytes. The pixels are read from `rgba` one
/// block at a time and left as they are (the caller wipes them). `INVALID_ARGUMENT` when the
/// dimensions are not positive, the PNG would pass 2^31 - 1 bytes or `rgba` is not
/// `width * height * 4` bytes; nothing is allocated before those checks.
#[wasm_bindgen(js_name = pngStored)]
pub fn png_stored(width: u32, height: u32, rgba: &Uint8Array) -> Result<Uint8Array, JsValue> {
    let size = check(width, height, rgba.length().into()).map_err(js_error)?;
    // Below 2^31 (checked), so a u32 length and u32 offsets.
    let out = Uint8Array::new_with_length(size as u32);
    let mut at = 0u32;
    let written = encode_checked(
        width,
        height,
        size,
        &mut |offset, dest: &mut [u8]| {
            let start = offset as u32;
            rgba.subarray(start, start + dest.len() as u32)
                .copy_to(dest);
            Ok::<(), JsValue>(())
        },
        &mut |bytes: &[u8]| {
            out.subarray(at, at + bytes.len() as u32).copy_from(bytes);
            at += bytes.len() as u32;
            Ok(())
        },
    );
    written.map(|()| out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn encode(width: u32, height: u32, rgba: &[u8]) -> Result<Vec<u8>, PngError> {
        let mut out = Vec::new();
        encode_stored::<()>(
            width,
            height,
            rgba.len() as u64,
            |offset, dest| {
                dest.copy_from_slice(&rgba[offset..offset + dest.len()]);
                Ok(())
            },
            |bytes| {
                out.extend_from_slice(bytes);
                Ok(())
            },
        )?
        .expect("the callbacks do not fail");
        Ok(out)
    }

    /// Pixels that differ everywhere (no run repeats with a short period).
    fn pixels(width: u32, height: u32) -> Vec<u8> {
        let mut state = 0x2545_f491_u32;
        (0..u64::from(width) * u64::from(height) * 4)
            .map(|_| {
                state ^= state << 13;
                state ^= state >> 17;
                state ^= state << 5;
                (state >> 24) as u8
            })
            .collect()
    }

    fn decode(png: &[u8]) -> (u32, u32, Vec<u8>) {
        let mut decoder = png::Decoder::new(std::io::Cursor::new(png));
        // Checked by hand below; the decoder checks CRCs and Adler-32 unless told not to.
        decoder.ignore_checksums(false);
        let mut reader = decoder.read_info().expect("a PNG header");
        let mut buf = vec![0; reader.output_buffer_size()];
        let frame = reader.next_frame(&mut buf).expect("the pixels decode");
        assert_eq!(frame.color_type, png::ColorType::Rgba);
        assert_eq!(frame.bit_depth, png::BitDepth::Eight);
        buf.truncate(frame.buffer_size());
        (frame.width, frame.height, buf)
    }

    /// Walks the chunks, checking each CRC-32 with `png`'s own crc32fast-free reference.
    fn chunks(png: &[u8]) -> Vec<([u8; 4], Vec<u8>)> {
        assert_eq!(png[..8], SIGNATURE);
        let mut at = 8;
        let mut found = Vec::new();
        while at < png.len() {
            let len = u32::from_be_bytes(png[at..at + 4].try_into().unwrap()) as usize;
            let kind: [u8; 4] = png[at + 4..at + 8].try_into().unwrap();
            let data = png[at + 8..at + 8 + len].to_vec();
            let stored = u32::from_be_bytes(png[at + 8 + len..at + 12 + len].try_into().unwrap());
            assert_eq!(
                stored,
                bitwise_crc(&png[at + 4..at + 8 + len]),
                "CRC of {kind:?}"
            );
            found.push((kind, data));
            at += 12 + len;
        }
        found
    }

    /// CRC-32 one bit at a time (ISO 3309), independent of crc32fast.
    fn bitwise_crc(bytes: &[u8]) -> u32 {
        let mut c = 0xffff_ffff_u32;
        for &byte in bytes {
            c ^= u32::from(byte);
            for _ in 0..8 {
                c = if c & 1 == 1 {
                    0xedb8_8320 ^ (c >> 1)
                } else {
                    c >> 1
                };
            }
        }
        c ^ 0xffff_ffff
    }

    /// Adler-32 reduced after every byte (the definition), independent of the 5552 runs.
    fn plain_adler(bytes: &[u8]) -> u32 {
        let (mut a, mut b) = (1u32, 0u32);
        for &byte in bytes {
            a = (a + u32::from(byte)) % ADLER_MOD;
            b = (b + a) % ADLER_MOD;
        }
        (b << 16) | a
    }

    #[test]
    fn decodes_to_the_same_pixels_with_rows_longer_than_5552_bytes() {
        // A 1500-pixel row is 6001 bytes with its filter byte: longer than one Adler run, and
        // 700 rows cross 64 stored blocks at every offset of a row.
        let (width, height) = (1500, 700);
        let rgba = pixels(width, height);
        let png = encode(width, height, &rgba).unwrap();
        assert_eq!(png.len() as u64, stored_png_size(width, height));
        assert_eq!(decode(&png), (width, height, rgba.clone()));
        let found = chunks(&png);
        let kinds: Vec<&[u8; 4]> = found.iter().map(|(kind, _)| kind).collect();
        assert_eq!(kinds, [b"IHDR", b"IDAT", b"IEND"]);
        // The zlib stream inflates (miniz_oxide checks the Adler-32 too) to the filtered rows.
        let idat = &found[1].1;
        let rows = miniz_oxide::inflate::decompress_to_vec_zlib(idat).expect("a valid zlib stream");
        assert_eq!(rows.len(), (width as usize * 4 + 1) * height as usize);
        let trailer = u32::from_be_bytes(idat[idat.len() - 4..].try_into().unwrap());
        assert_eq!(trailer, plain_adler(&rows));
        // The same bytes as the JavaScript encoder's layout: one byte 0 before every row.
        for (y, row) in rows.chunks(width as usize * 4 + 1).enumerate() {
            assert_eq!(row[0], 0);
            assert_eq!(
                row[1..],
                rgba[y * width as usize * 4..(y + 1) * width as usize * 4]
            );
        }
    }

    #[test]
    fn small_images_and_exact_block_boundaries() {
        // 1 x 1; a raw stream of exactly one block (65535 = 255 rows of 257 bytes), one row
        // more; rows of 64 KiB, longer than a block.
        for (width, height) in [(1, 1), (64, 255), (64, 256), (16383, 4), (7, 3)] {
            let rgba = pixels(width, height);
            let png = encode(width, height, &rgba).unwrap();
            assert_eq!(png.len() as u64, stored_png_size(width, height));
            assert_eq!(decode(&png), (width, height, rgba), "{width} x {height}");
        }
    }

    #[test]
    fn adler_runs_match_the_definition() {
        // All 0xff is the worst case for overflow; lengths around 5552 and its multiples.
        for len in [0, 1, 3, 4, 5551, 5552, 5553, 11104, 11105, 70000] {
            let ones = vec![0xffu8; len];
            let mut adler = Adler32::default();
            adler.update(&ones);
            assert_eq!(adler.finish(), plain_adler(&ones), "{len} bytes of 0xff");
            // Split anywhere, the same sum.
            let mixed = pixels(1, len.div_ceil(4) as u32);
            let mut split = Adler32::default();
            split.update(&mixed[..mixed.len() / 3]);
            split.update(&mixed[mixed.len() / 3..]);
            assert_eq!(split.finish(), plain_adler(&mixed));
        }
    }

    #[test]
    fn refuses_bad_shapes_before_allocating() {
        assert_eq!(
            encode(0, 4, &[]),
            Err(PngError::Dimensions {
                width: 0,
                height: 4
            })
        );
        assert_eq!(
            encode(4, 0, &[]),
            Err(PngError::Dimensions {
                width: 4,
                height: 0
            })
        );
        assert_eq!(
            check(0x8000_0000, 1, 0),
            Err(PngError::Dimensions {
                width: 0x8000_0000,
                height: 1
            })
        );
        // 2^31 bytes of PNG would be needed: refused before reading one pixel.
        assert!(matches!(
            check(32768, 16384, 0),
            Err(PngError::TooLarge { .. })
        ));
        assert_eq!(
            encode(2, 2, &[0; 15]),
            Err(PngError::Length {
                given: 15,
                expected: 16
            })
        );
        let err = PngError::Length {
            given: 15,
            expected: 16,
        };
        assert_eq!(err.code(), "INVALID_ARGUMENT");
        assert_eq!(err.to_string(), "rgba holds 15 bytes, not 16");
    }

    #[test]
    fn a_failing_callback_stops_the_encoder() {
        let mut writes = 0;
        let outcome = encode_stored(
            2,
            2,
            16,
            |_, _| Err("gone"),
            |_| {
                writes += 1;
                Ok(())
            },
        );
        assert_eq!(outcome, Ok(Err("gone")));
        assert_eq!(writes, 1, "only the header was written");
    }
}

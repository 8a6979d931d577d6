//! Image codecs for identify uploads and texture export (SPEC behaviour rule 6): PNG, JPEG
//! and WebP in, PNG out, through the pure-Rust `image` crate (no default features).
//!
//! Decompression bombs: a 40-byte PNG can claim 65535 x 65535 pixels, and a 1 MB one can
//! really inflate to 16384 x 16384. Every decode runs within an [`ImageBound`], a largest side
//! and a largest area: the license service passes the largest texture of the master a leaked
//! image is checked against, since a texture of a copy is no larger than the master's, and
//! [`ImageBound::CEILING`] caps every bound. The header's dimensions are read first
//! ([`image_dimensions`]: the PNG IHDR by hand, JPEG and WebP by their decoders' header
//! readers, no pixel decoded and nothing allocated by size) and checked against the bound;
//! only then does the decoder run, with the same bound as its own limits, which also caps its
//! allocations (a 16-bit image needs twice the bytes of its RGBA8 result and is refused when
//! that passes the bound). Pixels are returned as straight (not premultiplied) RGBA8, the
//! layout of `rgba8` entries and of `iki_watermark::detect`. Nothing here is secret.

use std::io::Cursor;

use image::error::ImageError;
use image::{ExtendedColorType, ImageEncoder, ImageFormat, ImageReader, Limits};

use crate::error::Error;

/// Largest width or height accepted by [`decode_image`] and [`encode_png`], in pixels.
/// Twice the largest Cubism texture (8192) and four times the usual 4096 atlas.
pub const MAX_IMAGE_SIDE_PX: u32 = 16384;

/// Largest decoded image, in bytes of RGBA8 (1 GiB: one 16384 x 16384 image). Also the
/// decoder's allocation cap.
pub const MAX_IMAGE_RGBA_BYTES: u64 = 1 << 30;

/// PNG signature and the IHDR chunk's length and type (W3C PNG 3rd edition, 5.2 and 11.2.2):
/// IHDR must come first, so its width and height are bytes 16 to 23 of every PNG.
const PNG_IHDR_PREFIX: &[u8; 16] = b"\x89PNG\r\n\x1a\n\0\0\0\x0dIHDR";

/// The largest image a decode may produce: a side and an area, both in pixels.
///
/// The service narrows [`ImageBound::CEILING`] to the master a leaked texture belongs to
/// (its largest texture's side and area, [`ImageBound::new`]); an image beyond the bound is
/// `IMAGE_TOO_LARGE` before any pixel is decoded.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ImageBound {
    max_side_px: u32,
    max_pixels: u64,
}

impl ImageBound {
    /// The hard cap: [`MAX_IMAGE_SIDE_PX`] a side and [`MAX_IMAGE_RGBA_BYTES`] of RGBA8.
    pub const CEILING: Self = Self {
        max_side_px: MAX_IMAGE_SIDE_PX,
        max_pixels: MAX_IMAGE_RGBA_BYTES / 4,
    };

    /// A bound of `max_side_px` a side and `max_pixels` in all, each capped at the
    /// [`ImageBound::CEILING`]'s.
    #[must_use]
    pub fn new(max_side_px: u32, max_pixels: u64) -> Self {
        Self {
            max_side_px: max_side_px.min(Self::CEILING.max_side_px),
            max_pixels: max_pixels.min(Self::CEILING.max_pixels),
        }
    }

    /// The largest width or height, in pixels.
    #[must_use]
    pub fn max_side_px(&self) -> u32 {
        self.max_side_px
    }

    /// The largest area, in pixels.
    #[must_use]
    pub fn max_pixels(&self) -> u64 {
        self.max_pixels
    }

    /// Checks an image's dimensions against the bound.
    ///
    /// # Errors
    /// `IMAGE_TOO_LARGE` beyond the bound, `IMAGE_DECODE_FAILED` for a zero dimension.
    pub fn check(&self, width: u32, height: u32) -> Result<(), Error> {
        let sides = width > self.max_side_px || height > self.max_side_px;
        if sides || u64::from(width) * u64::from(height) > self.max_pixels {
            return Err(self.too_large(width, height));
        }
        if width == 0 || height == 0 {
            return Err(Error::ImageDecodeFailed {
                reason: "image has a zero dimension",
            });
        }
        Ok(())
    }

    fn too_large(&self, width: u32, height: u32) -> Error {
        Error::ImageTooLarge {
            width,
            height,
            max_side_px: self.max_side_px,
            max_pixels: self.max_pixels,
        }
    }

    /// The decoder's own limits: the same side, and at most the RGBA8 bytes of the area.
    fn limits(&self) -> Limits {
        let mut limits = Limits::default();
        limits.max_image_width = Some(self.max_side_px);
        limits.max_image_height = Some(self.max_side_px);
        limits.max_alloc = Some(self.max_pixels * 4);
        limits
    }
}

/// The width and height an image's header declares, without decoding a pixel.
///
/// # Errors
/// `IMAGE_DECODE_FAILED` for any other format or a header that cannot be read.
pub fn image_dimensions(bytes: &[u8]) -> Result<(u32, u32), Error> {
    header_dimensions(bytes, sniff(bytes)?)
}

/// Decodes a PNG, JPEG or WebP image to straight RGBA8 within [`ImageBound::CEILING`]:
/// `(width, height, pixels)`.
///
/// # Errors
/// As [`decode_image_within`].
pub fn decode_image(bytes: &[u8]) -> Result<(u32, u32, Vec<u8>), Error> {
    decode_image_within(bytes, ImageBound::CEILING)
}

/// Decodes a PNG, JPEG or WebP image to straight RGBA8 within `bound`: `(width, height,
/// pixels)`.
///
/// # Errors
/// `IMAGE_TOO_LARGE` when the header's dimensions are beyond `bound` (checked before any
/// pixel is decoded) or decoding would allocate beyond it, `IMAGE_DECODE_FAILED` for any
/// other format or a damaged image.
pub fn decode_image_within(bytes: &[u8], bound: ImageBound) -> Result<(u32, u32, Vec<u8>), Error> {
    let format = sniff(bytes)?;
    let (width, height) = header_dimensions(bytes, format)?;
    bound.check(width, height)?;
    let mut reader = reader(bytes, format);
    reader.limits(bound.limits());
    let decoded = reader.decode().map_err(|e| match e {
        ImageError::Limits(_) => bound.too_large(width, height),
        other => decode_error(other),
    })?;
    let rgba = decoded.into_rgba8();
    if rgba.dimensions() != (width, height) {
        return Err(Error::ImageDecodeFailed {
            reason: "decoded size differs from the header",
        });
    }
    Ok((width, height, rgba.into_raw()))
}

/// Encodes straight RGBA8 pixels (`width * height * 4` bytes) as a PNG.
///
/// # Errors
/// `INVALID_ARGUMENT` when the buffer does not match the dimensions or a dimension is 0,
/// `IMAGE_TOO_LARGE` beyond the limits.
pub fn encode_png(width: u32, height: u32, rgba: &[u8]) -> Result<Vec<u8>, Error> {
    if width == 0 || height == 0 {
        return Err(Error::argument("image dimensions must be non-zero"));
    }
    ImageBound::CEILING.check(width, height)?;
    if rgba.len() as u64 != rgba_bytes(width, height) {
        return Err(Error::argument(
            "pixel buffer is not width * height * 4 bytes",
        ));
    }
    let mut out = Vec::new();
    image::codecs::png::PngEncoder::new(&mut out)
        .write_image(rgba, width, height, ExtendedColorType::Rgba8)
        .map_err(|_| Error::state("png encoder failed"))?;
    Ok(out)
}

/// The format, from the magic bytes; only the three accepted formats.
fn sniff(bytes: &[u8]) -> Result<ImageFormat, Error> {
    match image::guess_format(bytes) {
        Ok(format @ (ImageFormat::Png | ImageFormat::Jpeg | ImageFormat::WebP)) => Ok(format),
        _ => Err(Error::ImageDecodeFailed {
            reason: "not a png, jpeg or webp image",
        }),
    }
}

/// Header dimensions. PNG's and an extended WebP's canvas are read here: the `png` crate
/// refuses a header whose frame would not fit the address space (60000 x 60000 on wasm32),
/// and `image-webp` a canvas whose area passes `u32`, both as limits that would hide the
/// dimensions. The JPEG header reader (16-bit sides) and the simple WebP ones (14-bit sides)
/// compute no sizes and allocate nothing by the dimensions they read.
fn header_dimensions(bytes: &[u8], format: ImageFormat) -> Result<(u32, u32), Error> {
    if format == ImageFormat::Png {
        return png_dimensions(bytes);
    }
    if format == ImageFormat::WebP && bytes.get(12..16) == Some(b"VP8X") {
        return webp_canvas(bytes);
    }
    let mut reader = reader(bytes, format);
    reader.no_limits();
    reader.into_dimensions().map_err(decode_error)
}

/// The canvas of an extended WebP (RFC 9649 section 2.7): the VP8X chunk comes first, its
/// flags and reserved bytes, then width - 1 and height - 1 as 24-bit little-endian numbers.
fn webp_canvas(bytes: &[u8]) -> Result<(u32, u32), Error> {
    let side = |at: usize| {
        bytes.get(at..at + 3).map(|b| {
            b.iter()
                .rev()
                .fold(0u32, |n, &byte| (n << 8) | u32::from(byte))
                + 1
        })
    };
    match (side(24), side(27)) {
        (Some(width), Some(height)) => Ok((width, height)),
        _ => Err(Error::ImageDecodeFailed {
            reason: "webp extended header cut short",
        }),
    }
}

fn png_dimensions(bytes: &[u8]) -> Result<(u32, u32), Error> {
    let field = |at: usize| {
        bytes
            .get(at..at + 4)
            .and_then(|b| <[u8; 4]>::try_from(b).ok())
            .map(u32::from_be_bytes)
    };
    match (bytes.starts_with(PNG_IHDR_PREFIX), field(16), field(20)) {
        (true, Some(width), Some(height)) => Ok((width, height)),
        _ => Err(Error::ImageDecodeFailed {
            reason: "png without an ihdr chunk first",
        }),
    }
}

fn reader(bytes: &[u8], format: ImageFormat) -> ImageReader<Cursor<&[u8]>> {
    let mut reader = ImageReader::new(Cursor::new(bytes));
    reader.set_format(format);
    reader
}

fn rgba_bytes(width: u32, height: u32) -> u64 {
    u64::from(width) * u64::from(height) * 4
}

fn decode_error(error: ImageError) -> Error {
    match error {
        ImageError::Limits(_) => Error::ImageDecodeFailed {
            reason: "decoder allocation beyond the limit",
        },
        ImageError::Unsupported(_) => Error::ImageDecodeFailed {
            reason: "unsupported image variant",
        },
        _ => Error::ImageDecodeFailed {
            reason: "damaged image",
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A PNG claiming `width x height` RGBA8 whose IDAT holds four bytes of garbage: a
    /// decompression bomb's header without the bomb.
    fn png_header_only(width: u32, height: u32) -> Vec<u8> {
        let mut ihdr = width.to_be_bytes().to_vec();
        ihdr.extend_from_slice(&height.to_be_bytes());
        ihdr.extend_from_slice(&[8, 6, 0, 0, 0]);
        let mut out = b"\x89PNG\r\n\x1a\n".to_vec();
        for (kind, body) in [
            (b"IHDR", &ihdr[..]),
            (b"IDAT", &[0x78, 0x9c, 0xff, 0xff][..]),
            (b"IEND", &[][..]),
        ] {
            out.extend_from_slice(&(body.len() as u32).to_be_bytes());
            let start = out.len();
            out.extend_from_slice(kind);
            out.extend_from_slice(body);
            let crc = crc32(&out[start..]);
            out.extend_from_slice(&crc.to_be_bytes());
        }
        out
    }

    fn crc32(bytes: &[u8]) -> u32 {
        let mut crc = !0u32;
        for &b in bytes {
            crc ^= u32::from(b);
            for _ in 0..8 {
                crc = if crc & 1 == 1 {
                    (crc >> 1) ^ 0xEDB8_8320
                } else {
                    crc >> 1
                };
            }
        }
        !crc
    }

    /// A small real JPEG whose SOF0 claims `width x height`: a bomb's header.
    fn jpeg_claiming(width: u16, height: u16) -> Vec<u8> {
        let mut jpeg = Vec::new();
        image::codecs::jpeg::JpegEncoder::new(&mut jpeg)
            .write_image(&[9; 8 * 8 * 3], 8, 8, ExtendedColorType::Rgb8)
            .unwrap();
        let sof = jpeg.windows(2).position(|w| w == [0xFF, 0xC0]).unwrap();
        jpeg[sof + 5..sof + 7].copy_from_slice(&height.to_be_bytes());
        jpeg[sof + 7..sof + 9].copy_from_slice(&width.to_be_bytes());
        jpeg
    }

    /// An extended WebP (VP8X) whose canvas claims `width x height` (24-bit fields, so beyond
    /// the 16384 of a simple WebP), around a real 1 x 1 lossless image.
    fn webp_claiming(width: u32, height: u32) -> Vec<u8> {
        let mut simple = Vec::new();
        image::codecs::webp::WebPEncoder::new_lossless(&mut simple)
            .write_image(&[1, 2, 3, 255], 1, 1, ExtendedColorType::Rgba8)
            .unwrap();
        let mut vp8x = vec![0u8; 4];
        vp8x.extend_from_slice(&(width - 1).to_le_bytes()[..3]);
        vp8x.extend_from_slice(&(height - 1).to_le_bytes()[..3]);
        let mut body = b"WEBPVP8X".to_vec();
        body.extend_from_slice(&10u32.to_le_bytes());
        body.extend_from_slice(&vp8x);
        body.extend_from_slice(&simple[12..]);
        let mut out = b"RIFF".to_vec();
        out.extend_from_slice(&(body.len() as u32).to_le_bytes());
        out.extend_from_slice(&body);
        out
    }

    #[test]
    fn header_dimensions_are_checked_before_decoding() {
        for (w, h) in [
            (MAX_IMAGE_SIDE_PX + 1, 1),
            (1, MAX_IMAGE_SIDE_PX + 1),
            (60000, 60000),
            (65535, 65535),
            (u32::MAX, u32::MAX),
        ] {
            let err = decode_image(&png_header_only(w, h)).unwrap_err();
            assert_eq!(err, ImageBound::CEILING.too_large(w, h));
        }
        // At the limit the header passes and decoding fails on the missing pixel data.
        let err = decode_image(&png_header_only(MAX_IMAGE_SIDE_PX, MAX_IMAGE_SIDE_PX)).unwrap_err();
        assert_eq!(err.code(), "IMAGE_DECODE_FAILED");
    }

    #[test]
    fn every_format_is_refused_by_its_header_as_too_large() {
        let bombs = [
            ("png", png_header_only(60000, 60000), (60000, 60000)),
            ("jpeg", jpeg_claiming(60000, 60000), (60000, 60000)),
            ("jpeg", jpeg_claiming(16385, 8), (16385, 8)),
            ("webp", webp_claiming(60000, 60000), (60000, 60000)),
            ("webp", webp_claiming(16384, 16385), (16384, 16385)),
            ("webp", webp_claiming(1 << 24, 1 << 24), (1 << 24, 1 << 24)),
        ];
        for (format, bytes, (w, h)) in bombs {
            assert_eq!(image_dimensions(&bytes).unwrap(), (w, h), "{format}");
            let err = decode_image(&bytes).unwrap_err();
            assert_eq!(err.code(), "IMAGE_TOO_LARGE", "{format} {w}x{h}");
            assert!(
                err.details().contains(&("width", w.to_string())),
                "{format}"
            );
        }
    }

    #[test]
    fn a_narrower_bound_refuses_at_its_side_and_its_area() {
        let bound = ImageBound::new(64, 64 * 32);
        let image = |w: u32, h: u32| encode_png(w, h, &vec![0x40; (w * h * 4) as usize]).unwrap();
        for (w, h) in [(64, 32), (32, 64), (64, 1), (1, 64)] {
            assert_eq!(
                decode_image_within(&image(w, h), bound).unwrap().0,
                w,
                "{w}x{h} is inside"
            );
        }
        for (w, h) in [(65, 1), (1, 65), (64, 33), (33, 64)] {
            let err = decode_image_within(&image(w, h), bound).unwrap_err();
            assert_eq!(
                err,
                Error::ImageTooLarge {
                    width: w,
                    height: h,
                    max_side_px: 64,
                    max_pixels: 2048
                }
            );
        }
        // A bound never passes the ceiling.
        assert_eq!(ImageBound::new(u32::MAX, u64::MAX), ImageBound::CEILING);
        assert_eq!((bound.max_side_px(), bound.max_pixels()), (64, 2048));
    }

    #[test]
    fn the_decoder_limit_refuses_a_16_bit_image_that_needs_twice_the_bytes() {
        let mut png = Vec::new();
        image::codecs::png::PngEncoder::new(&mut png)
            .write_image(&[7; 8 * 8 * 8], 8, 8, ExtendedColorType::Rgba16)
            .unwrap();
        assert_eq!(
            decode_image_within(&png, ImageBound::new(8, 128))
                .unwrap()
                .2
                .len(),
            8 * 8 * 4
        );
        let err = decode_image_within(&png, ImageBound::new(8, 64)).unwrap_err();
        assert_eq!(
            err,
            Error::ImageTooLarge {
                width: 8,
                height: 8,
                max_side_px: 8,
                max_pixels: 64
            }
        );
    }

    #[test]
    fn limits_at_and_past_on_real_images() {
        let wide = vec![0x80u8; MAX_IMAGE_SIDE_PX as usize * 4];
        let png = encode_png(MAX_IMAGE_SIDE_PX, 1, &wide).unwrap();
        assert_eq!(decode_image(&png).unwrap(), (MAX_IMAGE_SIDE_PX, 1, wide));
        let past = vec![0u8; (MAX_IMAGE_SIDE_PX as usize + 1) * 4];
        assert_eq!(
            encode_png(MAX_IMAGE_SIDE_PX + 1, 1, &past)
                .unwrap_err()
                .code(),
            "IMAGE_TOO_LARGE"
        );
        assert_eq!(
            MAX_IMAGE_RGBA_BYTES,
            rgba_bytes(MAX_IMAGE_SIDE_PX, MAX_IMAGE_SIDE_PX)
        );
    }

    #[test]
    fn png_round_trip_keeps_straight_alpha() {
        // Colour under alpha 0 and partial alpha must survive exactly.
        let rgba = vec![200, 10, 30, 0, 1, 2, 3, 7, 250, 128, 64, 255, 9, 9, 9, 128];
        let png = encode_png(2, 2, &rgba).unwrap();
        assert_eq!(decode_image(&png).unwrap(), (2, 2, rgba));
    }

    #[test]
    fn refuses_other_formats_and_bad_buffers() {
        let cut_webp = b"RIFF\x20\0\0\0WEBPVP8X\x0a\0\0\0\0\0\0\0\x01\x02";
        for bytes in [
            &b""[..],
            b"GIF89a....",
            b"BM\0\0\0\0",
            b"\x89PNG\r\n\x1a\n",
            b"\x89PNG\r\n\x1a\n\0\0\0\x0dIHDR\0\0",
            cut_webp,
        ] {
            assert_eq!(
                decode_image(bytes).unwrap_err().code(),
                "IMAGE_DECODE_FAILED"
            );
            assert_eq!(
                image_dimensions(bytes).unwrap_err().code(),
                "IMAGE_DECODE_FAILED"
            );
        }
        assert_eq!(
            encode_png(2, 2, &[0; 15]).unwrap_err().code(),
            "INVALID_ARGUMENT"
        );
        assert_eq!(
            encode_png(0, 2, &[]).unwrap_err().code(),
            "INVALID_ARGUMENT"
        );
        let mut png = encode_png(2, 2, &[7; 16]).unwrap();
        let last = png.len() - 20;
        png.truncate(last);
        assert_eq!(
            decode_image(&png).unwrap_err().code(),
            "IMAGE_DECODE_FAILED"
        );
    }
}

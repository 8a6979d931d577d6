//! Image codecs for identify uploads and texture export (SPEC behaviour rule 6): PNG, JPEG
//! and WebP in, PNG out, through the pure-Rust `image` crate (no default features).
//!
//! Decompression bombs: a 40-byte PNG can claim 65535 x 65535 pixels. The header's
//! dimensions are read first (no pixel is decoded) and checked against
//! [`MAX_IMAGE_SIDE_PX`] and [`MAX_IMAGE_RGBA_BYTES`]; the decoder then runs with the same
//! limits, which also caps its own allocations (a 16-bit image needs twice the bytes).
//! Pixels are returned as straight (not premultiplied) RGBA8, the layout of `rgba8` entries
//! and of `iki_watermark::detect`. Nothing here is secret.

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

/// Decodes a PNG, JPEG or WebP image to straight RGBA8: `(width, height, pixels)`.
///
/// # Errors
/// `IMAGE_TOO_LARGE` when the header's dimensions are beyond the limits (checked before
/// any pixel is decoded), `IMAGE_DECODE_FAILED` for any other format or a damaged image.
pub fn decode_image(bytes: &[u8]) -> Result<(u32, u32, Vec<u8>), Error> {
    let format = sniff(bytes)?;
    let (width, height) = reader(bytes, format).into_dimensions().map_err(decode_error)?;
    check_dimensions(width, height)?;
    let mut reader = reader(bytes, format);
    reader.limits(limits());
    let decoded = reader.decode().map_err(|e| match e {
        // A 16-bit image needs twice the bytes of its RGBA8 result.
        ImageError::Limits(_) => Error::ImageTooLarge { width, height },
        other => decode_error(other),
    })?;
    let rgba = decoded.into_rgba8();
    if rgba.dimensions() != (width, height) {
        return Err(Error::ImageDecodeFailed { reason: "decoded size differs from the header" });
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
    check_dimensions(width, height)?;
    if rgba.len() as u64 != rgba_bytes(width, height) {
        return Err(Error::argument("pixel buffer is not width * height * 4 bytes"));
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
        _ => Err(Error::ImageDecodeFailed { reason: "not a png, jpeg or webp image" }),
    }
}

fn reader(bytes: &[u8], format: ImageFormat) -> ImageReader<Cursor<&[u8]>> {
    let mut reader = ImageReader::new(Cursor::new(bytes));
    reader.set_format(format);
    reader
}

fn limits() -> Limits {
    let mut limits = Limits::default();
    limits.max_image_width = Some(MAX_IMAGE_SIDE_PX);
    limits.max_image_height = Some(MAX_IMAGE_SIDE_PX);
    limits.max_alloc = Some(MAX_IMAGE_RGBA_BYTES);
    limits
}

fn rgba_bytes(width: u32, height: u32) -> u64 {
    u64::from(width) * u64::from(height) * 4
}

fn check_dimensions(width: u32, height: u32) -> Result<(), Error> {
    let too_large = width > MAX_IMAGE_SIDE_PX || height > MAX_IMAGE_SIDE_PX;
    if too_large || rgba_bytes(width, height) > MAX_IMAGE_RGBA_BYTES {
        return Err(Error::ImageTooLarge { width, height });
    }
    if width == 0 || height == 0 {
        return Err(Error::ImageDecodeFailed { reason: "image has a zero dimension" });
    }
    Ok(())
}

fn decode_error(error: ImageError) -> Error {
    match error {
        ImageError::Limits(_) => Error::ImageDecodeFailed { reason: "decoder allocation beyond the limit" },
        ImageError::Unsupported(_) => Error::ImageDecodeFailed { reason: "unsupported image variant" },
        _ => Error::ImageDecodeFailed { reason: "damaged image" },
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
        for (kind, body) in [(b"IHDR", &ihdr[..]), (b"IDAT", &[0x78, 0x9c, 0xff, 0xff][..]), (b"IEND", &[][..])] {
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
                crc = if crc & 1 == 1 { (crc >> 1) ^ 0xEDB8_8320 } else { crc >> 1 };
            }
        }
        !crc
    }

    #[test]
    fn header_dimensions_are_checked_before_decoding() {
        for (w, h) in [(MAX_IMAGE_SIDE_PX + 1, 1), (1, MAX_IMAGE_SIDE_PX + 1), (65535, 65535)] {
            let err = decode_image(&png_header_only(w, h)).unwrap_err();
            assert_eq!(err, Error::ImageTooLarge { width: w, height: h });
        }
        // At the limit the header passes and decoding fails on the missing pixel data.
        let err = decode_image(&png_header_only(MAX_IMAGE_SIDE_PX, MAX_IMAGE_SIDE_PX)).unwrap_err();
        assert_eq!(err.code(), "IMAGE_DECODE_FAILED");
    }

    #[test]
    fn limits_at_and_past_on_real_images() {
        let wide = vec![0x80u8; MAX_IMAGE_SIDE_PX as usize * 4];
        let png = encode_png(MAX_IMAGE_SIDE_PX, 1, &wide).unwrap();
        assert_eq!(decode_image(&png).unwrap(), (MAX_IMAGE_SIDE_PX, 1, wide));
        let past = vec![0u8; (MAX_IMAGE_SIDE_PX as usize + 1) * 4];
        assert_eq!(encode_png(MAX_IMAGE_SIDE_PX + 1, 1, &past).unwrap_err().code(), "IMAGE_TOO_LARGE");
        assert_eq!(MAX_IMAGE_RGBA_BYTES, rgba_bytes(MAX_IMAGE_SIDE_PX, MAX_IMAGE_SIDE_PX));
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
        for bytes in [&b""[..], b"GIF89a....", b"BM\0\0\0\0", b"\x89PNG\r\n\x1a\n"] {
            assert_eq!(decode_image(bytes).unwrap_err().code(), "IMAGE_DECODE_FAILED");
        }
        assert_eq!(encode_png(2, 2, &[0; 15]).unwrap_err().code(), "INVALID_ARGUMENT");
        assert_eq!(encode_png(0, 2, &[]).unwrap_err().code(), "INVALID_ARGUMENT");
        let mut png = encode_png(2, 2, &[7; 16]).unwrap();
        let last = png.len() - 20;
        png.truncate(last);
        assert_eq!(decode_image(&png).unwrap_err().code(), "IMAGE_DECODE_FAILED");
    }
}

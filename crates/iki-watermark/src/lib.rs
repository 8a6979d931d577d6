//! iki-watermark: the invisible, blind-readable license watermark of SPEC
//! "Watermark" (threat model in SPEC section 5). The algorithm, precise enough
//! for a second implementation, is in `docs/watermark.md`.
//!
//! Pure functions over straight-alpha RGBA8 rows: no I/O, no clock, no
//! wasm-bindgen. The license service marks one `rgba8` chunk (a band of whole
//! rows) at a time with [`embed_rows`]; because every row is keyed by its own
//! index, bands can be marked in any order and the result equals
//! [`embed_image`] on the whole texture. [`detect`] reads a suspect texture
//! with no original.
//!
//! ```
//! use iki_watermark::{detect, embed_image, WatermarkKey};
//! let key = WatermarkKey::from_bytes([7u8; 32]); // obviously fake
//! let (w, h) = (64u32, 64u32);
//! let mut rgba: Vec<u8> = (0..w * h).flat_map(|i| [(i % 251) as u8, 90, 160, 255]).collect();
//! embed_image(&key, 0x1234_5678_9ABC_DEF0, w, h, &mut rgba)?;
//! let read = detect(&key, w, h, &rgba)?;
//! assert_eq!(read.found, Some(0x1234_5678_9ABC_DEF0));
//! # Ok::<(), iki_watermark::Error>(())
//! ```
#![forbid(unsafe_code)]
#![deny(missing_docs)]
#![deny(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]
#![cfg_attr(
    test,
    allow(
        clippy::unwrap_used,
        clippy::expect_used,
        clippy::panic,
        clippy::indexing_slicing
    )
)]

mod coarse;
mod detect;
mod embed;
mod error;
mod fft2;
mod informed;
mod key;
mod payload;
mod plane;
mod pyramid;
mod refine;
mod register;
mod search;
mod soft;
mod turned;

pub use detect::{Detection, BIT_FLOOR_RATIO, BIT_FLOOR_SLACK, CONFIDENCE_MIN, RESIDUAL_CLIP};
pub use embed::{AMPLITUDE_LEVELS, VISIBLE_ALPHA_MIN};
pub use error::Error;
pub use informed::{capacity, could_register, read_registered, Capacity, Suspect, FIXED_POINT};
pub use key::{keystream_cross_check, WatermarkKey, KEY_BYTES};
pub use payload::{payload_bits, CORRECTABLE_BITS, PAYLOAD_BITS};
pub use register::{
    Region, Registration, CANDIDATES, COARSE_SIDE, MAX_ANGLE, MAX_SCALE, MIN_CROP_AREA, MIN_SCALE,
    MIN_SIMILARITY,
};
pub use search::{read_factor, read_informed, read_informed_until, InformedRead, MAX_READS};
pub use soft::{
    license_score, looks_mixed, match_licenses, Candidate, SoftMatch, LISTED_CANDIDATES,
    MAX_ISSUED, MIX_GAP_MIN, MIX_GAP_RATIO, MIX_GAP_SIDE, MIX_MIN_WEAK_BITS, MIX_SPLIT_BITS,
    MIX_SPLIT_RATIO, MIX_SPLIT_STRONG, NAME_COLLUDER_MAX, NAME_SINGLE_MAX,
};

/// Bytes per RGBA8 pixel.
const PIXEL_BYTES: usize = 4;

/// Marks a band of whole rows in place.
///
/// `rows` holds `rows.len() / (width * 4)` rows of straight-alpha RGBA8, the
/// first of which is row `first_row` of the texture. An empty band is a no-op.
///
/// # Errors
/// [`Error::ZeroDimension`] when `width` is 0, [`Error::BadLength`] when the
/// length is not a whole number of rows, [`Error::TooLarge`] when `width * 4`
/// overflows or the band runs past row `u32::MAX`. Nothing is modified then.
pub fn embed_rows(
    key: &WatermarkKey,
    license_id: u64,
    width: u32,
    first_row: u32,
    rows: &mut [u8],
) -> Result<(), Error> {
    let row_bytes = row_bytes(width)?;
    if rows.len() % row_bytes != 0 {
        return Err(Error::BadLength {
            len: rows.len(),
            row_bytes,
        });
    }
    let count = (rows.len() / row_bytes) as u64;
    if count == 0 {
        return Ok(());
    }
    let end = u64::from(first_row) + count;
    if end - 1 > u64::from(u32::MAX) {
        return Err(Error::TooLarge { width, rows: end });
    }
    embed::embed_band(key, license_id, row_bytes / PIXEL_BYTES, first_row, rows);
    Ok(())
}

/// Marks a whole `width x height` texture in place (`width * height * 4` bytes).
///
/// # Errors
/// [`Error::ZeroDimension`], [`Error::TooLarge`] or [`Error::BadLength`] when
/// the buffer does not match the dimensions. Nothing is modified then.
pub fn embed_image(
    key: &WatermarkKey,
    license_id: u64,
    width: u32,
    height: u32,
    rgba: &mut [u8],
) -> Result<(), Error> {
    check_image(width, height, rgba.len())?;
    embed_rows(key, license_id, width, 0, rgba)
}

/// Reads the watermark of a `width x height` straight-alpha RGBA8 texture.
///
/// Only pixels with alpha >= 8 in the suspect count. A suspect without alpha
/// (JPEG) is passed with alpha 255, or with the original's alpha if known.
///
/// # Errors
/// [`Error::ZeroDimension`], [`Error::TooLarge`] or [`Error::BadLength`] when
/// the buffer does not match the dimensions.
pub fn detect(
    key: &WatermarkKey,
    width: u32,
    height: u32,
    rgba: &[u8],
) -> Result<Detection, Error> {
    let row_bytes = check_image(width, height, rgba.len())?;
    Ok(detect::detect_image(
        key,
        row_bytes / PIXEL_BYTES,
        height,
        rgba,
    ))
}

/// `width * 4`, refusing width 0 and overflow.
fn row_bytes(width: u32) -> Result<usize, Error> {
    if width == 0 {
        return Err(Error::ZeroDimension { width, height: 0 });
    }
    usize::try_from(width)
        .ok()
        .and_then(|w| w.checked_mul(PIXEL_BYTES))
        .ok_or(Error::TooLarge { width, rows: 0 })
}

/// Checks `len == width * height * 4` and returns `width * 4`.
fn check_image(width: u32, height: u32, len: usize) -> Result<usize, Error> {
    if width == 0 || height == 0 {
        return Err(Error::ZeroDimension { width, height });
    }
    let row_bytes = row_bytes(width)?;
    let expected = usize::try_from(height)
        .ok()
        .and_then(|h| h.checked_mul(row_bytes))
        .ok_or(Error::TooLarge {
            width,
            rows: u64::from(height),
        })?;
    if len != expected {
        return Err(Error::BadLength { len, row_bytes });
    }
    Ok(row_bytes)
}

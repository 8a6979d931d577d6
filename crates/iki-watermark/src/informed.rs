//! Informed reading (docs/watermark.md section 11): reading a leak that was resized or
//! cropped, given the unmarked original texture it came from.
//!
//! The leak is registered on the texture ([`crate::register`], image content only), the
//! texture is put through the same transform (resampled onto the leak's grid) and
//! subtracted, and the difference, which holds the mark and the attack's noise but no
//! image content, is resampled back onto the texture's pixel grid. There the ordinary
//! detector reads it ([`crate::detect`]: the same high-pass, clip, correlation, CRC and
//! confidence rules), on a fixed-point plane of [`FIXED_POINT`] steps per level, over the
//! texture pixels the leak covers that are visible in the texture (and in the leak, when it
//! has alpha). Registration proposes; the detector's rules decide.

use crate::detect::{detect_rows, Detection, INVISIBLE, RESIDUAL_CLIP};
use crate::embed::VISIBLE_ALPHA_MIN;
use crate::error::Error;
use crate::key::WatermarkKey;
use crate::plane::{
    has_transparency, luma, luma_window, reach, resample_rgba_rows, resample_support, AxisMap,
    Plane,
};
use crate::register::{Pyramid, Registration};
use crate::{check_image, PIXEL_BYTES};

/// Fixed-point steps per level of `R + G + B` on the residual plane the informed read
/// feeds the detector (its clip is scaled by the same factor).
pub const FIXED_POINT: i32 = 16;

/// Added to every residual value (at most `2 * 765 * FIXED_POINT` in magnitude) so that
/// none is negative.
pub(crate) const BIAS: i32 = 1 << 16;

/// Side below which the leak's pyramid stops.
const LEAK_PYRAMID_SIDE: usize = 32;

/// A leaked image, prepared once for any number of reads.
pub struct Suspect {
    pub(crate) width: u32,
    pub(crate) height: u32,
    pub(crate) rgba: Vec<u8>,
    pub(crate) transparent: bool,
    pub(crate) pyramid: Option<Pyramid>,
}

impl core::fmt::Debug for Suspect {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Suspect")
            .field("width", &self.width)
            .field("height", &self.height)
            .finish_non_exhaustive()
    }
}

impl Suspect {
    /// Takes a `width x height` straight-alpha RGBA8 image (`width * height * 4` bytes).
    ///
    /// # Errors
    /// [`Error::ZeroDimension`], [`Error::TooLarge`] or [`Error::BadLength`] when the buffer
    /// does not match the dimensions.
    pub fn new(width: u32, height: u32, rgba: Vec<u8>) -> Result<Self, Error> {
        check_image(width, height, rgba.len())?;
        let transparent = has_transparency(&rgba);
        Ok(Self {
            width,
            height,
            rgba,
            transparent,
            pyramid: None,
        })
    }

    /// Width in pixels.
    #[must_use]
    pub fn width(&self) -> u32 {
        self.width
    }

    /// Height in pixels.
    #[must_use]
    pub fn height(&self) -> u32 {
        self.height
    }

    /// The pixels.
    #[must_use]
    pub fn rgba(&self) -> &[u8] {
        &self.rgba
    }

    /// The blind read of the image as it is (what [`crate::detect`] does).
    pub fn detect(&self, key: &WatermarkKey) -> Detection {
        crate::detect::detect_image(key, self.width as usize, self.height, &self.rgba)
    }

    pub(crate) fn pyramid(&mut self) -> &Pyramid {
        let (w, h, transparent) = (self.width as usize, self.height as usize, self.transparent);
        let rgba = &self.rgba;
        self.pyramid
            .get_or_insert_with(|| Pyramid::new(luma(w, h, rgba, transparent), LEAK_PYRAMID_SIDE))
    }
}

/// Reads the mark of `suspect` through one registration on the `width x height` original
/// (see [`crate::read_informed`], which finds the registrations). The registration depends on
/// image content only, so reading one registration under many keys measures null reads.
///
/// # Errors
/// [`Error::ZeroDimension`], [`Error::TooLarge`] or [`Error::BadLength`] when `original`
/// does not match its dimensions.
pub fn read_registered(
    key: &WatermarkKey,
    width: u32,
    height: u32,
    original: &[u8],
    suspect: &Suspect,
    registration: &Registration,
) -> Result<Detection, Error> {
    check_image(width, height, original.len())?;
    Ok(read_through(
        key,
        width as usize,
        height,
        original,
        suspect,
        registration,
    ))
}

/// Texture rows the informed read resamples at a time: the planes it holds are a band of
/// this many rows (plus the filter's reach), never the whole texture.
pub(crate) const BAND_ROWS: usize = 128;

/// [`read_registered`] on validated arguments: the residual of the leak against the texture
/// put through the same transform, back on the texture's grid, fed to the detector. Done in
/// bands of [`BAND_ROWS`] texture rows, each from the leak and texture rows it reaches.
pub(crate) fn read_through(
    key: &WatermarkKey,
    width: usize,
    height: u32,
    original: &[u8],
    suspect: &Suspect,
    reg: &Registration,
) -> Detection {
    let reduced = reg.scale_x.max(reg.scale_y) < crate::turned::RAW_BELOW;
    if reg.angle != 0.0 || reduced || reg.over_background {
        return crate::turned::read_turned(key, (width, height), original, suspect, reg);
    }
    let (lw, lh) = (suspect.width as usize, suspect.height as usize);
    let (ix, iy) = (1.0 / reg.scale_x, 1.0 / reg.scale_y);
    let region = reg.region;
    let (rx, ry, rw, rh) = (
        region.x as usize,
        region.y as usize,
        region.width as usize,
        region.height as usize,
    );
    // The texture on the leak's grid (forward) and the residual back on the texture's grid.
    let forward_x = AxisMap {
        start: reg.offset_x,
        step: ix,
    };
    let forward_y = AxisMap {
        start: reg.offset_y,
        step: iy,
    };
    let back_x = AxisMap {
        start: (rx as f64 - reg.offset_x) * reg.scale_x,
        step: reg.scale_x,
    };
    let back_y = AxisMap {
        start: (ry as f64 - reg.offset_y) * reg.scale_y,
        step: reg.scale_y,
    };
    // One band of the residual on the texture grid: region rows `first..end` (0 = row `ry`).
    let band = |first: usize, end: usize| -> Plane {
        let (v0, v1) = reach(lh, first, end, back_y, reg.scale_y);
        let mut residual = resample_rgba_rows(
            (width, height as usize),
            original,
            false,
            (lw, (v0, v1)),
            (forward_x, forward_y),
            (ix, iy),
        );
        let leak = luma_window(lw, &suspect.rgba, (0, lw), (v0, v1), false);
        for (r, l) in residual.data.iter_mut().zip(&leak.data) {
            *r = l - *r;
        }
        let y = AxisMap {
            start: back_y.start + first as f64 * back_y.step - v0 as f64,
            step: back_y.step,
        };
        resample_support(
            &residual,
            rw,
            end - first,
            back_x,
            y,
            (reg.scale_x, reg.scale_y),
        )
    };
    let mut back = Plane::default();
    let mut band_start = 0usize;
    let scale = FIXED_POINT as f32;
    let leak_alpha = |x: usize, y: usize| -> bool {
        if !suspect.transparent {
            return true;
        }
        let u = ((x as f64 + 0.5 - reg.offset_x) * reg.scale_x).floor();
        let v = ((y as f64 + 0.5 - reg.offset_y) * reg.scale_y).floor();
        if u < 0.0 || v < 0.0 || u >= lw as f64 || v >= lh as f64 {
            return false;
        }
        crate::plane::visible(&suspect.rgba, v as usize * lw + u as usize)
    };
    let rows = region.y..region.y.saturating_add(region.height);
    detect_rows(key, width, rows, RESIDUAL_CLIP * FIXED_POINT, |y, out| {
        let y = y as usize;
        let local = y - ry;
        if local >= band_start + back.height || local < band_start {
            band_start = local;
            back = band(local, (local + BAND_ROWS).min(rh));
        }
        let texture_row = original
            .get(y * width * PIXEL_BYTES..(y + 1) * width * PIXEL_BYTES)
            .unwrap_or(&[]);
        let at = (local - band_start) * rw;
        let back_row = back.data.get(at..at + rw).unwrap_or(&[]);
        for (k, v) in back_row.iter().enumerate() {
            let x = rx + k;
            let shown = texture_row
                .get(x * PIXEL_BYTES + 3)
                .is_some_and(|&a| a >= VISIBLE_ALPHA_MIN);
            if let Some(slot) = out.get_mut(x) {
                // The bias keeps every value clear of the INVISIBLE sentinel; the high-pass
                // removes constants, so it changes nothing else.
                *slot = if shown && leak_alpha(x, y) {
                    BIAS + (v * scale).round() as i32
                } else {
                    INVISIBLE
                };
            }
        }
    })
}

/// Whether a `leak_width x leak_height` image could be a part of a `width x height` texture
/// at a scale from [`crate::MIN_SCALE`] to [`crate::MAX_SCALE`] keeping at least
/// [`crate::MIN_CROP_AREA`] of it (the range [`crate::read_informed`] searches). Lets a caller skip
/// textures without decoding them.
#[must_use]
pub fn could_register(width: u32, height: u32, leak_width: u32, leak_height: u32) -> bool {
    crate::register::scale_range(
        (f64::from(width), f64::from(height)),
        (f64::from(leak_width), f64::from(leak_height)),
    )
    .is_some()
}

/// How well an image can carry the mark, measured by the detector itself (docs/watermark.md
/// section 8.2): a copy is marked with a fixed test id and read blind.
#[derive(Clone, Copy, Debug, PartialEq)]
#[non_exhaustive]
pub struct Capacity {
    /// Overall confidence of the marked copy's read (a read needs [`crate::CONFIDENCE_MIN`]).
    pub confidence: f64,
    /// Whether the marked copy read its id back.
    pub reads: bool,
    /// Pixels with alpha >= 8.
    pub visible_pixels: u64,
}

/// The test id [`capacity`] marks with.
const CAPACITY_TEST_ID: u64 = 0x6b69_6361_7061_6369;

/// Marks a copy of `suspect` with a test id under `key` and reads it back (see [`Capacity`]).
pub fn capacity(key: &WatermarkKey, suspect: &Suspect) -> Capacity {
    let mut copy = suspect.rgba.clone();
    let (w, h) = (suspect.width, suspect.height);
    let _ = crate::embed_image(key, CAPACITY_TEST_ID, w, h, &mut copy);
    let read = crate::detect::detect_image(key, w as usize, h, &copy);
    Capacity {
        confidence: read.confidence,
        reads: read.found == Some(CAPACITY_TEST_ID),
        visible_pixels: read.visible_pixels,
    }
}

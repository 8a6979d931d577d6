//! Registration of a leaked image against an original texture (docs/watermark.md section
//! 11.2): which part of the texture it shows, at which scale and rotation. It uses image
//! content only, never the key, so the read that follows keeps its null calibration.
//!
//! 1. **Coarse search** ([`crate::coarse`]). Both images become grey planes (premultiplied
//!    by alpha when the leak has transparency; when only the texture has, the texture's
//!    coverage weights every pixel, so a background it was composited over never counts).
//!    The texture is reduced by a power of two `d` to at most [`COARSE_SIDE`] pixels a side.
//!    For every scale of a geometric sweep over the range the leak's size allows and every
//!    rotation of a few degrees apart up to [`MAX_ANGLE`], the leak is resampled onto that
//!    grid and its normalised cross-correlation with the reduced texture is computed for
//!    every offset at once by FFT. The best peaks become candidates.
//! 2. **Refinement.** Each candidate is refined by Gauss-Newton (Lucas-Kanade) on seven
//!    parameters, a scale and an offset per axis, the rotation, gain and bias, on a pyramid
//!    from the coarse level down to the finest level both images share.
//!
//! Mapping, with `(u, v)` a leak edge coordinate less the leak's centre `(lw / 2, lh / 2)`
//! and `(p, q) = (u cos a - v sin a, u sin a + v cos a)`: texture edge coordinate
//! `X = centre_x + p / scale_x`, `Y = centre_y + q / scale_y` (pixel `i` covers `[i, i + 1)`).

use crate::coarse::{CoarseSearch, MIN_TEMPLATE, TURNED, UNTURNED};
pub(crate) use crate::pyramid::Pyramid;
use crate::refine::refine;
pub(crate) use crate::refine::MAX_POINTS;

/// Smallest scale (leak pixels per texture pixel) searched.
pub const MIN_SCALE: f64 = 0.25;
/// Largest scale searched.
pub const MAX_SCALE: f64 = 4.0;
/// Largest rotation searched, degrees either way.
pub const MAX_ANGLE: f64 = 5.0;
/// Smallest share of the texture's area a crop must keep.
pub const MIN_CROP_AREA: f64 = 0.1;
/// Smallest correlation between the leak and the registered texture to try a read.
pub const MIN_SIMILARITY: f64 = 0.8;
/// Longest side of the coarse search grid, in pixels.
pub const COARSE_SIDE: usize = 128;
/// Candidates kept from the coarse search.
pub const CANDIDATES: usize = 4;
/// Slack on the scale range, for rounding of resized dimensions.
const SCALE_SLACK: f64 = 0.02;
/// Largest relative difference of the two axes' scales (resized sizes are rounded).
const ASPECT_SLACK: f64 = 0.02;
/// How far (texture pixels) a registered leak may reach past the texture's edges; a turned
/// leak may reach further by its turn (see [`plausible`]).
const EDGE_SLACK: f64 = 2.0;

/// The texture pixels a registered leak covers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Region {
    /// First column.
    pub x: u32,
    /// First row.
    pub y: u32,
    /// Columns.
    pub width: u32,
    /// Rows.
    pub height: u32,
}

/// Where a leak sits on a texture.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Registration {
    /// Leak pixels per texture pixel, horizontally (0.9 for a leak resized to 90 %).
    pub scale_x: f64,
    /// Leak pixels per texture pixel, vertically.
    pub scale_y: f64,
    /// Texture x (edge coordinate) of the leak's top-left corner.
    pub offset_x: f64,
    /// Texture y (edge coordinate) of the leak's top-left corner.
    pub offset_y: f64,
    /// Rotation in degrees of the leak's axes on the texture (positive turns the leak's x
    /// axis towards the texture's y axis); 0 for a leak that was not turned.
    pub angle: f64,
    /// The texture pixels whose centres fall inside the leak's bounding box.
    pub region: Region,
    /// Whether the leak was matched as the texture drawn over some background: the texture's
    /// coverage weighted the match and weights the read (docs/watermark.md section 11.6).
    pub over_background: bool,
    /// Correlation of the leak and the texture mapped onto it (1 is identical).
    pub similarity: f64,
}

impl Registration {
    /// Texture point of the leak's centre, for a `(lw, lh)` leak.
    pub(crate) fn centre(&self, (lw, lh): (f64, f64)) -> (f64, f64) {
        let (sin, cos) = self.angle.to_radians().sin_cos();
        let (u, v) = (lw / 2.0, lh / 2.0);
        (
            self.offset_x + (u * cos - v * sin) / self.scale_x,
            self.offset_y + (u * sin + v * cos) / self.scale_y,
        )
    }
}

/// A texture prepared for registration: its grey pyramid and, when its coverage weights the
/// match (the texture has transparency and the leak has none), its coverage pyramid: the
/// share of opaque pixels, the grey then taken over those pixels only
/// ([`crate::plane::Channel::Opaque`]).
pub(crate) struct Reference {
    pub(crate) grey: Pyramid,
    pub(crate) alpha: Option<Pyramid>,
}

/// Parameters: texture centre of the leak's centre, texture pixels per leak pixel, rotation
/// (radians).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Params {
    pub(crate) centre_x: f64,
    pub(crate) centre_y: f64,
    pub(crate) inverse_x: f64,
    pub(crate) inverse_y: f64,
    pub(crate) angle: f64,
    /// Whether the refinement fits the angle (seven parameters) or keeps it (six).
    pub(crate) turn: bool,
}

/// The coarse search of a leak (`leak`, its pyramid from full resolution) on a texture, not
/// yet swept; `None` when the leak cannot be a part of the texture (see [`scale_range`]).
pub(crate) fn coarse_search(texture: &Reference, leak: &Pyramid) -> Option<Coarse> {
    let (t0, l0) = (texture.grey.levels.first()?, leak.levels.first()?);
    let range = scale_range(
        (t0.width as f64, t0.height as f64),
        (l0.width as f64, l0.height as f64),
    )?;
    CoarseSearch::new(texture, leak, range).map(Coarse)
}

/// A coarse search over the scales a leak allows: first the unturned hypothesis, then, only
/// when asked, the turned ones (docs/watermark.md section 11.8).
pub(crate) struct Coarse(CoarseSearch);

impl Coarse {
    /// Sweeps the unturned angle (`turned` false) or the turned ones. `keep_going` is asked
    /// between steps; false when it stopped the sweep.
    pub(crate) fn sweep(
        &mut self,
        leak: &Pyramid,
        turned: bool,
        keep_going: &mut dyn FnMut() -> bool,
    ) -> bool {
        let angles: &[f64] = if turned { &TURNED } else { &UNTURNED };
        self.0.sweep(leak, angles, keep_going)
    }

    /// Up to `count` starting points from every angle swept so far, best first.
    pub(crate) fn candidates(&self, count: usize) -> Vec<Candidate> {
        self.0.best(count).into_iter().map(Candidate).collect()
    }
}

/// A starting point of the refinement.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Candidate(Params);

impl Candidate {
    /// The same start refined with its angle kept (an unturned peak stays at exactly 0, which
    /// the read takes through its separable path, section 11.3).
    pub(crate) fn keeping_angle(self) -> Self {
        Self(Params {
            turn: false,
            ..self.0
        })
    }
}

/// Refines one candidate and returns its registration when it is plausible (see
/// [`plausible`]) and reaches [`MIN_SIMILARITY`].
pub(crate) fn refine_candidate(
    texture: &Reference,
    leak: &Pyramid,
    candidate: Candidate,
    keep_going: &mut dyn FnMut() -> bool,
) -> Option<Registration> {
    let (t0, l0) = (texture.grey.levels.first()?, leak.levels.first()?);
    let r = refine(texture, leak, candidate.0, keep_going)?;
    let plausible = plausible(
        &r,
        (t0.width as f64, t0.height as f64),
        (l0.width as f64, l0.height as f64),
    );
    (plausible && r.similarity >= MIN_SIMILARITY).then_some(r)
}

/// The scales a `leak` image can have as a part of a `texture` (both `(width, height)`):
/// from the one at which it fills the texture on one axis to the one at which it keeps
/// [`MIN_CROP_AREA`] of it, within [`MIN_SCALE`] to [`MAX_SCALE`] (each widened by 2 % for
/// rounded sizes). `None` when empty or when the texture is too small to search.
pub(crate) fn scale_range(texture: (f64, f64), leak: (f64, f64)) -> Option<(f64, f64)> {
    let ((tw, th), (lw, lh)) = (texture, leak);
    let lowest = MIN_SCALE.max(lw / tw).max(lh / th) * (1.0 - SCALE_SLACK);
    let highest =
        MAX_SCALE.min(((lw * lh) / (tw * th * MIN_CROP_AREA)).sqrt()) * (1.0 + SCALE_SLACK);
    let big_enough = tw >= MIN_TEMPLATE as f64 && th >= MIN_TEMPLATE as f64;
    (lowest <= highest && big_enough).then_some((lowest, highest))
}

/// Whether a refined registration is one the search is for: the same scale on both axes
/// (up to the rounding of resized sizes), within the scale and angle ranges, the leak's
/// corners inside the texture (up to [`EDGE_SLACK`] pixels, plus, for a turned leak, the
/// sine of its angle times its longer side on the texture: an image turned and then cut to a
/// rectangle shows fill in its corners, which the refinement and the read leave out) and its
/// area at least [`MIN_CROP_AREA`] of the texture's.
fn plausible(r: &Registration, (tw, th): (f64, f64), (lw, lh): (f64, f64)) -> bool {
    let aspect = (r.scale_x / r.scale_y - 1.0).abs() <= ASPECT_SLACK;
    let range =
        |s: f64| (MIN_SCALE * (1.0 - SCALE_SLACK)..=MAX_SCALE * (1.0 + SCALE_SLACK)).contains(&s);
    let turn = r.angle.abs() <= MAX_ANGLE + 0.5;
    let slack =
        EDGE_SLACK + r.angle.to_radians().sin().abs() * (lw / r.scale_x).max(lh / r.scale_y);
    let inside = corners(r, (lw, lh))
        .iter()
        .all(|&(x, y)| x >= -slack && y >= -slack && x <= tw + slack && y <= th + slack);
    let area = lw * lh / (r.scale_x * r.scale_y) >= MIN_CROP_AREA * (1.0 - SCALE_SLACK) * tw * th;
    aspect && range(r.scale_x) && range(r.scale_y) && turn && inside && area
}

/// Texture points of a `(lw, lh)` leak's four corners.
pub(crate) fn corners(r: &Registration, (lw, lh): (f64, f64)) -> [(f64, f64); 4] {
    let (sin, cos) = r.angle.to_radians().sin_cos();
    let map = |u: f64, v: f64| {
        (
            r.offset_x + (u * cos - v * sin) / r.scale_x,
            r.offset_y + (u * sin + v * cos) / r.scale_y,
        )
    };
    [map(0.0, 0.0), map(lw, 0.0), map(0.0, lh), map(lw, lh)]
}

/// Whether two registrations put the leak in the same place (within a pixel).
pub(crate) fn same_place(a: &Registration, b: &Registration) -> bool {
    (a.offset_x - b.offset_x).abs() < 1.0
        && (a.offset_y - b.offset_y).abs() < 1.0
        && (a.scale_x / b.scale_x - 1.0).abs() < 1e-3
        && (a.angle - b.angle).abs() < 0.05
        && a.over_background == b.over_background
}

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
use crate::plane::Plane;
pub(crate) use crate::pyramid::Pyramid;

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
/// Least texture coverage (alpha / 255, bilinear) of a refinement sample when the texture's
/// coverage weights the match.
const COVERED: f32 = 0.95;
/// Most sample points per refinement iteration on the finest level refined.
pub(crate) const MAX_POINTS: usize = 1 << 18;
/// Most sample points per refinement iteration on the coarser levels, which only need to
/// bring the parameters within the next level's reach.
const COARSE_POINTS: usize = 1 << 16;

/// Rotations (radians) below this count as none.
const ANGLE_SNAP: f64 = 2e-6;

/// Gauss-Newton iterations per level.
const ITERATIONS: usize = 6;

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
        (self.offset_x + (u * cos - v * sin) / self.scale_x, self.offset_y + (u * sin + v * cos) / self.scale_y)
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
    let range = scale_range((t0.width as f64, t0.height as f64), (l0.width as f64, l0.height as f64))?;
    CoarseSearch::new(texture, leak, range).map(Coarse)
}

/// A coarse search over the scales a leak allows: first the unturned hypothesis, then, only
/// when asked, the turned ones (docs/watermark.md section 11.8).
pub(crate) struct Coarse(CoarseSearch);

impl Coarse {
    /// Sweeps the unturned angle (`turned` false) or the turned ones. `keep_going` is asked
    /// between steps; false when it stopped the sweep.
    pub(crate) fn sweep(&mut self, leak: &Pyramid, turned: bool, keep_going: &mut dyn FnMut() -> bool) -> bool {
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
        Self(Params { turn: false, ..self.0 })
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
    let plausible = plausible(&r, (t0.width as f64, t0.height as f64), (l0.width as f64, l0.height as f64));
    (plausible && r.similarity >= MIN_SIMILARITY).then_some(r)
}

/// The scales a `leak` image can have as a part of a `texture` (both `(width, height)`):
/// from the one at which it fills the texture on one axis to the one at which it keeps
/// [`MIN_CROP_AREA`] of it, within [`MIN_SCALE`] to [`MAX_SCALE`] (each widened by 2 % for
/// rounded sizes). `None` when empty or when the texture is too small to search.
pub(crate) fn scale_range(texture: (f64, f64), leak: (f64, f64)) -> Option<(f64, f64)> {
    let ((tw, th), (lw, lh)) = (texture, leak);
    let lowest = MIN_SCALE.max(lw / tw).max(lh / th) * (1.0 - SCALE_SLACK);
    let highest = MAX_SCALE.min(((lw * lh) / (tw * th * MIN_CROP_AREA)).sqrt()) * (1.0 + SCALE_SLACK);
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
    let range = |s: f64| (MIN_SCALE * (1.0 - SCALE_SLACK)..=MAX_SCALE * (1.0 + SCALE_SLACK)).contains(&s);
    let turn = r.angle.abs() <= MAX_ANGLE + 0.5;
    let slack = EDGE_SLACK + r.angle.to_radians().sin().abs() * (lw / r.scale_x).max(lh / r.scale_y);
    let inside = corners(r, (lw, lh)).iter().all(|&(x, y)| x >= -slack && y >= -slack && x <= tw + slack && y <= th + slack);
    let area = lw * lh / (r.scale_x * r.scale_y) >= MIN_CROP_AREA * (1.0 - SCALE_SLACK) * tw * th;
    aspect && range(r.scale_x) && range(r.scale_y) && turn && inside && area
}

/// Texture points of a `(lw, lh)` leak's four corners.
pub(crate) fn corners(r: &Registration, (lw, lh): (f64, f64)) -> [(f64, f64); 4] {
    let (sin, cos) = r.angle.to_radians().sin_cos();
    let map = |u: f64, v: f64| (r.offset_x + (u * cos - v * sin) / r.scale_x, r.offset_y + (u * sin + v * cos) / r.scale_y);
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

/// Lucas-Kanade refinement of one candidate down the pyramid.
fn refine(texture: &Reference, leak: &Pyramid, mut p: Params, keep_going: &mut dyn FnMut() -> bool) -> Option<Registration> {
    let t0 = texture.grey.levels.first()?;
    let l0 = leak.levels.first()?;
    let mut factor = 1.0f64;
    while (t0.width.max(t0.height) as f64) / factor > COARSE_SIDE as f64 {
        factor *= 2.0;
    }
    let mut similarity;
    loop {
        // Down to the largest power of two at most the leak's own resolution (5 % slack):
        // every level is a pyramid level, never resampled, and the leak is sampled onto it.
        // Large textures stop at level 1 (see crate::pyramid::HALF_LEVEL_PIXELS).
        let finest = p.inverse_x.max(p.inverse_y).max(1.0);
        let k = factor.log2().round() as usize;
        let tex = texture.grey.levels.get(k)?;
        let alpha = texture.alpha.as_ref().and_then(|a| a.levels.get(k));
        let last = factor <= finest * 1.05 || factor <= 1.0 || k == 0 || !texture.grey.has(k - 1);
        let points = if last { MAX_POINTS } else { COARSE_POINTS };
        similarity = refine_level((tex, alpha), factor, leak, l0, &mut p, points)?;
        // A true match correlates better on coarser (blurrier) levels than on the finest, so
        // a candidate below the threshold anywhere is abandoned there.
        if similarity < MIN_SIMILARITY || last || !keep_going() {
            break;
        }
        factor /= 2.0;
    }
    let (lw, lh) = (l0.width as f64, l0.height as f64);
    let (sin, cos) = p.angle.sin_cos();
    let (u, v) = (-lw / 2.0, -lh / 2.0);
    let offset_x = p.centre_x + p.inverse_x * (u * cos - v * sin);
    let offset_y = p.centre_y + p.inverse_y * (u * sin + v * cos);
    let mut r = Registration {
        scale_x: 1.0 / p.inverse_x,
        scale_y: 1.0 / p.inverse_y,
        offset_x,
        offset_y,
        // A turn too small to move any pixel of the largest leak by a hundredth of a pixel
        // is none: the read then takes the separable path.
        angle: if p.angle.abs() < ANGLE_SNAP { 0.0 } else { p.angle.to_degrees() },
        region: Region { x: 0, y: 0, width: 0, height: 0 },
        over_background: texture.alpha.is_some(),
        similarity,
    };
    let points = corners(&r, (lw, lh));
    let (lo_x, hi_x) = points.iter().fold((f64::MAX, f64::MIN), |(a, b), &(x, _)| (a.min(x), b.max(x)));
    let (lo_y, hi_y) = points.iter().fold((f64::MAX, f64::MIN), |(a, b), &(_, y)| (a.min(y), b.max(y)));
    let span = |lo: f64, hi: f64, size: usize| {
        let first = (lo - 0.5).ceil().max(0.0);
        let end = (hi - 0.5).ceil().min(size as f64);
        (first as u32, (end - first).max(0.0) as u32)
    };
    let (x, width) = span(lo_x, hi_x, t0.width);
    let (y, height) = span(lo_y, hi_y, t0.height);
    r.region = Region { x, y, width, height };
    Some(r)
}

/// Gauss-Newton iterations at one level (`tex` is the texture reduced by `factor`) on about
/// `points` sample points; returns the correlation of the leak grid and the mapped texture.
fn refine_level((tex, alpha): (&Plane, Option<&Plane>), factor: f64, leak: &Pyramid, l0: &Plane, p: &mut Params, points: usize) -> Option<f64> {
    // The leak on a grid of `factor` texture pixels per pixel at the current scale.
    let (qx, qy) = (factor / p.inverse_x, factor / p.inverse_y);
    let (mw, mh) = ((l0.width as f64 / qx) as usize, (l0.height as f64 / qy) as usize);
    if mw < 4 || mh < 4 {
        return None;
    }
    // Only the points sampled: every `stride`-th grid pixel on each axis, each still the
    // leak averaged over one grid pixel.
    let stride = ((mw * mh) as f64 / points as f64).sqrt().ceil().max(1.0) as usize;
    let (gw, gh) = (mw.div_ceil(stride), mh.div_ceil(stride));
    let lattice = stride as f64;
    let grid = leak.lattice(
        (gw, gh),
        (0.5 * qx * (1.0 - lattice), 0.5 * qy * (1.0 - lattice)),
        (qx * lattice, qy * lattice),
        (qx, qy),
    );
    let (uc, vc) = (l0.width as f64 / 2.0, l0.height as f64 / 2.0);
    let (mut gain, mut bias) = (1.0f64, 0.0f64);
    let mut last = 0.0;
    for _ in 0..ITERATIONS {
        let mut normal = [[0.0f64; 7]; 7];
        let mut rhs = [0.0f64; 7];
        let mut stats = Correlation::default();
        let (sin, cos) = p.angle.sin_cos();
        for gj in 0..gh {
            let v = ((gj * stride) as f64 + 0.5) * qy - vc;
            for gi in 0..gw {
                let u = ((gi * stride) as f64 + 0.5) * qx - uc;
                let (pp, qq) = (u * cos - v * sin, u * sin + v * cos);
                let tx = (p.centre_x + p.inverse_x * pp) / factor - 0.5;
                let ty = (p.centre_y + p.inverse_y * qq) / factor - 0.5;
                if tx < 0.0 || tx > (tex.width as f64 - 1.0) || ty < 0.0 || ty > (tex.height as f64 - 1.0) {
                    continue;
                }
                let (mut t, mut gx, mut gy) = tex.sample_with_gradient(tx, ty);
                if let Some(alpha) = alpha {
                    // Premultiplied grey over coverage: the texture's own colour, where it
                    // covers the background nearly entirely.
                    let (m, mx, my) = alpha.sample_with_gradient(tx, ty);
                    if m < COVERED {
                        continue;
                    }
                    t /= m;
                    gx = (gx - t * mx) / m;
                    gy = (gy - t * my) / m;
                }
                let l = f64::from(grid.data.get(gj * gw + gi).copied().unwrap_or(0.0));
                let (t, gx, gy) = (f64::from(t), f64::from(gx) * gain / factor, f64::from(gy) * gain / factor);
                stats.add(t, l);
                let r = gain * t + bias - l;
                let turn = if p.turn { -gx * p.inverse_x * qq + gy * p.inverse_y * pp } else { 0.0 };
                let jac = [gx * pp, gx, gy * qq, gy, turn, t, 1.0];
                for (a, row) in jac.iter().zip(normal.iter_mut()) {
                    for (b, cell) in jac.iter().zip(row.iter_mut()) {
                        *cell += a * b;
                    }
                }
                for (a, slot) in jac.iter().zip(rhs.iter_mut()) {
                    *slot -= a * r;
                }
            }
        }
        last = stats.value();
        if !p.turn {
            // The angle's row and column are 0: keep it (its step solves to 0).
            if let Some(cell) = normal.get_mut(4).and_then(|row| row.get_mut(4)) {
                *cell = 1.0;
            }
        }
        let Some(delta) = solve(normal, rhs) else { break };
        let [d_ix, d_cx, d_iy, d_cy, d_angle, d_gain, d_bias] = delta;
        p.angle += d_angle;
        p.inverse_x += d_ix;
        p.centre_x += d_cx;
        p.inverse_y += d_iy;
        p.centre_y += d_cy;
        gain += d_gain;
        bias += d_bias;
        if !(p.inverse_x > 0.0 && p.inverse_y > 0.0) {
            return None;
        }
        if d_cx.abs() < 0.01 * factor && d_cy.abs() < 0.01 * factor {
            break;
        }
    }
    Some(last)
}

/// Pearson correlation, accumulated.
#[derive(Default)]
struct Correlation {
    n: f64,
    a: f64,
    b: f64,
    aa: f64,
    bb: f64,
    ab: f64,
}

impl Correlation {
    fn add(&mut self, a: f64, b: f64) {
        self.n += 1.0;
        self.a += a;
        self.b += b;
        self.aa += a * a;
        self.bb += b * b;
        self.ab += a * b;
    }

    fn value(&self) -> f64 {
        if self.n < 2.0 {
            return 0.0;
        }
        let cov = self.ab - self.a * self.b / self.n;
        let va = self.aa - self.a * self.a / self.n;
        let vb = self.bb - self.b * self.b / self.n;
        if va <= 0.0 || vb <= 0.0 { 0.0 } else { cov / (va * vb).sqrt() }
    }
}

/// Solves the NxN system by Gaussian elimination with partial pivoting, after a little
/// Levenberg damping; `None` when singular.
#[allow(clippy::indexing_slicing)] // fixed NxN arrays indexed by loop counters below N
fn solve<const N: usize>(mut a: [[f64; N]; N], mut b: [f64; N]) -> Option<[f64; N]> {
    for (i, row) in a.iter_mut().enumerate() {
        if let Some(d) = row.get_mut(i) {
            *d *= 1.0 + 1e-9;
            if *d <= 0.0 {
                return None;
            }
        }
    }
    for col in 0..N {
        let pivot = (col..N).max_by(|&x, &y| a[x][col].abs().total_cmp(&a[y][col].abs()))?;
        if a[pivot][col].abs() < 1e-12 {
            return None;
        }
        a.swap(col, pivot);
        b.swap(col, pivot);
        let pivot_row = a[col];
        for row in col + 1..N {
            let f = a[row][col] / pivot_row[col];
            for (cell, p) in a[row].iter_mut().zip(pivot_row).skip(col) {
                *cell -= f * p;
            }
            b[row] -= f * b[col];
        }
    }
    let mut x = [0.0f64; N];
    for row in (0..N).rev() {
        let tail: f64 = (row + 1..N).map(|k| a[row][k] * x[k]).sum();
        x[row] = (b[row] - tail) / a[row][row];
    }
    x.iter().all(|v| v.is_finite()).then_some(x)
}

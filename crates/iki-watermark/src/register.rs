//! Registration of a leaked image against an original texture (docs/watermark.md section
//! 11.2): which part of the texture it shows, at which scale. It uses image content only,
//! never the key, so the read that follows keeps its null calibration.
//!
//! 1. **Coarse search.** Both images become grey planes (premultiplied by alpha when the
//!    leak has transparency). The texture is reduced by a power of two `d` to at most
//!    [`COARSE_SIDE`] pixels a side. For every scale of a geometric sweep over the range the
//!    leak's size allows, the leak is resampled onto that grid and its normalised
//!    cross-correlation with the reduced texture is computed for every offset at once by FFT
//!    (window statistics from summed-area tables). The best peaks, at least
//!    [`PEAK_SEPARATION`] pixels apart, become candidates.
//! 2. **Refinement.** Each candidate is refined by Gauss-Newton (Lucas-Kanade) on six
//!    parameters, a scale and an offset per axis plus gain and bias, on a pyramid from the
//!    coarse level down to the finest level both images share.
//!
//! Mapping: texture edge coordinate `X = offset_x + U / scale_x` for leak edge coordinate `U`
//! (pixel `i` covers `[i, i + 1)`), likewise for `Y`.

use crate::fft2::Fft2;
use crate::plane::Plane;
pub(crate) use crate::pyramid::Pyramid;

/// Smallest scale (leak pixels per texture pixel) searched.
pub const MIN_SCALE: f64 = 0.5;
/// Largest scale searched.
pub const MAX_SCALE: f64 = 2.0;
/// Smallest share of the texture's area a crop must keep.
pub const MIN_CROP_AREA: f64 = 0.25;
/// Smallest correlation between the leak and the registered texture to try a read.
pub const MIN_SIMILARITY: f64 = 0.8;
/// Longest side of the coarse search grid, in pixels.
pub const COARSE_SIDE: usize = 128;
/// Candidates kept from the coarse search.
pub const CANDIDATES: usize = 4;
/// Coarse peaks closer than this (coarse pixels, on both axes) count as one.
const PEAK_SEPARATION: usize = 4;
/// Smallest template side on the coarse grid.
const MIN_TEMPLATE: usize = 8;
/// Slack on the scale range, for rounding of resized dimensions.
const SCALE_SLACK: f64 = 0.02;
/// Largest relative difference of the two axes' scales (resized sizes are rounded).
const ASPECT_SLACK: f64 = 0.02;
/// How far (texture pixels) a registered leak may reach past the texture's edges.
const EDGE_SLACK: f64 = 2.0;
/// Most sample points per refinement iteration on the finest level refined.
pub(crate) const MAX_POINTS: usize = 1 << 18;
/// Most sample points per refinement iteration on the coarser levels, which only need to
/// bring the parameters within the next level's reach.
const COARSE_POINTS: usize = 1 << 16;

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
    /// Texture x (edge coordinate) of the leak's left edge.
    pub offset_x: f64,
    /// Texture y (edge coordinate) of the leak's top edge.
    pub offset_y: f64,
    /// The texture pixels whose centres fall inside the leak.
    pub region: Region,
    /// Correlation of the leak and the texture mapped onto it (1 is identical).
    pub similarity: f64,
}


/// Parameters: texture centre of the leak's centre and texture pixels per leak pixel.
#[derive(Clone, Copy, Debug)]
struct Params {
    centre_x: f64,
    centre_y: f64,
    inverse_x: f64,
    inverse_y: f64,
}

/// The coarse search of a leak (`leak`, its pyramid from full resolution) on a texture
/// (`texture`, its pyramid): up to [`CANDIDATES`] starting points, best first. `keep_going`
/// is asked between scales; when it says no, the search ends with what it has.
pub(crate) fn candidates(texture: &Pyramid, leak: &Pyramid, keep_going: &mut dyn FnMut() -> bool) -> Vec<Candidate> {
    let (Some(t0), Some(l0)) = (texture.levels.first(), leak.levels.first()) else {
        return Vec::new();
    };
    let Some((lowest, highest)) = scale_range(
        (t0.width as f64, t0.height as f64),
        (l0.width as f64, l0.height as f64),
    ) else {
        return Vec::new();
    };
    coarse(texture, leak, lowest, highest, keep_going).into_iter().map(Candidate).collect()
}

/// A starting point of the refinement.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Candidate(Params);

/// Refines one candidate and returns its registration when it is plausible (see
/// [`plausible`]) and reaches [`MIN_SIMILARITY`].
pub(crate) fn refine_candidate(
    texture: &Pyramid,
    leak: &Pyramid,
    candidate: Candidate,
    keep_going: &mut dyn FnMut() -> bool,
) -> Option<Registration> {
    let (t0, l0) = (texture.levels.first()?, leak.levels.first()?);
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
/// (up to the rounding of resized sizes), within the scale range, the leak inside the
/// texture (up to [`EDGE_SLACK`] pixels) and keeping at least [`MIN_CROP_AREA`] of it.
fn plausible(r: &Registration, (tw, th): (f64, f64), (lw, lh): (f64, f64)) -> bool {
    let aspect = (r.scale_x / r.scale_y - 1.0).abs() <= ASPECT_SLACK;
    let range = |s: f64| (MIN_SCALE * (1.0 - SCALE_SLACK)..=MAX_SCALE * (1.0 + SCALE_SLACK)).contains(&s);
    let (right, bottom) = (r.offset_x + lw / r.scale_x, r.offset_y + lh / r.scale_y);
    let inside = r.offset_x >= -EDGE_SLACK
        && r.offset_y >= -EDGE_SLACK
        && right <= tw + EDGE_SLACK
        && bottom <= th + EDGE_SLACK;
    let area = f64::from(r.region.width) * f64::from(r.region.height) >= MIN_CROP_AREA * (1.0 - SCALE_SLACK) * tw * th;
    aspect && range(r.scale_x) && range(r.scale_y) && inside && area
}

/// Whether two registrations put the leak in the same place (within a pixel).
pub(crate) fn same_place(a: &Registration, b: &Registration) -> bool {
    (a.offset_x - b.offset_x).abs() < 1.0
        && (a.offset_y - b.offset_y).abs() < 1.0
        && (a.scale_x / b.scale_x - 1.0).abs() < 1e-3
}

/// A coarse peak.
#[derive(Clone, Copy, Debug)]
struct Peak {
    score: f64,
    x: usize,
    y: usize,
    scale: f64,
}

/// The coarse search: returns up to [`CANDIDATES`] starting points.
fn coarse(texture: &Pyramid, leak: &Pyramid, lowest: f64, highest: f64, keep_going: &mut dyn FnMut() -> bool) -> Vec<Params> {
    let Some(t0) = texture.levels.first() else { return Vec::new() };
    let mut d = 1usize;
    while t0.width.max(t0.height) / d > COARSE_SIDE {
        d *= 2;
    }
    let (nw, nh) = (t0.width / d, t0.height / d);
    let level = texture.levels.get(d.trailing_zeros() as usize).unwrap_or(t0);
    let small = level.crop(nw, nh);
    let (fw, fh) = (nw.next_power_of_two(), nh.next_power_of_two());
    let mut fft = Fft2::new(fw, fh);
    let texture_spectrum = fft.spectrum(&small);
    let (sum, squares) = small.integrals();
    let Some(l0) = leak.levels.first() else { return Vec::new() };
    let df = d as f64;
    let mut peaks: Vec<Peak> = Vec::new();
    let mut scale = highest;
    while scale >= lowest {
        if !keep_going() {
            break;
        }
        let step = scale * df; // leak pixels per coarse pixel
        let (mw, mh) = ((l0.width as f64 / step) as usize, (l0.height as f64 / step) as usize);
        let next = scale / (1.0 + 2.0 / mw.max(mh).max(1) as f64);
        if mw >= MIN_TEMPLATE && mh >= MIN_TEMPLATE && mw <= nw && mh <= nh {
            let mut template = leak.grid(mw, mh, (0.0, 0.0), (step, step));
            let mean = template.data.iter().map(|&v| f64::from(v)).sum::<f64>() / (mw * mh) as f64;
            template.data.iter_mut().for_each(|v| *v -= mean as f32);
            let energy: f64 = template.data.iter().map(|&v| f64::from(v) * f64::from(v)).sum();
            if energy > (mw * mh) as f64 {
                let spectrum = fft.spectrum(&template);
                let map = fft.correlate(&spectrum, &texture_spectrum);
                let ncc = normalise(&map, &sum, &squares, (nw, nh), (mw, mh), energy);
                peaks.extend(top_peaks(&ncc, 3).into_iter().map(|(score, x, y)| Peak { score, x, y, scale }));
            }
        }
        scale = next;
    }
    peaks.sort_by(|a, b| b.score.total_cmp(&a.score));
    let mut chosen: Vec<Peak> = Vec::new();
    for p in peaks {
        if chosen.len() == CANDIDATES {
            break;
        }
        let apart = |c: &Peak| c.x.abs_diff(p.x) > PEAK_SEPARATION || c.y.abs_diff(p.y) > PEAK_SEPARATION;
        if p.score > 0.0 && chosen.iter().all(apart) {
            chosen.push(p);
        }
    }
    chosen
        .into_iter()
        .map(|p| {
            let inverse = 1.0 / p.scale;
            Params {
                centre_x: p.x as f64 * df + inverse * l0.width as f64 / 2.0,
                centre_y: p.y as f64 * df + inverse * l0.height as f64 / 2.0,
                inverse_x: inverse,
                inverse_y: inverse,
            }
        })
        .collect()
}

/// Normalised cross-correlation per valid offset (`(nw - mw + 1) x (nh - mh + 1)`), from the
/// raw correlation map and the texture's summed-area tables; 0 where the window is flat.
fn normalise(map: &Plane, sum: &[f64], squares: &[f64], (nw, nh): (usize, usize), (mw, mh): (usize, usize), energy: f64) -> Plane {
    let (ow, oh) = (nw - mw + 1, nh - mh + 1);
    let stride = nw + 1;
    let n = (mw * mh) as f64;
    let window = |table: &[f64], x: usize, y: usize| {
        let at = |xx: usize, yy: usize| table.get(yy * stride + xx).copied().unwrap_or(0.0);
        at(x + mw, y + mh) - at(x, y + mh) - at(x + mw, y) + at(x, y)
    };
    let mut out = Plane::new(ow, oh);
    for y in 0..oh {
        for x in 0..ow {
            let s1 = window(sum, x, y);
            let spread = window(squares, x, y) - s1 * s1 / n;
            let c = f64::from(map.data.get(y * map.width + x).copied().unwrap_or(0.0));
            if let Some(slot) = out.data.get_mut(y * ow + x) {
                *slot = if spread > n { (c / (energy * spread).sqrt()) as f32 } else { 0.0 };
            }
        }
    }
    out
}

/// Up to `count` maxima of `plane`, each more than [`PEAK_SEPARATION`] from the others.
fn top_peaks(plane: &Plane, count: usize) -> Vec<(f64, usize, usize)> {
    let mut out: Vec<(f64, usize, usize)> = Vec::new();
    for _ in 0..count {
        let mut best: Option<(f64, usize, usize)> = None;
        for (i, &v) in plane.data.iter().enumerate() {
            let (x, y) = (i % plane.width.max(1), i / plane.width.max(1));
            let far = out.iter().all(|&(_, px, py)| px.abs_diff(x) > PEAK_SEPARATION || py.abs_diff(y) > PEAK_SEPARATION);
            if far && best.is_none_or(|b| f64::from(v) > b.0) {
                best = Some((f64::from(v), x, y));
            }
        }
        match best {
            Some(b) => out.push(b),
            None => break,
        }
    }
    out
}

/// Lucas-Kanade refinement of one candidate down the pyramid.
fn refine(texture: &Pyramid, leak: &Pyramid, mut p: Params, keep_going: &mut dyn FnMut() -> bool) -> Option<Registration> {
    let t0 = texture.levels.first()?;
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
        let tex = texture.levels.get(k)?;
        let last = factor <= finest * 1.05 || factor <= 1.0 || k == 0 || !texture.has(k - 1);
        similarity = refine_level(tex, factor, leak, l0, &mut p, if last { MAX_POINTS } else { COARSE_POINTS })?;
        // A true match correlates better on coarser (blurrier) levels than on the finest, so
        // a candidate below the threshold anywhere is abandoned there.
        if similarity < MIN_SIMILARITY || last || !keep_going() {
            break;
        }
        factor /= 2.0;
    }
    let (lw, lh) = (l0.width as f64, l0.height as f64);
    let offset_x = p.centre_x - p.inverse_x * lw / 2.0;
    let offset_y = p.centre_y - p.inverse_y * lh / 2.0;
    let span = |offset: f64, extent: f64, size: usize| {
        let first = (offset - 0.5).ceil().max(0.0);
        let end = (offset + extent - 0.5).ceil().min(size as f64);
        (first as u32, (end - first).max(0.0) as u32)
    };
    let (x, width) = span(offset_x, p.inverse_x * lw, t0.width);
    let (y, height) = span(offset_y, p.inverse_y * lh, t0.height);
    Some(Registration {
        scale_x: 1.0 / p.inverse_x,
        scale_y: 1.0 / p.inverse_y,
        offset_x,
        offset_y,
        region: Region { x, y, width, height },
        similarity,
    })
}

/// Gauss-Newton iterations at one level (`tex` is the texture reduced by `factor`) on about
/// `points` sample points; returns the correlation of the leak grid and the mapped texture.
fn refine_level(tex: &Plane, factor: f64, leak: &Pyramid, l0: &Plane, p: &mut Params, points: usize) -> Option<f64> {
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
        let mut normal = [[0.0f64; 6]; 6];
        let mut rhs = [0.0f64; 6];
        let mut stats = Correlation::default();
        for gj in 0..gh {
            let v = ((gj * stride) as f64 + 0.5) * qy - vc;
            let ty = (p.centre_y + p.inverse_y * v) / factor - 0.5;
            if ty < 0.0 || ty > (tex.height as f64 - 1.0) {
                continue;
            }
            for gi in 0..gw {
                let u = ((gi * stride) as f64 + 0.5) * qx - uc;
                let tx = (p.centre_x + p.inverse_x * u) / factor - 0.5;
                if tx < 0.0 || tx > (tex.width as f64 - 1.0) {
                    continue;
                }
                let (t, gx, gy) = tex.sample_with_gradient(tx, ty);
                let l = f64::from(grid.data.get(gj * gw + gi).copied().unwrap_or(0.0));
                let (t, gx, gy) = (f64::from(t), f64::from(gx) * gain / factor, f64::from(gy) * gain / factor);
                stats.add(t, l);
                let r = gain * t + bias - l;
                let jac = [gx * u, gx, gy * v, gy, t, 1.0];
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
        let Some(delta) = solve(normal, rhs) else { break };
        let [d_ix, d_cx, d_iy, d_cy, d_gain, d_bias] = delta;
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

/// Solves the 6x6 system by Gaussian elimination with partial pivoting, after a little
/// Levenberg damping; `None` when singular.
#[allow(clippy::indexing_slicing)] // fixed 6x6 arrays indexed by loop counters below 6
fn solve(mut a: [[f64; 6]; 6], mut b: [f64; 6]) -> Option<[f64; 6]> {
    for (i, row) in a.iter_mut().enumerate() {
        if let Some(d) = row.get_mut(i) {
            *d *= 1.0 + 1e-9;
            if *d <= 0.0 {
                return None;
            }
        }
    }
    for col in 0..6 {
        let pivot = (col..6).max_by(|&x, &y| a[x][col].abs().total_cmp(&a[y][col].abs()))?;
        if a[pivot][col].abs() < 1e-12 {
            return None;
        }
        a.swap(col, pivot);
        b.swap(col, pivot);
        let pivot_row = a[col];
        for row in col + 1..6 {
            let f = a[row][col] / pivot_row[col];
            for (cell, p) in a[row].iter_mut().zip(pivot_row).skip(col) {
                *cell -= f * p;
            }
            b[row] -= f * b[col];
        }
    }
    let mut x = [0.0f64; 6];
    for row in (0..6).rev() {
        let tail: f64 = (row + 1..6).map(|k| a[row][k] * x[k]).sum();
        x[row] = (b[row] - tail) / a[row][row];
    }
    x.iter().all(|v| v.is_finite()).then_some(x)
}

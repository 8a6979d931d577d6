//! Lucas-Kanade refinement of a registration candidate (docs/watermark.md section 11.2 step
//! 3): Gauss-Newton on the scale and offset of each axis, the rotation, a gain and a bias, down
//! the texture's pyramid from the coarse level to the finest both images share.

use crate::plane::Plane;
use crate::register::{
    corners, Params, Pyramid, Reference, Region, Registration, COARSE_SIDE, MIN_SIMILARITY,
};

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

/// Lucas-Kanade refinement of one candidate down the pyramid.
pub(crate) fn refine(
    texture: &Reference,
    leak: &Pyramid,
    mut p: Params,
    keep_going: &mut dyn FnMut() -> bool,
) -> Option<Registration> {
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
        angle: if p.angle.abs() < ANGLE_SNAP {
            0.0
        } else {
            p.angle.to_degrees()
        },
        region: Region {
            x: 0,
            y: 0,
            width: 0,
            height: 0,
        },
        over_background: texture.alpha.is_some(),
        similarity,
    };
    let points = corners(&r, (lw, lh));
    let (lo_x, hi_x) = points
        .iter()
        .fold((f64::MAX, f64::MIN), |(a, b), &(x, _)| (a.min(x), b.max(x)));
    let (lo_y, hi_y) = points
        .iter()
        .fold((f64::MAX, f64::MIN), |(a, b), &(_, y)| (a.min(y), b.max(y)));
    let span = |lo: f64, hi: f64, size: usize| {
        let first = (lo - 0.5).ceil().max(0.0);
        let end = (hi - 0.5).ceil().min(size as f64);
        (first as u32, (end - first).max(0.0) as u32)
    };
    let (x, width) = span(lo_x, hi_x, t0.width);
    let (y, height) = span(lo_y, hi_y, t0.height);
    r.region = Region {
        x,
        y,
        width,
        height,
    };
    Some(r)
}

/// Gauss-Newton iterations at one level (`tex` is the texture reduced by `factor`) on about
/// `points` sample points; returns the correlation of the leak grid and the mapped texture.
fn refine_level(
    (tex, alpha): (&Plane, Option<&Plane>),
    factor: f64,
    leak: &Pyramid,
    l0: &Plane,
    p: &mut Params,
    points: usize,
) -> Option<f64> {
    // The leak on a grid of `factor` texture pixels per pixel at the current scale.
    let (qx, qy) = (factor / p.inverse_x, factor / p.inverse_y);
    let (mw, mh) = (
        (l0.width as f64 / qx) as usize,
        (l0.height as f64 / qy) as usize,
    );
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
                if tx < 0.0
                    || tx > (tex.width as f64 - 1.0)
                    || ty < 0.0
                    || ty > (tex.height as f64 - 1.0)
                {
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
                let (t, gx, gy) = (
                    f64::from(t),
                    f64::from(gx) * gain / factor,
                    f64::from(gy) * gain / factor,
                );
                stats.add(t, l);
                let r = gain * t + bias - l;
                let turn = if p.turn {
                    -gx * p.inverse_x * qq + gy * p.inverse_y * pp
                } else {
                    0.0
                };
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
        let Some(delta) = solve(normal, rhs) else {
            break;
        };
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
        if va <= 0.0 || vb <= 0.0 {
            0.0
        } else {
            cov / (va * vb).sqrt()
        }
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

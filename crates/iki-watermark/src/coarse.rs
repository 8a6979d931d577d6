//! The coarse search of registration (docs/watermark.md section 11.2): where a leak may sit
//! on a texture, on a grid of at most [`COARSE_SIDE`] pixels a side, over a geometric sweep
//! of scales and a few rotations. Normalised cross-correlation for every offset at once by
//! FFT; when the texture has transparency and the leak has none (a texture composited over
//! some background), the correlation is weighted by the texture's coverage (alpha), so the
//! background never counts.

use crate::fft2::Fft2;
use crate::plane::Plane;
use crate::pyramid::Pyramid;
use crate::register::{Params, Reference, COARSE_SIDE};

/// Rotations searched (degrees); the refinement reaches the angles between.
const ANGLES: [f64; 5] = [0.0, -2.0, 2.0, -4.0, 4.0];
/// Coarse peaks closer than this (coarse pixels, on both axes) count as one.
const PEAK_SEPARATION: usize = 4;
/// Smallest template side on the coarse grid.
pub(crate) const MIN_TEMPLATE: usize = 8;
/// Least share of a window the texture must cover for a weighted correlation (a sprite on
/// a transparent sheet may cover little of it), and least coverage in coarse pixels.
const MIN_WINDOW_COVERAGE: f64 = 0.02;
const MIN_WINDOW_PIXELS: f64 = 32.0;

/// A coarse peak.
#[derive(Clone, Copy, Debug)]
struct Peak {
    score: f64,
    x: usize,
    y: usize,
    scale: f64,
    angle: f64,
    /// Template size (coarse pixels) and whether it is centred on the leak's centre.
    size: (usize, usize),
    centred: bool,
}

/// The texture reduced to the coarse grid, with what the correlation needs of it.
struct CoarseTexture {
    size: (usize, usize),
    fft: Fft2,
    /// Spectrum of the grey plane (premultiplied when weighted).
    grey: Vec<iki_fft::Complex32>,
    /// Spectrum of the coverage, when weighted.
    coverage: Option<Vec<iki_fft::Complex32>>,
    /// Summed-area tables: grey, grey squared (over coverage when weighted), coverage.
    sum: Vec<f64>,
    squares: Vec<f64>,
    weight: Option<Vec<f64>>,
}

impl CoarseTexture {
    fn new(texture: &Reference, d: usize) -> Option<Self> {
        let t0 = texture.grey.levels.first()?;
        let (nw, nh) = (t0.width / d, t0.height / d);
        let k = d.trailing_zeros() as usize;
        let grey = texture.grey.levels.get(k).unwrap_or(t0).crop(nw, nh);
        let mut fft = Fft2::new(nw.next_power_of_two(), nh.next_power_of_two());
        let spectrum = fft.spectrum(&grey);
        match &texture.alpha {
            None => {
                let (sum, squares) = grey.integrals();
                Some(Self {
                    size: (nw, nh),
                    fft,
                    grey: spectrum,
                    coverage: None,
                    sum,
                    squares,
                    weight: None,
                })
            }
            Some(alpha) => {
                let a0 = alpha.levels.first()?;
                let cover = alpha.levels.get(k).unwrap_or(a0).crop(nw, nh);
                let coverage = fft.spectrum(&cover);
                // Straight grey squared, weighted: P^2 / M where the texture shows.
                let over = Plane {
                    width: nw,
                    height: nh,
                    data: grey
                        .data
                        .iter()
                        .zip(&cover.data)
                        .map(|(&p, &m)| if m > 1e-3 { p * p / m } else { 0.0 })
                        .collect(),
                };
                let (sum, _) = grey.integrals();
                let (squares, _) = over.integrals();
                let (weight, _) = cover.integrals();
                Some(Self {
                    size: (nw, nh),
                    fft,
                    grey: spectrum,
                    coverage: Some(coverage),
                    sum,
                    squares,
                    weight: Some(weight),
                })
            }
        }
    }

    /// Correlation map of a template (`mw x mh`) at every offset where it fits.
    fn correlate(&mut self, template: &Plane) -> Option<Plane> {
        let (mw, mh) = (template.width, template.height);
        let n = (mw * mh) as f64;
        match &self.coverage {
            None => {
                let mut t = template.clone();
                let mean = t.data.iter().map(|&v| f64::from(v)).sum::<f64>() / n;
                t.data.iter_mut().for_each(|v| *v -= mean as f32);
                let energy: f64 = t.data.iter().map(|&v| f64::from(v) * f64::from(v)).sum();
                if energy <= n {
                    return None;
                }
                let spectrum = self.fft.spectrum(&t);
                let map = self.fft.correlate(&spectrum, &self.grey);
                Some(normalise(
                    &map,
                    &self.sum,
                    &self.squares,
                    self.size,
                    (mw, mh),
                    energy,
                ))
            }
            Some(coverage) => {
                let mut t = template.clone();
                let mean = t.data.iter().map(|&v| f64::from(v)).sum::<f64>() / n;
                t.data.iter_mut().for_each(|v| *v -= mean as f32);
                let squared = Plane {
                    width: mw,
                    height: mh,
                    data: t.data.iter().map(|v| v * v).collect(),
                };
                let (ts, ts2) = (self.fft.spectrum(&t), self.fft.spectrum(&squared));
                let cross = self.fft.correlate(&ts, &self.grey);
                let b = self.fft.correlate(&ts, coverage);
                let bb = self.fft.correlate(&ts2, coverage);
                let weight = self.weight.as_deref().unwrap_or(&[]);
                Some(weighted(
                    &[&cross, &b, &bb],
                    (&self.sum, &self.squares, weight),
                    self.size,
                    (mw, mh),
                ))
            }
        }
    }
}

/// The unturned hypothesis, swept first (docs/watermark.md section 11.8).
pub(crate) const UNTURNED: [f64; 1] = [0.0];
/// The turned hypotheses, swept only when the unturned one reads nothing.
pub(crate) const TURNED: [f64; 4] = [-2.0, 2.0, -4.0, 4.0];
const _: () = assert!(ANGLES.len() == UNTURNED.len() + TURNED.len());

/// A coarse search in progress: the texture on the coarse grid and the peaks of the angles
/// swept so far, so that the likely hypothesis (unturned) can be tried before the others are
/// computed, and none is computed twice.
pub(crate) struct CoarseSearch {
    reference: CoarseTexture,
    df: f64,
    leak_size: (f64, f64),
    range: (f64, f64),
    peaks: Vec<Peak>,
}

impl CoarseSearch {
    /// The texture reduced by the power of two that brings it to at most [`COARSE_SIDE`].
    pub(crate) fn new(texture: &Reference, leak: &Pyramid, range: (f64, f64)) -> Option<Self> {
        let (t0, l0) = (texture.grey.levels.first()?, leak.levels.first()?);
        let mut d = 1usize;
        while t0.width.max(t0.height) / d > COARSE_SIDE {
            d *= 2;
        }
        let reference = CoarseTexture::new(texture, d)?;
        Some(Self {
            reference,
            df: d as f64,
            leak_size: (l0.width as f64, l0.height as f64),
            range,
            peaks: Vec::new(),
        })
    }

    /// Adds the peaks of every scale of the sweep at each of `angles` (degrees). False when
    /// `keep_going` stopped it.
    pub(crate) fn sweep(
        &mut self,
        leak: &Pyramid,
        angles: &[f64],
        keep_going: &mut dyn FnMut() -> bool,
    ) -> bool {
        let (nw, nh) = self.reference.size;
        let (lw, lh) = self.leak_size;
        let (lowest, highest) = self.range;
        let mut scale = highest;
        while scale >= lowest {
            let step = scale * self.df; // leak pixels per coarse pixel
            let (mw, mh) = ((lw / step) as usize, (lh / step) as usize);
            let next = scale / (1.0 + 2.0 / mw.max(mh).max(1) as f64);
            for &degrees in angles {
                if !keep_going() {
                    return false;
                }
                let angle = degrees.to_radians();
                let Some(template) = template(leak, (lw, lh), step, angle) else {
                    continue;
                };
                let (tw, th) = (template.width, template.height);
                if tw < MIN_TEMPLATE || th < MIN_TEMPLATE || tw > nw || th > nh {
                    continue;
                }
                if let Some(ncc) = self.reference.correlate(&template) {
                    let size = (tw, th);
                    let centred = angle != 0.0;
                    self.peaks
                        .extend(top_peaks(&ncc, 3).into_iter().map(|(score, x, y)| Peak {
                            score,
                            x,
                            y,
                            scale,
                            angle,
                            size,
                            centred,
                        }));
                }
            }
            scale = next;
        }
        true
    }

    /// Up to `count` starting points from the peaks so far, best first, each at least
    /// [`PEAK_SEPARATION`] coarse pixels from the others.
    pub(crate) fn best(&self, count: usize) -> Vec<Params> {
        let (df, (lw, lh)) = (self.df, self.leak_size);
        let mut peaks = self.peaks.clone();
        peaks.sort_by(|a, b| b.score.total_cmp(&a.score));
        let mut chosen: Vec<Peak> = Vec::new();
        for p in peaks {
            if chosen.len() == count {
                break;
            }
            let (cx, cy) = centre(&p, df, (lw, lh));
            let apart = |c: &Peak| {
                let (ox, oy) = centre(c, df, (lw, lh));
                (ox - cx).abs() > PEAK_SEPARATION as f64 * df
                    || (oy - cy).abs() > PEAK_SEPARATION as f64 * df
            };
            if p.score > 0.0 && chosen.iter().all(apart) {
                chosen.push(p);
            }
        }
        chosen
            .into_iter()
            .map(|p| {
                let (centre_x, centre_y) = centre(&p, df, (lw, lh));
                let inverse = 1.0 / p.scale;
                Params {
                    centre_x,
                    centre_y,
                    inverse_x: inverse,
                    inverse_y: inverse,
                    angle: p.angle,
                    turn: true,
                }
            })
            .collect()
    }
}

/// Texture point of the leak's centre for a peak.
fn centre(p: &Peak, df: f64, (lw, lh): (f64, f64)) -> (f64, f64) {
    if p.centred {
        (
            (p.x as f64 + p.size.0 as f64 / 2.0) * df,
            (p.y as f64 + p.size.1 as f64 / 2.0) * df,
        )
    } else {
        let inverse = 1.0 / p.scale;
        (
            p.x as f64 * df + inverse * lw / 2.0,
            p.y as f64 * df + inverse * lh / 2.0,
        )
    }
}

/// The leak on the coarse grid at `step` leak pixels per coarse pixel, turned by `angle`
/// (radians) onto the texture's axes: unturned, the whole leak from its top-left corner;
/// turned, the largest centred rectangle inside the turned leak (bilinear on the pyramid
/// level of at most `step` reduction).
fn template(leak: &Pyramid, (lw, lh): (f64, f64), step: f64, angle: f64) -> Option<Plane> {
    if angle == 0.0 {
        let (mw, mh) = ((lw / step) as usize, (lh / step) as usize);
        if mw < MIN_TEMPLATE || mh < MIN_TEMPLATE {
            return None;
        }
        return Some(leak.grid(mw, mh, (0.0, 0.0), (step, step)));
    }
    let (c, s) = (angle.cos(), angle.sin().abs());
    let det = c * c - s * s;
    let (iw, ih) = ((lw * c - lh * s) / det, (lh * c - lw * s) / det);
    if iw <= 0.0 || ih <= 0.0 {
        return None;
    }
    let (mw, mh) = ((iw / step) as usize, (ih / step) as usize);
    if mw < MIN_TEMPLATE || mh < MIN_TEMPLATE {
        return None;
    }
    let (level, reduction) = leak.at_most(step);
    let (sin, cos) = angle.sin_cos();
    let mut out = Plane::new(mw, mh);
    for j in 0..mh {
        let q = (j as f64 + 0.5 - mh as f64 / 2.0) * step;
        for i in 0..mw {
            let p = (i as f64 + 0.5 - mw as f64 / 2.0) * step;
            // Leak offset from its centre: the turn undone.
            let (u, v) = (cos * p + sin * q, -sin * p + cos * q);
            let (x, y) = (
                (u + lw / 2.0) / reduction - 0.5,
                (v + lh / 2.0) / reduction - 0.5,
            );
            if let Some(slot) = out.data.get_mut(j * mw + i) {
                *slot = level.sample_with_gradient(x, y).0;
            }
        }
    }
    Some(out)
}

/// Normalised cross-correlation per valid offset (`(nw - mw + 1) x (nh - mh + 1)`), from the
/// raw correlation map and the texture's summed-area tables; 0 where the window is flat.
fn normalise(
    map: &Plane,
    sum: &[f64],
    squares: &[f64],
    (nw, nh): (usize, usize),
    (mw, mh): (usize, usize),
    energy: f64,
) -> Plane {
    let (ow, oh) = (nw - mw + 1, nh - mh + 1);
    let n = (mw * mh) as f64;
    let mut out = Plane::new(ow, oh);
    for y in 0..oh {
        for x in 0..ow {
            let s1 = window(sum, nw, (x, y), (mw, mh));
            let spread = window(squares, nw, (x, y), (mw, mh)) - s1 * s1 / n;
            let c = f64::from(map.data.get(y * map.width + x).copied().unwrap_or(0.0));
            if let Some(slot) = out.data.get_mut(y * ow + x) {
                *slot = if spread > n {
                    (c / (energy * spread).sqrt()) as f32
                } else {
                    0.0
                };
            }
        }
    }
    out
}

/// The sum over a window of a summed-area table `nw + 1` wide.
fn window(table: &[f64], nw: usize, (x, y): (usize, usize), (mw, mh): (usize, usize)) -> f64 {
    let stride = nw + 1;
    let at = |xx: usize, yy: usize| table.get(yy * stride + xx).copied().unwrap_or(0.0);
    at(x + mw, y + mh) - at(x, y + mh) - at(x + mw, y) + at(x, y)
}

/// Coverage-weighted correlation per valid offset: the Pearson correlation of the template
/// and the straight texture, each pixel weighted by the texture's coverage `M`. From the
/// maps `sum M P' L`, `sum M L`, `sum M L^2` (`P` premultiplied grey, so `M T = P`) and the
/// tables of `P`, `P^2 / M` and `M`; 0 where the texture covers too little or is flat.
fn weighted(
    maps: &[&Plane; 3],
    (sum, squares, weight): (&[f64], &[f64], &[f64]),
    (nw, nh): (usize, usize),
    (mw, mh): (usize, usize),
) -> Plane {
    let (ow, oh) = (nw - mw + 1, nh - mh + 1);
    let area = (mw * mh) as f64;
    let mut out = Plane::new(ow, oh);
    let [cross, b, bb] = *maps;
    for y in 0..oh {
        for x in 0..ow {
            let n = window(weight, nw, (x, y), (mw, mh));
            let at = |m: &Plane| f64::from(m.data.get(y * m.width + x).copied().unwrap_or(0.0));
            let (a, aa) = (
                window(sum, nw, (x, y), (mw, mh)),
                window(squares, nw, (x, y), (mw, mh)),
            );
            let (ab, b, bb) = (at(cross), at(b), at(bb));
            let value = if n >= (MIN_WINDOW_COVERAGE * area).max(MIN_WINDOW_PIXELS) {
                let cov = ab - a * b / n;
                let (va, vb) = (aa - a * a / n, bb - b * b / n);
                if va > n && vb > n {
                    cov / (va * vb).sqrt()
                } else {
                    0.0
                }
            } else {
                0.0
            };
            if let Some(slot) = out.data.get_mut(y * ow + x) {
                *slot = value as f32;
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
            let far = out.iter().all(|&(_, px, py)| {
                px.abs_diff(x) > PEAK_SEPARATION || py.abs_diff(y) > PEAK_SEPARATION
            });
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

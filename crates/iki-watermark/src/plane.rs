//! Grey planes and resampling for informed reading (docs/watermark.md section 11).
//!
//! A [`Plane`] is a row-major `f32` image. [`resample`] maps a rectangle of a source plane
//! onto an output grid with a separable triangle filter whose support widens with the
//! reduction factor (Pillow's antialiased "bilinear"; plain linear interpolation when
//! enlarging). Coordinates are *edge* coordinates: pixel `i` covers `[i, i + 1)` and its
//! centre is `i + 0.5`. Positions outside the source repeat its edge pixels.

use crate::embed::VISIBLE_ALPHA_MIN;

/// A row-major grey image.
#[derive(Clone, Debug, Default)]
pub(crate) struct Plane {
    pub(crate) width: usize,
    pub(crate) height: usize,
    pub(crate) data: Vec<f32>,
}

impl Plane {
    pub(crate) fn new(width: usize, height: usize) -> Self {
        Self {
            width,
            height,
            data: vec![0.0; width * height],
        }
    }

    /// The value at integer coordinates clamped into the plane (0 for an empty plane).
    pub(crate) fn at(&self, x: isize, y: isize) -> f32 {
        if self.width == 0 || self.height == 0 {
            return 0.0;
        }
        let x = x.clamp(0, self.width as isize - 1) as usize;
        let y = y.clamp(0, self.height as isize - 1) as usize;
        self.data.get(y * self.width + x).copied().unwrap_or(0.0)
    }

    /// The bilinear interpolant at pixel-centre coordinates and its two partial
    /// derivatives (per pixel), from one 2x2 neighbourhood.
    pub(crate) fn sample_with_gradient(&self, x: f64, y: f64) -> (f32, f32, f32) {
        let (x0, y0) = (x.floor(), y.floor());
        let (fx, fy) = ((x - x0) as f32, (y - y0) as f32);
        let (xi, yi) = (x0 as isize, y0 as isize);
        let (p00, p10) = (self.at(xi, yi), self.at(xi + 1, yi));
        let (p01, p11) = (self.at(xi, yi + 1), self.at(xi + 1, yi + 1));
        let top = p00 + (p10 - p00) * fx;
        let bottom = p01 + (p11 - p01) * fx;
        let gx = (p10 - p00) * (1.0 - fy) + (p11 - p01) * fy;
        (top + (bottom - top) * fy, gx, bottom - top)
    }

    /// Halves the plane (triangle filter, exactly 2 source pixels per output pixel), rounding
    /// the size up: output pixel `i` covers source edges `[2i, 2i + 2)`.
    pub(crate) fn half(&self) -> Plane {
        let (w, h) = (
            self.width.div_ceil(2).max(1),
            self.height.div_ceil(2).max(1),
        );
        let map = AxisMap {
            start: 0.0,
            step: 2.0,
        };
        resample(self, w, h, map, map)
    }

    /// The top-left `width x height` part of the plane (sizes clamped to the plane's).
    pub(crate) fn crop(&self, width: usize, height: usize) -> Plane {
        let (width, height) = (width.min(self.width), height.min(self.height));
        let data = self
            .data
            .chunks_exact(self.width.max(1))
            .take(height)
            .flat_map(|row| row.iter().take(width).copied())
            .collect();
        Plane {
            width,
            height,
            data,
        }
    }

    /// Summed-area tables of the values and their squares, `(width + 1) x (height + 1)`,
    /// in `f64`.
    pub(crate) fn integrals(&self) -> (Vec<f64>, Vec<f64>) {
        let stride = self.width + 1;
        let mut sum = vec![0.0f64; stride * (self.height + 1)];
        let mut squares = sum.clone();
        for (y, row) in self.data.chunks_exact(self.width.max(1)).enumerate() {
            let (mut run, mut run2) = (0.0f64, 0.0f64);
            for (x, &v) in row.iter().enumerate() {
                run += f64::from(v);
                run2 += f64::from(v) * f64::from(v);
                let above = y * stride + x + 1;
                let here = above + stride;
                let (a, a2) = (
                    sum.get(above).copied().unwrap_or(0.0),
                    squares.get(above).copied().unwrap_or(0.0),
                );
                if let (Some(s), Some(s2)) = (sum.get_mut(here), squares.get_mut(here)) {
                    *s = a + run;
                    *s2 = a2 + run2;
                }
            }
        }
        (sum, squares)
    }
}

/// What a plane made from RGBA8 pixels holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Channel {
    /// `R + G + B` (0 to 765).
    Straight,
    /// `R + G + B` multiplied by `alpha / 255`.
    Premultiplied,
    /// `alpha / 255` (the pixel's coverage, 0 to 1).
    Coverage,
    /// `R + G + B` where the pixel is opaque (alpha at least [`OPAQUE_ALPHA_MIN`]), else 0.
    OpaqueGrey,
    /// 1 where the pixel is opaque (alpha at least [`OPAQUE_ALPHA_MIN`]), else 0.
    Opaque,
}

/// Least alpha of a pixel [`Channel::Opaque`] counts: a pixel drawn over a background shows
/// `a tex + (1 - a) bg`, which only near full opacity is the texture's own colour.
pub(crate) const OPAQUE_ALPHA_MIN: u8 = 250;

impl From<bool> for Channel {
    /// `true`: [`Channel::Premultiplied`], `false`: [`Channel::Straight`].
    fn from(premultiply: bool) -> Self {
        if premultiply {
            Self::Premultiplied
        } else {
            Self::Straight
        }
    }
}

/// One pixel's value on a [`Channel`].
fn pixel(p: &[u8], channel: Channel) -> f32 {
    match *p {
        [r, g, b, a] => {
            let s = f32::from(r) + f32::from(g) + f32::from(b);
            match channel {
                Channel::Straight => s,
                Channel::Premultiplied => s * f32::from(a) / 255.0,
                Channel::Coverage => f32::from(a) / 255.0,
                Channel::OpaqueGrey => {
                    if a >= OPAQUE_ALPHA_MIN {
                        s
                    } else {
                        0.0
                    }
                }
                Channel::Opaque => {
                    if a >= OPAQUE_ALPHA_MIN {
                        1.0
                    } else {
                        0.0
                    }
                }
            }
        }
        _ => 0.0,
    }
}

/// `R + G + B` of straight-alpha RGBA8 pixels (0 to 765), multiplied by `alpha / 255`
/// when premultiplied (or the coverage, see [`Channel`]), as a plane.
pub(crate) fn luma(width: usize, height: usize, rgba: &[u8], channel: impl Into<Channel>) -> Plane {
    let channel = channel.into();
    let data = rgba
        .chunks_exact(4)
        .take(width * height)
        .map(|p| pixel(p, channel))
        .collect();
    Plane {
        width,
        height,
        data,
    }
}

/// Whether any pixel of straight-alpha RGBA8 is below full opacity.
pub(crate) fn has_transparency(rgba: &[u8]) -> bool {
    rgba.chunks_exact(4)
        .any(|p| p.get(3).is_some_and(|&a| a < 255))
}

/// Whether the pixel at `index` is visible (alpha >= 8).
pub(crate) fn visible(rgba: &[u8], index: usize) -> bool {
    rgba.get(index * 4 + 3)
        .is_some_and(|&a| a >= VISIBLE_ALPHA_MIN)
}

/// How one axis of the output maps onto the source: output edge `i` is at source edge
/// coordinate `start + i * step` (so `step` is source pixels per output pixel).
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct AxisMap {
    pub(crate) start: f64,
    pub(crate) step: f64,
}

/// Taps of one output position: the first source index and its weights (summing to 1).
struct Taps {
    first: usize,
    weights: Vec<f32>,
}

/// Triangle-filter taps for `count` outputs over a source axis of `len` pixels, the filter
/// `support` source pixels wide on each side (at least 1).
fn taps(len: usize, count: usize, map: AxisMap, support: f64) -> Vec<Taps> {
    let support = support.abs().max(1.0);
    let last = len.saturating_sub(1) as f64;
    (0..count)
        .map(|i| {
            let centre = map.start + (i as f64 + 0.5) * map.step - 0.5;
            let lo = (centre - support).ceil().clamp(0.0, last) as usize;
            let hi = (centre + support).floor().clamp(0.0, last) as usize;
            let mut weights: Vec<f32> = (lo..=hi)
                .map(|j| (1.0 - (j as f64 - centre).abs() / support).max(0.0) as f32)
                .collect();
            let total: f32 = weights.iter().sum();
            if total > 0.0 {
                weights.iter_mut().for_each(|w| *w /= total);
            } else {
                // Entirely outside the source: repeat the nearest edge pixel.
                weights = vec![1.0];
                let nearest = centre.round().clamp(0.0, last) as usize;
                return Taps {
                    first: nearest,
                    weights,
                };
            }
            Taps { first: lo, weights }
        })
        .collect()
}

/// The source pixels `[lo, hi)` the filter taps of outputs `first..end` of one axis reach
/// (as [`resample_support`] computes them: `support` source pixels each side, at least 1,
/// clamped to a source of `len` pixels). Lets a caller resample a band of the output from
/// only the band of the source it needs, with the same taps as the whole.
pub(crate) fn reach(
    len: usize,
    first: usize,
    end: usize,
    map: AxisMap,
    support: f64,
) -> (usize, usize) {
    if len == 0 || end <= first {
        return (0, 0);
    }
    let support = support.abs().max(1.0);
    let last = (len - 1) as f64;
    let centre = |i: usize| map.start + (i as f64 + 0.5) * map.step - 0.5;
    let (a, b) = (centre(first), centre(end - 1));
    let (lo_c, hi_c) = if a <= b { (a, b) } else { (b, a) };
    // One pixel of slack each side covers rounding of the shifted coordinates; its taps
    // weigh nothing.
    let lo = ((lo_c - support).ceil() - 1.0).clamp(0.0, last) as usize;
    let hi = ((hi_c + support).floor() + 1.0).clamp(0.0, last) as usize;
    (lo, hi + 1)
}

/// The `R + G + B` plane (see [`luma`]) of columns `cols` and rows `rows` of a straight-alpha
/// RGBA8 image `width` pixels wide.
pub(crate) fn luma_window(
    width: usize,
    rgba: &[u8],
    cols: (usize, usize),
    rows: (usize, usize),
    channel: impl Into<Channel>,
) -> Plane {
    let channel = channel.into();
    let (w, h) = (cols.1.saturating_sub(cols.0), rows.1.saturating_sub(rows.0));
    let mut data = Vec::with_capacity(w * h);
    for y in rows.0..rows.1 {
        let row = rgba
            .get((y * width + cols.0) * 4..(y * width + cols.1) * 4)
            .unwrap_or(&[]);
        data.extend(row.chunks_exact(4).map(|p| pixel(p, channel)));
    }
    data.resize(w * h, 0.0);
    Plane {
        width: w,
        height: h,
        data,
    }
}

/// Rows `rows` of [`resample_support`] of the `R + G + B` plane of a `width x height`
/// straight-alpha RGBA8 image onto a grid `out_width` wide, converting only the source
/// window those rows reach (equal to resampling the whole plane, without holding it).
pub(crate) fn resample_rgba_rows(
    (width, height): (usize, usize),
    rgba: &[u8],
    channel: impl Into<Channel>,
    (out_width, rows): (usize, (usize, usize)),
    (x, y): (AxisMap, AxisMap),
    support: (f64, f64),
) -> Plane {
    let cols = reach(width, 0, out_width, x, support.0);
    let src_rows = reach(height, rows.0, rows.1, y, support.1);
    let window = luma_window(width, rgba, cols, src_rows, channel);
    let x = AxisMap {
        start: x.start - cols.0 as f64,
        step: x.step,
    };
    let y = AxisMap {
        start: y.start + rows.0 as f64 * y.step - src_rows.0 as f64,
        step: y.step,
    };
    resample_support(
        &window,
        out_width,
        rows.1.saturating_sub(rows.0),
        x,
        y,
        support,
    )
}

/// Resamples `src` onto a `width x height` grid (see [`AxisMap`]).
pub(crate) fn resample(src: &Plane, width: usize, height: usize, x: AxisMap, y: AxisMap) -> Plane {
    resample_support(src, width, height, x, y, (x.step, y.step))
}

/// [`resample`] with the filter's half-width given per axis (source pixels), for sampling
/// a sparse lattice of a finer grid.
pub(crate) fn resample_support(
    src: &Plane,
    width: usize,
    height: usize,
    x: AxisMap,
    y: AxisMap,
    support: (f64, f64),
) -> Plane {
    if src.width == 0 || src.height == 0 || width == 0 || height == 0 {
        return Plane::new(width, height);
    }
    let columns = taps(src.width, width, x, support.0);
    let rows = taps(src.height, height, y, support.1);
    // Horizontal pass over only the source rows the vertical taps touch.
    let first_row = rows.iter().map(|t| t.first).min().unwrap_or(0);
    let last_row = rows
        .iter()
        .map(|t| t.first + t.weights.len())
        .max()
        .unwrap_or(0)
        .min(src.height);
    let mut across = Plane::new(width, last_row.saturating_sub(first_row));
    for (row, out) in src
        .data
        .chunks_exact(src.width)
        .skip(first_row)
        .zip(across.data.chunks_exact_mut(width))
    {
        for (slot, tap) in out.iter_mut().zip(&columns) {
            let source = row.get(tap.first..).unwrap_or(&[]);
            *slot = tap.weights.iter().zip(source).map(|(w, v)| w * v).sum();
        }
    }
    let mut out = Plane::new(width, height);
    for (out_row, tap) in out.data.chunks_exact_mut(width).zip(&rows) {
        for (k, w) in tap.weights.iter().enumerate() {
            let start = (tap.first + k - first_row) * width;
            if let Some(source) = across.data.get(start..start + width) {
                for (o, v) in out_row.iter_mut().zip(source) {
                    *o += w * v;
                }
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ramp(w: usize, h: usize) -> Plane {
        let data = (0..w * h)
            .map(|i| (i % w) as f32 * 2.0 + (i / w) as f32)
            .collect();
        Plane {
            width: w,
            height: h,
            data,
        }
    }

    #[test]
    fn identity_resampling_keeps_the_plane() {
        let p = ramp(7, 5);
        let same = resample(
            &p,
            7,
            5,
            AxisMap {
                start: 0.0,
                step: 1.0,
            },
            AxisMap {
                start: 0.0,
                step: 1.0,
            },
        );
        for (a, b) in p.data.iter().zip(&same.data) {
            assert!((a - b).abs() < 1e-4);
        }
    }

    #[test]
    fn a_linear_ramp_stays_linear_when_shrunk_or_enlarged() {
        let p = ramp(64, 40);
        // Halving: output pixel i is centred on source 2i + 0.5.
        let half = p.half();
        assert_eq!((half.width, half.height), (32, 20));
        // Interior pixels (the edges repeat, so they bend).
        assert!((half.at(5, 5) - ((2.0 * 5.0 + 0.5) * 2.0 + (2.0 * 5.0 + 0.5))).abs() < 1e-3);
        // Enlarging by 1.5 with an offset of 3 source pixels.
        let big = resample(
            &p,
            40,
            20,
            AxisMap {
                start: 3.0,
                step: 1.0 / 1.5,
            },
            AxisMap {
                start: 0.0,
                step: 1.0,
            },
        );
        let expect_x = |i: f64| 3.0 + (i + 0.5) / 1.5 - 0.5;
        assert!((f64::from(big.at(10, 7)) - (expect_x(10.0) * 2.0 + 7.0)).abs() < 1e-3);
        let (v, gx, gy) = p.sample_with_gradient(3.25, 2.5);
        assert!(
            (f64::from(v) - (3.25 * 2.0 + 2.5)).abs() < 1e-4
                && (gx - 2.0).abs() < 1e-5
                && (gy - 1.0).abs() < 1e-5
        );
    }

    #[test]
    fn luma_and_visibility() {
        let rgba = [10, 20, 30, 255, 100, 100, 100, 0, 255, 255, 255, 128];
        let straight = luma(3, 1, &rgba, false);
        assert_eq!(straight.data, vec![60.0, 300.0, 765.0]);
        let pre = luma(3, 1, &rgba, true);
        assert_eq!(pre.data[1], 0.0);
        assert!((pre.data[2] - 765.0 * 128.0 / 255.0).abs() < 1e-3);
        assert!(has_transparency(&rgba) && !has_transparency(&rgba[..4]));
        assert!(visible(&rgba, 0) && !visible(&rgba, 1) && !visible(&rgba, 5));
    }

    #[test]
    fn a_band_resampled_from_the_rgba_rows_it_reaches_equals_the_whole() {
        let (w, h) = (97usize, 83usize);
        let rgba: Vec<u8> = (0..w * h)
            .flat_map(|i| {
                [
                    (i * 13 % 256) as u8,
                    (i * 7 % 253) as u8,
                    (i / w) as u8,
                    255,
                ]
            })
            .collect();
        let whole_plane = luma(w, h, &rgba, false);
        for (step, start) in [
            (1.0 / 0.9, 3.7),
            (0.5, -1.25),
            (2.0, 0.0),
            (1.0 / 1.7, 10.5),
        ] {
            let map = AxisMap { start, step };
            let (ow, oh) = (
                ((w as f64 - start.max(0.0)) / step) as usize,
                ((h as f64 - start.max(0.0)) / step) as usize,
            );
            let whole = resample(&whole_plane, ow, oh, map, map);
            for (first, end) in [(0, 5), (5, 17), (oh - 9, oh)] {
                let band = resample_rgba_rows(
                    (w, h),
                    &rgba,
                    false,
                    (ow, (first, end)),
                    (map, map),
                    (step, step),
                );
                let (lo, hi) = reach(h, first, end, map, step);
                assert!(hi - lo < h, "a band reads only part of the source");
                for (k, v) in band.data.iter().enumerate() {
                    let expected = whole.data[first * ow + k];
                    assert!(
                        (v - expected).abs() < 1e-2,
                        "step {step}: {v} vs {expected} at {k}"
                    );
                }
            }
        }
    }
}

//! Grey image pyramids for registration (docs/watermark.md section 11.2).

use crate::plane::{luma, resample_rgba_rows, resample_support, AxisMap, Channel, Plane};
use crate::register::MAX_POINTS;

/// Textures of at least this many pixels (2048 x 2048) are refined down to half resolution
/// only: there a leak keeping a quarter of the texture still offers [`MAX_POINTS`] sample
/// points, which pin the parameters far below a full-resolution pixel (a crop keeping 10 %,
/// the least [`crate::MIN_CROP_AREA`] allows, offers 40 % of them), and the full-resolution
/// grey plane (the largest buffer and the slowest level) is never built. Fixed at the value
/// it had when the least crop was a quarter, so memory stays as it was.
pub(crate) const HALF_LEVEL_PIXELS: usize = MAX_POINTS * 4 * 4;
/// Texture rows converted at a time when building a pyramid from RGBA.
const BAND_ROWS: usize = 256;

/// Grey pyramid of one image: level `k` is reduced by `2^k`.
pub(crate) struct Pyramid {
    pub(crate) levels: Vec<Plane>,
}

impl Pyramid {
    /// Builds levels until both sides are at most `side` pixels.
    pub(crate) fn new(base: Plane, side: usize) -> Self {
        let mut levels = vec![base];
        while let Some(last) = levels.last() {
            if last.width.max(last.height) <= side || last.width.min(last.height) <= 1 {
                break;
            }
            let next = last.half();
            levels.push(next);
        }
        Self { levels }
    }

    /// The pyramid of a `width x height` straight-alpha RGBA8 texture (grey `R + G + B`,
    /// premultiplied by alpha when `premultiply`), down to `side`. From
    /// [`HALF_LEVEL_PIXELS`] pixels on, level 0 keeps only its size and level 1 is made
    /// straight from the RGBA, band by band (see [`Pyramid::has`]).
    pub(crate) fn of_texture(
        width: usize,
        height: usize,
        rgba: &[u8],
        channel: impl Into<Channel>,
        side: usize,
    ) -> Self {
        let channel = channel.into();
        if width.saturating_mul(height) < HALF_LEVEL_PIXELS || width < 2 || height < 2 {
            return Self::new(luma(width, height, rgba, channel), side);
        }
        let (hw, hh) = (width.div_ceil(2), height.div_ceil(2));
        let map = AxisMap {
            start: 0.0,
            step: 2.0,
        };
        let mut data = Vec::with_capacity(hw * hh);
        let mut first = 0;
        while first < hh {
            let end = (first + BAND_ROWS).min(hh);
            let band = resample_rgba_rows(
                (width, height),
                rgba,
                channel,
                (hw, (first, end)),
                (map, map),
                (2.0, 2.0),
            );
            data.extend_from_slice(&band.data);
            first = end;
        }
        let mut pyramid = Self::new(
            Plane {
                width: hw,
                height: hh,
                data,
            },
            side,
        );
        pyramid.levels.insert(
            0,
            Plane {
                width,
                height,
                data: Vec::new(),
            },
        );
        pyramid
    }

    /// Whether level `k` holds its pixels (level 0 of a large texture holds only its size).
    pub(crate) fn has(&self, k: usize) -> bool {
        self.levels
            .get(k)
            .is_some_and(|l| l.data.len() == l.width * l.height && !l.data.is_empty())
    }

    /// The finest level reduced by at most `factor`, and its reduction.
    pub(crate) fn at_most(&self, factor: f64) -> (&Plane, f64) {
        let mut chosen = (self.levels.first(), 1.0);
        let mut reduction = 1.0;
        for level in &self.levels {
            if reduction <= factor * (1.0 + 1e-9) {
                chosen = (Some(level), reduction);
            }
            reduction *= 2.0;
        }
        (chosen.0.unwrap_or(&EMPTY), chosen.1)
    }

    /// A `width x height` grid whose pixel `(i, j)` covers edges `[start + i*step, ...)` of
    /// level 0 on both axes.
    pub(crate) fn grid(
        &self,
        width: usize,
        height: usize,
        start: (f64, f64),
        step: (f64, f64),
    ) -> Plane {
        self.lattice((width, height), start, step, step)
    }

    /// Like [`Pyramid::grid`], with the filter of a grid of pixel size `support` (level-0
    /// pixels) at points `step` apart: a sparse sampling of a finer grid.
    pub(crate) fn lattice(
        &self,
        (width, height): (usize, usize),
        start: (f64, f64),
        step: (f64, f64),
        support: (f64, f64),
    ) -> Plane {
        let (level, reduction) = self.at_most(support.0.min(support.1));
        let x = AxisMap {
            start: start.0 / reduction,
            step: step.0 / reduction,
        };
        let y = AxisMap {
            start: start.1 / reduction,
            step: step.1 / reduction,
        };
        resample_support(
            level,
            width,
            height,
            x,
            y,
            (support.0 / reduction, support.1 / reduction),
        )
    }
}

static EMPTY: Plane = Plane {
    width: 0,
    height: 0,
    data: Vec::new(),
};

#[cfg(test)]
mod tests {
    use super::*;

    fn texture(w: usize, h: usize) -> Vec<u8> {
        (0..w * h)
            .flat_map(|i| {
                [
                    (i * 7 % 251) as u8,
                    (i / w * 3 % 256) as u8,
                    (i % w) as u8,
                    if i % 97 == 0 { 0 } else { 255 },
                ]
            })
            .collect()
    }

    #[test]
    fn a_large_texture_keeps_no_full_resolution_plane_and_the_same_levels() {
        let side = 2048;
        assert_eq!(side * side, HALF_LEVEL_PIXELS);
        let rgba = texture(side, side);
        let banded = Pyramid::of_texture(side, side, &rgba, true, 128);
        let whole = Pyramid::new(luma(side, side, &rgba, true), 128);
        assert!(!banded.has(0) && banded.has(1));
        let level0 = banded.levels.first().unwrap();
        assert_eq!(
            (level0.width, level0.height, level0.data.len()),
            (side, side, 0)
        );
        assert_eq!(banded.levels.len(), whole.levels.len());
        for (a, b) in banded.levels.iter().zip(&whole.levels).skip(1) {
            assert_eq!((a.width, a.height), (b.width, b.height));
            assert!(a
                .data
                .iter()
                .zip(&b.data)
                .all(|(x, y)| (x - y).abs() < 1e-2));
        }
        // One pixel short of the bound, the full-resolution level is kept.
        let small = Pyramid::of_texture(side - 1, side, &texture(side - 1, side), false, 128);
        assert!(small.has(0));
    }
}

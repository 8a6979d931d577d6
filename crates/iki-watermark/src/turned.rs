//! Reading through a turned registration, or a leak composited over a background
//! (docs/watermark.md section 11.3). The similarity transform is split in two: a separable
//! resampling between the texture's grid and a grid with the texture's axes at the leak's
//! scale (the "straight" grid, with the antialiasing filter of [`crate::plane`]), and a
//! bilinear turn by the registered angle between that grid and the leak's own, which
//! changes no scale. The planes held are the size of the leak (plus the turn's margin);
//! the texture side is done in bands of rows, never whole.
//!
//! When the registration was made over a background ([`Registration::over_background`]:
//! the texture has transparency and the leak has none), the texture's forward image is
//! its premultiplied grey over its coverage, and the residual is set to 0 wherever the
//! coverage is below [`COVERED`]: the background the texture was drawn over, whatever it
//! is, carries no mark and never enters the read.

use crate::detect::{detect_rows_with, Detection, Filter, INVISIBLE, RESIDUAL_CLIP};
use crate::embed::VISIBLE_ALPHA_MIN;
use crate::informed::{Suspect, BAND_ROWS, BIAS, FIXED_POINT};
use crate::key::WatermarkKey;
use crate::plane::{resample_rgba_rows, resample_support, visible, AxisMap, Channel, Plane};
use crate::register::Registration;
use crate::PIXEL_BYTES;

/// Least coverage (alpha / 255, after resampling) for a leak pixel to count.
const COVERED: f32 = 0.98;

/// Below this scale (leak pixels per texture pixel) the residual is read through the
/// matched filter ([`Filter::Raw`]) instead of the Laplacian: back on the texture's grid the
/// mark is blurred over `1 / scale` pixels, and the Laplacian of a blurred mark is small.
pub(crate) const RAW_BELOW: f64 = 0.6;

/// The clip of the matched filter, in fixed-point steps (a sixteenth of the Laplacian's
/// range: the blurred mark is a few levels, JPEG and misregistration give tens).
const RAW_CLIP: i32 = RESIDUAL_CLIP * FIXED_POINT / 2;

/// The straight grid: its pixel `(i, j)` covers leak-centred, unturned coordinates
/// `[p0 + i, p0 + i + 1) x [q0 + j, ...)`.
struct Straight {
    width: usize,
    height: usize,
    p0: f64,
    q0: f64,
}

/// Reads `suspect` through `reg` on the `width x height` original (see the module
/// documentation).
pub(crate) fn read_turned(
    key: &WatermarkKey,
    (width, height): (usize, u32),
    original: &[u8],
    suspect: &Suspect,
    reg: &Registration,
) -> Detection {
    let (lw, lh) = (suspect.width as usize, suspect.height as usize);
    let (lwf, lhf) = (lw as f64, lh as f64);
    let composite = reg.over_background;
    let (sin, cos) = reg.angle.to_radians().sin_cos();
    let (ix, iy) = (1.0 / reg.scale_x, 1.0 / reg.scale_y);
    let (cx, cy) = reg.centre((lwf, lhf));
    // Whole-pixel margins keep the straight grid on the leak's grid when the turn is 0.
    let margin = |a: f64, b: f64, own: f64| {
        ((a * cos.abs() + b * sin.abs() - own).max(0.0).ceil() as usize) + 1
    };
    let (mx, my) = (
        margin(lwf / 2.0, lhf / 2.0, lwf / 2.0),
        margin(lhf / 2.0, lwf / 2.0, lhf / 2.0),
    );
    let grid = Straight {
        width: lw + 2 * mx,
        height: lh + 2 * my,
        p0: -lwf / 2.0 - mx as f64,
        q0: -lhf / 2.0 - my as f64,
    };
    // The texture on the straight grid, band by band.
    let sx = AxisMap {
        start: cx + ix * grid.p0,
        step: ix,
    };
    let sy = AxisMap {
        start: cy + iy * grid.q0,
        step: iy,
    };
    let texture = (width, height as usize);
    let forward_of = |channel: Channel| {
        let mut data = Vec::with_capacity(grid.width * grid.height);
        let mut first = 0;
        while first < grid.height {
            let end = (first + BAND_ROWS).min(grid.height);
            data.extend_from_slice(
                &resample_rgba_rows(
                    texture,
                    original,
                    channel,
                    (grid.width, (first, end)),
                    (sx, sy),
                    (ix, iy),
                )
                .data,
            );
            first = end;
        }
        Plane {
            width: grid.width,
            height: grid.height,
            data,
        }
    };
    let forward = forward_of(Channel::from(composite));
    let cover = composite.then(|| forward_of(Channel::Coverage));
    // The residual on the leak's grid: the leak less the texture turned onto it.
    let mut residual = Plane::new(lw, lh);
    for (v, (out, row)) in residual
        .data
        .chunks_exact_mut(lw)
        .zip(suspect.rgba.chunks_exact(lw * PIXEL_BYTES))
        .enumerate()
    {
        let vv = v as f64 + 0.5 - lhf / 2.0;
        for (u, (slot, px)) in out
            .iter_mut()
            .zip(row.chunks_exact(PIXEL_BYTES))
            .enumerate()
        {
            let uu = u as f64 + 0.5 - lwf / 2.0;
            let (x, y) = (
                uu * cos - vv * sin - grid.p0 - 0.5,
                uu * sin + vv * cos - grid.q0 - 0.5,
            );
            let leak: f32 = px.iter().take(3).map(|&c| f32::from(c)).sum();
            let f = forward.sample_with_gradient(x, y).0;
            *slot = match &cover {
                None => leak - f,
                Some(c) => {
                    let m = c.sample_with_gradient(x, y).0;
                    if m >= COVERED {
                        leak - f / m
                    } else {
                        0.0
                    }
                }
            };
        }
    }
    drop(forward);
    drop(cover);
    // The residual turned back onto the straight grid.
    let mut back = Plane::new(grid.width, grid.height);
    for (j, out) in back.data.chunks_exact_mut(grid.width).enumerate() {
        let q = grid.q0 + j as f64 + 0.5;
        for (i, slot) in out.iter_mut().enumerate() {
            let p = grid.p0 + i as f64 + 0.5;
            let (u, v) = (
                p * cos + q * sin + lwf / 2.0 - 0.5,
                -p * sin + q * cos + lhf / 2.0 - 0.5,
            );
            *slot = residual.sample_with_gradient(u, v).0;
        }
    }
    drop(residual);
    // And onto the texture's grid, band by band, for the detector.
    let region = reg.region;
    let (rx, ry, rw, rh) = (
        region.x as usize,
        region.y as usize,
        region.width as usize,
        region.height as usize,
    );
    let bx = AxisMap {
        start: (rx as f64 - cx) * reg.scale_x - grid.p0,
        step: reg.scale_x,
    };
    let by = AxisMap {
        start: (ry as f64 - cy) * reg.scale_y - grid.q0,
        step: reg.scale_y,
    };
    // Whether texture pixel (x, y) falls inside the leak, a pixel clear of its edges, on a
    // pixel the leak shows.
    let inside = |x: usize, y: usize| -> bool {
        let (p, q) = (
            (x as f64 + 0.5 - cx) * reg.scale_x,
            (y as f64 + 0.5 - cy) * reg.scale_y,
        );
        let (u, v) = (
            p * cos + q * sin + lwf / 2.0,
            -p * sin + q * cos + lhf / 2.0,
        );
        if u < 1.0 || v < 1.0 || u > lwf - 1.0 || v > lhf - 1.0 {
            return false;
        }
        !suspect.transparent || visible(&suspect.rgba, v as usize * lw + u as usize)
    };
    let mut band = Plane::default();
    let mut band_start = 0usize;
    let scale = FIXED_POINT as f32;
    let rows = region.y..region.y.saturating_add(region.height);
    let (filter, clip) = if reg.scale_x.max(reg.scale_y) < RAW_BELOW {
        (Filter::Raw { bias: BIAS }, RAW_CLIP)
    } else {
        (Filter::Laplacian, RESIDUAL_CLIP * FIXED_POINT)
    };
    detect_rows_with(key, width, rows, clip, filter, |y, out| {
        let y = y as usize;
        let local = y - ry;
        if local >= band_start + band.height || local < band_start {
            band_start = local;
            let end = (local + BAND_ROWS).min(rh);
            let y_map = AxisMap {
                start: by.start + local as f64 * by.step,
                step: by.step,
            };
            band = resample_support(
                &back,
                rw,
                end - local,
                bx,
                y_map,
                (reg.scale_x, reg.scale_y),
            );
        }
        let texture_row = original
            .get(y * width * PIXEL_BYTES..(y + 1) * width * PIXEL_BYTES)
            .unwrap_or(&[]);
        let at = (local - band_start) * rw;
        let band_row = band.data.get(at..at + rw).unwrap_or(&[]);
        for (k, v) in band_row.iter().enumerate() {
            let x = rx + k;
            let shown = texture_row
                .get(x * PIXEL_BYTES + 3)
                .is_some_and(|&a| a >= VISIBLE_ALPHA_MIN);
            if let Some(slot) = out.get_mut(x) {
                *slot = if shown && inside(x, y) {
                    BIAS + (v * scale).round() as i32
                } else {
                    INVISIBLE
                };
            }
        }
    })
}

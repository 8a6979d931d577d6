//! Blind reading (SPEC "Watermark", docs/watermark.md sections 6 to 8).
//!
//! 1. Per pixel, `s = R + G + B`, only where the suspect's alpha is >= 8.
//! 2. High-pass: the 3x3 (8-neighbour) Laplacian over visible neighbours only,
//!    `h = n * s(x, y) - sum of the n visible neighbours' s`, clipped to
//!    `+-RESIDUAL_CLIP`; 0 where the pixel is invisible or has no visible
//!    neighbour. Flat colour and linear gradients give 0; a sprite's
//!    transparent surroundings never enter the sum.
//! 3. For each payload bit i, over the pixels carrying it:
//!    `C_i = sum chip * h`, `Q_i = sum h^2`, and `z_i = C_i / sqrt(Q_i)`.
//! 4. Bit i reads 1 when `z_i > 0`. The CRC-16 must match, as read or after
//!    flipping some of the `CORRECTABLE_BITS` weakest bits; the overall
//!    confidence must reach `CONFIDENCE_MIN`, and no bit may be far weaker
//!    than the strong half (`BIT_FLOOR_RATIO`, `BIT_FLOOR_SLACK`).
//!
//! Why `z_i` is a calibrated score: with a wrong key or an unmarked image the
//! chips are independent fair signs, so given the image `C_i` is a Rademacher
//! sum with variance exactly `Q_i`; by Hoeffding `P(|z_i| >= t) <= 2 exp(-t^2/2)`
//! whatever the texture. Flipping the chips of bit i flips `z_i` and keeps
//! `|z_i|`, so under that null the decoded bits are uniform and independent of
//! the confidence: a false accept needs both a CRC coincidence (2^-16 for each
//! of the 8 words the correction tries) and a confidence tail event
//! (docs/watermark.md section 7.1 bounds it).

use crate::embed::VISIBLE_ALPHA_MIN;
use crate::key::{RowStream, WatermarkKey};
use crate::payload::{decode_correcting, CORRECTABLE_BITS, PAYLOAD_BITS};

/// High-pass residuals are clipped to this magnitude. The mark alone gives
/// `8 * 6` at the centre plus up to `8 * 6` from the neighbours' own marks
/// (s moves by 6); anti-aliased edges give hundreds. Clipping at a quarter of
/// the mark's range makes the correlator nearly a sign detector, which measured
/// best on the fixtures (docs/watermark.md section 6).
pub const RESIDUAL_CLIP: i32 = 24;

/// Overall confidence a read must reach to be `found`.
pub const CONFIDENCE_MIN: f64 = 10.0;

/// Every bit's `|z_i|` must reach `BIT_FLOOR_RATIO` times the mean `|z|` of
/// the 40 strongest bits, minus `BIT_FLOOR_SLACK`.
///
/// On an honest read every bit sees the whole texture (the per-row
/// permutation spreads each bit evenly), so all `|z_i|` sit near one mean `m`
/// with unit spread, and a bit below `m / 2 - 3` is a `3 + m / 2` sigma event:
/// under 1e-9 per read once the floor is positive at all (`m > 6`), and the
/// floor is vacuous on weak reads (small textures), where it would cost most.
/// It rejects an average of two differently licensed copies: the bits the two
/// ids share read at full strength and the others near zero, which could
/// otherwise decode to a third id with a valid CRC once in 2^16 collusions.
pub const BIT_FLOOR_RATIO: f64 = 0.5;

/// See [`BIT_FLOOR_RATIO`].
pub const BIT_FLOOR_SLACK: f64 = 3.0;

/// Marks an invisible pixel (or a position outside the image) in the sum rows.
pub(crate) const INVISIBLE: i32 = -1;

/// The result of a read.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
#[must_use]
pub struct Detection {
    /// The license id, when the CRC matches and both confidences pass.
    pub found: Option<u64>,
    /// Overall confidence: `(sum |z_i| - 80 sqrt(2/pi)) / sqrt(80 (1 - 2/pi))`,
    /// about N(0, 1) on unmarked images, in the hundreds or more on marked ones.
    pub confidence: f64,
    /// `z_i` per payload bit, in payload order; the sign is the bit read.
    pub bit_confidence: [f64; PAYLOAD_BITS],
    /// The smallest `|z_i|`.
    pub weakest_bit: f64,
    /// Whether the 80 bits read, after flipping at most [`CORRECTABLE_BITS`] of
    /// the weakest, have a valid CRC-16 (even if a confidence failed).
    pub crc_ok: bool,
    /// How many of the weakest bits were flipped to reach the valid CRC (0 when
    /// the bits were read right, or when no CRC was valid).
    pub corrected_bits: u32,
    /// Pixels with alpha >= 8 in the suspect image.
    pub visible_pixels: u64,
}

/// Per-bit sums over the whole image.
struct Sums {
    corr: [i64; PAYLOAD_BITS],
    energy: [i64; PAYLOAD_BITS],
    visible: u64,
}

/// Reads an image already validated by the caller (`width * height * 4` bytes).
pub(crate) fn detect_image(
    key: &WatermarkKey,
    width: usize,
    height: u32,
    rgba: &[u8],
) -> Detection {
    let mut rows = rgba.chunks_exact(width * 4);
    detect_rows(key, width, 0..height, RESIDUAL_CLIP, |_, out| {
        load_sums(rows.next(), out);
    })
}

/// The detector over rows of sums: `fill(y, out)` writes row `y`'s `R + G + B` (or any
/// plane in the same units times the factor by which `clip` was scaled) into `out`
/// (`width` values), [`INVISIBLE`] where a pixel does not count. Rows are asked for in
/// order, each once; rows outside `rows` are absent. Used by the blind read (sums of the
/// suspect's pixels, clip [`RESIDUAL_CLIP`]) and by the informed read (a fixed-point
/// residual on the texture's grid, docs/watermark.md section 11.3).
pub(crate) fn detect_rows(
    key: &WatermarkKey,
    width: usize,
    rows: core::ops::Range<u32>,
    clip: i32,
    fill: impl FnMut(u32, &mut [i32]),
) -> Detection {
    detect_rows_with(key, width, rows, clip, Filter::Laplacian, fill)
}

/// What the detector does to the rows before correlating them with the chips.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Filter {
    /// The clipped visible-neighbour Laplacian (step 2 of the module documentation).
    Laplacian,
    /// The values themselves less `bias`, clipped: the matched filter for a residual that
    /// holds no image content and whose mark was blurred by a reduction (docs/watermark.md
    /// section 11.3), where a Laplacian would remove most of the mark. The null argument is
    /// the same: any values independent of the key.
    Raw {
        /// Subtracted from every visible value first.
        bias: i32,
    },
}

/// [`detect_rows`] with the choice of [`Filter`].
pub(crate) fn detect_rows_with(
    key: &WatermarkKey,
    width: usize,
    rows: core::ops::Range<u32>,
    clip: i32,
    filter: Filter,
    mut fill: impl FnMut(u32, &mut [i32]),
) -> Detection {
    let mut stream = RowStream::new(key, width);
    let mut above = vec![INVISIBLE; width + 2];
    let mut current = vec![INVISIBLE; width + 2];
    let mut below = vec![INVISIBLE; width + 2];
    let mut residual = vec![0i32; width];
    let mut load = |y: u32, out: &mut [i32]| {
        out.fill(INVISIBLE);
        if rows.contains(&y) {
            if let Some(inner) = out.get_mut(1..=width) {
                fill(y, inner);
            }
        }
    };
    load(rows.start, &mut current);
    load(rows.start.saturating_add(1), &mut below);
    let mut sums = Sums {
        corr: [0; PAYLOAD_BITS],
        energy: [0; PAYLOAD_BITS],
        visible: 0,
    };
    for y in rows.clone() {
        sums.visible += match filter {
            Filter::Laplacian => high_pass(&above, &current, &below, &mut residual, clip),
            Filter::Raw { bias } => pass_through(&current, &mut residual, clip, bias),
        };
        stream.load(y);
        correlate_row(&residual, &stream.chips, &stream.perm, &mut sums);
        core::mem::swap(&mut above, &mut current);
        core::mem::swap(&mut current, &mut below);
        load(y.saturating_add(2), &mut below);
    }
    decide(&sums)
}

/// Fills `out` (`width` values) with `R + G + B` of visible pixels, `INVISIBLE` elsewhere.
fn load_sums(row: Option<&[u8]>, out: &mut [i32]) {
    let Some(row) = row else { return };
    for (slot, pixel) in out.iter_mut().zip(row.chunks_exact(4)) {
        if let [r, g, b, a] = *pixel {
            let s = i32::from(r) + i32::from(g) + i32::from(b);
            *slot = if a >= VISIBLE_ALPHA_MIN { s } else { INVISIBLE };
        }
    }
}

/// Writes the clipped visible-neighbour Laplacian of the middle row into `out`
/// and returns how many of its pixels are visible.
fn high_pass(above: &[i32], current: &[i32], below: &[i32], out: &mut [i32], clip: i32) -> u64 {
    let mut visible = 0u64;
    let columns = above
        .windows(3)
        .zip(current.windows(3))
        .zip(below.windows(3));
    for (((up, mid), down), slot) in columns.zip(out.iter_mut()) {
        if let ([a0, a1, a2], [left, centre, right], [b0, b1, b2]) = (up, mid, down) {
            let mut count = 0;
            let mut total = 0;
            for &v in [a0, a1, a2, left, right, b0, b1, b2] {
                let m = i32::from(v != INVISIBLE);
                count += m;
                total += v * m;
            }
            let is_visible = *centre != INVISIBLE;
            visible += u64::from(is_visible);
            *slot = (count * centre - total).clamp(-clip, clip) * i32::from(is_visible);
        }
    }
    visible
}

/// Writes the middle row's visible values less `bias`, clipped, into `out` (0 where
/// invisible) and returns how many are visible.
fn pass_through(current: &[i32], out: &mut [i32], clip: i32, bias: i32) -> u64 {
    let mut visible = 0u64;
    for (&v, slot) in current.iter().skip(1).zip(out.iter_mut()) {
        let is_visible = v != INVISIBLE;
        visible += u64::from(is_visible);
        *slot = if is_visible {
            (v - bias).clamp(-clip, clip)
        } else {
            0
        };
    }
    visible
}

/// Adds one row's chip-weighted residuals to the per-bit sums.
fn correlate_row(residual: &[i32], chips: &[u8], perm: &[u8; PAYLOAD_BITS], sums: &mut Sums) {
    let mut corr = [0i64; PAYLOAD_BITS];
    let mut energy = [0i64; PAYLOAD_BITS];
    for (period, period_chips) in residual
        .chunks(PAYLOAD_BITS)
        .zip(chips.chunks(PAYLOAD_BITS / 8))
    {
        let slots = corr.chunks_mut(8).zip(energy.chunks_mut(8));
        for ((group, &chip_bits), (corr8, energy8)) in period.chunks(8).zip(period_chips).zip(slots)
        {
            for (i, ((&h, c), e)) in group
                .iter()
                .zip(corr8.iter_mut())
                .zip(energy8.iter_mut())
                .enumerate()
            {
                let chip = i64::from((chip_bits >> i) & 1) * 2 - 1;
                let h = i64::from(h);
                *c += chip * h;
                *e += h * h;
            }
        }
    }
    for ((&bit, c), e) in perm.iter().zip(corr).zip(energy) {
        let bit = usize::from(bit);
        if let (Some(total_c), Some(total_e)) = (sums.corr.get_mut(bit), sums.energy.get_mut(bit)) {
            *total_c += c;
            *total_e += e;
        }
    }
}

/// Turns the sums into per-bit scores, the overall confidence and a verdict.
fn decide(sums: &Sums) -> Detection {
    let mut bit_confidence = [0.0f64; PAYLOAD_BITS];
    let mut bits = [false; PAYLOAD_BITS];
    for (((z, bit), &c), &e) in bit_confidence
        .iter_mut()
        .zip(bits.iter_mut())
        .zip(&sums.corr)
        .zip(&sums.energy)
    {
        *z = if e > 0 {
            c as f64 / (e as f64).sqrt()
        } else {
            0.0
        };
        *bit = *z > 0.0;
    }
    let n = PAYLOAD_BITS as f64;
    let half_normal_mean = (2.0 / core::f64::consts::PI).sqrt();
    let total: f64 = bit_confidence.iter().map(|z| z.abs()).sum();
    let confidence =
        (total - n * half_normal_mean) / (n * (1.0 - 2.0 / core::f64::consts::PI)).sqrt();
    let mut magnitudes = bit_confidence.map(f64::abs);
    magnitudes.sort_unstable_by(|a, b| b.total_cmp(a));
    let strong_half = PAYLOAD_BITS / 2;
    let strong_mean = magnitudes.iter().take(strong_half).sum::<f64>() / strong_half as f64;
    let weakest_bit = magnitudes.last().copied().unwrap_or(0.0);
    let balanced = weakest_bit >= BIT_FLOOR_RATIO * strong_mean - BIT_FLOOR_SLACK;
    let decoded = decode_correcting(&bits, &weakest_positions(&bit_confidence));
    let strong = confidence >= CONFIDENCE_MIN && balanced;
    Detection {
        found: decoded.filter(|_| strong).map(|(id, _)| id),
        confidence,
        bit_confidence,
        weakest_bit,
        crc_ok: decoded.is_some(),
        corrected_bits: decoded.map_or(0, |(_, flips)| flips),
        visible_pixels: sums.visible,
    }
}

/// The positions of the [`CORRECTABLE_BITS`] smallest `|z_i|` (ties to the
/// lower position, so a read is deterministic).
fn weakest_positions(bit_confidence: &[f64; PAYLOAD_BITS]) -> [usize; CORRECTABLE_BITS] {
    let mut order: [(f64, usize); PAYLOAD_BITS] = [(0.0, 0); PAYLOAD_BITS];
    for (i, (slot, z)) in order.iter_mut().zip(bit_confidence).enumerate() {
        *slot = (z.abs(), i);
    }
    order.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
    let mut weakest = [0; CORRECTABLE_BITS];
    for (w, (_, i)) in weakest.iter_mut().zip(order) {
        *w = i;
    }
    weakest
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn high_pass_ignores_invisible_neighbours_and_flat_colour() {
        let above = [INVISIBLE, 10, 10, 10, INVISIBLE];
        let current = [INVISIBLE, 10, 16, INVISIBLE, INVISIBLE];
        let below = [INVISIBLE, 40, 40, 40, INVISIBLE];
        let mut out = [99; 3];
        let visible = high_pass(&above, &current, &below, &mut out, RESIDUAL_CLIP);
        assert_eq!(visible, 2);
        // x=0: neighbours 10, 10, 16, 40, 40 -> 5*10 - 116 = -66, clipped.
        // x=1: neighbours 10, 10, 10, 10, 40, 40, 40 -> 7*16 - 160 = -48,
        // clipped. x=2 is invisible.
        assert_eq!(out, [-RESIDUAL_CLIP, -RESIDUAL_CLIP, 0]);
        let flat = [INVISIBLE, 30, 30, 30, INVISIBLE];
        let ramp = [INVISIBLE, 10, 20, 30, INVISIBLE];
        high_pass(&flat, &flat, &flat, &mut out, RESIDUAL_CLIP);
        assert_eq!(out, [0, 0, 0]);
        high_pass(&ramp, &ramp, &ramp, &mut out, RESIDUAL_CLIP);
        assert_eq!(out[1], 0, "a linear gradient has no residual");
        high_pass(
            &flat,
            &[INVISIBLE, 30, 35, 30, INVISIBLE],
            &flat,
            &mut out,
            RESIDUAL_CLIP,
        );
        assert_eq!(out, [-5, RESIDUAL_CLIP.min(8 * 5), -5]);
    }

    #[test]
    fn high_pass_clips_edges() {
        let row = [INVISIBLE, 0, 765, 0, INVISIBLE];
        let mut out = [0; 3];
        high_pass(
            &[INVISIBLE; 5],
            &row,
            &[INVISIBLE; 5],
            &mut out,
            RESIDUAL_CLIP,
        );
        assert_eq!(out, [-RESIDUAL_CLIP, RESIDUAL_CLIP, -RESIDUAL_CLIP]);
    }

    /// Sums whose bit signs spell `license_id`, bit i with `z_i = strength(i)`.
    fn sums_for(license_id: u64, strength: impl Fn(usize) -> f64) -> Sums {
        let mut sums = Sums {
            corr: [0; PAYLOAD_BITS],
            energy: [0; PAYLOAD_BITS],
            visible: 1,
        };
        for (i, bit) in crate::payload::payload_bits(license_id).iter().enumerate() {
            sums.energy[i] = 1_000_000;
            let c = (strength(i) * 1000.0).round() as i64;
            sums.corr[i] = if *bit { c } else { -c };
        }
        sums
    }

    #[test]
    fn homogeneous_reads_are_found_even_when_weak() {
        let d = decide(&sums_for(77, |_| 2.5));
        assert_eq!(d.found, Some(77));
        assert!(
            (d.confidence - (80.0 * 2.5 - 63.83) / 5.39).abs() < 0.05,
            "{}",
            d.confidence
        );
        assert_eq!(
            decide(&sums_for(77, |i| 100.0 + (i % 3) as f64)).found,
            Some(77)
        );
    }

    #[test]
    fn low_confidence_is_not_found_even_with_a_valid_crc() {
        let d = decide(&sums_for(77, |_| 0.9));
        assert!(d.crc_ok && d.confidence < CONFIDENCE_MIN);
        assert_eq!(d.found, None);
    }

    #[test]
    fn half_strong_half_silent_bits_are_rejected() {
        // What an average of two differently licensed copies looks like.
        let d = decide(&sums_for(77, |i| if i % 2 == 0 { 60.0 } else { 0.2 }));
        assert!(d.crc_ok && d.confidence > CONFIDENCE_MIN);
        assert_eq!(d.found, None);
        // One weak bit among strong ones is still fine while above the floor.
        let d = decide(&sums_for(77, |i| if i == 5 { 30.0 } else { 60.0 }));
        assert_eq!(d.found, Some(77));
    }

    #[test]
    fn wrong_bits_among_the_three_weakest_are_corrected() {
        // A JPEG-weakened read: strong bits, and bits 7, 40 and 70 read wrong
        // but with the smallest |z|.
        for wrong in [&[7][..], &[7, 70], &[7, 40, 70]] {
            let d = decide(&sums_for(77, |i| {
                if wrong.contains(&i) {
                    -0.4
                } else if [7, 40, 70].contains(&i) {
                    0.6
                } else {
                    3.0
                }
            }));
            assert_eq!(d.found, Some(77), "{wrong:?}");
            assert_eq!(d.corrected_bits as usize, wrong.len());
        }
        let d = decide(&sums_for(77, |_| 3.0));
        assert_eq!((d.found, d.corrected_bits), (Some(77), 0));
    }

    #[test]
    fn a_wrong_bit_stronger_than_the_three_weakest_is_not_corrected() {
        // Bit 12 reads wrong with |z| = 1, while three right bits are weaker.
        let d = decide(&sums_for(77, |i| match i {
            12 => -1.0,
            1..=3 => 0.5,
            _ => 3.0,
        }));
        assert_eq!(d.found, None);
        assert!(!d.crc_ok);
        assert_eq!(d.corrected_bits, 0);
    }

    #[test]
    fn no_signal_reads_zero_confidence_per_bit_and_not_found() {
        let sums = Sums {
            corr: [0; PAYLOAD_BITS],
            energy: [0; PAYLOAD_BITS],
            visible: 0,
        };
        let d = decide(&sums);
        assert_eq!(d.found, None);
        assert!(!d.crc_ok);
        assert!(d.confidence < 0.0);
        assert_eq!(d.weakest_bit, 0.0);
    }
}

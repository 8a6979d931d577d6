//! Soft-decision matching against issued licenses (docs/watermark.md section 12).
//!
//! A read keeps each payload bit's correlation `z_i` (`Detection::bit_confidence`). Instead of
//! decoding 80 hard bits and checking the CRC, the service scores every license it issued for
//! the master: `S_L = sum_i b_i(L) z_i`, `b_i(L) = +-1` the sign license `L` embeds in bit `i`
//! (80 signed terms per license). A license is named when the probability that any innocent
//! license scores as high, for the identify as a whole, is below a fixed bound.
//!
//! The bound is computed conditionally on the read `z`: an innocent license's id is a random
//! 64-bit value drawn independently of the leak, so its 80 signs are those of a uniformly
//! random payload (the id bits uniform, the CRC bits an affine function of them). Two Chernoff
//! bounds are taken and the larger kept, both decreasing in the score:
//! - `independent`: `inf_l exp(-l s) prod_i cosh(l z_i)`, the bound for one fixed license when
//!   the image carries no mark of it under this key (the chips are then fair independent
//!   signs, section 7.1);
//! - `code`: `min over a fixed grid of l of exp(-l s) E_L[exp(l S_L)]`, with the expectation
//!   over uniformly random ids computed exactly: a sum over the 2^64 ids run as a dynamic
//!   programme over the CRC's 16-bit linear state (64 steps of 65,536 states).
//!
//! The identify as a whole multiplies by the number of issued licenses and by the number of
//! reads scored (its `tests`), a union bound.

use crate::detect::{BIT_FLOOR_RATIO, BIT_FLOOR_SLACK, CONFIDENCE_MIN};
use crate::payload::{crc16, payload_bits, PAYLOAD_BITS};

/// A single license is named when its false-accusation probability for the identify as a
/// whole is at most this.
pub const NAME_SINGLE_MAX: f64 = 1e-9;

/// In a read recognised as a mix of several copies, each license whose false-accusation
/// probability for the identify as a whole is at most this is named as a colluder.
pub const NAME_COLLUDER_MAX: f64 = 1e-6;

/// A read is a mix when its overall confidence reaches [`CONFIDENCE_MIN`] and at least this
/// many bits fall below the balance floor of section 7.2 (`BIT_FLOOR_RATIO` times the mean
/// `|z|` of the 40 strongest bits, minus `BIT_FLOOR_SLACK`). On one honest copy a bit there is
/// a `3 + m / 2`-sigma event (under 1e-9 per read whenever the floor is positive, and the floor
/// is vacuous on weak reads); an average of two copies puts about 40 bits near 0, of four copies
/// 30. A mean of three copies leaves its 60 weaker bits at a third (exact) or half (rounded to
/// whole levels: +2, +2 and -2 average to +1) of the strength, above that floor: the second
/// test, [`MIX_SPLIT_BITS`], recognises those (section 12.3).
pub const MIX_MIN_WEAK_BITS: usize = 8;

/// The second test of a mix: at least this many bits (three eighths of the 80) below
/// [`MIX_SPLIT_RATIO`] times the mean `|z|` of the [`MIX_SPLIT_STRONG`] strongest bits, minus
/// `BIT_FLOOR_SLACK`. A mean of three copies has about 20 bits where all three agree, at full
/// strength `m`, and 60 at `m / 2` (rounded) or `m / 3`: all 60 fall below the line once
/// `m > 12` (rounded) or `m > 7` (exact). On one honest copy every bit sits near one mean `m`
/// with about unit spread (each bit sees the whole leak, section 4), the strongest 20 average
/// about `m + 1.3`, and a bit below the line is a `(m / 4 + 2)`-sigma event: 30 of them is
/// far beyond any honest read (an honest copy resized to 80 % and saved at JPEG 45, whose bits
/// spread by more than a unit, flagged the rejected single-floor rule "0.7 times the 10
/// strongest, minus 2" with a handful of bits, not 30; measured in section 12.5).
pub const MIX_SPLIT_BITS: usize = 30;

/// See [`MIX_SPLIT_BITS`].
pub const MIX_SPLIT_RATIO: f64 = 0.75;

/// See [`MIX_SPLIT_BITS`]: the strongest quarter of the bits.
pub const MIX_SPLIT_STRONG: usize = 20;

/// The third test of a mix, for strong reads: sorted by `|z|`, two neighbours with at least
/// [`MIX_GAP_SIDE`] bits on each side differ by at least [`MIX_GAP_MIN`] and by at least
/// [`MIX_GAP_RATIO`] of the stronger. The blind read is nearly a sign detector (its clip is a
/// quarter of the mark's range, section 6), so a rounded mean of three copies does not halve the
/// weaker bits: on the tiles atlas its 20-odd agreeing bits read 124 to 127 and the 60 others
/// 109 to 113, each group within about a unit, a gap of 10 to 13 between them. One honest copy's
/// bits sit near one mean with about unit spread: two neighbours away from the ends (at least 8
/// bits on each side, where 80 normal samples lie about 13 to a unit) differ by 6 units with
/// probability below 1e-30.
pub const MIX_GAP_MIN: f64 = 6.0;

/// See [`MIX_GAP_MIN`].
pub const MIX_GAP_RATIO: f64 = 0.05;

/// See [`MIX_GAP_MIN`].
pub const MIX_GAP_SIDE: usize = 8;

/// The most candidates a match lists, best first.
pub const LISTED_CANDIDATES: usize = 5;

/// Most issued licenses one match scores (a bound on work and memory, far above any seller's).
pub const MAX_ISSUED: usize = 1 << 20;

/// The `l` grid of the `code` bound, as multiples of `1 / sqrt(sum z_i^2)`: `2^(k/2)` for `k`
/// from 3 to 14 (scores of about 2.8 to 128 standard deviations).
const GRID_STEPS: core::ops::RangeInclusive<i32> = 3..=14;

/// One issued license's score.
#[derive(Clone, Copy, Debug, PartialEq)]
#[non_exhaustive]
pub struct Candidate {
    /// The license id.
    pub license_id: u64,
    /// `S_L / sqrt(sum z_i^2)`: about N(0, 1) for an innocent license, up to `sqrt(80)`.
    pub score: f64,
    /// Upper bound on the probability that some innocent license scores at least this high
    /// in this identify (issued licenses x reads scored x the per-license bound), at most 1.
    pub false_accusation: f64,
    /// Whether the license is named (see [`NAME_SINGLE_MAX`], [`NAME_COLLUDER_MAX`]).
    pub named: bool,
}

/// The result of [`match_licenses`].
#[derive(Clone, Debug, PartialEq, Default)]
#[non_exhaustive]
pub struct SoftMatch {
    /// At most [`LISTED_CANDIDATES`] issued licenses, highest score first.
    pub candidates: Vec<Candidate>,
    /// Whether the read looks like several copies mixed (strong bits beside near-zero ones).
    pub mixed: bool,
}

impl SoftMatch {
    /// The named licenses, best first.
    pub fn named(&self) -> impl Iterator<Item = u64> + '_ {
        self.candidates
            .iter()
            .filter(|c| c.named)
            .map(|c| c.license_id)
    }

    /// The smallest false-accusation probability listed (1 when none).
    #[must_use]
    pub fn strongest(&self) -> f64 {
        self.candidates
            .iter()
            .map(|c| c.false_accusation)
            .fold(1.0, f64::min)
    }
}

/// Whether a read's per-bit scores look like a mix of several differently licensed copies:
/// a mark is present (`confidence >= CONFIDENCE_MIN`) and at least [`MIX_MIN_WEAK_BITS`] bits
/// fall below the balance floor, or at least [`MIX_SPLIT_BITS`] below the split line, or the
/// bits fall in two groups apart by a gap ([`MIX_GAP_MIN`]).
#[must_use]
pub fn looks_mixed(bit_confidence: &[f64; PAYLOAD_BITS], confidence: f64) -> bool {
    let mut magnitudes = bit_confidence.map(f64::abs);
    magnitudes.sort_unstable_by(|a, b| b.total_cmp(a));
    let mean_of = |n: usize| magnitudes.iter().take(n).sum::<f64>() / n as f64;
    let below = |line: f64| magnitudes.iter().filter(|&&m| m < line).count();
    let floor = BIT_FLOOR_RATIO * mean_of(PAYLOAD_BITS / 2) - BIT_FLOOR_SLACK;
    let split = MIX_SPLIT_RATIO * mean_of(MIX_SPLIT_STRONG) - BIT_FLOOR_SLACK;
    let gap = magnitudes
        .windows(2)
        .enumerate()
        .filter(|(k, _)| (MIX_GAP_SIDE..=PAYLOAD_BITS - MIX_GAP_SIDE).contains(&(k + 1)))
        .any(|(_, pair)| matches!(*pair, [a, b] if a - b >= MIX_GAP_MIN.max(MIX_GAP_RATIO * a)));
    confidence >= CONFIDENCE_MIN
        && (below(floor) >= MIX_MIN_WEAK_BITS || below(split) >= MIX_SPLIT_BITS || gap)
}

/// The signed score `S_L = sum_i b_i(L) z_i`.
#[must_use]
pub fn license_score(bit_confidence: &[f64; PAYLOAD_BITS], license_id: u64) -> f64 {
    payload_bits(license_id)
        .iter()
        .zip(bit_confidence)
        .map(|(&bit, &z)| if bit { z } else { -z })
        .sum()
}

/// Scores every issued license against a read's per-bit scores and names the guilty ones.
///
/// `tests` is the number of reads of this identify whose scores may be looked at (a union
/// bound over them; at least 1). Duplicate ids count once. Past [`MAX_ISSUED`] ids only the
/// first `MAX_ISSUED` are scored (the false-accusation bound still counts them all).
#[must_use]
pub fn match_licenses(
    bit_confidence: &[f64; PAYLOAD_BITS],
    confidence: f64,
    issued: &[u64],
    tests: f64,
) -> SoftMatch {
    let mixed = looks_mixed(bit_confidence, confidence);
    let energy: f64 = bit_confidence.iter().map(|z| z * z).sum();
    if issued.is_empty() || !energy.is_finite() || bit_confidence.iter().any(|z| !z.is_finite()) {
        return SoftMatch {
            candidates: Vec::new(),
            mixed,
        };
    }
    let norm = energy.sqrt();
    let mut top: Vec<(f64, u64)> = Vec::with_capacity(LISTED_CANDIDATES + 1);
    for &id in issued.iter().take(MAX_ISSUED) {
        if top.iter().any(|&(_, t)| t == id) {
            continue;
        }
        let s = license_score(bit_confidence, id);
        if top.len() < LISTED_CANDIDATES || top.last().is_some_and(|&(low, _)| s > low) {
            let at = top.iter().position(|&(t, _)| s > t).unwrap_or(top.len());
            top.insert(at, (s, id));
            top.truncate(LISTED_CANDIDATES);
        }
    }
    let factor = tests.max(1.0) * issued.len() as f64;
    let mut code: Option<Vec<(f64, f64)>> = None;
    let candidates = top
        .into_iter()
        .map(|(s, id)| {
            let mut p = (factor * independent_bound(bit_confidence, s)).min(1.0);
            if p < 1.0 {
                let grid = code.get_or_insert_with(|| code_mgf_grid(bit_confidence, norm));
                p = p.max((factor * code_bound(grid, s)).min(1.0));
            }
            let score = if norm > 0.0 { s / norm } else { 0.0 };
            (id, score, p)
        })
        .collect::<Vec<_>>();
    let limit = if mixed {
        NAME_COLLUDER_MAX
    } else {
        NAME_SINGLE_MAX
    };
    let candidates = candidates
        .into_iter()
        .map(|(license_id, score, false_accusation)| Candidate {
            license_id,
            score,
            false_accusation,
            named: false_accusation <= limit,
        })
        .collect();
    SoftMatch { candidates, mixed }
}

/// `ln cosh(x)` without overflow.
fn ln_cosh(x: f64) -> f64 {
    let a = x.abs();
    a + (-2.0 * a).exp().ln_1p() - core::f64::consts::LN_2
}

/// `inf over l >= 0 of exp(-l s) prod_i cosh(l z_i)`: the Chernoff bound on
/// `P(sum_i e_i |z_i| >= s)` for independent fair signs `e_i`; decreasing in `s`, 1 for
/// `s <= 0`, `2^-n` at `s = sum |z_i|` (n the non-zero terms), 0 beyond.
fn independent_bound(z: &[f64; PAYLOAD_BITS], s: f64) -> f64 {
    if s <= 0.0 {
        return 1.0;
    }
    let total: f64 = z.iter().map(|v| v.abs()).sum();
    if s > total * (1.0 + 1e-12) {
        return 0.0;
    }
    let slope = |l: f64| {
        z.iter()
            .map(|v| v.abs() * (l * v.abs()).tanh())
            .sum::<f64>()
            - s
    };
    let log_bound = |l: f64| z.iter().map(|v| ln_cosh(l * v)).sum::<f64>() - l * s;
    let smallest = z
        .iter()
        .map(|v| v.abs())
        .filter(|&v| v > 0.0)
        .fold(f64::INFINITY, f64::min);
    // At the top of the range the infimum is the limit l -> infinity: 2^-(non-zero terms).
    let saturated = -(z.iter().filter(|v| v.abs() > 0.0).count() as f64) * core::f64::consts::LN_2;
    let (mut lo, mut hi) = (0.0f64, 1.0 / total.max(f64::MIN_POSITIVE));
    let cap = 80.0 / smallest.max(1e-300);
    while slope(hi) < 0.0 && hi < cap {
        hi *= 2.0;
    }
    if slope(hi) < 0.0 {
        return (log_bound(hi).min(0.0)).max(saturated).exp();
    }
    for _ in 0..80 {
        let mid = 0.5 * (lo + hi);
        if slope(mid) < 0.0 {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    log_bound(hi).min(0.0).exp()
}

/// For each `l` of the fixed grid, `(l, ln E_L[exp(l S_L)])` over uniformly random ids.
fn code_mgf_grid(z: &[f64; PAYLOAD_BITS], norm: f64) -> Vec<(f64, f64)> {
    if norm <= 0.0 {
        return Vec::new();
    }
    let mut scratch = (vec![0.0f64; 1 << 16], vec![0.0f64; 1 << 16]);
    GRID_STEPS
        .map(|k| {
            let l = 2f64.powf(f64::from(k) / 2.0) / norm;
            (l, ln_code_mgf(z, l, &mut scratch))
        })
        .collect()
}

/// `min over the grid of exp(-l s) E[exp(l S_L)]`; decreasing in `s` (each term is).
fn code_bound(grid: &[(f64, f64)], s: f64) -> f64 {
    grid.iter()
        .map(|&(l, ln_m)| (ln_m - l * s).min(0.0).exp())
        .fold(1.0, f64::min)
}

/// The CRC's linear part: `crc16(id) = crc_linear(id) ^ crc16(0)`; column `j` is the CRC
/// change of flipping payload bit `j` (id bit `63 - j`).
fn crc_columns() -> [u16; 64] {
    let zero = crc16(&[0u8; 8]);
    let mut columns = [0u16; 64];
    for (j, c) in columns.iter_mut().enumerate() {
        let id = 1u64 << (63 - j);
        *c = crc16(&id.to_be_bytes()) ^ zero;
    }
    columns
}

/// `ln E_L[exp(l sum_i b_i(L) z_i)]` over uniformly random 64-bit ids, exactly: a dynamic
/// programme over the 64 id bits whose state is the CRC's linear part so far, each term
/// normalised by `exp(l |z_i|)` so that every value stays in [0, 1].
fn ln_code_mgf(z: &[f64; PAYLOAD_BITS], l: f64, scratch: &mut (Vec<f64>, Vec<f64>)) -> f64 {
    let (f, g) = (&mut scratch.0, &mut scratch.1);
    f.fill(0.0);
    if let Some(first) = f.first_mut() {
        *first = 1.0;
    }
    // Factor of a bit whose sign is `positive`: exp(l (b z - |z|)) / 2 per id bit.
    let weight = |v: f64, positive: bool| -> f64 {
        let signed = if positive { v } else { -v };
        (l * (signed - v.abs())).exp()
    };
    for (&v, &column) in z.iter().take(64).zip(crc_columns().iter()) {
        let (w0, w1) = (0.5 * weight(v, false), 0.5 * weight(v, true));
        let column = usize::from(column);
        for (s, out) in g.iter_mut().enumerate() {
            let keep = f.get(s).copied().unwrap_or(0.0);
            let flip = f.get(s ^ column).copied().unwrap_or(0.0);
            *out = w0 * keep + w1 * flip;
        }
        core::mem::swap(f, g);
    }
    let constant = usize::from(crc16(&[0u8; 8]));
    let crc_z = z.get(64..).unwrap_or(&[]);
    // Payload bit 64 + k is CRC bit 15 - k; split the 16 CRC bits into the high and low byte.
    let table = |bits: &[f64]| -> [f64; 256] {
        let mut t = [1.0f64; 256];
        for (byte, slot) in t.iter_mut().enumerate() {
            for (k, &v) in bits.iter().enumerate() {
                *slot *= weight(v, (byte >> (7 - k)) & 1 == 1);
            }
        }
        t
    };
    let high = table(crc_z.get(..8).unwrap_or(&[]));
    let low = table(crc_z.get(8..16).unwrap_or(&[]));
    let mut total = 0.0f64;
    for (s, &mass) in f.iter().enumerate() {
        let crc = s ^ constant;
        total += mass
            * high.get(crc >> 8).copied().unwrap_or(0.0)
            * low.get(crc & 0xff).copied().unwrap_or(0.0);
    }
    let shift: f64 = z.iter().map(|v| l * v.abs()).sum();
    shift + total.ln()
}

#[cfg(test)]
mod tests;

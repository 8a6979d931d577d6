//! Embedding (SPEC "Watermark", docs/watermark.md section 5).
//!
//! Every pixel position `x` of row `y` carries payload bit `perm_y[x % 80]`
//! with chip `c(x, y)`. A visible pixel (alpha >= 8) moves R, G and B by
//! `AMPLITUDE_LEVELS` in the direction `c * b` (b = +1 for bit 1, -1 for bit 0),
//! clamped to 0..=255; alpha and every byte of a pixel with alpha < 8 stay as
//! they were. The direction of a whole row is computed as packed bits first
//! (chips XNOR the row's position bits), so the per-pixel loop is a shift, a
//! compare and three table lookups, with no branches and no allocation. The WASM
//! build (simd128) moves four pixels per vector with saturating byte arithmetic
//! instead, and native builds eight pixels per group in a form the compiler
//! vectorises; all give the same bytes (tests/vector.rs pins a vector that
//! ts/test/watermark.test.ts checks through the WASM module).

use crate::key::{RowStream, WatermarkKey};
use crate::payload::{payload_bits, PAYLOAD_BITS};

/// Lowest alpha that counts as visible (SPEC "Limits").
pub const VISIBLE_ALPHA_MIN: u8 = 8;

/// How far R, G and B move, in levels of 255 (SPEC "Limits").
pub const AMPLITUDE_LEVELS: u8 = 2;

/// Bytes of packed position bits per row period (80 positions).
const PERIOD_BYTES: usize = PAYLOAD_BITS / 8;

/// Marks whole rows `first_row..` of `rows` (validated by the caller:
/// `row_bytes = width * 4` divides `rows.len()`, row indices fit in u32).
pub(crate) fn embed_band(
    key: &WatermarkKey,
    license_id: u64,
    width: usize,
    first_row: u32,
    rows: &mut [u8],
) {
    let bits = payload_bits(license_id);
    let row_bytes = width * 4;
    let mut stream = RowStream::new(key, width);
    let mut row_index = first_row;
    for row in rows.chunks_exact_mut(row_bytes) {
        stream.load(row_index);
        let period = position_bits(&stream.perm, &bits);
        // In place: chip bits become "move up" bits (chip == payload bit).
        for (chip, pos) in stream.chips.iter_mut().zip(period.iter().cycle()) {
            *chip = !(*chip ^ pos);
        }
        embed_row(row, &stream.chips);
        row_index = row_index.wrapping_add(1);
    }
}

/// Packs the payload bit of each of the 80 positions of a row, LSB first.
fn position_bits(perm: &[u8; PAYLOAD_BITS], bits: &[bool; PAYLOAD_BITS]) -> [u8; PERIOD_BYTES] {
    let mut out = [0u8; PERIOD_BYTES];
    for (k, &bit_index) in perm.iter().enumerate() {
        let bit = bits.get(usize::from(bit_index)).copied().unwrap_or(false);
        if let Some(byte) = out.get_mut(k / 8) {
            *byte |= u8::from(bit) << (k % 8);
        }
    }
    out
}

/// Per-channel results for "stay" (invisible), "down" and "up". A lookup
/// replaces the clamp: it measured 3.5 times faster than saturating
/// arithmetic in the scalar loop, which is what WASM without simd128 runs.
/// Built at compile time, where an out-of-range index is a build error rather
/// than a panic, hence the local `allow`.
#[allow(clippy::indexing_slicing)]
const MOVES: [[u8; 256]; 3] = {
    let mut t = [[0u8; 256]; 3];
    let mut v = 0;
    while v < 256 {
        t[0][v] = v as u8;
        t[1][v] = (v as u8).saturating_sub(AMPLITUDE_LEVELS);
        t[2][v] = (v as u8).saturating_add(AMPLITUDE_LEVELS);
        v += 1;
    }
    t
};

/// Lane `i` all ones when bit `i` of the index is set: one byte of directions as eight
/// pixel masks. Built at compile time, where an out-of-range index is a build error rather
/// than a panic, hence the local `allow`.
#[cfg(not(all(target_arch = "wasm32", target_feature = "simd128")))]
#[allow(clippy::indexing_slicing)]
const UP_MASKS: [[u32; 8]; 256] = {
    let mut t = [[0u32; 8]; 256];
    let mut n = 0;
    while n < 256 {
        let mut i = 0;
        while i < 8 {
            if (n >> i) & 1 == 1 {
                t[n][i] = u32::MAX;
            }
            i += 1;
        }
        n += 1;
    }
    t
};

/// Applies one row's packed directions (bit `x % 8` of byte `x / 8`), eight pixels at a
/// time, in a form the compiler vectorises (SSE2 natively): each pixel's little-endian word
/// says whether it is visible (at least `0x0800_0000`, alpha >= 8), which with its direction
/// bit gives its raise and lower amounts for R, G and B, and the 32 bytes of the group then
/// move with saturating byte arithmetic, exactly the clamp of the scalar tables. A last
/// group shorter than 8 pixels goes through the scalar path.
#[cfg(not(all(target_arch = "wasm32", target_feature = "simd128")))]
fn embed_row(row: &mut [u8], up_bits: &[u8]) {
    const STEP: u32 = u32::from_le_bytes([AMPLITUDE_LEVELS, AMPLITUDE_LEVELS, AMPLITUDE_LEVELS, 0]);
    const VISIBLE_WORD: u32 = (VISIBLE_ALPHA_MIN as u32) << 24;
    let mut groups = row.chunks_exact_mut(32);
    let mut ups = up_bits.iter();
    for (group, &up) in (&mut groups).zip(&mut ups) {
        let up_masks = UP_MASKS.get(usize::from(up)).copied().unwrap_or_default();
        let mut raise = [0u8; 32];
        let mut lower = [0u8; 32];
        let amounts = raise.chunks_exact_mut(4).zip(lower.chunks_exact_mut(4));
        for ((pixel, (r, l)), up_mask) in group.chunks_exact(4).zip(amounts).zip(up_masks) {
            let word = pixel.try_into().map(u32::from_le_bytes).unwrap_or_default();
            let step = if word >= VISIBLE_WORD { STEP } else { 0 };
            r.copy_from_slice(&(step & up_mask).to_le_bytes());
            l.copy_from_slice(&(step & !up_mask).to_le_bytes());
        }
        for ((byte, r), l) in group.iter_mut().zip(raise).zip(lower) {
            *byte = byte.saturating_add(r).saturating_sub(l);
        }
    }
    let rest = groups.into_remainder();
    if let Some(&up) = ups.next() {
        embed_row_scalar(rest, &[up]);
    }
}

/// Applies one row's packed directions, four pixels per 128-bit vector (the WASM build
/// enables simd128, scripts/build-wasm.sh): a pixel is visible when its little-endian word
/// is at least `0x0800_0000` (alpha >= 8), and R, G and B move with saturating byte
/// arithmetic, which is exactly the clamp of the scalar tables. Groups of 8 pixels take one
/// byte of directions; a last group shorter than 8 pixels goes through the scalar path.
#[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
fn embed_row(row: &mut [u8], up_bits: &[u8]) {
    use core::arch::wasm32::{
        u32x4, u32x4_extract_lane, u32x4_ge, u32x4_splat, u8x16_add_sat, u8x16_sub_sat, v128,
        v128_and, v128_andnot,
    };

    /// Lane `i` all ones when bit `i` of the index is set. Built at compile time, where an
    /// out-of-range index is a build error rather than a panic, hence the local `allow`.
    #[allow(clippy::indexing_slicing)]
    const NIBBLE_MASKS: [v128; 16] = {
        const fn lane(n: usize, i: usize) -> u32 {
            if (n >> i) & 1 == 1 {
                u32::MAX
            } else {
                0
            }
        }
        let mut t = [u32x4(0, 0, 0, 0); 16];
        let mut n = 0;
        while n < 16 {
            t[n] = u32x4(lane(n, 0), lane(n, 1), lane(n, 2), lane(n, 3));
            n += 1;
        }
        t
    };

    fn word(bytes: &[u8]) -> u32 {
        bytes.try_into().map(u32::from_le_bytes).unwrap_or_default()
    }

    let visible_min = u32x4_splat(u32::from(VISIBLE_ALPHA_MIN) << 24);
    let step = u32x4_splat(u32::from_le_bytes([
        AMPLITUDE_LEVELS,
        AMPLITUDE_LEVELS,
        AMPLITUDE_LEVELS,
        0,
    ]));
    let mut groups = row.chunks_exact_mut(32);
    let mut ups = up_bits.iter();
    for (group, &up) in (&mut groups).zip(&mut ups) {
        for (half, quad) in group.chunks_exact_mut(16).enumerate() {
            let mut words = [0u32; 4];
            for (w, px) in words.iter_mut().zip(quad.chunks_exact(4)) {
                *w = word(px);
            }
            let [w0, w1, w2, w3] = words;
            let pixels = u32x4(w0, w1, w2, w3);
            let visible = u32x4_ge(pixels, visible_min);
            let nibble = usize::from((up >> (4 * half)) & 0x0F);
            let up_mask = NIBBLE_MASKS.get(nibble).copied().unwrap_or(visible);
            let raise = v128_and(v128_and(visible, up_mask), step);
            let lower = v128_and(v128_andnot(visible, up_mask), step);
            let moved = u8x16_sub_sat(u8x16_add_sat(pixels, raise), lower);
            let lanes = [
                u32x4_extract_lane::<0>(moved),
                u32x4_extract_lane::<1>(moved),
                u32x4_extract_lane::<2>(moved),
                u32x4_extract_lane::<3>(moved),
            ];
            for (dst, lane) in quad.chunks_exact_mut(4).zip(lanes) {
                dst.copy_from_slice(&lane.to_le_bytes());
            }
        }
    }
    let rest = groups.into_remainder();
    if let Some(&up) = ups.next() {
        embed_row_scalar(rest, &[up]);
    }
}

/// Applies one row's packed directions (bit `x % 8` of byte `x / 8`), one pixel at a time.
fn embed_row_scalar(row: &mut [u8], up_bits: &[u8]) {
    for (group, &up) in row.chunks_mut(32).zip(up_bits) {
        for (i, pixel) in group.chunks_exact_mut(4).enumerate() {
            if let [r, g, b, a] = pixel {
                let visible = usize::from(*a >= VISIBLE_ALPHA_MIN);
                let select = visible * (1 + usize::from((up >> i) & 1));
                if let Some(table) = MOVES.get(select) {
                    for c in [r, g, b] {
                        *c = table.get(usize::from(*c)).copied().unwrap_or(*c);
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn embed_row_moves_visible_channels_by_two_and_clamps() {
        let mut row = vec![
            100, 0, 255, 255, // up: 102, 2, 255
            100, 1, 254, 8, // down: 98, 0, 252
            100, 100, 100, 7, // invisible: untouched
            3, 4, 5, 0, // invisible: untouched
        ];
        embed_row(&mut row, &[0b0000_0101]);
        assert_eq!(
            row,
            vec![102, 2, 255, 255, 98, 0, 252, 8, 100, 100, 100, 7, 3, 4, 5, 0]
        );
    }

    /// The vector paths (simd128 in WASM, grouped natively) give exactly the scalar tables'
    /// bytes: every alpha around the visibility threshold, channels at both clamps, rows
    /// whose width is not a multiple of 8 pixels.
    #[test]
    fn embed_row_matches_the_scalar_tables() {
        let mut x = 0x9E37_79B9_7F4A_7C15u64;
        let mut next = move || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        for width in [1usize, 7, 8, 9, 31, 80, 257, 2048] {
            let mut row: Vec<u8> = (0..width * 4)
                .map(|i| {
                    let v = next() as u8;
                    match i % 4 {
                        // alpha: half of the pixels at 0..=15, around the threshold.
                        3 if v & 1 == 0 => v % 16,
                        // channels: a quarter pinned near 0 or 255.
                        _ if v % 4 == 0 => [0, 1, 2, 253, 254, 255][usize::from(v >> 2) % 6],
                        _ => v,
                    }
                })
                .collect();
            let up: Vec<u8> = (0..width.div_ceil(8)).map(|_| next() as u8).collect();
            let mut expected = row.clone();
            embed_row_scalar(&mut expected, &up);
            embed_row(&mut row, &up);
            assert_eq!(row, expected, "width {width}");
        }
    }

    #[test]
    fn position_bits_follow_the_permutation() {
        let mut perm = [0u8; PAYLOAD_BITS];
        for (k, p) in perm.iter_mut().enumerate() {
            *p = (PAYLOAD_BITS - 1 - k) as u8;
        }
        let mut bits = [false; PAYLOAD_BITS];
        bits[79] = true;
        bits[0] = true;
        let packed = position_bits(&perm, &bits);
        assert_eq!(packed[0], 1);
        assert_eq!(packed[9], 0x80);
        assert!(packed[1..9].iter().all(|&b| b == 0));
    }
}

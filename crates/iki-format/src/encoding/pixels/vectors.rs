//! The tokenizer with WASM SIMD (simd128, scripts/build-wasm.sh), for the module the service
//! runs copies in. It gives exactly [`super::tokenize`]'s tokens and counts.
//!
//! The scalar tokenizer tries its eight candidates one after another and measures a match
//! pixel by pixel. On marked pixels each of those compares goes either way at random, and in
//! WASM the mispredicted branches were the larger part of a copy's cost (bench/RESULTS.md,
//! "Item 3 in WASM on real textures"). Here two vector compares give all eight candidates as
//! one bit mask, the first candidate is its lowest set bit, and a match is measured four
//! pixels per compare: one unpredictable branch per pixel (match or literal) remains.

use core::arch::wasm32::{
    i16x8_bitmask, i32x4_bitmask, i32x4_eq, i8x16_shuffle, u32x4, u32x4_splat, v128,
};

use super::{count, Counts, Seen, CANDIDATES, LITERAL, MATCH_TABLE, MAX_PIXELS};

/// Pixels `at..at + 4` as a vector, or `or` when they are not all in `w`.
#[inline(always)]
fn quad(w: &[u32], at: usize, or: v128) -> v128 {
    match w.get(at..at.wrapping_add(4)) {
        Some(&[a, b, c, d]) => u32x4(a, b, c, d),
        _ => or,
    }
}

/// Bit `c` set when candidate `c` equals `w[i]`, for `i` at or past every candidate's
/// distance. `ROWS`: the candidates are 1 to 5 pixels left and the row above (`up`, `up - 1`,
/// `up + 1`); otherwise 1 to 8 pixels left.
#[inline(always)]
fn mask<const ROWS: bool>(w: &[u32], i: usize, up: usize, cur: u32) -> u32 {
    let none = u32x4_splat(!cur);
    let want = u32x4_splat(cur);
    // Lanes: distances 4, 3, 2, 1.
    let left = i32x4_eq(quad(w, i.wrapping_sub(4), none), want);
    if ROWS {
        // Lanes: distances up + 1, up, up - 1, up - 2.
        let above = i32x4_eq(quad(w, i.wrapping_sub(up + 1), none), want);
        // 16-bit lanes in candidate order: 1, 2, 3, 4, (up - 2, replaced by 5), up, up - 1,
        // up + 1.
        let order =
            i8x16_shuffle::<12, 13, 8, 9, 4, 5, 0, 1, 28, 29, 20, 21, 24, 25, 16, 17>(left, above);
        let five = w.get(i.wrapping_sub(5)) == Some(&cur);
        (u32::from(i16x8_bitmask(order)) & !0x10) | u32::from(five) << 4
    } else {
        // Lanes: distances 8, 7, 6, 5.
        let far = i32x4_eq(quad(w, i.wrapping_sub(8), none), want);
        let order =
            i8x16_shuffle::<12, 13, 8, 9, 4, 5, 0, 1, 28, 29, 24, 25, 20, 21, 16, 17>(left, far);
        u32::from(i16x8_bitmask(order))
    }
}

/// The length of the match of `i` at `j < i`, whose first pixels are equal: the run of
/// equal pixels, at most [`MAX_PIXELS`] and at most to the end of `w`.
#[inline(always)]
fn run(w: &[u32], i: usize, j: usize) -> usize {
    let limit = (w.len() - i).min(MAX_PIXELS);
    let mut k = 1;
    while k + 4 <= limit {
        let a = quad(w, i + k, u32x4_splat(0));
        let b = quad(w, j + k, u32x4_splat(u32::MAX));
        let equal = i32x4_bitmask(i32x4_eq(a, b)) as u32;
        if equal != 0xF {
            return k + (!equal).trailing_zeros() as usize;
        }
        k += 4;
    }
    while k < limit && w.get(i + k) == w.get(j + k) {
        k += 1;
    }
    k
}

/// [`super::tokenize`] with simd128.
#[inline(never)]
pub(super) fn tokenize_vectors(
    seen: Seen<'_>,
    start: usize,
    dists: &[usize; CANDIDATES],
    tokens: &mut Vec<u64>,
    counts: &mut Counts,
) {
    if dists.get(5) == Some(&6) {
        tokenize_with::<false>(seen, start, dists, tokens, counts);
    } else {
        tokenize_with::<true>(seen, start, dists, tokens, counts);
    }
}

#[inline(always)]
fn tokenize_with<const ROWS: bool>(
    seen: Seen<'_>,
    start: usize,
    dists: &[usize; CANDIDATES],
    tokens: &mut Vec<u64>,
    counts: &mut Counts,
) {
    let w = seen.words;
    let up = dists.get(5).copied().unwrap_or(0);
    // From here on every candidate is in the window.
    let far = dists.iter().copied().max().unwrap_or(0);
    let mut i = start;
    while let Some(&cur) = w.get(i) {
        let found = if i >= far {
            mask::<ROWS>(w, i, up, cur)
        } else {
            let mut found = 0;
            for (c, &d) in dists.iter().enumerate() {
                if i.checked_sub(d).and_then(|j| w.get(j)) == Some(&cur) {
                    found |= 1 << c;
                }
            }
            found
        };
        if found == 0 {
            for b in cur.to_le_bytes() {
                count(&mut counts.literals, usize::from(b));
            }
            tokens.push(LITERAL | u64::from(cur));
            i += 1;
            continue;
        }
        let c = found.trailing_zeros() as usize;
        let d = dists.get(c).copied().unwrap_or(1);
        let len = run(w, i, i - d);
        let entry = (c * 65 + len) % MATCH_TABLE;
        tokens.push(entry as u64);
        count(&mut counts.matches, entry);
        i += len;
    }
}

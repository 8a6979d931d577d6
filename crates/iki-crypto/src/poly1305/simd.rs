//! The simd128 kernel of the group scheme of [`super::soft`]: 16 Poly1305 blocks at a time,
//! four per multiply, one block per 32-bit lane.
//!
//! The layout follows poly1305-donna's SSE2 and AVX2 code (26-bit limbs, precomputed powers
//! of `r`, 32×32→64-bit multiplies): the four blocks of a quad are loaded and transposed so
//! that vector `j` holds limb `j` of the four blocks, and each limb product is
//! `u64x2_extmul_low_u32x4` (lanes 0 and 1) plus `u64x2_extmul_high_u32x4` (lanes 2 and 3)
//! against the vector of the four blocks' powers of `r`. All 16 blocks of a group sum into
//! five `i64x2` accumulators; one scalar carry per group (256 bytes) reduces them.
//!
//! Only safe intrinsics are used: with `simd128` enabled at compile time, the arithmetic,
//! shuffle and lane intrinsics are safe functions. Blocks enter through
//! [`crate::simd128::load16`] and the powers of `r` as `u32x4` of the table's `[u32; 4]`
//! rows, both of which LLVM turns into single `v128.load`s. The kernel's vectors are WASM
//! locals (never in linear memory, checked in the built module); the table stays in the
//! caller's `State`, which wipes it on drop.

use core::arch::wasm32::{
    u32x4, u32x4_add, u32x4_shl, u32x4_shr, u64x2_add, u64x2_extmul_high_u32x4,
    u64x2_extmul_low_u32x4, u64x2_extract_lane, u64x2_splat, v128, v128_and, v128_or,
};

use super::soft::{carry, Limbs, Table, BLOCK_BYTES, GROUP_BYTES, HIBIT, QUAD_BYTES};
use crate::simd128::{load16, transpose};

const MASK26: v128 = u32x4(0x3ff_ffff, 0x3ff_ffff, 0x3ff_ffff, 0x3ff_ffff);
const HIBITS: v128 = u32x4(HIBIT, HIBIT, HIBIT, HIBIT);

/// The four blocks of a 64-byte quad as 26-bit limbs with the 2^128 bit: vector `j` holds
/// limb `j` of block `l` in lane `l`.
fn quad_limbs(quad: &[u8]) -> [v128; 5] {
    let mut blocks = quad.chunks_exact(BLOCK_BYTES).map(load16);
    let mut next = || blocks.next().unwrap_or(u64x2_splat(0));
    let (a, b, c, d) = (next(), next(), next(), next());
    // w_i = word i of blocks a, b, c, d.
    let [w0, w1, w2, w3] = transpose(a, b, c, d);
    [
        v128_and(w0, MASK26),
        v128_and(v128_or(u32x4_shr(w0, 26), u32x4_shl(w1, 6)), MASK26),
        v128_and(v128_or(u32x4_shr(w1, 20), u32x4_shl(w2, 12)), MASK26),
        v128_and(v128_or(u32x4_shr(w2, 14), u32x4_shl(w3, 18)), MASK26),
        v128_or(u32x4_shr(w3, 8), HIBITS),
    ]
}

/// The four lanes' 64-bit products `a · b`, summed pairwise: lanes 0 and 1 plus lanes 2
/// and 3 (the accumulators are summed across lanes at the end of a group anyway).
fn mul4(a: v128, b: v128) -> v128 {
    u64x2_add(u64x2_extmul_low_u32x4(a, b), u64x2_extmul_high_u32x4(a, b))
}

/// `acc += m · r` limb by limb (schoolbook, with the `5·r` fold), for one quad.
fn mul_add(acc: &mut [v128; 5], m: &[v128; 5], multipliers: &[[u32; 4]; 9]) {
    let [r0, r1, r2, r3, r4, s1, s2, s3, s4] = multipliers.map(|[a, b, c, d]| u32x4(a, b, c, d));
    let [m0, m1, m2, m3, m4] = *m;
    let sum = |p: [v128; 5]| {
        let [p0, p1, p2, p3, p4] = p;
        u64x2_add(u64x2_add(u64x2_add(p0, p1), u64x2_add(p2, p3)), p4)
    };
    let [d0, d1, d2, d3, d4] = acc;
    *d0 = u64x2_add(
        *d0,
        sum([
            mul4(m0, r0),
            mul4(m1, s4),
            mul4(m2, s3),
            mul4(m3, s2),
            mul4(m4, s1),
        ]),
    );
    *d1 = u64x2_add(
        *d1,
        sum([
            mul4(m0, r1),
            mul4(m1, r0),
            mul4(m2, s4),
            mul4(m3, s3),
            mul4(m4, s2),
        ]),
    );
    *d2 = u64x2_add(
        *d2,
        sum([
            mul4(m0, r2),
            mul4(m1, r1),
            mul4(m2, r0),
            mul4(m3, s4),
            mul4(m4, s3),
        ]),
    );
    *d3 = u64x2_add(
        *d3,
        sum([
            mul4(m0, r3),
            mul4(m1, r2),
            mul4(m2, r1),
            mul4(m3, r0),
            mul4(m4, s4),
        ]),
    );
    *d4 = u64x2_add(
        *d4,
        sum([
            mul4(m0, r4),
            mul4(m1, r3),
            mul4(m2, r2),
            mul4(m3, r1),
            mul4(m4, r0),
        ]),
    );
}

/// Absorbs the whole 256-byte groups of `groups` into `h` (see [`super::soft`]).
pub(super) fn groups(h: &mut Limbs, table: &Table, groups: &[u8]) {
    for group in groups.chunks_exact(GROUP_BYTES) {
        let mut acc = [u64x2_splat(0); 5];
        // h joins block 0 of the group (lane 0 of quad 0), which is multiplied by r^16.
        let mut carried = h.map(|x| u32x4(x, 0, 0, 0));
        for (quad, multipliers) in group.chunks_exact(QUAD_BYTES).zip(table) {
            let mut m = quad_limbs(quad);
            for (limb, extra) in m.iter_mut().zip(&mut carried) {
                *limb = u32x4_add(*limb, *extra);
                *extra = u64x2_splat(0);
            }
            mul_add(&mut acc, &m, multipliers);
        }
        *h =
            carry(acc.map(|a| u64x2_extract_lane::<0>(a).wrapping_add(u64x2_extract_lane::<1>(a))));
    }
}

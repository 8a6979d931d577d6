//! The compression function G (RFC 9106 §3.5-3.6): R = X ⊕ Y, Q = P applied to the eight
//! rows of R and then to its eight columns, G = Q ⊕ R; with version 0x13, passes after the
//! first xor G into the block they overwrite (§3.2 step 6).
//!
//! P is a BLAKE2b round whose additions are BlaMka's `a + b + 2 · lo32(a) · lo32(b)`. Two
//! backends give the same bytes: the portable [`scalar`] one over 64-bit words, and on
//! wasm32 with `simd128` the [`simd`] one, two words per v128 (the reference `opt.c` layout:
//! a row's 16 words are 8 vectors A0 A1 B0 B1 C0 C1 D0 D1, and the diagonal step shuffles
//! lanes between the B and D pairs and swaps the C pair).
//!
//! Zeroization: R and Q live in a [`Scratch`] that the caller owns across all blocks and
//! wipes once at the end (both backends work in it rather than in block-sized stack arrays,
//! which on wasm32 would sit in linear memory unwiped; the scalar backend's 16-word row
//! copy is wiped after each call).

use zeroize::Zeroize;

use crate::block::Block;

/// Working blocks of [`compress`], reused across calls and wiped on drop.
#[derive(Default)]
pub(crate) struct Scratch {
    r: Block,
    q: Block,
}

impl Drop for Scratch {
    fn drop(&mut self) {
        self.r.zeroize();
        self.q.zeroize();
    }
}

/// `out = G(prev, refb)`, or `out ^= G(prev, refb)` when `xor` (passes after the first).
pub(crate) fn compress(prev: &Block, refb: &Block, out: &mut Block, xor: bool, s: &mut Scratch) {
    #[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
    if simd::compress(prev, refb, out, xor, s) {
        return;
    }
    scalar::compress(prev, refb, out, xor, s);
}

pub(crate) mod scalar {
    use zeroize::Zeroize;

    use super::{Block, Scratch};

    /// BlaMka's `x + y + 2 · lo32(x) · lo32(y)` (RFC 9106 §3.6), modulo 2^64.
    fn bla(x: u64, y: u64) -> u64 {
        let product = (x & 0xFFFF_FFFF).wrapping_mul(y & 0xFFFF_FFFF);
        x.wrapping_add(y).wrapping_add(product.wrapping_mul(2))
    }

    macro_rules! g {
        ($v:ident, $a:literal, $b:literal, $c:literal, $d:literal) => {
            $v[$a] = bla($v[$a], $v[$b]);
            $v[$d] = ($v[$d] ^ $v[$a]).rotate_right(32);
            $v[$c] = bla($v[$c], $v[$d]);
            $v[$b] = ($v[$b] ^ $v[$c]).rotate_right(24);
            $v[$a] = bla($v[$a], $v[$b]);
            $v[$d] = ($v[$d] ^ $v[$a]).rotate_right(16);
            $v[$c] = bla($v[$c], $v[$d]);
            $v[$b] = ($v[$b] ^ $v[$c]).rotate_right(63);
        };
    }

    /// P over 16 words (RFC 9106 §3.6): the four columns, then the four diagonals.
    fn round(v: &mut [u64; 16]) {
        g!(v, 0, 4, 8, 12);
        g!(v, 1, 5, 9, 13);
        g!(v, 2, 6, 10, 14);
        g!(v, 3, 7, 11, 15);
        g!(v, 0, 5, 10, 15);
        g!(v, 1, 6, 11, 12);
        g!(v, 2, 7, 8, 13);
        g!(v, 3, 4, 9, 14);
    }

    /// The word indices of column `i` (0..8): words 2i and 2i+1 of each of the eight rows
    /// (reference `ref.c`, "apply Blake2 on rows of 64-bit words").
    fn column(i: usize) -> impl Iterator<Item = usize> {
        (0..8).flat_map(move |row| [16 * row + 2 * i, 16 * row + 2 * i + 1])
    }

    pub(crate) fn compress(
        prev: &Block,
        refb: &Block,
        out: &mut Block,
        xor: bool,
        s: &mut Scratch,
    ) {
        for ((r, a), b) in s.r.0.iter_mut().zip(prev.0.iter()).zip(refb.0.iter()) {
            *r = a ^ b;
        }
        s.q.0 = s.r.0;
        let mut v = [0u64; 16];
        for row in s.q.0.chunks_exact_mut(16) {
            v.copy_from_slice(row);
            round(&mut v);
            row.copy_from_slice(&v);
        }
        for i in 0..8 {
            for (word, index) in v.iter_mut().zip(column(i)) {
                *word = s.q.0.get(index).copied().unwrap_or(0);
            }
            round(&mut v);
            for (word, index) in v.iter().zip(column(i)) {
                if let Some(q) = s.q.0.get_mut(index) {
                    *q = *word;
                }
            }
        }
        v.zeroize();
        s.q.xor_assign(&s.r);
        if xor {
            out.xor_assign(&s.q);
        } else {
            out.0 = s.q.0;
        }
    }
}

#[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
mod simd {
    use core::arch::wasm32::{
        i32x4_shuffle, i64x2_add, i64x2_shl, i64x2_shuffle, i8x16_shuffle, u64x2_extmul_high_u32x4,
        u64x2_extmul_low_u32x4, u64x2_shr, v128, v128_or, v128_xor,
    };

    use super::{Block, Scratch};

    /// A block as 8 rows of 8 vectors (two words each).
    type Rows = [[v128; 8]; 8];

    /// BlaMka's `a + b + 2 · lo32(a) · lo32(b)` per 64-bit lane, for two pairs at once.
    ///
    /// The widening multiply takes two 32-bit lanes, so the low halves of both `a` vectors
    /// are gathered into one (x64 `shufps`), and those of both `b` vectors into another; the
    /// low and high widening multiplies then give each pair's two products. Gathering one
    /// vector's low halves in place instead (lanes 0, 2 into 0, 1) lets LLVM rewrite the
    /// product as an i64x2 multiply of masked words, which V8 lowers to three multiplies.
    #[inline(always)]
    fn bla(a0: v128, b0: v128, a1: v128, b1: v128) -> (v128, v128) {
        let lo_a = i32x4_shuffle::<0, 2, 4, 6>(a0, a1);
        let lo_b = i32x4_shuffle::<0, 2, 4, 6>(b0, b1);
        let p0 = u64x2_extmul_low_u32x4(lo_a, lo_b);
        let p1 = u64x2_extmul_high_u32x4(lo_a, lo_b);
        (
            i64x2_add(i64x2_add(a0, b0), i64x2_add(p0, p0)),
            i64x2_add(i64x2_add(a1, b1), i64x2_add(p1, p1)),
        )
    }

    /// Rotations right of each 64-bit lane: by 32 and 16 as shuffles (x64 `pshufd`,
    /// `pshuflw`/`pshufhw`), by 24 and 63 as shifts (a byte shuffle by 24 costs V8 a
    /// constant load; measured no faster).
    #[inline(always)]
    fn ror32(x: v128) -> v128 {
        i32x4_shuffle::<1, 0, 3, 2>(x, x)
    }

    #[inline(always)]
    fn ror24(x: v128) -> v128 {
        v128_or(u64x2_shr(x, 24), i64x2_shl(x, 40))
    }

    #[inline(always)]
    fn ror16(x: v128) -> v128 {
        i8x16_shuffle::<2, 3, 4, 5, 6, 7, 0, 1, 10, 11, 12, 13, 14, 15, 8, 9>(x, x)
    }

    #[inline(always)]
    fn ror63(x: v128) -> v128 {
        v128_or(u64x2_shr(x, 63), i64x2_add(x, x))
    }

    /// G of BLAKE2b with BlaMka additions on four columns at once: (a0, b0, c0, d0) and
    /// (a1, b1, c1, d1), two columns per vector.
    #[inline(always)]
    #[allow(clippy::too_many_arguments)]
    fn g(
        a0: &mut v128,
        b0: &mut v128,
        c0: &mut v128,
        d0: &mut v128,
        a1: &mut v128,
        b1: &mut v128,
        c1: &mut v128,
        d1: &mut v128,
    ) {
        (*a0, *a1) = bla(*a0, *b0, *a1, *b1);
        *d0 = ror32(v128_xor(*d0, *a0));
        *d1 = ror32(v128_xor(*d1, *a1));
        (*c0, *c1) = bla(*c0, *d0, *c1, *d1);
        *b0 = ror24(v128_xor(*b0, *c0));
        *b1 = ror24(v128_xor(*b1, *c1));
        (*a0, *a1) = bla(*a0, *b0, *a1, *b1);
        *d0 = ror16(v128_xor(*d0, *a0));
        *d1 = ror16(v128_xor(*d1, *a1));
        (*c0, *c1) = bla(*c0, *d0, *c1, *d1);
        *b0 = ror63(v128_xor(*b0, *c0));
        *b1 = ror63(v128_xor(*b1, *c1));
    }

    /// P over 16 words held as A0 A1 B0 B1 C0 C1 D0 D1 (words 0-1, 2-3, ..., 14-15).
    #[inline(always)]
    fn round(v: [v128; 8]) -> [v128; 8] {
        let [mut a0, mut a1, mut b0, mut b1, mut c0, mut c1, mut d0, mut d1] = v;
        g(
            &mut a0, &mut b0, &mut c0, &mut d0, &mut a1, &mut b1, &mut c1, &mut d1,
        );
        // Diagonals: B becomes (5, 6) (7, 4), C swaps to (10, 11) (8, 9), D becomes
        // (15, 12) (13, 14), so that lane-wise G works on (0,5,10,15) (1,6,11,12) and
        // (2,7,8,13) (3,4,9,14).
        let mut e0 = i64x2_shuffle::<1, 2>(b0, b1);
        let mut e1 = i64x2_shuffle::<1, 2>(b1, b0);
        let mut f0 = i64x2_shuffle::<1, 2>(d1, d0);
        let mut f1 = i64x2_shuffle::<1, 2>(d0, d1);
        g(
            &mut a0, &mut e0, &mut c1, &mut f0, &mut a1, &mut e1, &mut c0, &mut f1,
        );
        [
            a0,
            a1,
            i64x2_shuffle::<1, 2>(e1, e0),
            i64x2_shuffle::<1, 2>(e0, e1),
            c0,
            c1,
            i64x2_shuffle::<1, 2>(f0, f1),
            i64x2_shuffle::<1, 2>(f1, f0),
        ]
    }

    /// Column `$i` (vector `$i` of every row, i.e. words 2i and 2i+1 of each row) of the
    /// row-mixed `$q`, written out as G's result: `$o = P(column) ⊕ R`, or `$o ⊕=` that.
    macro_rules! column {
        ($q:ident, $r:ident, $o:ident, $xor:ident, $i:literal) => {
            let c = round([
                $q[0][$i], $q[1][$i], $q[2][$i], $q[3][$i], $q[4][$i], $q[5][$i], $q[6][$i],
                $q[7][$i],
            ]);
            for ((orow, rrow), cv) in $o.iter_mut().zip($r.iter()).zip(c) {
                let g = v128_xor(cv, rrow[$i]);
                orow[$i] = if $xor { v128_xor(orow[$i], g) } else { g };
            }
        };
    }

    /// The SIMD G; `false` (nothing written) only if a block could not be viewed as
    /// vectors, which its 64-byte alignment rules out.
    pub(super) fn compress(
        prev: &Block,
        refb: &Block,
        out: &mut Block,
        xor: bool,
        s: &mut Scratch,
    ) -> bool {
        let (Ok(x), Ok(y), Ok(r), Ok(q), Ok(o)) = (
            bytemuck::try_cast_ref::<_, Rows>(&prev.0),
            bytemuck::try_cast_ref::<_, Rows>(&refb.0),
            bytemuck::try_cast_mut::<_, Rows>(&mut s.r.0),
            bytemuck::try_cast_mut::<_, Rows>(&mut s.q.0),
            bytemuck::try_cast_mut::<_, Rows>(&mut out.0),
        ) else {
            return false;
        };
        for (((qrow, rrow), xrow), yrow) in q.iter_mut().zip(r.iter_mut()).zip(x).zip(y) {
            for ((rv, xv), yv) in rrow.iter_mut().zip(xrow).zip(yrow) {
                *rv = v128_xor(*xv, *yv);
            }
            *qrow = round(*rrow);
        }
        column!(q, r, o, xor, 0);
        column!(q, r, o, xor, 1);
        column!(q, r, o, xor, 2);
        column!(q, r, o, xor, 3);
        column!(q, r, o, xor, 4);
        column!(q, r, o, xor, 5);
        column!(q, r, o, xor, 6);
        column!(q, r, o, xor, 7);
        true
    }
}

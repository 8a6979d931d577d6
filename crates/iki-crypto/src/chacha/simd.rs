//! The simd128 kernel of [`super`]: four blocks at once, one block per 32-bit lane (word `i`
//! of the four blocks in vector `i`), for the WASM build.

use core::arch::wasm32::{
    i8x16_shuffle, u32x4, u32x4_add, u32x4_shl, u32x4_shr, u32x4_splat, v128, v128_or, v128_xor,
};

use super::BLOCKS4_BYTES;
use crate::simd128::{load16, store16, transpose};

fn r16(a: v128) -> v128 {
    i8x16_shuffle::<2, 3, 0, 1, 6, 7, 4, 5, 10, 11, 8, 9, 14, 15, 12, 13>(a, a)
}
fn r12(a: v128) -> v128 {
    v128_or(u32x4_shl(a, 12), u32x4_shr(a, 20))
}
fn r8(a: v128) -> v128 {
    v128_or(u32x4_shl(a, 8), u32x4_shr(a, 24))
}
fn r7(a: v128) -> v128 {
    v128_or(u32x4_shl(a, 7), u32x4_shr(a, 25))
}

/// The four keystream blocks in byte order: vector `4b + g` is bytes `16g..16g + 16` of
/// block `b`, so the 16 vectors in order are the 256 bytes in order.
#[inline(always)] // returned through linear memory otherwise
fn keystream<const D: usize>(state: &[u32; 16], counter: u32) -> [v128; 16] {
    #[allow(clippy::redundant_closure)] // a target-feature fn is not an FnMut
    let mut init = state.map(|w| u32x4_splat(w));
    init[12] = u32x4(
        counter,
        counter.wrapping_add(1),
        counter.wrapping_add(2),
        counter.wrapping_add(3),
    );
    let mut x = init;
    double_rounds!(x, D, u32x4_add, v128_xor, r16, r12, r8, r7);
    for (w, i) in x.iter_mut().zip(init.iter()) {
        *w = u32x4_add(*w, *i);
    }
    // Vector w holds word w of the four blocks (block b in lane b): transposing each
    // run of four words gives 16 bytes of each block.
    let [x0, x1, x2, x3, x4, x5, x6, x7, x8, x9, x10, x11, x12, x13, x14, x15] = x;
    let [a0, b0, c0, d0] = transpose(x0, x1, x2, x3);
    let [a1, b1, c1, d1] = transpose(x4, x5, x6, x7);
    let [a2, b2, c2, d2] = transpose(x8, x9, x10, x11);
    let [a3, b3, c3, d3] = transpose(x12, x13, x14, x15);
    [
        a0, a1, a2, a3, b0, b1, b2, b3, c0, c1, c2, c3, d0, d1, d2, d3,
    ]
}

/// Calls `f` on each 16-byte piece of `buf` with the matching keystream vector, written
/// out call by call: a loop over the array would keep the keystream in linear memory.
#[inline(always)]
fn each_piece(buf: &mut [u8; BLOCKS4_BYTES], ks: [v128; 16], f: impl Fn(&mut [u8], v128)) {
    let [k0, k1, k2, k3, k4, k5, k6, k7, k8, k9, k10, k11, k12, k13, k14, k15] = ks;
    let mut pieces = buf.chunks_exact_mut(16);
    let mut put = |k: v128| {
        if let Some(piece) = pieces.next() {
            f(piece, k);
        }
    };
    put(k0);
    put(k1);
    put(k2);
    put(k3);
    put(k4);
    put(k5);
    put(k6);
    put(k7);
    put(k8);
    put(k9);
    put(k10);
    put(k11);
    put(k12);
    put(k13);
    put(k14);
    put(k15);
}

pub(super) fn blocks4<const D: usize>(
    state: &[u32; 16],
    counter: u32,
    out: &mut [u8; BLOCKS4_BYTES],
) {
    each_piece(out, keystream::<D>(state, counter), store16);
}

pub(super) fn xor4(state: &[u32; 16], counter: u32, buf: &mut [u8; BLOCKS4_BYTES]) {
    each_piece(
        buf,
        keystream::<{ super::CHACHA20 }>(state, counter),
        |piece, k| {
            store16(piece, v128_xor(load16(piece), k));
        },
    );
}

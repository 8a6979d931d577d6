//! Helpers shared by the wasm32 simd128 kernels of [`crate::chacha`] and
//! [`crate::poly1305`]: 16-byte loads and stores, and the 4×4 transpose of 32-bit words.
//!
//! Only safe code: `v128_load` and `v128_store` take raw pointers, so bytes go through
//! `u64` halves instead, which LLVM merges into one unaligned `v128.load` or `v128.store`
//! (checked in the built module); the lane, shuffle and constructor intrinsics are safe
//! functions when `simd128` is enabled at compile time.

use core::arch::wasm32::{i32x4_shuffle, i64x2_shuffle, u64x2, u64x2_extract_lane, v128};

/// The first 16 bytes of `bytes` as a vector, byte `i` in byte lane `i` (zeros past the
/// end; the kernels always pass 16 bytes).
pub(crate) fn load16(bytes: &[u8]) -> v128 {
    let half = |at: usize| {
        bytes
            .get(at..at + 8)
            .and_then(|s| <[u8; 8]>::try_from(s).ok())
            .map_or(0, u64::from_le_bytes)
    };
    u64x2(half(0), half(8))
}

/// Writes `v` into the first 16 bytes of `bytes` (the kernels always pass 16 bytes).
pub(crate) fn store16(bytes: &mut [u8], v: v128) {
    let mut halves = bytes.chunks_exact_mut(8);
    if let Some(lo) = halves.next() {
        lo.copy_from_slice(&u64x2_extract_lane::<0>(v).to_le_bytes());
    }
    if let Some(hi) = halves.next() {
        hi.copy_from_slice(&u64x2_extract_lane::<1>(v).to_le_bytes());
    }
}

/// 4×4 transpose of 32-bit words: lane `l` of input `i` becomes lane `i` of output `l`
/// (eight shuffles, which V8 emits as `punpck{l,h}{dq,qdq}`).
pub(crate) fn transpose(a: v128, b: v128, c: v128, d: v128) -> [v128; 4] {
    let ab_lo = i32x4_shuffle::<0, 4, 1, 5>(a, b);
    let ab_hi = i32x4_shuffle::<2, 6, 3, 7>(a, b);
    let cd_lo = i32x4_shuffle::<0, 4, 1, 5>(c, d);
    let cd_hi = i32x4_shuffle::<2, 6, 3, 7>(c, d);
    [
        i64x2_shuffle::<0, 2>(ab_lo, cd_lo),
        i64x2_shuffle::<1, 3>(ab_lo, cd_lo),
        i64x2_shuffle::<0, 2>(ab_hi, cd_hi),
        i64x2_shuffle::<1, 3>(ab_hi, cd_hi),
    ]
}

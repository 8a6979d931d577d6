//! The ChaCha20 block function (RFC 8439 §2.3) and HChaCha20 (draft-irtf-cfrg-xchacha-03
//! §2.2), for the XChaCha20-Poly1305 of [`crate::xchacha`] on WebAssembly, and the same
//! kernel with 8 rounds for the watermark's row keystream there ([`chacha8_keystream`]).
//!
//! Why our own: RustCrypto's `chacha20` 0.9 has SSE2, AVX2 and NEON backends but none for
//! wasm32, where it runs one block at a time in scalar code, and LLVM does not vectorise it
//! (its cost model keeps the rotations scalar). With `simd128` enabled (scripts/build-wasm.sh
//! does), [`blocks4`] and [`xor4`] compute four blocks at once, one block per 32-bit lane:
//! word `i` of the four blocks sits in vector `i`, so every quarter round is 4 lane-wise
//! adds, 4 xors and 4 rotations. Elsewhere they run the scalar [`block`] four times; both
//! give the same bytes (tests below, and `crate::xchacha::cross_check` inside WASM against
//! RustCrypto's scalar code).
//!
//! Rotations: by 16 a byte shuffle (V8 emits two word shuffles); by 12, 8 and 7 two shifts
//! and an or. A byte shuffle by 8 would be one instruction, but V8 (Node 20) rebuilds its
//! mask with four instructions at every use, and the shifts measured 18 % faster. Output:
//! the word vectors are transposed (four 4×4 transposes) into 16-byte pieces of the four
//! blocks, which [`xor4`] XORs straight into the message, with no keystream buffer (9 %
//! faster than writing the keystream out lane by lane and XORing it in a second loop).
//!
//! Only safe intrinsics are used (`core::arch::wasm32` arithmetic, shuffles and lane access
//! are safe functions when `simd128` is enabled at compile time); bytes enter and leave
//! vectors through [`crate::simd128`]'s `u64` halves, which LLVM turns into `v128.load` and
//! `v128.store`.
//!
//! Zeroization: the caller keeps the key-bearing state in `Zeroizing` and wipes the
//! keystream buffer of a final partial piece; [`hchacha20`] returns its sub-key in
//! `Zeroizing`, and the scalar working copies are `Zeroizing` too. The SIMD kernel's vectors
//! are WASM locals, which never live in linear memory, so JS cannot read them: the kernel
//! and the keystream are inlined and written out without loops over arrays, which LLVM
//! would otherwise keep on the stack in linear memory (checked in the built module).

use zeroize::Zeroizing;

/// Bytes of one ChaCha20 block.
pub(crate) const BLOCK_BYTES: usize = 64;
/// Bytes of the four blocks [`blocks4`] produces.
pub(crate) const BLOCKS4_BYTES: usize = 4 * BLOCK_BYTES;

/// "expand 32-byte k" (RFC 8439 §2.3).
const SIGMA: [u32; 4] = [0x6170_7865, 0x3320_646e, 0x7962_2d32, 0x6b20_6574];

/// The 16 little-endian words of `bytes` (a multiple of 4 long) into `out`.
fn load_words(bytes: &[u8], out: &mut [u32]) {
    for (word, chunk) in out.iter_mut().zip(bytes.chunks_exact(4)) {
        if let Ok(le) = <[u8; 4]>::try_from(chunk) {
            *word = u32::from_le_bytes(le);
        }
    }
}

/// The initial state for `key` and the 12-byte `nonce`, with block counter 0 (word 12).
pub(crate) fn state(key: &[u8; 32], nonce: &[u8; 12]) -> Zeroizing<[u32; 16]> {
    let mut s = Zeroizing::new([0u32; 16]);
    let (constants, rest) = s.split_at_mut(4);
    constants.copy_from_slice(&SIGMA);
    let (key_words, rest) = rest.split_at_mut(8);
    load_words(key, key_words);
    let (_, nonce_words) = rest.split_at_mut(1);
    load_words(nonce, nonce_words);
    s
}

macro_rules! quarter {
    ($x:ident, $add:path, $xor:path, $r16:path, $r12:path, $r8:path, $r7:path,
     $a:literal, $b:literal, $c:literal, $d:literal) => {
        $x[$a] = $add($x[$a], $x[$b]);
        $x[$d] = $r16($xor($x[$d], $x[$a]));
        $x[$c] = $add($x[$c], $x[$d]);
        $x[$b] = $r12($xor($x[$b], $x[$c]));
        $x[$a] = $add($x[$a], $x[$b]);
        $x[$d] = $r8($xor($x[$d], $x[$a]));
        $x[$c] = $add($x[$c], $x[$d]);
        $x[$b] = $r7($xor($x[$b], $x[$c]));
    };
}

/// `$n` double rounds (RFC 8439 §2.3: column rounds then diagonal rounds; ten for ChaCha20,
/// four for ChaCha8) over 16 words of any type with the given lane operations.
macro_rules! double_rounds {
    ($x:ident, $n:expr, $($op:path),+) => {
        for _ in 0..$n {
            quarter!($x, $($op),+, 0, 4, 8, 12);
            quarter!($x, $($op),+, 1, 5, 9, 13);
            quarter!($x, $($op),+, 2, 6, 10, 14);
            quarter!($x, $($op),+, 3, 7, 11, 15);
            quarter!($x, $($op),+, 0, 5, 10, 15);
            quarter!($x, $($op),+, 1, 6, 11, 12);
            quarter!($x, $($op),+, 2, 7, 8, 13);
            quarter!($x, $($op),+, 3, 4, 9, 14);
        }
    };
}

mod scalar {
    pub(super) fn add(a: u32, b: u32) -> u32 {
        a.wrapping_add(b)
    }
    pub(super) fn xor(a: u32, b: u32) -> u32 {
        a ^ b
    }
    pub(super) fn r16(a: u32) -> u32 {
        a.rotate_left(16)
    }
    pub(super) fn r12(a: u32) -> u32 {
        a.rotate_left(12)
    }
    pub(super) fn r8(a: u32) -> u32 {
        a.rotate_left(8)
    }
    pub(super) fn r7(a: u32) -> u32 {
        a.rotate_left(7)
    }
}

/// ChaCha20's double rounds.
const CHACHA20: usize = 10;
/// ChaCha8's double rounds.
const CHACHA8: usize = 4;

/// `D` double rounds without the final addition.
fn rounds<const D: usize>(x: &mut [u32; 16]) {
    use scalar::{add, r12, r16, r7, r8, xor};
    double_rounds!(x, D, add, xor, r16, r12, r8, r7);
}

/// One ChaCha20 keystream block of `state` at block `counter` (scalar).
pub(crate) fn block(state: &[u32; 16], counter: u32, out: &mut [u8; BLOCK_BYTES]) {
    block_rounds::<CHACHA20>(state, counter, out);
}

/// One keystream block with `D` double rounds (scalar).
fn block_rounds<const D: usize>(state: &[u32; 16], counter: u32, out: &mut [u8; BLOCK_BYTES]) {
    let mut init = Zeroizing::new(*state);
    if let Some(word) = init.get_mut(12) {
        *word = counter;
    }
    let mut x = Zeroizing::new(*init);
    rounds::<D>(&mut x);
    for ((o, w), i) in out.chunks_exact_mut(4).zip(x.iter()).zip(init.iter()) {
        o.copy_from_slice(&w.wrapping_add(*i).to_le_bytes());
    }
}

/// HChaCha20(key, nonce16): the XChaCha20 sub-key (draft-irtf-cfrg-xchacha-03 §2.2), words
/// 0..4 and 12..16 of the rounds' output without the final addition.
pub(crate) fn hchacha20(key: &[u8; 32], nonce: &[u8; 16]) -> Zeroizing<[u8; 32]> {
    let mut x = Zeroizing::new([0u32; 16]);
    let (constants, rest) = x.split_at_mut(4);
    constants.copy_from_slice(&SIGMA);
    let (key_words, nonce_words) = rest.split_at_mut(8);
    load_words(key, key_words);
    load_words(nonce, nonce_words);
    rounds::<CHACHA20>(&mut x);
    let mut out = Zeroizing::new([0u8; 32]);
    let words = x.iter().take(4).chain(x.iter().skip(12));
    for (o, w) in out.chunks_exact_mut(4).zip(words) {
        o.copy_from_slice(&w.to_le_bytes());
    }
    out
}

/// Four keystream blocks of `state` at counters `counter` to `counter + 3` (wrapping; the
/// AEAD bounds messages so that the counter never wraps).
pub(crate) fn blocks4(state: &[u32; 16], counter: u32, out: &mut [u8; BLOCKS4_BYTES]) {
    blocks4_rounds::<CHACHA20>(state, counter, out);
}

/// [`blocks4`] with `D` double rounds.
fn blocks4_rounds<const D: usize>(state: &[u32; 16], counter: u32, out: &mut [u8; BLOCKS4_BYTES]) {
    #[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
    simd::blocks4::<D>(state, counter, out);
    #[cfg(not(all(target_arch = "wasm32", target_feature = "simd128")))]
    blocks4_scalar_rounds::<D>(state, counter, out);
}

/// The ChaCha8 keystream from block `block` on, into `out`: 8 rounds, in D. J. Bernstein's
/// layout (a 64-bit block counter in words 12 and 13, the 64-bit nonce `stream` in words 14
/// and 15). These are the bytes `rand_chacha::ChaCha8Rng` gives after `set_stream(stream)`
/// and `set_word_pos(16 * block)`: iki-watermark's row keystream, which the WASM build takes
/// from here because rand_chacha has no wasm32 SIMD backend and this runs four blocks per
/// vector there.
pub fn chacha8_keystream(key: &[u8; 32], stream: u64, block: u32, out: &mut [u8]) {
    let mut nonce = [0u8; 12];
    if let Some(words) = nonce.get_mut(4..) {
        words.copy_from_slice(&stream.to_le_bytes());
    }
    let mut s = state(key, &nonce);
    let mut counter = u64::from(block);
    for chunk in out.chunks_mut(BLOCKS4_BYTES) {
        if let Some(high) = s.get_mut(13) {
            *high = (counter >> 32) as u32;
        }
        let low = counter as u32;
        match <&mut [u8; BLOCKS4_BYTES]>::try_from(&mut *chunk) {
            Ok(four) if low <= u32::MAX - 3 => blocks4_rounds::<CHACHA8>(&s, low, four),
            // A last partial group, or one that carries into word 13: block by block.
            _ => {
                let mut one = Zeroizing::new([0u8; BLOCK_BYTES]);
                for (i, piece) in chunk.chunks_mut(BLOCK_BYTES).enumerate() {
                    let at = counter + i as u64;
                    if let Some(high) = s.get_mut(13) {
                        *high = (at >> 32) as u32;
                    }
                    block_rounds::<CHACHA8>(&s, at as u32, &mut one);
                    piece.copy_from_slice(one.get(..piece.len()).unwrap_or_default());
                }
            }
        }
        counter += 4;
    }
}

/// XORs the four keystream blocks of [`blocks4`] into `buf`. With `simd128` the keystream
/// goes from the vectors straight into `buf`, without a keystream buffer.
pub(crate) fn xor4(state: &[u32; 16], counter: u32, buf: &mut [u8; BLOCKS4_BYTES]) {
    #[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
    simd::xor4(state, counter, buf);
    #[cfg(not(all(target_arch = "wasm32", target_feature = "simd128")))]
    {
        let mut keystream = Zeroizing::new([0u8; BLOCKS4_BYTES]);
        blocks4_scalar(state, counter, &mut keystream);
        buf.iter_mut()
            .zip(keystream.iter())
            .for_each(|(b, k)| *b ^= k);
    }
}

/// [`blocks4`] as four scalar blocks.
pub(crate) fn blocks4_scalar(state: &[u32; 16], counter: u32, out: &mut [u8; BLOCKS4_BYTES]) {
    blocks4_scalar_rounds::<CHACHA20>(state, counter, out);
}

/// Four scalar blocks with `D` double rounds.
fn blocks4_scalar_rounds<const D: usize>(
    state: &[u32; 16],
    counter: u32,
    out: &mut [u8; BLOCKS4_BYTES],
) {
    let mut n = counter;
    for chunk in out.chunks_exact_mut(BLOCK_BYTES) {
        if let Ok(one) = <&mut [u8; BLOCK_BYTES]>::try_from(chunk) {
            block_rounds::<D>(state, n, one);
        }
        n = n.wrapping_add(1);
    }
}

#[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
mod simd;

#[cfg(test)]
mod tests {
    use super::*;

    fn hex(s: &str) -> Vec<u8> {
        (0..s.len())
            .step_by(2)
            .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
            .collect()
    }

    #[test]
    fn rfc8439_block_2_3_2() {
        // RFC 8439 §2.3.2: key 00..1f, nonce 000000090000004a00000000, counter 1.
        let key: [u8; 32] = core::array::from_fn(|i| i as u8);
        let nonce: [u8; 12] = hex("000000090000004a00000000").try_into().unwrap();
        let mut out = [0u8; 64];
        block(&state(&key, &nonce), 1, &mut out);
        assert_eq!(
            out.to_vec(),
            hex(concat!(
                "10f1e7e4d13b5915500fdd1fa32071c4c7d1f4c733c068030422aa9ac3d46c4e",
                "d2826446079faa0914c2d705d98b02a2b5129cd1de164eb9cbd083e8a2503c4e"
            ))
        );
    }

    #[test]
    fn hchacha20_draft_2_2_1() {
        // draft-irtf-cfrg-xchacha-03 §2.2.1.
        let key: [u8; 32] = core::array::from_fn(|i| i as u8);
        let nonce: [u8; 16] = hex("000000090000004a0000000031415927").try_into().unwrap();
        assert_eq!(
            hchacha20(&key, &nonce).to_vec(),
            hex("82413b4227b27bfed30e42508a877d73a0f9e4d58a74a853c12ec41326d3ecdc")
        );
    }

    #[test]
    fn xor4_xors_the_four_blocks() {
        let s = state(&[9u8; 32], &[1u8; 12]);
        let mut keystream = [0u8; BLOCKS4_BYTES];
        blocks4(&s, 5, &mut keystream);
        let message: [u8; BLOCKS4_BYTES] = core::array::from_fn(|i| (i * 7) as u8);
        let mut buf = message;
        xor4(&s, 5, &mut buf);
        for ((b, m), k) in buf.iter().zip(message).zip(keystream) {
            assert_eq!(*b, m ^ k);
        }
    }

    #[test]
    fn four_blocks_are_four_single_blocks_across_counter_wrap() {
        let key = [0x42u8; 32];
        let nonce = [7u8; 12];
        let s = state(&key, &nonce);
        for counter in [0u32, 1, 1000, u32::MAX - 1] {
            let mut four = [0u8; BLOCKS4_BYTES];
            blocks4(&s, counter, &mut four);
            for (i, chunk) in four.chunks_exact(BLOCK_BYTES).enumerate() {
                let mut one = [0u8; BLOCK_BYTES];
                block(&s, counter.wrapping_add(i as u32), &mut one);
                assert_eq!(chunk, &one[..], "counter {counter} block {i}");
            }
        }
    }
}

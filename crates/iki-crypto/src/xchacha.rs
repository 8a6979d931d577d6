//! XChaCha20-Poly1305 (draft-irtf-cfrg-xchacha-03 §2.3 over RFC 8439 §2.8) on the ChaCha20
//! kernel of [`crate::chacha`] and the Poly1305 of [`crate::poly1305`] (both simd128 on
//! wasm32): the cipher behind [`crate::Aead`] on wasm32, where RustCrypto's `chacha20` and
//! `poly1305` have no SIMD backend. Elsewhere `Aead` uses the `chacha20poly1305` crate, and
//! the tests below hold this construction to the same bytes (Wycheproof's
//! XChaCha20-Poly1305 vectors and random inputs); [`cross_check`] does the same inside WASM,
//! where the SIMD kernels run.
//!
//! ```text
//! sub_key = HChaCha20(key, nonce[0..16]);  nonce12 = 0^4 || nonce[16..24]
//! poly_key = ChaCha20(sub_key, nonce12, counter 0)[0..32]
//! ct = plaintext ^ ChaCha20(sub_key, nonce12, counter 1..)
//! tag = Poly1305(poly_key, aad || pad16 || ct || pad16 || le64(|aad|) || le64(|ct|))
//! ```
//!
//! Opening computes and checks the tag (constant time, [`Poly1305::verify`]) before it
//! decrypts, so a refused buffer is left as it was. Zeroization: the key, sub-key, state,
//! one-time Poly1305 key and keystream buffers are `Zeroizing`; [`Poly1305`] wipes its state
//! on drop.

use zeroize::Zeroizing;

use crate::chacha::{block, blocks4, hchacha20, state, xor4, BLOCKS4_BYTES, BLOCK_BYTES};
use crate::poly1305::{Poly1305, TAG_BYTES};

/// XChaCha20-Poly1305 under one key.
pub(crate) struct XChaCha20Poly1305 {
    key: Zeroizing<[u8; 32]>,
}

impl XChaCha20Poly1305 {
    pub(crate) fn new(key: &[u8; 32]) -> Self {
        Self {
            key: Zeroizing::new(*key),
        }
    }

    /// The ChaCha20 state of this message and its Poly1305 instance.
    fn setup(&self, nonce: &[u8; 24]) -> (Zeroizing<[u32; 16]>, Poly1305) {
        let (prefix, suffix) = nonce.split_at(16);
        let mut prefix16 = [0u8; 16];
        prefix16.copy_from_slice(prefix);
        let sub_key = hchacha20(&self.key, &prefix16);
        let mut nonce12 = [0u8; 12];
        nonce12
            .iter_mut()
            .skip(4)
            .zip(suffix)
            .for_each(|(d, s)| *d = *s);
        let st = state(&sub_key, &nonce12);
        let mut first = Zeroizing::new([0u8; BLOCK_BYTES]);
        block(&st, 0, &mut first);
        let mut poly_key = Zeroizing::new([0u8; 32]);
        poly_key
            .iter_mut()
            .zip(first.iter())
            .for_each(|(d, s)| *d = *s);
        (st, Poly1305::new(&poly_key))
    }

    /// XORs this message's keystream (from block 1 on) into `buf`, without the MAC: the
    /// cipher half alone, for [`crate::parts`].
    pub(crate) fn keystream_xor(&self, nonce: &[u8; 24], buf: &mut [u8]) {
        let (st, _) = self.setup(nonce);
        apply_keystream(&st, buf);
    }

    pub(crate) fn seal_detached(
        &self,
        nonce: &[u8; 24],
        aad: &[u8],
        buf: &mut [u8],
    ) -> [u8; TAG_BYTES] {
        let (st, mut poly) = self.setup(nonce);
        // Two passes, the keystream then the MAC: fusing them (MACing each 256-byte piece of
        // ciphertext as soon as it is written, or each 2 or 8 KiB) was no faster in V8, and
        // 10-15 % slower at 256 bytes.
        apply_keystream(&st, buf);
        mac(&mut poly, aad, buf);
        poly.finalize()
    }

    /// Checks `tag` over `aad` and `buf` (the ciphertext), then decrypts `buf` in place.
    pub(crate) fn open_detached(
        &self,
        nonce: &[u8; 24],
        aad: &[u8],
        buf: &mut [u8],
        tag: &[u8; TAG_BYTES],
    ) -> Result<(), ()> {
        let (st, mut poly) = self.setup(nonce);
        mac(&mut poly, aad, buf);
        if !poly.verify(tag) {
            return Err(());
        }
        apply_keystream(&st, buf);
        Ok(())
    }
}

/// XORs the keystream from block 1 on into `buf`, four blocks at a time.
fn apply_keystream(st: &[u32; 16], buf: &mut [u8]) {
    let mut counter = 1u32;
    let mut chunks = buf.chunks_exact_mut(BLOCKS4_BYTES);
    for chunk in &mut chunks {
        if let Ok(four) = <&mut [u8; BLOCKS4_BYTES]>::try_from(chunk) {
            xor4(st, counter, four);
        }
        counter = counter.wrapping_add(4);
    }
    let tail = chunks.into_remainder();
    if !tail.is_empty() {
        let mut keystream = Zeroizing::new([0u8; BLOCKS4_BYTES]);
        blocks4(st, counter, &mut keystream);
        tail.iter_mut()
            .zip(keystream.iter())
            .for_each(|(b, k)| *b ^= k);
    }
}

/// The last Poly1305 block of RFC 8439 §2.8: `le64(|aad|) || le64(|ct|)`.
fn lengths(aad: &[u8], ct: &[u8]) -> [u8; 16] {
    let mut lengths = [0u8; 16];
    let (a, c) = lengths.split_at_mut(8);
    a.copy_from_slice(&(aad.len() as u64).to_le_bytes());
    c.copy_from_slice(&(ct.len() as u64).to_le_bytes());
    lengths
}

/// Absorbs `aad || pad16 || ct || pad16 || le64(|aad|) || le64(|ct|)` into `poly`. By
/// reference: every move of the state would leave a copy of it on the stack.
fn mac(poly: &mut Poly1305, aad: &[u8], ct: &[u8]) {
    poly.update_padded(aad);
    poly.update_padded(ct);
    poly.update_padded(&lengths(aad, ct));
}

/// Holds this construction to RustCrypto's `chacha20poly1305` on pseudo-random keys, nonces,
/// aad and messages of lengths around every block and kernel boundary (0 to 1 KiB, and a
/// few larger ones), sealing, opening and refusing a flipped bit; Poly1305 alone to
/// RustCrypto's `poly1305` ([`crate::poly1305::cross_check`]); and the four-block ChaCha20
/// kernels (keystream and XOR) to the scalar block function. True when everything agrees.
/// For the WASM build, where the SIMD kernels run (`make bench` calls it through iki-wasm's
/// bench exports); native tests call it too.
#[doc(hidden)]
#[must_use]
pub fn cross_check(seed: u64) -> bool {
    use chacha20poly1305::aead::{AeadInPlace, KeyInit as _};
    let mut rng = seed | 1;
    let mut next = move || {
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        rng
    };
    let mut fill = |buf: &mut [u8]| buf.iter_mut().for_each(|b| *b = next() as u8);
    let lengths = (0..=1024).chain([4095, 4096, 4097, 65_536 + 3, 1 << 20]);
    for len in lengths {
        let (mut key, mut nonce, mut aad) = ([0u8; 32], [0u8; 24], vec![0u8; len % 61]);
        let mut msg = vec![0u8; len];
        fill(&mut key);
        fill(&mut nonce);
        fill(&mut aad);
        fill(&mut msg);
        let ours = XChaCha20Poly1305::new(&key);
        let theirs = chacha20poly1305::XChaCha20Poly1305::new(&key.into());
        let mut a = msg.clone();
        let tag_a = ours.seal_detached(&nonce, &aad, &mut a);
        let mut b = msg.clone();
        let Ok(tag_b) = theirs.encrypt_in_place_detached(&nonce.into(), &aad, &mut b) else {
            return false;
        };
        if a != b || tag_a[..] != tag_b[..] {
            return false;
        }
        let mut flipped = a.clone();
        if let Some(byte) = flipped.get_mut(len / 2) {
            *byte ^= 1;
            if ours
                .open_detached(&nonce, &aad, &mut flipped, &tag_a)
                .is_ok()
            {
                return false;
            }
        }
        if ours.open_detached(&nonce, &aad, &mut a, &tag_a).is_err() || a != msg {
            return false;
        }
    }
    if !crate::poly1305::cross_check(seed) {
        return false;
    }
    let st = state(&[3; 32], &[4; 12]);
    [0u32, 7, u32::MAX - 2].iter().all(|&counter| {
        let (mut four, mut scalar) = ([0u8; BLOCKS4_BYTES], [0u8; BLOCKS4_BYTES]);
        blocks4(&st, counter, &mut four);
        crate::chacha::blocks4_scalar(&st, counter, &mut scalar);
        let mut xored = [0x5au8; BLOCKS4_BYTES];
        xor4(&st, counter, &mut xored);
        four == scalar && xored.iter().zip(scalar).all(|(x, k)| *x == 0x5a ^ k)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wycheproof::xchacha20_poly1305_cases;

    #[test]
    fn wycheproof_xchacha20_poly1305() {
        let mut checked = 0;
        for case in xchacha20_poly1305_cases() {
            let (Ok(key), Ok(nonce)) = (
                <[u8; 32]>::try_from(case.key.as_slice()),
                <[u8; 24]>::try_from(case.iv.as_slice()),
            ) else {
                // Wrong key or nonce sizes cannot even be typed here.
                assert!(!case.valid, "case {}", case.id);
                continue;
            };
            let tag: [u8; 16] = case.tag.as_slice().try_into().unwrap();
            let aead = XChaCha20Poly1305::new(&key);
            let mut buf = case.ct.clone();
            let opened = aead.open_detached(&nonce, &case.aad, &mut buf, &tag);
            if case.valid {
                assert!(opened.is_ok(), "case {}", case.id);
                assert_eq!(buf, case.msg, "case {}", case.id);
                let mut sealed = case.msg.clone();
                assert_eq!(aead.seal_detached(&nonce, &case.aad, &mut sealed), tag);
                assert_eq!(sealed, case.ct, "case {}", case.id);
            } else {
                assert!(opened.is_err(), "case {}", case.id);
                assert_eq!(buf, case.ct, "case {}: refused buffer changed", case.id);
            }
            checked += 1;
        }
        assert!(checked > 250, "only {checked} cases");
    }

    #[test]
    fn agrees_with_rustcrypto_on_random_inputs() {
        assert!(cross_check(0x1234_5678_9abc_def1));
        assert!(cross_check(42));
    }
}

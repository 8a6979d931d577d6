//! XChaCha20-Poly1305 (draft-irtf-cfrg-xchacha-03 §2.3 over RFC 8439 §2.8) on the ChaCha20
//! kernel of [`crate::chacha`] and RustCrypto's `poly1305`: the cipher behind
//! [`crate::Aead`] on wasm32, where RustCrypto's `chacha20` has no SIMD backend. Elsewhere
//! `Aead` uses the `chacha20poly1305` crate, and the tests below hold this construction to
//! the same bytes (Wycheproof's XChaCha20-Poly1305 vectors and random inputs);
//! [`cross_check`] does the same inside WASM, where the SIMD kernel runs.
//!
//! ```text
//! sub_key = HChaCha20(key, nonce[0..16]);  nonce12 = 0^4 || nonce[16..24]
//! poly_key = ChaCha20(sub_key, nonce12, counter 0)[0..32]
//! ct = plaintext ^ ChaCha20(sub_key, nonce12, counter 1..)
//! tag = Poly1305(poly_key, aad || pad16 || ct || pad16 || le64(|aad|) || le64(|ct|))
//! ```
//!
//! Opening computes and checks the tag (constant time, `UniversalHash::verify`) before it
//! decrypts, so a refused buffer is left as it was. Zeroization: the key, sub-key, state
//! and keystream buffers are `Zeroizing`; `poly1305` zeroizes its key on drop (its
//! `zeroize` feature).

use poly1305::universal_hash::{KeyInit, UniversalHash};
use poly1305::{Block, Key as PolyKey, Poly1305};
use zeroize::Zeroizing;

use crate::chacha::{block, blocks4, hchacha20, state, BLOCKS4_BYTES, BLOCK_BYTES};

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
        let (poly_key, _) = first.split_at(32);
        let poly = Poly1305::new(PolyKey::from_slice(poly_key));
        (st, poly)
    }

    pub(crate) fn seal_detached(&self, nonce: &[u8; 24], aad: &[u8], buf: &mut [u8]) -> [u8; 16] {
        let (st, poly) = self.setup(nonce);
        apply_keystream(&st, buf);
        tag(poly, aad, buf).into()
    }

    /// Checks `tag` over `aad` and `buf` (the ciphertext), then decrypts `buf` in place.
    pub(crate) fn open_detached(
        &self,
        nonce: &[u8; 24],
        aad: &[u8],
        buf: &mut [u8],
        tag: &[u8; 16],
    ) -> Result<(), ()> {
        let (st, poly) = self.setup(nonce);
        mac(poly, aad, buf)
            .verify(&Block::from(*tag))
            .map_err(|_| ())?;
        apply_keystream(&st, buf);
        Ok(())
    }
}

/// XORs the keystream from block 1 on into `buf`, four blocks at a time.
fn apply_keystream(st: &[u32; 16], buf: &mut [u8]) {
    let mut keystream = Zeroizing::new([0u8; BLOCKS4_BYTES]);
    let mut counter = 1u32;
    for chunk in buf.chunks_mut(BLOCKS4_BYTES) {
        blocks4(st, counter, &mut keystream);
        counter = counter.wrapping_add(4);
        for (b, k) in chunk.iter_mut().zip(keystream.iter()) {
            *b ^= k;
        }
    }
}

/// Poly1305 over `aad || pad16 || ct || pad16 || le64(|aad|) || le64(|ct|)`, not finalised.
fn mac(mut poly: Poly1305, aad: &[u8], ct: &[u8]) -> Poly1305 {
    poly.update_padded(aad);
    poly.update_padded(ct);
    let mut lengths = [0u8; 16];
    let (a, c) = lengths.split_at_mut(8);
    a.copy_from_slice(&(aad.len() as u64).to_le_bytes());
    c.copy_from_slice(&(ct.len() as u64).to_le_bytes());
    poly.update(&[Block::from(lengths)]);
    poly
}

fn tag(poly: Poly1305, aad: &[u8], ct: &[u8]) -> poly1305::Tag {
    mac(poly, aad, ct).finalize()
}

/// Holds this construction to RustCrypto's `chacha20poly1305` on pseudo-random keys, nonces,
/// aad and messages of lengths around every block and kernel boundary (0 to 1 KiB, and a
/// few larger ones), sealing, opening and refusing a flipped bit; and the four-block kernel
/// to the scalar block function. True when everything agrees. For the WASM build, where the
/// SIMD kernel runs (`make bench` calls it through iki-wasm's bench exports); native tests
/// call it too.
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
    let st = state(&[3; 32], &[4; 12]);
    [0u32, 7, u32::MAX - 2].iter().all(|&counter| {
        let (mut four, mut scalar) = ([0u8; BLOCKS4_BYTES], [0u8; BLOCKS4_BYTES]);
        blocks4(&st, counter, &mut four);
        crate::chacha::blocks4_scalar(&st, counter, &mut scalar);
        four == scalar
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde::Deserialize;

    #[derive(Deserialize)]
    struct File {
        #[serde(rename = "testGroups")]
        groups: Vec<Group>,
    }

    #[derive(Deserialize)]
    struct Group {
        tests: Vec<Case>,
    }

    #[derive(Deserialize)]
    struct Case {
        #[serde(rename = "tcId")]
        id: u32,
        key: String,
        iv: String,
        aad: String,
        msg: String,
        ct: String,
        tag: String,
        result: String,
    }

    #[test]
    fn wycheproof_xchacha20_poly1305() {
        let path = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../../shared/vectors/wycheproof/xchacha20_poly1305_test.json"
        );
        let file: File = serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap();
        let mut checked = 0;
        for case in file.groups.iter().flat_map(|g| g.tests.iter()) {
            let unhex = |s: &str| hex::decode(s).unwrap();
            let (Ok(key), Ok(nonce)) = (
                <[u8; 32]>::try_from(unhex(&case.key)),
                <[u8; 24]>::try_from(unhex(&case.iv)),
            ) else {
                // Wrong key or nonce sizes cannot even be typed here.
                assert_eq!(case.result, "invalid", "case {}", case.id);
                continue;
            };
            let (aad, msg, ct) = (unhex(&case.aad), unhex(&case.msg), unhex(&case.ct));
            let tag: [u8; 16] = unhex(&case.tag).try_into().unwrap();
            let aead = XChaCha20Poly1305::new(&key);
            let mut buf = ct.clone();
            let opened = aead.open_detached(&nonce, &aad, &mut buf, &tag);
            if case.result == "invalid" {
                assert!(opened.is_err(), "case {}", case.id);
                assert_eq!(buf, ct, "case {}: refused buffer changed", case.id);
            } else {
                assert!(opened.is_ok(), "case {}", case.id);
                assert_eq!(buf, msg, "case {}", case.id);
                let mut sealed = msg.clone();
                assert_eq!(aead.seal_detached(&nonce, &aad, &mut sealed), tag);
                assert_eq!(sealed, ct, "case {}", case.id);
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

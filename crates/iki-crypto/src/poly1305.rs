//! Poly1305 (RFC 8439 §2.5) for the XChaCha20-Poly1305 of [`crate::xchacha`].
//!
//! Why our own: RustCrypto's `poly1305` 0.8 has an AVX2 backend but runs one block at a time
//! in scalar code on wasm32: 1.3 GB/s in Node 20 beside 1.1 GB/s for the simd128 ChaCha20
//! keystream, so close to half of a chunk's time (iki-wasm's `BenchAeadParts`). With
//! `simd128` enabled (scripts/build-wasm.sh does), [`Poly1305`] runs [`soft`]'s 26-bit
//! arithmetic with the 16-block groups of the [`simd`] kernel (four blocks per multiply),
//! measured at 2.6 GB/s on the same machine. Elsewhere, and on wasm32 without `simd128`, it
//! is RustCrypto's `poly1305`. Both give the same tags: the tests below check our code
//! natively against RFC 8439's vectors, Wycheproof's XChaCha20-Poly1305 tags and the
//! `poly1305` crate on random inputs, and [`cross_check`] repeats the random comparison
//! inside WASM, where the SIMD kernel runs.
//!
//! Constant time: no branch or index depends on the key, the accumulator or the message,
//! and [`Poly1305::verify`] compares tags without an early exit. Zeroization: our state
//! (`r`, `s`, `h`, the powers of `r`) is wiped on drop; RustCrypto's is too (its `zeroize`
//! feature).

#[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
mod simd;
#[cfg(any(test, all(target_arch = "wasm32", target_feature = "simd128")))]
mod soft;

/// The state behind [`Poly1305`] on this target.
#[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
type Backend = soft::State;
#[cfg(not(all(target_arch = "wasm32", target_feature = "simd128")))]
type Backend = ::poly1305::Poly1305;

/// Length of a Poly1305 tag, in bytes.
pub(crate) const TAG_BYTES: usize = 16;

/// One Poly1305 computation under a one-time key (`r || s`, RFC 8439 §2.5).
pub(crate) struct Poly1305(Backend);

impl Poly1305 {
    /// Keys a computation with the 32-byte one-time key.
    pub(crate) fn new(key: &[u8; 32]) -> Self {
        #[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
        let backend = soft::State::new(key);
        #[cfg(not(all(target_arch = "wasm32", target_feature = "simd128")))]
        let backend = {
            use ::poly1305::universal_hash::KeyInit;
            ::poly1305::Poly1305::new(::poly1305::Key::from_slice(key))
        };
        Self(backend)
    }

    /// Absorbs `data` zero-padded to a multiple of 16 bytes (RFC 8439 §2.8 `pad16`).
    pub(crate) fn update_padded(&mut self, data: &[u8]) {
        #[cfg(not(all(target_arch = "wasm32", target_feature = "simd128")))]
        use ::poly1305::universal_hash::UniversalHash;
        self.0.update_padded(data);
    }

    /// The tag.
    #[must_use]
    // RustCrypto's tag is a GenericArray; the simd128 backend's is already an array.
    #[allow(clippy::useless_conversion)]
    pub(crate) fn finalize(self) -> [u8; TAG_BYTES] {
        #[cfg(not(all(target_arch = "wasm32", target_feature = "simd128")))]
        use ::poly1305::universal_hash::UniversalHash;
        self.0.finalize().into()
    }

    /// True when the tag equals `expected`, compared in constant time.
    #[must_use]
    pub(crate) fn verify(self, expected: &[u8; TAG_BYTES]) -> bool {
        let tag = self.finalize();
        let diff = tag
            .iter()
            .zip(expected)
            .fold(0u8, |acc, (a, b)| acc | (a ^ b));
        core::hint::black_box(diff) == 0
    }

    /// The tag of a complete message of any length (RFC 8439 §2.5.1: a final partial block
    /// is followed by a 0x01 byte and has no 2^128 bit).
    #[must_use]
    pub(crate) fn compute_unpadded(key: &[u8; 32], msg: &[u8]) -> [u8; TAG_BYTES] {
        #[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
        {
            let mut state = soft::State::new(key);
            state.update_unpadded(msg);
            state.finalize()
        }
        #[cfg(not(all(target_arch = "wasm32", target_feature = "simd128")))]
        {
            use ::poly1305::universal_hash::KeyInit;
            ::poly1305::Poly1305::new(::poly1305::Key::from_slice(key))
                .compute_unpadded(msg)
                .into()
        }
    }
}

/// Holds [`Poly1305`] to RustCrypto's `poly1305` (scalar on wasm32) on pseudo-random keys
/// and messages of every length from 0 to 1 KiB and a few larger ones, whole and padded in
/// two updates, and on the extreme key and message (every limb at its maximum, for the
/// headroom of the group sums). True when every tag agrees. [`crate::xchacha::cross_check`]
/// calls it, inside WASM through iki-wasm's `benchAeadCrossCheck`.
#[must_use]
pub(crate) fn cross_check(seed: u64) -> bool {
    use ::poly1305::universal_hash::{KeyInit, UniversalHash};
    let theirs = |key: &[u8; 32]| ::poly1305::Poly1305::new(::poly1305::Key::from_slice(key));
    let mut rng = seed | 1;
    let mut next = move || {
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        rng
    };
    let lengths = (0..=1024).chain([4095, 4096, 4097, 65_536 + 3, 1 << 20]);
    lengths.into_iter().all(|len| {
        let mut key = [0u8; 32];
        key.iter_mut().for_each(|b| *b = next() as u8);
        let msg: Vec<u8> = (0..len).map(|_| next() as u8).collect();
        let split = len % 61;
        let padded = |key: &[u8; 32], msg: &[u8]| {
            let (a, b) = msg.split_at(split.min(msg.len()));
            let mut ours = Poly1305::new(key);
            ours.update_padded(a);
            ours.update_padded(b);
            let mut reference = theirs(key);
            reference.update_padded(a);
            reference.update_padded(b);
            ours.finalize() == <[u8; TAG_BYTES]>::from(reference.finalize())
        };
        let unpadded = |key: &[u8; 32], msg: &[u8]| {
            Poly1305::compute_unpadded(key, msg)
                == <[u8; TAG_BYTES]>::from(theirs(key).compute_unpadded(msg))
        };
        let extreme = [0xffu8; 32];
        let ones = vec![0xffu8; len];
        unpadded(&key, &msg)
            && padded(&key, &msg)
            && unpadded(&extreme, &ones)
            && padded(&extreme, &ones)
    })
}

#[cfg(test)]
mod tests {
    use super::soft::State;
    use super::*;
    use ::poly1305::universal_hash::{KeyInit, UniversalHash};

    fn unhex(s: &str) -> Vec<u8> {
        hex::decode(s.replace([' ', '\n'], "")).unwrap()
    }

    fn key32(s: &str) -> [u8; 32] {
        unhex(s).try_into().unwrap()
    }

    /// Our 26-bit code with its group scheme (what the WASM build runs, the groups lane by
    /// lane in scalar code here), on a complete message.
    fn ours_unpadded(key: &[u8; 32], msg: &[u8]) -> [u8; 16] {
        let mut state = State::new(key);
        state.update_unpadded(msg);
        state.finalize()
    }

    fn theirs(key: &[u8; 32]) -> ::poly1305::Poly1305 {
        ::poly1305::Poly1305::new(::poly1305::Key::from_slice(key))
    }

    const IETF: &str = "Any submission to the IETF intended by the Contributor for publication \
        as all or part of an IETF Internet-Draft or RFC and any statement made within the \
        context of an IETF activity is considered an \"IETF Contribution\". Such statements \
        include oral statements in IETF sessions, as well as written and electronic \
        communications made at any time or place, which are addressed to";

    const JABBERWOCKY: &str = "'Twas brillig, and the slithy toves\nDid gyre and gimble in \
        the wabe:\nAll mimsy were the borogoves,\nAnd the mome raths outgrabe.";

    #[test]
    fn rfc8439_vectors() {
        let r1 = "01000000000000000000000000000000";
        let r2 = "02000000000000000000000000000000";
        let zero = "00000000000000000000000000000000";
        let r10 = "01000000000000000400000000000000";
        let cases: Vec<(String, Vec<u8>, &str)> = vec![
            // §2.5.2
            (
                "85d6be7857556d337f4452fe42d506a80103808afb0db2fd4abff6af4149f51b".into(),
                b"Cryptographic Forum Research Group".to_vec(),
                "a8061dc1305136c6c22b8baf0c0127a9",
            ),
            // Appendix A.3, test vectors #1 to #11.
            (format!("{zero}{zero}"), vec![0; 64], zero),
            (
                format!("{zero}36e5f6b5c5e06070f0efca96227a863e"),
                IETF.as_bytes().to_vec(),
                "36e5f6b5c5e06070f0efca96227a863e",
            ),
            (
                format!("36e5f6b5c5e06070f0efca96227a863e{zero}"),
                IETF.as_bytes().to_vec(),
                "f3477e7cd95417af89a6b8794c310cf0",
            ),
            (
                "1c9240a5eb55d38af333888604f6b5f0473917c1402b80099dca5cbc207075c0".into(),
                JABBERWOCKY.as_bytes().to_vec(),
                "4541669a7eaaee61e708dc7cbcc5eb62",
            ),
            (
                format!("{r2}{zero}"),
                vec![0xff; 16],
                "03000000000000000000000000000000",
            ),
            (
                format!("{r2}ffffffffffffffffffffffffffffffff"),
                unhex(r2),
                "03000000000000000000000000000000",
            ),
            (
                format!("{r1}{zero}"),
                unhex(
                    "ffffffffffffffffffffffffffffffff f0ffffffffffffffffffffffffffffff
                       11000000000000000000000000000000",
                ),
                "05000000000000000000000000000000",
            ),
            (
                format!("{r1}{zero}"),
                unhex(
                    "ffffffffffffffffffffffffffffffff fbfefefefefefefefefefefefefefefe
                       01010101010101010101010101010101",
                ),
                zero,
            ),
            (
                format!("{r2}{zero}"),
                unhex("fdffffffffffffffffffffffffffffff"),
                "faffffffffffffffffffffffffffffff",
            ),
            (
                format!("{r10}{zero}"),
                unhex(
                    "e33594d7505e43b900000000000000003394d7505e4379cd0100000000000000
                       0000000000000000000000000000000001000000000000000000000000000000",
                ),
                "14000000000000005500000000000000",
            ),
            (
                format!("{r10}{zero}"),
                unhex(
                    "e33594d7505e43b900000000000000003394d7505e4379cd0100000000000000
                       00000000000000000000000000000000",
                ),
                "13000000000000000000000000000000",
            ),
        ];
        for (i, (key, msg, tag)) in cases.iter().enumerate() {
            let key = key32(key);
            let reference: [u8; 16] = theirs(&key).compute_unpadded(msg).into();
            assert_eq!(reference.to_vec(), unhex(tag), "case {i}: poly1305 crate");
            assert_eq!(ours_unpadded(&key, msg).to_vec(), unhex(tag), "case {i}");
            assert_eq!(Poly1305::compute_unpadded(&key, msg).to_vec(), unhex(tag));
        }
    }

    #[test]
    fn rfc8439_aead_2_8_2_aad_padded() {
        // The one-time key and aad of RFC 8439 §2.8.2, as RustCrypto's own test uses them.
        let key = key32("7bac2b252db447af09b67a55a4e955840ae1d6731075d9eb2a9375783ed553ff");
        let mut state = State::new(&key);
        state.update_padded(&unhex("50515253c0c1c2c3c4c5c6c7"));
        assert_eq!(
            state.finalize().to_vec(),
            unhex("ada56caa480fe6f5067039244a3d76ba")
        );
    }

    #[test]
    fn donna_self_test_all_short_lengths() {
        // poly1305-donna's self test: tags of 256 messages of lengths 0..256, MACed again.
        let mut total = State::new(&key32(
            "01020304050607fffefdfcfbfaf9ffffffffffffffffffffffffffff00000000",
        ));
        for i in 0..256usize {
            let tag = ours_unpadded(&[i as u8; 32], &vec![i as u8; i]);
            total.update_padded(&tag);
        }
        assert_eq!(
            total.finalize().to_vec(),
            unhex("64afe2e8d6ad7bbdd287f97c44623d39")
        );
    }

    #[test]
    fn agrees_with_the_poly1305_crate() {
        let mut x = 0x0123_4567_89ab_cdefu64;
        let mut byte = move || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x as u8
        };
        let lengths = (0..=1024).chain([4095, 4096, 4097, 65_539, 1 << 20]);
        for len in lengths {
            let key: [u8; 32] = core::array::from_fn(|_| byte());
            let msg: Vec<u8> = (0..len).map(|_| byte()).collect();
            for (key, msg) in [(key, msg), ([0xff; 32], vec![0xff; len])] {
                let reference: [u8; 16] = theirs(&key).compute_unpadded(&msg).into();
                assert_eq!(ours_unpadded(&key, &msg), reference, "len {len}");
                // Padded, in two updates (the AEAD's aad and ciphertext).
                let (a, b) = msg.split_at(len % 61);
                let mut ours = State::new(&key);
                let mut reference = theirs(&key);
                for part in [a, b] {
                    ours.update_padded(part);
                    reference.update_padded(part);
                }
                assert_eq!(ours.finalize(), <[u8; 16]>::from(reference.finalize()));
            }
        }
        assert!(cross_check(7));
    }

    #[test]
    fn wycheproof_xchacha20_poly1305_tags() {
        use crate::chacha::{block, hchacha20, state};
        let mut checked = 0;
        for case in crate::wycheproof::xchacha20_poly1305_cases() {
            let (Ok(key), Ok(iv)) = (
                <[u8; 32]>::try_from(case.key.as_slice()),
                <[u8; 24]>::try_from(case.iv.as_slice()),
            ) else {
                continue;
            };
            // The one-time key: ChaCha20 block 0 under HChaCha20's sub-key (xchacha.rs).
            let sub_key = hchacha20(&key, iv[..16].try_into().unwrap());
            let mut nonce12 = [0u8; 12];
            nonce12[4..].copy_from_slice(&iv[16..]);
            let mut first = [0u8; 64];
            block(&state(&sub_key, &nonce12), 0, &mut first);
            let (aad, ct) = (&case.aad, &case.ct);
            let mut mac = State::new(first[..32].try_into().unwrap());
            mac.update_padded(aad);
            mac.update_padded(ct);
            let mut lengths = (aad.len() as u64).to_le_bytes().to_vec();
            lengths.extend((ct.len() as u64).to_le_bytes());
            mac.update_padded(&lengths);
            let matches = mac.finalize().to_vec() == case.tag;
            assert_eq!(matches, case.valid, "case {}", case.id);
            checked += 1;
        }
        assert!(checked > 250, "only {checked} cases");
    }

    #[test]
    fn verify_compares_every_byte() {
        let key = [7u8; 32];
        let tag = Poly1305::compute_unpadded(&key, b"");
        let fresh = || {
            let mut p = Poly1305::new(&key);
            p.update_padded(b"");
            p
        };
        // An empty padded update adds nothing, so this is the tag of the empty message.
        assert!(fresh().verify(&tag));
        for i in 0..16 {
            let mut wrong = tag;
            wrong[i] ^= 0x80;
            assert!(!fresh().verify(&wrong), "byte {i}");
        }
    }
}

//! SHA-256 (FIPS 180-4), the only hash of the iki container (HEAD hash = 1, format §2).
//!
//! Streaming users (the container's signature digest and `keys_digest`, format §4 and §7)
//! use the re-exported [`Sha256`] through the [`Digest`] trait; one-shot users call
//! [`sha256`]. Inputs here are public file bytes, so nothing is zeroized.

pub use sha2::{Digest, Sha256};

/// SHA-256 of `data`.
#[must_use]
pub fn sha256(data: &[u8]) -> [u8; 32] {
    Sha256::digest(data).into()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fips_180_2_abc() {
        // FIPS 180-2 appendix B.1.
        assert_eq!(
            sha256(b"abc"),
            [
                0xba, 0x78, 0x16, 0xbf, 0x8f, 0x01, 0xcf, 0xea, 0x41, 0x41, 0x40, 0xde, 0x5d, 0xae,
                0x22, 0x23, 0xb0, 0x03, 0x61, 0xa3, 0x96, 0x17, 0x7a, 0x9c, 0xb4, 0x10, 0xff, 0x61,
                0xf2, 0x00, 0x15, 0xad
            ]
        );
    }

    #[test]
    fn streaming_matches_one_shot() {
        let mut h = Sha256::new();
        h.update(b"ab");
        h.update(b"c");
        let streamed: [u8; 32] = h.finalize().into();
        assert_eq!(streamed, sha256(b"abc"));
    }
}

//! The two halves of the XChaCha20-Poly1305 of [`crate::xchacha`] (the wasm32 chunk cipher)
//! on their own, so that `make bench` can time where a chunk's time goes through iki-wasm's
//! bench exports: the ChaCha20 keystream alone, Poly1305 alone, and the whole seal, each on
//! a buffer already in WASM memory. Not part of the API (hidden): the product seals and
//! opens only whole messages, through [`crate::Aead`].
//!
//! Zeroization: the keys are the benchmark's test keys, but they still go through the same
//! types as the product's (the cipher keeps its key in `Zeroizing`, Poly1305 wipes its state
//! on drop).

use crate::poly1305::Poly1305;
use crate::xchacha::XChaCha20Poly1305;

/// XORs the XChaCha20 keystream of `key` and `nonce` (from block 1 on, as the AEAD does)
/// into `buf`.
pub fn xchacha20_xor(key: &[u8; 32], nonce: &[u8; 24], buf: &mut [u8]) {
    XChaCha20Poly1305::new(key).keystream_xor(nonce, buf);
}

/// Poly1305 under the one-time key `key` of `data` padded with zeros to 16 bytes (the
/// AEAD's `ct || pad16`, RFC 8439 §2.8).
#[must_use]
pub fn poly1305_padded(key: &[u8; 32], data: &[u8]) -> [u8; 16] {
    let mut poly = Poly1305::new(key);
    poly.update_padded(data);
    poly.finalize()
}

/// Seals `buf` in place (XChaCha20-Poly1305 of [`crate::xchacha`]) and returns the tag.
#[must_use]
pub fn xchacha20poly1305_seal(
    key: &[u8; 32],
    nonce: &[u8; 24],
    aad: &[u8],
    buf: &mut [u8],
) -> [u8; 16] {
    XChaCha20Poly1305::new(key).seal_detached(nonce, aad, buf)
}

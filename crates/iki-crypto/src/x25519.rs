//! X25519 (RFC 7748 §5) that refuses low-order points, for recipient slots and key release
//! (docs/format.md sections 3.3 and 8.2).
//!
//! Two independent checks, as RFC 7748 §6.1 and the age specification recommend:
//! 1. the peer's u-coordinate, with bit 255 masked (RFC 7748 §5 says to ignore it), is
//!    compared with libsodium's blocklist of the 7 values whose X25519 output is all-zero for
//!    every clamped scalar (0, 1, the two order-8 points, p − 1, p, p + 1);
//! 2. the shared secret is compared with zero in constant time.
//!
//! Either one refuses with [`Error::WeakKey`]. Public keys are not secret, so check 1 is an
//! ordinary comparison.
//!
//! Zeroization: [`X25519Secret`] wraps `x25519_dalek::StaticSecret`, which zeroizes on drop;
//! the shared secret is held in x25519-dalek's `SharedSecret` (zeroized on drop) and handed
//! out only as a [`SecretKey32`].

use core::fmt;

use x25519_dalek::{PublicKey, StaticSecret};
use zeroize::Zeroizing;

use crate::error::Error;
use crate::secret::SecretKey32;

/// Length of an X25519 public key, secret key or shared secret, in bytes.
pub const X25519_KEY_BYTES: usize = 32;

/// The u-coordinates (little-endian, bit 255 clear) that X25519 maps to zero for every
/// clamped scalar. Source: libsodium `crypto_scalarmult/curve25519/ref10/x25519_ref10.c`.
const LOW_ORDER_U: [[u8; 32]; 7] = [
    // 0 (order 4)
    [0; 32],
    // 1 (order 1)
    [
        1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
        0, 0,
    ],
    // 325606250916557431795983626356110631294008115727848805560023387167927233504 (order 8)
    [
        0xe0, 0xeb, 0x7a, 0x7c, 0x3b, 0x41, 0xb8, 0xae, 0x16, 0x56, 0xe3, 0xfa, 0xf1, 0x9f, 0xc4,
        0x6a, 0xda, 0x09, 0x8d, 0xeb, 0x9c, 0x32, 0xb1, 0xfd, 0x86, 0x62, 0x05, 0x16, 0x5f, 0x49,
        0xb8, 0x00,
    ],
    // 39382357235489614581723060781553021112529911719440698176882885853963445705823 (order 8)
    [
        0x5f, 0x9c, 0x95, 0xbc, 0xa3, 0x50, 0x8c, 0x24, 0xb1, 0xd0, 0xb1, 0x55, 0x9c, 0x83, 0xef,
        0x5b, 0x04, 0x44, 0x5c, 0xc4, 0x58, 0x1c, 0x8e, 0x86, 0xd8, 0x22, 0x4e, 0xdd, 0xd0, 0x9f,
        0x11, 0x57,
    ],
    // p − 1 (order 2)
    [
        0xec, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
        0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
        0xff, 0x7f,
    ],
    // p (≡ 0)
    [
        0xed, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
        0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
        0xff, 0x7f,
    ],
    // p + 1 (≡ 1)
    [
        0xee, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
        0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
        0xff, 0x7f,
    ],
];

/// Whether `public` is one of the 7 blocklisted low-order u-coordinates, with or without
/// bit 255 set (14 encodings).
#[must_use]
pub fn is_low_order_x25519(public: &[u8; X25519_KEY_BYTES]) -> bool {
    let mut masked = *public;
    if let Some(last) = masked.last_mut() {
        *last &= 0x7f;
    }
    LOW_ORDER_U.contains(&masked)
}

/// An X25519 secret scalar (clamped when used, RFC 7748 §5), zeroized on drop.
pub struct X25519Secret(StaticSecret);

impl X25519Secret {
    /// A fresh secret from OS randomness.
    pub fn generate() -> Result<Self, Error> {
        Ok(Self::from_key(SecretKey32::random()?))
    }

    /// Uses the 32 bytes as the scalar; clamping happens in every multiplication.
    #[must_use]
    pub fn from_key(key: SecretKey32) -> Self {
        let bytes = Zeroizing::new(*key.expose_secret());
        Self(StaticSecret::from(*bytes))
    }

    /// `X25519(k, 9)`, the public key.
    #[must_use]
    pub fn public_key(&self) -> [u8; X25519_KEY_BYTES] {
        PublicKey::from(&self.0).to_bytes()
    }

    /// `X25519(k, peer)`. Refuses a blocklisted `peer` and an all-zero result with
    /// [`Error::WeakKey`].
    pub fn diffie_hellman(&self, peer: &[u8; X25519_KEY_BYTES]) -> Result<SecretKey32, Error> {
        if is_low_order_x25519(peer) {
            return Err(Error::WeakKey);
        }
        let shared = self.0.diffie_hellman(&PublicKey::from(*peer));
        // Constant-time comparison with the all-zero output (RFC 7748 §6.1).
        if !shared.was_contributory() {
            return Err(Error::WeakKey);
        }
        Ok(SecretKey32::from_bytes(shared.to_bytes()))
    }
}

impl fmt::Debug for X25519Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("X25519Secret(..)")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rfc7748_section_6_1() -> Result<(), Error> {
        let hex = |s: &str| -> [u8; 32] {
            let mut out = [0u8; 32];
            for (o, pair) in out.iter_mut().zip(s.as_bytes().chunks(2)) {
                *o =
                    u8::from_str_radix(core::str::from_utf8(pair).unwrap_or("zz"), 16).unwrap_or(0);
            }
            out
        };
        let alice = X25519Secret::from_key(SecretKey32::from_bytes(hex(
            "77076d0a7318a57d3c16c17251b26645df4c2f87ebc0992ab177fba51db92c2a",
        )));
        let bob = X25519Secret::from_key(SecretKey32::from_bytes(hex(
            "5dab087e624a8a4b79e17f8b83800ee66f3bb1292618b6fd1c2f8b27ff88e0eb",
        )));
        assert_eq!(
            alice.public_key(),
            hex("8520f0098930a754748b7ddcb43ef75a0dbf3a0d26381af4eba4a98eaa9b4e6a")
        );
        assert_eq!(
            bob.public_key(),
            hex("de9edb7d7b7dc1b4d35b61c2ece435373f8343c85b78674dadfc7e146f882b4f")
        );
        let shared = hex("4a5d9d5ba4ce2de1728e3bf480350f25e07e21c947d19e3376f09b3c1e161742");
        assert_eq!(
            alice.diffie_hellman(&bob.public_key())?.expose_secret(),
            &shared
        );
        assert_eq!(
            bob.diffie_hellman(&alice.public_key())?.expose_secret(),
            &shared
        );
        Ok(())
    }

    #[test]
    fn blocklist_masks_bit_255() {
        let mut one = [0u8; 32];
        one[0] = 1;
        assert!(is_low_order_x25519(&one));
        one[31] = 0x80;
        assert!(is_low_order_x25519(&one));
        one[0] = 9;
        assert!(!is_low_order_x25519(&one));
    }

    #[test]
    fn debug_hides_secret() {
        let secret = X25519Secret::from_key(SecretKey32::from_bytes([0x42; 32]));
        assert_eq!(format!("{secret:?}"), "X25519Secret(..)");
    }
}

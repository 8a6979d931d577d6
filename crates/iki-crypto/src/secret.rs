//! Secret 32-byte keys and OS randomness.
//!
//! [`SecretKey32`] is the one owner of raw key bytes in iki: content keys, license keys,
//! key-encryption keys, HKDF outputs and Ed25519/X25519 seeds pass through it. It zeroizes
//! its bytes on drop (and on explicit `zeroize()`), `Clone` makes an independent copy that is
//! zeroized on its own drop, and `Debug` prints `SecretKey32(..)`. It deliberately has no
//! `PartialEq`, so keys are not compared in variable time by accident.
//!
//! Randomness comes from the operating system through `getrandom` (the `js` backend,
//! `crypto.getRandomValues`, on wasm32-unknown-unknown); a failure is
//! [`Error::RandomFailed`], never a panic or a weaker fallback.

use core::fmt;

use zeroize::{Zeroize, ZeroizeOnDrop};

use crate::error::Error;

/// Length of every symmetric key in iki, in bytes.
pub const SECRET_KEY_BYTES: usize = 32;

/// A 32-byte secret, zeroized on drop and hidden from `Debug`.
#[derive(Clone, Zeroize, ZeroizeOnDrop)]
pub struct SecretKey32([u8; SECRET_KEY_BYTES]);

impl SecretKey32 {
    /// Takes ownership of the bytes. The caller's copy (if any) is theirs to zeroize.
    #[must_use]
    pub const fn from_bytes(bytes: [u8; SECRET_KEY_BYTES]) -> Self {
        Self(bytes)
    }

    /// Copies exactly 32 bytes; any other length is [`Error::InvalidLength`].
    pub fn try_from_slice(bytes: &[u8]) -> Result<Self, Error> {
        let array: &[u8; SECRET_KEY_BYTES] =
            bytes.try_into().map_err(|_| Error::InvalidLength {
                what: "secret key",
                len: bytes.len(),
            })?;
        Ok(Self(*array))
    }

    /// 32 fresh bytes from the OS random number generator.
    pub fn random() -> Result<Self, Error> {
        let mut key = Self([0u8; SECRET_KEY_BYTES]);
        fill_random(&mut key.0)?;
        Ok(key)
    }

    /// Borrows the raw bytes. Copies made from this reference are the caller's to zeroize.
    #[must_use]
    pub const fn expose_secret(&self) -> &[u8; SECRET_KEY_BYTES] {
        &self.0
    }
}

impl fmt::Debug for SecretKey32 {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("SecretKey32(..)")
    }
}

/// `N` bytes from the OS random number generator (nonces, salts, file ids).
///
/// The array is returned by value and not zeroized; use [`SecretKey32::random`] for keys.
pub fn random_bytes<const N: usize>() -> Result<[u8; N], Error> {
    let mut out = [0u8; N];
    fill_random(&mut out)?;
    Ok(out)
}

/// Fills `buf` from the OS random number generator.
pub fn fill_random(buf: &mut [u8]) -> Result<(), Error> {
    getrandom::getrandom(buf).map_err(|_| Error::RandomFailed)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn try_from_slice_checks_length() {
        assert_eq!(
            SecretKey32::try_from_slice(&[7u8; 31]).err(),
            Some(Error::InvalidLength {
                what: "secret key",
                len: 31
            })
        );
        assert_eq!(
            SecretKey32::try_from_slice(&[7u8; 33])
                .err()
                .map(|e| e.code()),
            Some("INVALID_LENGTH")
        );
        let key = SecretKey32::try_from_slice(&[7u8; 32]).map_err(|e| e.code());
        assert_eq!(key.map(|k| *k.expose_secret()), Ok([7u8; 32]));
    }

    #[test]
    fn zeroize_clears_bytes_and_debug_hides_them() {
        let mut key = SecretKey32::from_bytes([0xAB; 32]);
        assert_eq!(format!("{key:?}"), "SecretKey32(..)");
        assert!(!format!("{key:?}").to_lowercase().contains("ab"));
        key.zeroize();
        assert_eq!(key.expose_secret(), &[0u8; 32]);
    }

    #[test]
    fn random_keys_differ() -> Result<(), Error> {
        let a = SecretKey32::random()?;
        let b = SecretKey32::random()?;
        assert_ne!(a.expose_secret(), b.expose_secret());
        let n1: [u8; 24] = random_bytes()?;
        let n2: [u8; 24] = random_bytes()?;
        assert_ne!(n1, n2);
        Ok(())
    }
}

//! Ed25519 signatures (RFC 8032 §5.1, PureEdDSA) with strict verification, for the SIGN
//! chunk and key certificates (docs/format.md sections 7 and 7.2).
//!
//! Public keys are checked when they are parsed, once: bytes that do not decode to a curve
//! point are [`Error::BadSignature`]; a non-canonical encoding (y ≥ p, or x = 0 with the sign
//! bit set) or a point of small order is [`Error::WeakKey`]. (ed25519-dalek's own parser
//! accepts y ≥ p, and twenty such encodings are of points that are not of small order, so
//! a canonical-y check is needed on top of the small-order check.) The key is decompressed
//! once: y ≥ p shows in the bytes, and x = 0 happens only for y = ±1, the identity and the
//! point of order 2, both of small order. Verification is
//! ed25519-dalek's `verify_strict`: it also refuses S ≥ L, a non-canonical R (the recomputed
//! R is compared as canonical bytes) and a small-order R, and uses the cofactorless
//! equation. Every verification failure is the one code [`Error::BadSignature`].
//!
//! Points with both a small-order and a prime-order component cannot be refused by any such
//! check; ed25519-speccheck case 3 is the example and is accepted, as by libsodium.
//!
//! Zeroization: [`SigningKey`] wraps `ed25519_dalek::SigningKey`, which zeroizes its seed and
//! expanded scalar on drop; seeds cross this API only as [`SecretKey32`].

use core::fmt;

use ed25519_dalek::Signer as _;

use crate::error::Error;
use crate::secret::SecretKey32;

/// Length of an Ed25519 public key, in bytes.
pub const ED25519_PUBLIC_KEY_BYTES: usize = 32;
/// Length of an Ed25519 signature (R || S), in bytes.
pub const ED25519_SIGNATURE_BYTES: usize = 64;

/// An Ed25519 signing key (the 32-byte seed of RFC 8032 §5.1.5 and its expansion).
pub struct SigningKey(ed25519_dalek::SigningKey);

impl SigningKey {
    /// A fresh key from OS randomness.
    pub fn generate() -> Result<Self, Error> {
        Ok(Self::from_seed(&SecretKey32::random()?))
    }

    /// The key whose RFC 8032 seed is `seed` (key files, derived service keys).
    #[must_use]
    pub fn from_seed(seed: &SecretKey32) -> Self {
        Self(ed25519_dalek::SigningKey::from_bytes(seed.expose_secret()))
    }

    /// A copy of the seed, for writing key files. The copy zeroizes on drop.
    #[must_use]
    pub fn seed(&self) -> SecretKey32 {
        SecretKey32::from_bytes(self.0.to_bytes())
    }

    /// The public key A, canonically encoded.
    #[must_use]
    pub fn public_key(&self) -> [u8; ED25519_PUBLIC_KEY_BYTES] {
        self.0.verifying_key().to_bytes()
    }

    /// The verifying half. Always accepted by [`VerifyingKey::from_bytes`] except with
    /// negligible probability, so this skips the parse.
    #[must_use]
    pub fn verifying_key(&self) -> VerifyingKey {
        VerifyingKey(self.0.verifying_key())
    }

    /// Signs `message` (deterministic, RFC 8032 §5.1.6).
    #[must_use]
    pub fn sign(&self, message: &[u8]) -> [u8; ED25519_SIGNATURE_BYTES] {
        self.0.sign(message).to_bytes()
    }
}

impl fmt::Debug for SigningKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("SigningKey")
            .field(&Hex(&self.public_key()))
            .finish()
    }
}

/// An Ed25519 public key that passed the canonical-encoding and small-order checks.
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct VerifyingKey(ed25519_dalek::VerifyingKey);

impl VerifyingKey {
    /// Parses a public key. Refuses non-canonical encodings and small-order points
    /// ([`Error::WeakKey`]), and bytes that do not decode to a point at all
    /// ([`Error::BadSignature`]: they cannot be anyone's key, so anything "signed" by them
    /// is simply not validly signed).
    pub fn from_bytes(bytes: &[u8; ED25519_PUBLIC_KEY_BYTES]) -> Result<Self, Error> {
        let key =
            ed25519_dalek::VerifyingKey::from_bytes(bytes).map_err(|_| Error::BadSignature)?;
        // Decompression accepts y ≥ p and "negative zero" x: the first shows in the bytes,
        // the second only for y = ±1, which `is_weak` (small order) refuses.
        if !y_is_canonical(bytes) || key.is_weak() {
            return Err(Error::WeakKey);
        }
        Ok(Self(key))
    }

    /// The key's 32-byte canonical encoding.
    #[must_use]
    pub fn to_bytes(&self) -> [u8; ED25519_PUBLIC_KEY_BYTES] {
        self.0.to_bytes()
    }

    /// Strict verification (ed25519-dalek `verify_strict`); any failure is
    /// [`Error::BadSignature`].
    pub fn verify_strict(
        &self,
        message: &[u8],
        signature: &[u8; ED25519_SIGNATURE_BYTES],
    ) -> Result<(), Error> {
        let signature = ed25519_dalek::Signature::from_bytes(signature);
        self.0
            .verify_strict(message, &signature)
            .map_err(|_| Error::BadSignature)
    }
}

/// True when the encoding's y (255 bits, little-endian, sign bit aside) is below
/// p = 2^255 − 19 = 0x7fff…ffed: y ≥ p exactly when bits 8 to 254 are all ones and the low
/// byte is at least 0xed.
fn y_is_canonical(bytes: &[u8; ED25519_PUBLIC_KEY_BYTES]) -> bool {
    let [low, middle @ .., high] = *bytes;
    !(high & 0x7f == 0x7f && middle.iter().all(|&b| b == 0xff) && low >= 0xed)
}

impl fmt::Debug for VerifyingKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("VerifyingKey")
            .field(&Hex(&self.to_bytes()))
            .finish()
    }
}

/// Lowercase hex for `Debug` of public values.
struct Hex<'a>(&'a [u8]);

impl fmt::Debug for Hex<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.iter().try_for_each(|b| write!(f, "{b:02x}"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use curve25519_dalek::edwards::CompressedEdwardsY;

    #[test]
    fn rfc8032_test_1() -> Result<(), Error> {
        // RFC 8032 §7.1 TEST 1 (empty message).
        let seed = SecretKey32::from_bytes([
            0x9d, 0x61, 0xb1, 0x9d, 0xef, 0xfd, 0x5a, 0x60, 0xba, 0x84, 0x4a, 0xf4, 0x92, 0xec,
            0x2c, 0xc4, 0x44, 0x49, 0xc5, 0x69, 0x7b, 0x32, 0x69, 0x19, 0x70, 0x3b, 0xac, 0x03,
            0x1c, 0xae, 0x7f, 0x60,
        ]);
        let key = SigningKey::from_seed(&seed);
        let public = key.public_key();
        assert_eq!(public[..4], [0xd7, 0x5a, 0x98, 0x01]);
        let sig = key.sign(b"");
        assert_eq!(sig[..4], [0xe5, 0x56, 0x43, 0x00]);
        VerifyingKey::from_bytes(&public)?.verify_strict(b"", &sig)?;
        assert_eq!(key.seed().expose_secret(), seed.expose_secret());
        Ok(())
    }

    #[test]
    fn debug_shows_only_the_public_key() -> Result<(), Error> {
        let key = SigningKey::from_seed(&SecretKey32::from_bytes([0x42; 32]));
        let shown = format!("{key:?}");
        let public: String = key
            .public_key()
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect();
        assert_eq!(shown, format!("SigningKey({public})"));
        assert!(!shown.contains("4242"));
        assert_eq!(
            format!("{:?}", VerifyingKey::from_bytes(&key.public_key())?),
            format!("VerifyingKey({public})")
        );
        Ok(())
    }

    #[test]
    fn identity_and_non_canonical_keys_are_weak() {
        let mut identity = [0u8; 32];
        identity[0] = 1;
        assert_eq!(VerifyingKey::from_bytes(&identity), Err(Error::WeakKey));
        // y = p + 1 encodes the identity non-canonically.
        let mut y_above_p = [0xff; 32];
        y_above_p[0] = 0xee;
        y_above_p[31] = 0x7f;
        assert_eq!(VerifyingKey::from_bytes(&y_above_p), Err(Error::WeakKey));
    }

    /// Every encoding with y ≥ p (y = p + 0 … p + 18, either sign bit) is refused; those that
    /// decode are WEAK_KEY, including points that are not of small order, which only the
    /// re-encoding comparison catches.
    #[test]
    fn every_y_at_or_above_p_is_refused() {
        let mut decoded_not_small = 0;
        for offset in 0u8..19 {
            for sign in [0u8, 0x80] {
                let mut bytes = [0xff; 32];
                bytes[0] = 0xed + offset;
                bytes[31] = 0x7f | sign;
                let outcome = VerifyingKey::from_bytes(&bytes);
                match CompressedEdwardsY(bytes).decompress() {
                    Some(point) => {
                        assert_eq!(outcome, Err(Error::WeakKey), "y = p + {offset}");
                        decoded_not_small += usize::from(!point.is_small_order());
                    }
                    None => assert_eq!(outcome, Err(Error::BadSignature), "y = p + {offset}"),
                }
            }
        }
        // Twenty such encodings decode to points that are not of small order.
        assert_eq!(decoded_not_small, 20);
    }

    /// The single-decompression parser decides exactly as decompress, re-encode and compare
    /// plus the small-order check: on every small-order encoding with both sign bits, on y
    /// just below and at or above p, and on 20,000 pseudo-random encodings.
    #[test]
    fn parser_agrees_with_the_re_encoding_check() {
        let reference = |bytes: &[u8; 32]| -> Result<(), Error> {
            let point = CompressedEdwardsY(*bytes)
                .decompress()
                .ok_or(Error::BadSignature)?;
            if point.compress().as_bytes() != bytes || point.is_small_order() {
                return Err(Error::WeakKey);
            }
            Ok(())
        };
        let mut cases: Vec<[u8; 32]> = Vec::new();
        for point in curve25519_dalek::constants::EIGHT_TORSION {
            let mut bytes = point.compress().to_bytes();
            cases.push(bytes);
            bytes[31] ^= 0x80;
            cases.push(bytes);
        }
        for low in 0xe0..=0xff_u8 {
            for high in [0x7f_u8, 0xff, 0x7e] {
                let mut bytes = [0xff; 32];
                bytes[0] = low;
                bytes[31] = high;
                cases.push(bytes);
            }
        }
        for i in 0u32..20_000 {
            cases.push(crate::hash::sha256(&i.to_le_bytes()));
        }
        let mut decoded = 0;
        for bytes in &cases {
            let ours = VerifyingKey::from_bytes(bytes).map(|_| ());
            assert_eq!(ours, reference(bytes), "{}", hex::encode(bytes));
            decoded += usize::from(ours.is_ok());
        }
        // About half of random encodings are points; the comparison covered both outcomes.
        assert!(decoded > 9_000, "{decoded}");
    }

    #[test]
    fn undecodable_key_is_bad_signature() {
        // y = 2 is not on the curve: (y² − 1)/(d·y² + 1) is not a square mod p.
        let mut bytes = [0u8; 32];
        bytes[0] = 2;
        assert_eq!(VerifyingKey::from_bytes(&bytes), Err(Error::BadSignature));
    }
}

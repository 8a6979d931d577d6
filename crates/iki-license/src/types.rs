//! The plain, non-secret values passed between the service, the player and this crate:
//! a master's record, a license's record and a sealed key (docs/format.md sections 3.4,
//! 5.2, 8.1 and 8.2).

use iki_crypto::{WRAPPED_KEY_BYTES, XNONCE_BYTES};
use iki_format::limits::{MAX_ACCOUNT_ID_BYTES, MAX_MASTER_ID_BYTES, MIN_ACCOUNT_ID_BYTES};

use crate::error::Error;

/// What the service recorded about a verified master: its id and the SHA-256 of its bytes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MasterRef {
    /// The master id the service assigned, 1 to 256 bytes of UTF-8 (format §3.4).
    pub id: String,
    /// SHA-256 of the whole master file, as recorded after the upload check.
    pub sha256: [u8; 32],
}

impl MasterRef {
    /// Checks the id's length (it enters HKDF info strings and the license slot).
    pub(crate) fn check(&self) -> Result<(), Error> {
        if self.id.is_empty() || self.id.len() > MAX_MASTER_ID_BYTES as usize {
            return Err(Error::argument("master id is not 1 to 256 bytes"));
        }
        Ok(())
    }
}

/// A license, as the service recorded it (SPEC "Master and license copy"); written into the
/// copy's manifest as the `license` object (format §5.2).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LicenseInfo {
    /// The random 64-bit license id.
    pub id: u64,
    /// Licensee account id.
    pub licensee: String,
    /// Licensee display name.
    pub licensee_name: String,
    /// Seller account id.
    pub seller: String,
    /// When the license was issued, ms since the Unix epoch; the copy's `created_ms`.
    pub issued_at_ms: u64,
}

/// A 32-byte key sealed to an X25519 public key (format §8.2): the answer of a key release
/// or of an unwrap, or a client's content key on its way to the key service. None of it is
/// secret; only the holder of the recipient's secret key can open it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SealedKey {
    /// The sender's X25519 public key: one-time, except a key release's, whose pair the
    /// service keeps for up to a minute or 4096 releases (format §8.2).
    pub ephemeral: [u8; 32],
    /// The random XChaCha20 nonce.
    pub nonce: [u8; XNONCE_BYTES],
    /// The key encrypted and its tag, 32 + 16 bytes.
    pub sealed: [u8; WRAPPED_KEY_BYTES],
}

impl SealedKey {
    /// Takes the output of `iki_crypto::seal_to` over a 32-byte key.
    pub(crate) fn from_sealed(sealed: iki_crypto::Sealed) -> Result<Self, Error> {
        let bytes: [u8; WRAPPED_KEY_BYTES] = sealed
            .ciphertext
            .as_slice()
            .try_into()
            .map_err(|_| Error::state("sealed key is not 48 bytes"))?;
        Ok(Self {
            ephemeral: sealed.ephemeral,
            nonce: sealed.nonce,
            sealed: bytes,
        })
    }
}

/// The license id as the format writes it: 16 lowercase hex digits (format §3.4, §5.2).
#[must_use]
pub fn license_id_hex(id: u64) -> String {
    format!("{id:016x}")
}

/// Checks an account id's length, 1 to 256 bytes (format §3.2).
pub(crate) fn check_account_id(account_id: &str) -> Result<(), Error> {
    let range = MIN_ACCOUNT_ID_BYTES as usize..=MAX_ACCOUNT_ID_BYTES as usize;
    if range.contains(&account_id.len()) {
        Ok(())
    } else {
        Err(Error::argument("account id is not 1 to 256 bytes"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn license_ids_are_sixteen_lowercase_hex_digits() {
        assert_eq!(license_id_hex(0), "0000000000000000");
        assert_eq!(license_id_hex(0xABCD_EF01_2345_6789), "abcdef0123456789");
        assert_eq!(license_id_hex(u64::MAX), "ffffffffffffffff");
    }

    #[test]
    fn ids_at_and_past_their_limits() {
        let master = |id: String| MasterRef {
            id,
            sha256: [0; 32],
        };
        assert!(master("m".repeat(256)).check().is_ok());
        assert_eq!(
            master("m".repeat(257)).check().unwrap_err().code(),
            "INVALID_ARGUMENT"
        );
        assert_eq!(
            master(String::new()).check().unwrap_err().code(),
            "INVALID_ARGUMENT"
        );
        assert!(check_account_id(&"a".repeat(256)).is_ok());
        assert!(check_account_id(&"a".repeat(257)).is_err());
        assert!(check_account_id("").is_err());
    }
}

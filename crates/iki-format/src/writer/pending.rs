//! The last step of a file signed by an external key (docs/format.md section 7): the message
//! to sign, and the strict check of the signature made for it before it is written.

use iki_crypto::VerifyingKey;

use crate::error::Error;

/// The last step of a file signed by an external key: the message to sign, then the
/// signature's check.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PendingSignature {
    pub(super) public_key: [u8; 32],
    pub(super) message: Vec<u8>,
    /// Already made when the writer held the key itself.
    pub(super) signature: Option<[u8; 64]>,
}

impl PendingSignature {
    /// The exact bytes to sign with plain Ed25519 (RFC 8032 PureEdDSA):
    /// `"IKIFMT-SIGNATURE-V1" || 0x00 || digest`, 52 bytes (docs/format.md section 7).
    #[must_use]
    pub fn message(&self) -> &[u8] {
        &self.message
    }

    /// The public key in SIGN, which must have made the signature.
    #[must_use]
    pub fn public_key(&self) -> [u8; 32] {
        self.public_key
    }

    /// The signature made by the writer's own key, if it had one.
    #[must_use]
    pub fn own_signature(&self) -> Option<[u8; 64]> {
        self.signature
    }

    /// Checks `signature` strictly against SIGN's public key and the message and returns the
    /// file's last 64 bytes. A signature that does not verify is refused, so no file ever
    /// carries one its own readers would refuse.
    ///
    /// # Errors
    /// `BAD_SIGNATURE` when the signature does not verify (another key, another message,
    /// a non-canonical encoding) or the public key is not a usable Ed25519 key.
    pub fn attach(&self, signature: &[u8; 64]) -> Result<[u8; 64], Error> {
        let key = VerifyingKey::from_bytes(&self.public_key).map_err(|_| Error::BadSignature)?;
        key.verify_strict(&self.message, signature)
            .map_err(|_| Error::BadSignature)?;
        Ok(*signature)
    }
}

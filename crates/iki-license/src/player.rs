//! The player side of key release (SPEC behaviour rule 4, docs/format.md section 8.2): the
//! ephemeral X25519 key pair is made inside, its public half goes to
//! `POST /api/licenses/{id}/key`, and the sealed answer is opened inside; the license key
//! never leaves this type (and, in the browser, never leaves WebAssembly).
//!
//! Zeroization: the ephemeral secret is an [`X25519Secret`] dropped (zeroized) by
//! [`PlayerSession::accept_license_key`] whether or not the answer opens, so one session
//! can open one answer and cannot serve as a decryption oracle; the license key is a
//! [`SecretKey32`] zeroized when the session drops. `Debug` shows neither.

use core::fmt;

use iki_crypto::{labels, SecretKey32, X25519Secret};

use crate::account::open_key;
use crate::error::Error;
use crate::types::{license_id_hex, SealedKey};

/// One key release on the player: make a key pair, send its public half, accept the answer.
pub struct PlayerSession {
    secret: Option<X25519Secret>,
    public: [u8; 32],
    license: Option<(u64, SecretKey32)>,
}

impl PlayerSession {
    /// A session with a fresh ephemeral key pair.
    ///
    /// # Errors
    /// `INVALID_STATE` when the random number generator fails.
    pub fn new() -> Result<Self, Error> {
        let secret = X25519Secret::generate()?;
        Ok(Self { public: secret.public_key(), secret: Some(secret), license: None })
    }

    /// The ephemeral public key to send with the key request.
    #[must_use]
    pub fn public_key(&self) -> [u8; 32] {
        self.public
    }

    /// Opens the service's answer for `license_id` and keeps the license key inside. The
    /// ephemeral secret is consumed by the first call, successful or not.
    ///
    /// # Errors
    /// `DECRYPT_FAILED` when the answer is for another license or another key, or was
    /// altered; `WEAK_KEY` for a low-order ephemeral key in the answer; `INVALID_STATE` on a
    /// second call.
    pub fn accept_license_key(&mut self, license_id: u64, sealed: &SealedKey) -> Result<(), Error> {
        let secret = self.secret.take().ok_or(Error::state("the session already accepted an answer"))?;
        let context = labels::context(labels::LICENSE_KEY_RELEASE_V1, license_id_hex(license_id).as_bytes());
        let key = open_key(&secret, sealed, &context)?;
        self.license = Some((license_id, key));
        Ok(())
    }

    /// The accepted license id, if any.
    #[must_use]
    pub fn license_id(&self) -> Option<u64> {
        self.license.as_ref().map(|(id, _)| *id)
    }

    /// The accepted license id and key, for the reader wrapper.
    pub(crate) fn license(&self) -> Result<(u64, &SecretKey32), Error> {
        self.license
            .as_ref()
            .map(|(id, key)| (*id, key))
            .ok_or(Error::state("no license key accepted yet"))
    }
}

impl fmt::Debug for PlayerSession {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PlayerSession")
            .field("public_key", &hex::encode(self.public))
            .field("license_id", &self.license_id().map(license_id_hex))
            .finish_non_exhaustive()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::service::ServiceKeys;
    use crate::types::MasterRef;

    fn service() -> ServiceKeys {
        ServiceKeys::from_root(SecretKey32::from_bytes([0x77; 32]), "https://iki.test").unwrap()
    }

    fn master() -> MasterRef {
        MasterRef { id: "m_1".to_owned(), sha256: [0x33; 32] }
    }

    #[test]
    fn released_key_is_the_license_key() {
        let service = service();
        let mut player = PlayerSession::new().unwrap();
        let sealed = service.seal_license_key(&master(), 0xFEED, &player.public_key()).unwrap();
        player.accept_license_key(0xFEED, &sealed).unwrap();
        let (id, key) = player.license().unwrap();
        assert_eq!(id, 0xFEED);
        let expected = service.license_key(&master(), "000000000000feed");
        assert_eq!(key.expose_secret(), expected.expose_secret());
        assert!(!format!("{player:?}").contains(&hex::encode(expected.expose_secret())));
        let again = player.accept_license_key(0xFEED, &sealed).unwrap_err();
        assert_eq!(again.code(), "INVALID_STATE");
    }

    #[test]
    fn answers_for_another_license_or_key_do_not_open() {
        let service = service();
        let mut player = PlayerSession::new().unwrap();
        let sealed = service.seal_license_key(&master(), 1, &player.public_key()).unwrap();
        assert_eq!(player.accept_license_key(2, &sealed).unwrap_err().code(), "DECRYPT_FAILED");
        assert!(player.license().is_err());
        // The secret is gone: even the right license id no longer opens.
        assert_eq!(player.accept_license_key(1, &sealed).unwrap_err().code(), "INVALID_STATE");

        let mut other = PlayerSession::new().unwrap();
        assert_eq!(other.accept_license_key(1, &sealed).unwrap_err().code(), "DECRYPT_FAILED");
        let mut tampered = PlayerSession::new().unwrap();
        let mut sealed = service.seal_license_key(&master(), 1, &tampered.public_key()).unwrap();
        sealed.sealed[0] ^= 1;
        assert_eq!(tampered.accept_license_key(1, &sealed).unwrap_err().code(), "DECRYPT_FAILED");
    }

    #[test]
    fn low_order_player_keys_are_refused() {
        let service = service();
        let mut key = [0u8; 32];
        for low in [0u8, 1] {
            key[0] = low;
            assert_eq!(service.seal_license_key(&master(), 1, &key).unwrap_err().code(), "WEAK_KEY");
        }
        key[31] = 0x80; // bit 255 set on u = 1
        assert_eq!(service.seal_license_key(&master(), 1, &key).unwrap_err().code(), "WEAK_KEY");
    }
}

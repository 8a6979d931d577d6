//! The player side of key release (SPEC behaviour rule 4, docs/format.md section 8.2): the
//! ephemeral X25519 key pair is made inside, its public half goes to
//! `POST /api/licenses/{id}/key`, and the sealed answer is opened inside; the license key
//! never leaves this type (and, in the browser, never leaves WebAssembly).
//!
//! [`PlayerSession::open_reader`] then reads the license copy in memory: a
//! [`LicenseReader`] unlocks it with the license key when the reader reaches KEYS, so the
//! key is never handed out.
//!
//! Zeroization: the ephemeral secret is an [`X25519Secret`] dropped (zeroized) by
//! [`PlayerSession::accept_license_key`] whether or not the answer opens, so one session
//! can open one answer and cannot serve as a decryption oracle; the license key is a
//! [`SecretKey32`] zeroized when the session drops. `Debug` shows neither.

use core::fmt;

use iki_crypto::{labels, SecretKey32, X25519Secret};
use iki_format::manifest::Role;
use iki_format::{Cipher, Event, Kind, Meta, Reader, Slot};

use crate::account::open_key;
use crate::error::{Error, Latch};
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
        Ok(Self {
            public: secret.public_key(),
            secret: Some(secret),
            license: None,
        })
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
        let secret = self
            .secret
            .take()
            .ok_or(Error::state("the session already accepted an answer"))?;
        let context = labels::context(
            labels::LICENSE_KEY_RELEASE_V1,
            license_id_hex(license_id).as_bytes(),
        );
        let key = open_key(&secret, sealed, &context)?;
        self.license = Some((license_id, key));
        Ok(())
    }

    /// The accepted license id, if any.
    #[must_use]
    pub fn license_id(&self) -> Option<u64> {
        self.license.as_ref().map(|(id, _)| *id)
    }

    /// The accepted license id and key.
    pub(crate) fn license(&self) -> Result<(u64, &SecretKey32), Error> {
        self.license
            .as_ref()
            .map(|(id, key)| (*id, key))
            .ok_or(Error::state("no license key accepted yet"))
    }

    /// A reader of the license copy (`.ikm`, role `license`) that unlocks itself with the
    /// accepted license key. With `service_signing_key`, the copy must be signed by that key
    /// (the service's [`crate::ServiceKeys::signing_public`]); without it, any valid
    /// signature is reported in [`Event::End`] for the caller to judge.
    ///
    /// # Errors
    /// `INVALID_STATE` before a license key was accepted.
    pub fn open_reader(
        &self,
        service_signing_key: Option<[u8; 32]>,
    ) -> Result<LicenseReader, Error> {
        let (id, key) = self.license()?;
        Ok(LicenseReader {
            reader: Reader::new(Kind::Model),
            key: Some(key.clone()),
            license_hex: license_id_hex(id),
            service_signing_key,
            failed: Latch::default(),
        })
    }
}

/// `iki_format::Reader` for one license copy, unlocked from inside with the license key.
/// Its events are the reader's, except that `Header` and `Locked` are consumed here.
pub struct LicenseReader {
    reader: Reader,
    key: Option<SecretKey32>,
    license_hex: String,
    service_signing_key: Option<[u8; 32]>,
    failed: Latch,
}

impl LicenseReader {
    /// Appends bytes of the copy.
    ///
    /// # Errors
    /// The reader's errors; any error is final.
    pub fn push(&mut self, bytes: &[u8]) -> Result<(), Error> {
        self.failed.check()?;
        let result = self.reader.push(bytes).map_err(Error::from);
        self.failed.record(result)
    }

    /// Declares the end of the copy's bytes.
    ///
    /// # Errors
    /// The reader's errors; any error is final.
    pub fn finish(&mut self) -> Result<(), Error> {
        self.failed.check()?;
        let result = self.reader.finish().map_err(Error::from);
        self.failed.record(result)
    }

    /// The next event: `Manifest`, `Chunk`, `EntryVerified` or `End` (signature checked).
    ///
    /// # Errors
    /// The reader's errors; `KEY_REQUIRED` when the file is not encrypted or has no license
    /// slot for this license; `BAD_MANIFEST` when its manifest is not a license copy of this
    /// license; `BAD_SIGNATURE` when it is not signed by the expected service key.
    #[allow(clippy::should_implement_trait)]
    pub fn next(&mut self) -> Result<Option<Event>, Error> {
        self.failed.check()?;
        let result = self.step();
        self.failed.record(result)
    }

    /// Hands a chunk's buffer back to the reader (see `iki_format::Reader::recycle`).
    pub fn recycle(&mut self, buffer: Vec<u8>) {
        self.reader.recycle(buffer);
    }

    fn step(&mut self) -> Result<Option<Event>, Error> {
        loop {
            match self.reader.next()? {
                // A license copy is always encrypted under its license key: a plain file
                // would otherwise be shown as if it came through the license.
                Some(Event::Header(header)) => {
                    if header.cipher == Cipher::None {
                        return Err(iki_format::Error::KeyRequired.into());
                    }
                }
                Some(Event::Manifest(manifest)) => {
                    if !is_copy_of(&manifest.meta, &self.license_hex) {
                        return Err(iki_format::Error::BadManifest {
                            reason: "not a license copy of this license".to_owned(),
                            entry: None,
                        }
                        .into());
                    }
                    return Ok(Some(Event::Manifest(manifest)));
                }
                Some(Event::Locked(slots)) => {
                    let ours = slots.iter().any(|s| matches!(s, Slot::License { license_id, .. } if *license_id == self.license_hex));
                    let key = self
                        .key
                        .take()
                        .filter(|_| ours)
                        .ok_or(iki_format::Error::KeyRequired)?;
                    self.reader.unlock_content_key(key)?;
                }
                Some(Event::End(verified)) => {
                    if self
                        .service_signing_key
                        .is_some_and(|k| k != verified.public_key)
                    {
                        return Err(iki_format::Error::BadSignature.into());
                    }
                    return Ok(Some(Event::End(verified)));
                }
                other => return Ok(other),
            }
        }
    }
}

/// Whether a manifest's meta is a license copy of `license_hex` (SPEC "Protected model manifest meta").
fn is_copy_of(meta: &Meta, license_hex: &str) -> bool {
    matches!(meta, Meta::Model(m) if m.role == Role::License
        && m.license.as_ref().is_some_and(|l| l.id == license_hex))
}

impl fmt::Debug for LicenseReader {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("LicenseReader")
            .field("license_id", &self.license_hex)
            .finish_non_exhaustive()
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
        MasterRef {
            id: "m_1".to_owned(),
            sha256: [0x33; 32],
        }
    }

    #[test]
    fn released_key_is_the_license_key() {
        let service = service();
        let mut player = PlayerSession::new().unwrap();
        let sealed = service
            .seal_license_key(&master(), 0xFEED, &player.public_key())
            .unwrap();
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
        let sealed = service
            .seal_license_key(&master(), 1, &player.public_key())
            .unwrap();
        assert_eq!(
            player.accept_license_key(2, &sealed).unwrap_err().code(),
            "DECRYPT_FAILED"
        );
        assert!(player.license().is_err());
        // The secret is gone: even the right license id no longer opens.
        assert_eq!(
            player.accept_license_key(1, &sealed).unwrap_err().code(),
            "INVALID_STATE"
        );

        let mut other = PlayerSession::new().unwrap();
        assert_eq!(
            other.accept_license_key(1, &sealed).unwrap_err().code(),
            "DECRYPT_FAILED"
        );
        let mut tampered = PlayerSession::new().unwrap();
        let mut sealed = service
            .seal_license_key(&master(), 1, &tampered.public_key())
            .unwrap();
        sealed.sealed[0] ^= 1;
        assert_eq!(
            tampered.accept_license_key(1, &sealed).unwrap_err().code(),
            "DECRYPT_FAILED"
        );
    }

    #[test]
    fn low_order_player_keys_are_refused() {
        let service = service();
        let mut key = [0u8; 32];
        for low in [0u8, 1] {
            key[0] = low;
            assert_eq!(
                service
                    .seal_license_key(&master(), 1, &key)
                    .unwrap_err()
                    .code(),
                "WEAK_KEY"
            );
        }
        key[31] = 0x80; // bit 255 set on u = 1
        assert_eq!(
            service
                .seal_license_key(&master(), 1, &key)
                .unwrap_err()
                .code(),
            "WEAK_KEY"
        );
    }
}

//! The license and key service's keys (docs/format.md section 8) and the operations that
//! use them: key release (§8.2), key certificates (§7.2) and identify (SPEC behaviour rule 6).
//! Account slots (§8.3) are in [`crate::account`], the upload check in [`crate::verify`] and
//! license copies in [`crate::copy`].
//!
//! Every service key is derived from the 32-byte root secret once, in
//! [`ServiceKeys::from_root`]. Zeroization: the root is a [`SecretKey32`], the X25519 key an
//! [`X25519Secret`] and the Ed25519 keys [`SigningKey`]s, each zeroized when `ServiceKeys`
//! drops; derived per-request keys (license keys, watermark keys) are zeroized when the
//! function that derived them returns. `Debug` shows only the service id and public keys.

use core::fmt;

use iki_crypto::{derive, labels, seal_to, SecretKey32, SigningKey, VerifyingKey, X25519Secret};
use iki_format::certificate::KeyCertificate;
use iki_watermark::{Detection, WatermarkKey};

use crate::error::Error;
use crate::types::{check_account_id, license_id_hex, MasterRef, SealedKey};

/// Longest service identifier (its base URL), in bytes. It is written into every license
/// slot and signer JSON; 1024 bytes is far above any real base URL and keeps both small.
pub const MAX_SERVICE_ID_BYTES: usize = 1024;

/// The service's secrets, derived from its root secret. Build one per process and keep it.
pub struct ServiceKeys {
    pub(crate) root: SecretKey32,
    pub(crate) service_id: String,
    pub(crate) x25519: X25519Secret,
    pub(crate) signing: SigningKey,
    certificate: SigningKey,
}

impl ServiceKeys {
    /// Derives every service key from `root` (format §8.4). `service_id` (e.g. the base URL)
    /// names the service in license slots and in the signer JSON of license copies.
    ///
    /// # Errors
    /// `INVALID_ARGUMENT` when `service_id` is empty or longer than [`MAX_SERVICE_ID_BYTES`].
    pub fn from_root(root: SecretKey32, service_id: &str) -> Result<Self, Error> {
        if service_id.is_empty() || service_id.len() > MAX_SERVICE_ID_BYTES {
            return Err(Error::argument("service id is not 1 to 1024 bytes"));
        }
        Ok(Self {
            x25519: derive::service_x25519(&root),
            signing: derive::service_signing(&root),
            certificate: derive::certificate_signing(&root),
            root,
            service_id: service_id.to_owned(),
        })
    }

    /// The service identifier given to [`ServiceKeys::from_root`].
    #[must_use]
    pub fn service_id(&self) -> &str {
        &self.service_id
    }

    /// The X25519 public key masters are sealed to (`GET /api/keys/service`).
    #[must_use]
    pub fn x25519_public(&self) -> [u8; 32] {
        self.x25519.public_key()
    }

    /// The Ed25519 public key that signs license copies.
    #[must_use]
    pub fn signing_public(&self) -> [u8; 32] {
        self.signing.public_key()
    }

    /// The Ed25519 public key that signs key certificates (the `trusted_issuer` of
    /// `KeyCertificate::verify_for`).
    #[must_use]
    pub fn certificate_public(&self) -> [u8; 32] {
        self.certificate.public_key()
    }

    /// Key release (format §8.2, SPEC behaviour rule 4): derives the license key of
    /// `license_id` for `master` (§8.1) and seals it to the player's ephemeral key with
    /// context `"iki-license-key-v1" || 0x00 || license_id`. The caller has already checked
    /// ownership, revocation and the rate limits.
    ///
    /// # Errors
    /// `WEAK_KEY` for a low-order `player_public`, `INVALID_ARGUMENT` for a bad master id.
    pub fn seal_license_key(
        &self,
        master: &MasterRef,
        license_id: u64,
        player_public: &[u8; 32],
    ) -> Result<SealedKey, Error> {
        let (key, context) = self.release_key_and_context(master, license_id)?;
        let sealed = seal_to(player_public, &context, &context, key.expose_secret())?;
        SealedKey::from_sealed(sealed)
    }

    /// What a key release seals (format §8.2): the license key, and the context
    /// `"iki-license-key-v1" || 0x00 || license_id` that is both HKDF's info and the aad.
    pub(crate) fn release_key_and_context(
        &self,
        master: &MasterRef,
        license_id: u64,
    ) -> Result<(SecretKey32, Vec<u8>), Error> {
        master.check()?;
        let id = license_id_hex(license_id);
        let key = self.license_key(master, &id);
        Ok((
            key,
            labels::context(labels::LICENSE_KEY_RELEASE_V1, id.as_bytes()),
        ))
    }

    /// The license key of a license (format §8.1); `license_id` is its 16 hex digits.
    pub(crate) fn license_key(&self, master: &MasterRef, license_id: &str) -> SecretKey32 {
        derive::license_key(&self.root, &master.sha256, &master.id, license_id)
    }

    /// The watermark key of a master (format §8.4).
    pub(crate) fn watermark_key(&self, master: &MasterRef) -> WatermarkKey {
        let key = derive::watermark_key(&self.root, &master.sha256, &master.id);
        WatermarkKey::from_bytes(*key.expose_secret())
    }

    /// Issues a key certificate binding the device key `subject` to `account_id`, valid in
    /// `[issued_ms, expires_ms)` (`expires_ms = 0`: no end), format §7.2. Returns its bytes;
    /// the signer JSON carries them base64url.
    ///
    /// # Errors
    /// `WEAK_KEY` or `BAD_SIGNATURE` when `subject` is not a usable Ed25519 key,
    /// `INVALID_ARGUMENT` for an account id outside 1 to 256 bytes or an empty validity.
    pub fn certify_signing_key(
        &self,
        subject: &[u8; 32],
        account_id: &str,
        issued_ms: u64,
        expires_ms: u64,
    ) -> Result<Vec<u8>, Error> {
        check_account_id(account_id)?;
        VerifyingKey::from_bytes(subject)?;
        if expires_ms != 0 && expires_ms <= issued_ms {
            return Err(Error::argument("certificate expires before it is issued"));
        }
        let cert = KeyCertificate::issue(
            &self.certificate,
            *subject,
            account_id,
            issued_ms,
            expires_ms,
        )?;
        Ok(cert.to_bytes())
    }

    /// Registration of a device key (`POST /api/keys/signing`): checks the proof of
    /// possession, a strict Ed25519 signature by `subject` over
    /// `"IKI-KEY-REGISTRATION-V1" || 0x00 || account_id`, then issues the certificate as
    /// [`ServiceKeys::certify_signing_key`] does. The proof binds the account, so nobody can
    /// register another person's public key to their own account.
    ///
    /// # Errors
    /// `BAD_SIGNATURE` when the proof does not verify, and the errors of
    /// [`ServiceKeys::certify_signing_key`].
    pub fn certify_registered_key(
        &self,
        subject: &[u8; 32],
        proof: &[u8; 64],
        account_id: &str,
        issued_ms: u64,
        expires_ms: u64,
    ) -> Result<Vec<u8>, Error> {
        let message = registration_message(account_id)?;
        VerifyingKey::from_bytes(subject)?.verify_strict(&message, proof)?;
        self.certify_signing_key(subject, account_id, issued_ms, expires_ms)
    }

    /// Reads the license watermark of a leaked texture of `master` (SPEC behaviour rule 6):
    /// straight-alpha RGBA8, `width * height * 4` bytes (see [`crate::decode_image`]).
    /// "No mark found" is `Ok` with `found: None`, not an error.
    ///
    /// # Errors
    /// `INVALID_ARGUMENT` when the buffer does not match the dimensions or the master id is
    /// bad.
    pub fn identify(
        &self,
        master: &MasterRef,
        width: u32,
        height: u32,
        rgba: &[u8],
    ) -> Result<Detection, Error> {
        master.check()?;
        let key = self.watermark_key(master);
        Ok(iki_watermark::detect(&key, width, height, rgba)?)
    }
}

impl fmt::Debug for ServiceKeys {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ServiceKeys")
            .field("service_id", &self.service_id)
            .field("x25519_public", &hex::encode(self.x25519_public()))
            .field("signing_public", &hex::encode(self.signing_public()))
            .finish_non_exhaustive()
    }
}

/// The message a device key signs to prove possession when it is registered with an
/// account: `"IKI-KEY-REGISTRATION-V1" || 0x00 || account_id`. Public for keys held outside
/// (a browser's WebCrypto key signs these bytes itself).
///
/// # Errors
/// `INVALID_ARGUMENT` when the account id is empty or too long.
pub fn registration_message(account_id: &str) -> Result<Vec<u8>, Error> {
    check_account_id(account_id)?;
    Ok(labels::context(
        labels::KEY_REGISTRATION_V1,
        account_id.as_bytes(),
    ))
}

/// The client side of key registration: `key`'s proof of possession for `account_id`,
/// which [`ServiceKeys::certify_registered_key`] checks. The key never leaves its handle.
///
/// # Errors
/// `INVALID_ARGUMENT` when the account id is empty or too long.
pub fn registration_proof(
    key: &iki_crypto::SigningKey,
    account_id: &str,
) -> Result<[u8; 64], Error> {
    Ok(key.sign(&registration_message(account_id)?))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn keys() -> ServiceKeys {
        ServiceKeys::from_root(SecretKey32::from_bytes([0x5E; 32]), "https://iki.test").unwrap()
    }

    #[test]
    fn keys_are_the_format_derivations() {
        let root = SecretKey32::from_bytes([0x5E; 32]);
        let k = keys();
        assert_eq!(
            k.x25519_public(),
            derive::service_x25519(&root).public_key()
        );
        assert_eq!(
            k.signing_public(),
            derive::service_signing(&root).public_key()
        );
        assert_eq!(
            k.certificate_public(),
            derive::certificate_signing(&root).public_key()
        );
        assert_ne!(k.signing_public(), k.certificate_public());
    }

    #[test]
    fn debug_shows_no_secret() {
        let shown = format!("{:?}", keys());
        assert!(shown.contains("https://iki.test"));
        assert!(!shown.contains("5e5e"), "{shown}");
        let seed = hex::encode(
            derive::service_signing(&SecretKey32::from_bytes([0x5E; 32]))
                .seed()
                .expose_secret(),
        );
        assert!(!shown.contains(&seed));
    }

    #[test]
    fn service_id_at_and_past_its_limit() {
        let root = || SecretKey32::from_bytes([1; 32]);
        assert!(ServiceKeys::from_root(root(), &"s".repeat(MAX_SERVICE_ID_BYTES)).is_ok());
        let long = ServiceKeys::from_root(root(), &"s".repeat(MAX_SERVICE_ID_BYTES + 1));
        assert_eq!(long.unwrap_err().code(), "INVALID_ARGUMENT");
        assert_eq!(
            ServiceKeys::from_root(root(), "").unwrap_err().code(),
            "INVALID_ARGUMENT"
        );
    }

    #[test]
    fn certificates_refuse_bad_subjects_and_validity() {
        let k = keys();
        let device = SigningKey::from_seed(&SecretKey32::from_bytes([0xD0; 32])).public_key();
        let mut identity = [0u8; 32];
        identity[0] = 1;
        assert_eq!(
            k.certify_signing_key(&identity, "acct", 0, 0)
                .unwrap_err()
                .code(),
            "WEAK_KEY"
        );
        assert_eq!(
            k.certify_signing_key(&device, "acct", 10, 10)
                .unwrap_err()
                .code(),
            "INVALID_ARGUMENT"
        );
        assert_eq!(
            k.certify_signing_key(&device, "", 0, 0).unwrap_err().code(),
            "INVALID_ARGUMENT"
        );
        assert!(k.certify_signing_key(&device, "acct", 10, 11).is_ok());
    }

    #[test]
    fn registration_needs_a_proof_for_the_same_account() {
        let k = keys();
        let device = SigningKey::from_seed(&SecretKey32::from_bytes([0xD1; 32]));
        let subject = device.public_key();
        let proof = device.sign(&labels::context(labels::KEY_REGISTRATION_V1, b"acct_ada"));
        let cert = k
            .certify_registered_key(&subject, &proof, "acct_ada", 5, 0)
            .unwrap();
        let parsed = KeyCertificate::parse(&cert).unwrap();
        assert_eq!(
            (parsed.account_id.as_str(), parsed.subject_key),
            ("acct_ada", subject)
        );
        let code = |account: &str, proof: &[u8; 64]| {
            k.certify_registered_key(&subject, proof, account, 5, 0)
                .unwrap_err()
                .code()
        };
        assert_eq!(code("acct_bob", &proof), "BAD_SIGNATURE");
        let mut flipped = proof;
        flipped[10] ^= 1;
        assert_eq!(code("acct_ada", &flipped), "BAD_SIGNATURE");
        let other = SigningKey::from_seed(&SecretKey32::from_bytes([0xD2; 32]));
        let foreign = other.sign(&labels::context(labels::KEY_REGISTRATION_V1, b"acct_ada"));
        assert_eq!(code("acct_ada", &foreign), "BAD_SIGNATURE");
        // The client-side helper makes exactly the proof the service checks.
        assert_eq!(
            super::registration_proof(&device, "acct_ada").unwrap(),
            proof
        );
        assert_eq!(
            super::registration_proof(&device, "").unwrap_err().code(),
            "INVALID_ARGUMENT"
        );
        assert_eq!(code("", &proof), "INVALID_ARGUMENT");
    }
}

//! Service key derivations (docs/format.md sections 8 and 9), all HKDF-SHA256 (RFC 5869)
//! from a 32-byte root secret, each under its own versioned label from [`crate::labels`].
//!
//! HKDF `info` is `label || value` with no separator, exactly as the format writes it. No
//! label is a prefix of another, so two functions never share an `info`; within
//! [`license_key`] the split between master id and license id is unique only because the
//! license id always has exactly 16 hex digits, which the caller checks (format §3.4).
//!
//! Zeroization: every output is a [`SecretKey32`], [`X25519Secret`] or [`SigningKey`], each
//! zeroized on drop; intermediate seeds are [`SecretKey32`] values dropped before return.

use crate::ed25519::SigningKey;
use crate::kdf::hkdf_sha256;
use crate::labels;
use crate::secret::SecretKey32;
use crate::x25519::X25519Secret;

/// The license key, content key of a license copy (format §8.1):
/// `HKDF(ikm = root, salt = master SHA-256, info = "license-key-v1" || master_id || license_id)`.
#[must_use]
pub fn license_key(
    root: &SecretKey32,
    master_sha256: &[u8; 32],
    master_id: &str,
    license_id: &str,
) -> SecretKey32 {
    hkdf_sha256(
        root.expose_secret(),
        master_sha256,
        &[
            labels::LICENSE_KEY_V1,
            master_id.as_bytes(),
            license_id.as_bytes(),
        ],
    )
}

/// A master's watermark key (format §8.4):
/// `HKDF(ikm = root, salt = master SHA-256, info = "watermark-key-v1" || master_id)`.
#[must_use]
pub fn watermark_key(root: &SecretKey32, master_sha256: &[u8; 32], master_id: &str) -> SecretKey32 {
    hkdf_sha256(
        root.expose_secret(),
        master_sha256,
        &[labels::WATERMARK_KEY_V1, master_id.as_bytes()],
    )
}

/// An account's key-encryption key for account slot blobs (format §8.3):
/// `HKDF(ikm = root, salt = "", info = "account-kek-v1" || account_id)`.
#[must_use]
pub fn account_kek(root: &SecretKey32, account_id: &str) -> SecretKey32 {
    hkdf_sha256(
        root.expose_secret(),
        b"",
        &[labels::ACCOUNT_KEK_V1, account_id.as_bytes()],
    )
}

/// The service's X25519 key, recipient of masters (format §8.4, info `"service-x25519-v1"`).
#[must_use]
pub fn service_x25519(root: &SecretKey32) -> X25519Secret {
    X25519Secret::from_key(hkdf_sha256(
        root.expose_secret(),
        b"",
        &[labels::SERVICE_X25519_V1],
    ))
}

/// The service's Ed25519 key that signs license copies (format §8.4, info
/// `"service-signing-v1"`; the 32 bytes are the RFC 8032 seed).
#[must_use]
pub fn service_signing(root: &SecretKey32) -> SigningKey {
    signing_key(root, labels::SERVICE_SIGNING_V1)
}

/// The key service's certificate-signing Ed25519 key (format §8.4, info
/// `"key-certificate-signing-v1"`).
#[must_use]
pub fn certificate_signing(root: &SecretKey32) -> SigningKey {
    signing_key(root, labels::KEY_CERTIFICATE_SIGNING_V1)
}

/// The service's Ed25519 key that signs access tokens (format §8.4, info `"access-token-v1"`).
#[must_use]
pub fn access_token_key(root: &SecretKey32) -> SigningKey {
    signing_key(root, labels::ACCESS_TOKEN_V1)
}

/// The file id of a license copy (format §9): the first 16 bytes of
/// `HKDF(ikm = license_key, salt = "", info = "iki-license-file-id-v1")`.
#[must_use]
pub fn license_file_id(license_key: &SecretKey32) -> [u8; 16] {
    let okm = hkdf_sha256(
        license_key.expose_secret(),
        b"",
        &[labels::LICENSE_FILE_ID_V1],
    );
    let mut id = [0u8; 16];
    for (dst, src) in id.iter_mut().zip(okm.expose_secret().iter()) {
        *dst = *src;
    }
    id
}

fn signing_key(root: &SecretKey32, label: &[u8]) -> SigningKey {
    SigningKey::from_seed(&hkdf_sha256(root.expose_secret(), b"", &[label]))
}

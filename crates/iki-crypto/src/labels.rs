//! Every domain-separation label iki uses, defined once (docs/format.md sections 4, 7, 8 and
//! SPEC "Versioning": derivation labels end in `v1`, signature and certificate labels in `V1`).
//!
//! Labels are ASCII with no terminator. Where the format writes `label || 0x00 || value`
//! (signature message, certificate message, key-release and account contexts), use
//! [`context`]; HKDF `info` strings concatenate the label and the value with no separator.
//! Nothing here is secret.

/// Signature message prefix (format §7): `"IKIFMT-SIGNATURE-V1" || 0x00 || digest`.
pub const SIGNATURE_V1: &[u8] = b"IKIFMT-SIGNATURE-V1";
/// HKDF info of the per-file content sub-key (format §4).
pub const CONTENT_V1: &[u8] = b"ikifmt-content-v1";
/// HKDF info of a recipient slot's key-encryption key (format §3.3).
pub const RECIPIENT_V1: &[u8] = b"ikifmt-recipient-v1";
/// Key-certificate message prefix (format §7.2), followed by `0x00`.
pub const KEY_CERTIFICATE_V1: &[u8] = b"IKI-KEY-CERTIFICATE-V1";
/// HKDF info prefix of a license key, followed by master id and license id (format §8.1).
pub const LICENSE_KEY_V1: &[u8] = b"license-key-v1";
/// Key-release context prefix (format §8.2), followed by `0x00` and the license id.
pub const LICENSE_KEY_RELEASE_V1: &[u8] = b"iki-license-key-v1";
/// HKDF info prefix of an account's key-encryption key, followed by the account id
/// (format §8.3).
pub const ACCOUNT_KEK_V1: &[u8] = b"account-kek-v1";
/// Associated-data prefix of an account slot blob (format §8.3), followed by `0x00` and the
/// account id.
pub const ACCOUNT_SLOT_V1: &[u8] = b"iki-account-slot-v1";
/// Context prefix of an unwrap answer (format §8.2), followed by `0x00` and the account id.
pub const ACCOUNT_UNWRAP_V1: &[u8] = b"iki-account-unwrap-v1";
/// HKDF info prefix of a master's watermark key, followed by the master id (format §8.4).
pub const WATERMARK_KEY_V1: &[u8] = b"watermark-key-v1";
/// HKDF info of the service's X25519 key (format §8.4).
pub const SERVICE_X25519_V1: &[u8] = b"service-x25519-v1";
/// HKDF info of the service's Ed25519 seed that signs license copies (format §8.4).
pub const SERVICE_SIGNING_V1: &[u8] = b"service-signing-v1";
/// HKDF info of the key service's certificate-signing Ed25519 seed (format §8.4).
pub const KEY_CERTIFICATE_SIGNING_V1: &[u8] = b"key-certificate-signing-v1";
/// HKDF info of a license copy's file id, taken from the license key (format §9).
pub const LICENSE_FILE_ID_V1: &[u8] = b"iki-license-file-id-v1";
/// HKDF info of the service's Ed25519 seed that signs access tokens (format §8.4).
pub const ACCESS_TOKEN_V1: &[u8] = b"access-token-v1";
/// Proof-of-possession message prefix of a device key registration (format §7.2,
/// `POST /api/keys/signing`), followed by `0x00` and the account id.
pub const KEY_REGISTRATION_V1: &[u8] = b"IKI-KEY-REGISTRATION-V1";

/// Every label above, for tests that check they are pairwise distinct.
pub const ALL: [&[u8]; 16] = [
    SIGNATURE_V1,
    CONTENT_V1,
    RECIPIENT_V1,
    KEY_CERTIFICATE_V1,
    LICENSE_KEY_V1,
    LICENSE_KEY_RELEASE_V1,
    ACCOUNT_KEK_V1,
    ACCOUNT_SLOT_V1,
    ACCOUNT_UNWRAP_V1,
    WATERMARK_KEY_V1,
    SERVICE_X25519_V1,
    SERVICE_SIGNING_V1,
    KEY_CERTIFICATE_SIGNING_V1,
    LICENSE_FILE_ID_V1,
    ACCESS_TOKEN_V1,
    KEY_REGISTRATION_V1,
];

/// `label || 0x00 || value`, the context layout of format §7, §7.2, §8.2 and §8.3.
///
/// The zero byte cannot occur in a label, so the split between label and value is
/// unambiguous.
#[must_use]
pub fn context(label: &[u8], value: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(label.len().saturating_add(1).saturating_add(value.len()));
    out.extend_from_slice(label);
    out.push(0);
    out.extend_from_slice(value);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels_are_distinct_ascii_without_nul() {
        for (i, a) in ALL.iter().enumerate() {
            assert!(
                a.iter().all(|b| b.is_ascii_graphic()),
                "{}",
                String::from_utf8_lossy(a)
            );
            for b in ALL.iter().skip(i + 1) {
                assert_ne!(a, b);
            }
        }
    }

    #[test]
    fn context_inserts_one_zero_byte() {
        assert_eq!(
            context(LICENSE_KEY_RELEASE_V1, b"00112233aabbccdd"),
            b"iki-license-key-v1\x0000112233aabbccdd".to_vec()
        );
        assert_eq!(context(b"a", b""), b"a\x00".to_vec());
    }
}

//! The SIGN chunk: digest, signed message and signer JSON (docs/format.md sections 7, 7.1).
//!
//! ```text
//! SIGN      = algorithm(u8 = 1) public_key(32) info_length(u32) info signature(64)
//! digest    = SHA-256(every file byte before the 64 signature bytes)
//! message   = "IKIFMT-SIGNATURE-V1" || 0x00 || digest
//! ```
//!
//! Verification is strict (ed25519-dalek `verify_strict`); a small-order or non-canonical
//! public key is refused before verifying. Every failure is `BAD_SIGNATURE`.

use iki_crypto::{labels, SigningKey, VerifyingKey};
use serde::{Deserialize, Serialize};

use crate::chunk::SIGN;
use crate::cursor::Cursor;
use crate::error::Error;
use crate::limits::{MAX_SIGNER_NAME_BYTES, MAX_SIGN_PAYLOAD_BYTES};

/// Algorithm byte of Ed25519.
pub const SIGN_ALGORITHM_ED25519: u8 = 1;
/// SIGN payload bytes besides the signer JSON: 1 + 32 + 4 + 64.
pub const SIGN_FIXED_BYTES: usize = 101;
/// Length of the trailing signature.
pub const SIGNATURE_BYTES: usize = 64;

/// Who signed a file, as the signer claims (section 7.1).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SignerKind {
    /// A browser or CLI key.
    Device,
    /// A device key certified for an account.
    Account,
    /// The license service signing a license copy.
    Service,
}

/// The signer JSON (section 7.1). A claim: only a certificate that verifies under the key
/// service's key attributes a file to an account.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SignerInfo {
    /// Kind of signer.
    pub kind: SignerKind,
    /// Optional display name, at most 256 bytes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Account id; present when `kind` is `account`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub account: Option<String>,
    /// base64url (no padding) key certificate; present when `kind` is `account`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub certificate: Option<String>,
    /// Service identifier (base URL); present when `kind` is `service`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub service: Option<String>,
}

impl SignerInfo {
    /// A device signer with an optional display name.
    #[must_use]
    pub fn device(name: Option<String>) -> Self {
        Self {
            kind: SignerKind::Device,
            name,
            account: None,
            certificate: None,
            service: None,
        }
    }

    /// Checks the rules of section 7.1.
    ///
    /// # Errors
    /// `MALFORMED_CHUNK` (SIGN) naming the rule.
    pub fn validate(&self) -> Result<(), Error> {
        let bad = |reason| Err(Error::malformed(SIGN, reason));
        if self
            .name
            .as_ref()
            .is_some_and(|n| n.len() > MAX_SIGNER_NAME_BYTES as usize)
        {
            return bad("signer name above 256 bytes");
        }
        match self.kind {
            SignerKind::Account if self.account.is_none() || self.certificate.is_none() => {
                bad("account signer without account and certificate")
            }
            SignerKind::Service if self.service.is_none() => bad("service signer without service"),
            _ => Ok(()),
        }
    }

    /// Parses and checks signer JSON (must be an object; unknown fields are ignored).
    ///
    /// # Errors
    /// `MALFORMED_CHUNK` (SIGN).
    pub fn from_json(json: &[u8]) -> Result<Self, Error> {
        let value: serde_json::Value = serde_json::from_slice(json)
            .map_err(|_| Error::malformed(SIGN, "signer json is not json"))?;
        let Some(object) = value.as_object() else {
            return Err(Error::malformed(SIGN, "signer json is not an object"));
        };
        check_signer_fields(object)?;
        let info: Self = serde_json::from_value(value)
            .map_err(|_| Error::malformed(SIGN, "signer json shape"))?;
        info.validate()?;
        Ok(info)
    }

    /// The signer JSON bytes.
    ///
    /// # Errors
    /// `MALFORMED_CHUNK` when the rules of section 7.1 do not hold.
    pub fn to_json(&self) -> Result<Vec<u8>, Error> {
        self.validate()?;
        serde_json::to_vec(self).map_err(|_| Error::malformed(SIGN, "signer json"))
    }
}

/// Names the field at fault before serde, whose messages cannot travel in a `&'static str`.
fn check_signer_fields(object: &serde_json::Map<String, serde_json::Value>) -> Result<(), Error> {
    let bad = |reason| Err(Error::malformed(SIGN, reason));
    match object.get("kind").map(serde_json::Value::as_str) {
        None => return bad("signer json has no kind"),
        Some(Some("device" | "account" | "service")) => {}
        Some(_) => return bad("signer json kind is not device, account or service"),
    }
    const OPTIONAL: [(&str, &str); 4] = [
        ("name", "signer json name is not a string"),
        ("account", "signer json account is not a string"),
        ("certificate", "signer json certificate is not a string"),
        ("service", "signer json service is not a string"),
    ];
    for (field, reason) in OPTIONAL {
        if object
            .get(field)
            .is_some_and(|v| !v.is_string() && !v.is_null())
        {
            return bad(reason);
        }
    }
    Ok(())
}

/// A signature that verified, and what the signer claims.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Verified {
    /// The Ed25519 public key that signed the file.
    pub public_key: [u8; 32],
    /// The parsed signer JSON.
    pub signer: SignerInfo,
    /// The signer JSON bytes as found.
    pub info: Vec<u8>,
}

/// `"IKIFMT-SIGNATURE-V1" || 0x00 || digest`.
#[must_use]
pub fn signature_message(digest: &[u8; 32]) -> Vec<u8> {
    labels::context(labels::SIGNATURE_V1, digest)
}

/// The SIGN payload bytes before the signature: algorithm, public key, info length, info.
///
/// # Errors
/// `LIMIT_EXCEEDED` when the whole payload would pass 65536 bytes.
pub fn sign_payload_prefix(public_key: &[u8; 32], info: &[u8]) -> Result<Vec<u8>, Error> {
    let total = SIGN_FIXED_BYTES + info.len();
    if total > MAX_SIGN_PAYLOAD_BYTES as usize {
        return Err(Error::limit(
            "MAX_SIGN_PAYLOAD_BYTES",
            total as u64,
            MAX_SIGN_PAYLOAD_BYTES.into(),
        ));
    }
    let mut out = Vec::with_capacity(total - SIGNATURE_BYTES);
    out.push(SIGN_ALGORITHM_ED25519);
    out.extend_from_slice(public_key);
    out.extend_from_slice(&u32::try_from(info.len()).unwrap_or(u32::MAX).to_le_bytes());
    out.extend_from_slice(info);
    Ok(out)
}

/// Signs a file digest.
#[must_use]
pub fn sign_digest(key: &SigningKey, digest: &[u8; 32]) -> [u8; 64] {
    key.sign(&signature_message(digest))
}

/// The fields of a SIGN payload.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SignPayload<'a> {
    /// Signing public key.
    pub public_key: [u8; 32],
    /// Signer JSON bytes.
    pub info: &'a [u8],
    /// The signature.
    pub signature: [u8; 64],
}

impl<'a> SignPayload<'a> {
    /// Splits a SIGN payload; it must be exactly `101 + info_length` bytes.
    ///
    /// # Errors
    /// `UNSUPPORTED_ALGORITHM` for an algorithm other than 1, `MALFORMED_CHUNK` otherwise.
    pub fn parse(payload: &'a [u8]) -> Result<Self, Error> {
        let malformed = || Error::malformed(SIGN, "payload is not 101 + info_length bytes");
        let mut c = Cursor::new(payload);
        let algorithm = c.u8().ok_or_else(malformed)?;
        if algorithm != SIGN_ALGORITHM_ED25519 {
            return Err(Error::UnsupportedAlgorithm {
                field: "signature",
                value: algorithm,
            });
        }
        let public_key = c.array().ok_or_else(malformed)?;
        let info_length = c.u32().ok_or_else(malformed)?;
        let info = c
            .take(usize::try_from(info_length).map_err(|_| malformed())?)
            .ok_or_else(malformed)?;
        let signature = c.array().ok_or_else(malformed)?;
        if !c.is_empty() {
            return Err(malformed());
        }
        Ok(Self {
            public_key,
            info,
            signature,
        })
    }

    /// Verifies the signature over `digest` strictly and parses the signer JSON.
    ///
    /// # Errors
    /// `BAD_SIGNATURE` for a weak or non-canonical key or a signature that does not
    /// verify; `MALFORMED_CHUNK` for signer JSON breaking section 7.1.
    pub fn verify(&self, digest: &[u8; 32]) -> Result<Verified, Error> {
        let key = VerifyingKey::from_bytes(&self.public_key).map_err(|_| Error::BadSignature)?;
        key.verify_strict(&signature_message(digest), &self.signature)
            .map_err(|_| Error::BadSignature)?;
        let signer = SignerInfo::from_json(self.info)?;
        Ok(Verified {
            public_key: self.public_key,
            signer,
            info: self.info.to_vec(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use iki_crypto::SecretKey32;

    #[test]
    fn payload_round_trip_and_exact_length() {
        let key = SigningKey::from_seed(&SecretKey32::from_bytes([0x42; 32]));
        let info = SignerInfo::device(Some("test".into())).to_json().unwrap();
        let digest = [7u8; 32];
        let mut payload = sign_payload_prefix(&key.public_key(), &info).unwrap();
        payload.extend_from_slice(&sign_digest(&key, &digest));
        let parsed = SignPayload::parse(&payload).unwrap();
        let verified = parsed.verify(&digest).unwrap();
        assert_eq!(verified.signer.kind, SignerKind::Device);
        assert_eq!(parsed.verify(&[8u8; 32]).unwrap_err(), Error::BadSignature);
        payload.push(0);
        assert_eq!(
            SignPayload::parse(&payload).unwrap_err().code(),
            "MALFORMED_CHUNK"
        );
        payload.truncate(payload.len() - 2);
        assert_eq!(
            SignPayload::parse(&payload).unwrap_err().code(),
            "MALFORMED_CHUNK"
        );
        payload[0] = 2;
        assert_eq!(
            SignPayload::parse(&payload).unwrap_err().code(),
            "UNSUPPORTED_ALGORITHM"
        );
    }

    #[test]
    fn sign_payload_limit_at_and_past() {
        let at = vec![b' '; 65536 - SIGN_FIXED_BYTES];
        assert!(sign_payload_prefix(&[0; 32], &at).is_ok());
        let past = vec![b' '; 65537 - SIGN_FIXED_BYTES];
        assert_eq!(
            sign_payload_prefix(&[0; 32], &past).unwrap_err().code(),
            "LIMIT_EXCEEDED"
        );
    }

    #[test]
    fn signer_json_rules() {
        assert!(SignerInfo::from_json(br#"{"kind":"device","future":1}"#).is_ok());
        for bad in [
            &br#"{"kind":"account","account":"acct_1"}"#[..],
            br#"{"kind":"service"}"#,
            br#"{"kind":"robot"}"#,
            br#"["device"]"#,
            b"not json",
        ] {
            assert_eq!(
                SignerInfo::from_json(bad).unwrap_err().code(),
                "MALFORMED_CHUNK"
            );
        }
        // The message names the field at fault.
        for (json, reason) in [
            (&br#"{"name":"x"}"#[..], "signer json has no kind"),
            (
                br#"{"kind":7}"#,
                "signer json kind is not device, account or service",
            ),
            (
                br#"{"kind":"device","name":7}"#,
                "signer json name is not a string",
            ),
            (
                br#"{"kind":"account","account":"a","certificate":[]}"#,
                "signer json certificate is not a string",
            ),
        ] {
            assert_eq!(
                SignerInfo::from_json(json).unwrap_err(),
                Error::malformed(SIGN, reason)
            );
        }
        assert!(SignerInfo::from_json(br#"{"kind":"device","name":null}"#).is_ok());
        let long = format!(r#"{{"kind":"device","name":"{}"}}"#, "n".repeat(257));
        assert!(SignerInfo::from_json(long.as_bytes()).is_err());
        let ok = format!(r#"{{"kind":"device","name":"{}"}}"#, "n".repeat(256));
        assert!(SignerInfo::from_json(ok.as_bytes()).is_ok());
    }
}

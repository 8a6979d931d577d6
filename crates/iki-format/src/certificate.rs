//! Key certificates binding a device signing key to an account (docs/format.md section 7.2).
//!
//! ```text
//! cert = version(u8 = 1) issuer_key(32) subject_key(32) account_id(u16str)
//!        issued_ms(u64) expires_ms(u64, 0 = never) signature(64)
//! signed message = "IKI-KEY-CERTIFICATE-V1" || 0x00 || every cert byte before the signature
//! ```
//!
//! Carried base64url (no padding) in the signer JSON. Every failure is `BAD_CERTIFICATE`.

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine as _;
use iki_crypto::{labels, SigningKey, VerifyingKey};

use crate::cursor::{put_u16_bytes, Cursor};
use crate::error::Error;
use crate::limits::{MAX_ACCOUNT_ID_BYTES, MIN_ACCOUNT_ID_BYTES};
use crate::sign::{SignerInfo, SignerKind};

/// Version byte of this certificate layout.
pub const CERTIFICATE_VERSION: u8 = 1;

/// A parsed key certificate.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KeyCertificate {
    /// The key service's Ed25519 certificate key.
    pub issuer_key: [u8; 32],
    /// The certified device key (SIGN's public key).
    pub subject_key: [u8; 32],
    /// The account, 1 to 256 bytes.
    pub account_id: String,
    /// Start of validity, ms since the Unix epoch.
    pub issued_ms: u64,
    /// End of validity (exclusive), ms; 0 = never.
    pub expires_ms: u64,
    /// Issuer's signature.
    pub signature: [u8; 64],
}

fn bad(reason: &'static str) -> Error {
    Error::BadCertificate { reason }
}

impl KeyCertificate {
    /// Issues a certificate (key service side).
    ///
    /// # Errors
    /// `INVALID_ARGUMENT` for an account id outside 1 to 256 bytes.
    pub fn issue(
        issuer: &SigningKey,
        subject_key: [u8; 32],
        account_id: &str,
        issued_ms: u64,
        expires_ms: u64,
    ) -> Result<Self, Error> {
        if !(MIN_ACCOUNT_ID_BYTES as usize..=MAX_ACCOUNT_ID_BYTES as usize)
            .contains(&account_id.len())
        {
            return Err(Error::argument("account id is not 1 to 256 bytes"));
        }
        let mut cert = Self {
            issuer_key: issuer.public_key(),
            subject_key,
            account_id: account_id.to_owned(),
            issued_ms,
            expires_ms,
            signature: [0; 64],
        };
        cert.signature = issuer.sign(&labels::context(
            labels::KEY_CERTIFICATE_V1,
            &cert.signed_part(),
        ));
        Ok(cert)
    }

    fn signed_part(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(83 + self.account_id.len());
        out.push(CERTIFICATE_VERSION);
        out.extend_from_slice(&self.issuer_key);
        out.extend_from_slice(&self.subject_key);
        // Length checked on issue and parse; a hand-built longer id is cut off by the
        // signature check failing, never by a panic.
        let _ = put_u16_bytes(&mut out, self.account_id.as_bytes());
        out.extend_from_slice(&self.issued_ms.to_le_bytes());
        out.extend_from_slice(&self.expires_ms.to_le_bytes());
        out
    }

    /// The certificate bytes.
    #[must_use]
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = self.signed_part();
        out.extend_from_slice(&self.signature);
        out
    }

    /// base64url without padding, as carried in the signer JSON.
    #[must_use]
    pub fn to_base64url(&self) -> String {
        URL_SAFE_NO_PAD.encode(self.to_bytes())
    }

    /// Parses certificate bytes (the exact layout; nothing may follow).
    ///
    /// # Errors
    /// `BAD_CERTIFICATE`.
    pub fn parse(bytes: &[u8]) -> Result<Self, Error> {
        let mut c = Cursor::new(bytes);
        if c.u8() != Some(CERTIFICATE_VERSION) {
            return Err(bad("unknown certificate version"));
        }
        let layout = || bad("certificate layout");
        let issuer_key = c.array().ok_or_else(layout)?;
        let subject_key = c.array().ok_or_else(layout)?;
        let account_id = c.u16_str().ok_or_else(layout)?;
        if !(MIN_ACCOUNT_ID_BYTES as usize..=MAX_ACCOUNT_ID_BYTES as usize)
            .contains(&account_id.len())
        {
            return Err(bad("account id is not 1 to 256 bytes"));
        }
        let cert = Self {
            issuer_key,
            subject_key,
            account_id: account_id.to_owned(),
            issued_ms: c.u64().ok_or_else(layout)?,
            expires_ms: c.u64().ok_or_else(layout)?,
            signature: c.array().ok_or_else(layout)?,
        };
        if !c.is_empty() {
            return Err(layout());
        }
        Ok(cert)
    }

    /// Parses the base64url text of the signer JSON.
    ///
    /// # Errors
    /// `BAD_CERTIFICATE`.
    pub fn from_base64url(text: &str) -> Result<Self, Error> {
        let bytes = URL_SAFE_NO_PAD
            .decode(text)
            .map_err(|_| bad("not base64url without padding"))?;
        Self::parse(&bytes)
    }

    /// Whether this certificate attributes a file to `self.account_id`: the subject is the
    /// file's signing key, the issuer is `trusted_issuer` (the key service's published
    /// key), the signature verifies strictly, and `created_ms` lies in
    /// `[issued_ms, expires_ms)` (no end when `expires_ms` is 0). Revocation is checked
    /// online by the caller.
    ///
    /// # Errors
    /// `BAD_CERTIFICATE` naming the failed condition.
    pub fn verify_for(
        &self,
        file_public_key: &[u8; 32],
        created_ms: u64,
        trusted_issuer: &[u8; 32],
    ) -> Result<(), Error> {
        if &self.subject_key != file_public_key {
            return Err(bad("certificate is for another key"));
        }
        if &self.issuer_key != trusted_issuer {
            return Err(bad("certificate issuer is not the key service"));
        }
        let issuer =
            VerifyingKey::from_bytes(&self.issuer_key).map_err(|_| bad("issuer key is invalid"))?;
        let message = labels::context(labels::KEY_CERTIFICATE_V1, &self.signed_part());
        issuer
            .verify_strict(&message, &self.signature)
            .map_err(|_| bad("certificate signature does not verify"))?;
        if created_ms < self.issued_ms || (self.expires_ms != 0 && created_ms >= self.expires_ms) {
            return Err(bad("file created outside the certificate's validity"));
        }
        Ok(())
    }
}

/// The one check of a signer's account claim (section 7.2), shared by every reader: the
/// app's open (through WASM), the CLI's `verify` and `inspect`, and the service's upload
/// check. `signer` is the signer JSON of a file whose signature by `public_key` verified, and
/// `created_ms` is its HEAD time. Returns `None` for a signer that claims no account
/// (`device`, `service`), and the certificate when it attributes the file to the claimed
/// account: well formed, for this signing key, issued by `trusted_issuer` (the key service's
/// published certificate key), signature strictly valid, `created_ms` inside its validity, and
/// naming the account the signer JSON names. Revocation is looked up online by the caller.
///
/// # Errors
/// `BAD_CERTIFICATE` naming the condition that failed.
pub fn check_signer(
    public_key: &[u8; 32],
    signer: &SignerInfo,
    created_ms: u64,
    trusted_issuer: &[u8; 32],
) -> Result<Option<KeyCertificate>, Error> {
    if signer.kind != SignerKind::Account {
        return Ok(None);
    }
    let text = signer
        .certificate
        .as_deref()
        .ok_or_else(|| bad("account signer without certificate"))?;
    let cert = KeyCertificate::from_base64url(text)?;
    cert.verify_for(public_key, created_ms, trusted_issuer)?;
    if signer.account.as_deref() != Some(cert.account_id.as_str()) {
        return Err(bad("the signer's account is not the certificate's"));
    }
    Ok(Some(cert))
}

#[cfg(test)]
mod tests {
    use super::*;
    use iki_crypto::SecretKey32;

    fn issuer() -> SigningKey {
        SigningKey::from_seed(&SecretKey32::from_bytes([0x1C; 32]))
    }

    #[test]
    fn issue_parse_verify() {
        let device = SigningKey::from_seed(&SecretKey32::from_bytes([0xD0; 32])).public_key();
        let cert = KeyCertificate::issue(&issuer(), device, "acct_test", 1000, 2000).unwrap();
        let parsed = KeyCertificate::from_base64url(&cert.to_base64url()).unwrap();
        assert_eq!(parsed, cert);
        let trusted = issuer().public_key();
        assert!(cert.verify_for(&device, 1000, &trusted).is_ok());
        assert!(cert.verify_for(&device, 1999, &trusted).is_ok());
        for (key, at, who) in [
            (device, 999, trusted),
            (device, 2000, trusted),
            ([9; 32], 1500, trusted),
            (device, 1500, device),
        ] {
            assert_eq!(
                cert.verify_for(&key, at, &who).unwrap_err().code(),
                "BAD_CERTIFICATE"
            );
        }
        let mut forged = cert.clone();
        forged.expires_ms = 0;
        assert!(forged.verify_for(&device, 5000, &trusted).is_err());
        let forever = KeyCertificate::issue(&issuer(), device, "acct_test", 0, 0).unwrap();
        assert!(forever.verify_for(&device, u64::MAX, &trusted).is_ok());
    }

    #[test]
    fn check_signer_attributes_only_a_matching_claim() {
        let device = SigningKey::from_seed(&SecretKey32::from_bytes([0xD0; 32])).public_key();
        let trusted = issuer().public_key();
        let cert = KeyCertificate::issue(&issuer(), device, "acct_ada", 1000, 0).unwrap();
        let claim = |account: &str, certificate: Option<String>| SignerInfo {
            kind: SignerKind::Account,
            name: None,
            account: Some(account.to_owned()),
            certificate,
            service: None,
        };
        let good = claim("acct_ada", Some(cert.to_base64url()));
        assert_eq!(
            check_signer(&device, &good, 1000, &trusted).unwrap(),
            Some(cert.clone())
        );
        assert_eq!(
            check_signer(&device, &SignerInfo::device(None), 5, &trusted).unwrap(),
            None
        );
        let code = |signer: &SignerInfo, key: &[u8; 32], at: u64, who: &[u8; 32]| {
            check_signer(key, signer, at, who).unwrap_err().code()
        };
        // Another account named beside a valid certificate, no certificate, a bad one,
        // another key, another issuer, before issue.
        assert_eq!(
            code(
                &claim("acct_bob", Some(cert.to_base64url())),
                &device,
                1000,
                &trusted
            ),
            "BAD_CERTIFICATE"
        );
        assert_eq!(
            code(&claim("acct_ada", None), &device, 1000, &trusted),
            "BAD_CERTIFICATE"
        );
        assert_eq!(
            code(
                &claim("acct_ada", Some("AAAA".into())),
                &device,
                1000,
                &trusted
            ),
            "BAD_CERTIFICATE"
        );
        assert_eq!(code(&good, &[7; 32], 1000, &trusted), "BAD_CERTIFICATE");
        assert_eq!(code(&good, &device, 1000, &device), "BAD_CERTIFICATE");
        assert_eq!(code(&good, &device, 999, &trusted), "BAD_CERTIFICATE");
    }

    #[test]
    fn malformed_certificates() {
        let cert = KeyCertificate::issue(&issuer(), [3; 32], "a", 0, 0)
            .unwrap()
            .to_bytes();
        for bytes in [
            &cert[..cert.len() - 1],
            &[&cert[..], &[0]].concat(),
            &[2u8][..],
        ] {
            assert_eq!(
                KeyCertificate::parse(bytes).unwrap_err().code(),
                "BAD_CERTIFICATE"
            );
        }
        assert!(KeyCertificate::from_base64url("AA==").is_err());
        assert!(KeyCertificate::issue(&issuer(), [3; 32], "", 0, 0).is_err());
    }
}

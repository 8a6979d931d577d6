//! Who signed a file, at the boundary: the one check of a signer's account claim against the
//! key service's certificate key (`iki_format::certificate::check_signer`, docs/format.md
//! section 7.2), which the app's open in a browser, the CLI's `verify` and `inspect` and the
//! service's upload check all use, and the fields of a certificate for display.
//!
//! Nothing here is secret: public keys, certificates and the signer JSON.

use iki_format::certificate::{check_signer, KeyCertificate};
use iki_format::SignerInfo;
use wasm_bindgen::prelude::*;

use crate::convert::{argument_error, array32, bytes, license_error, object};
use crate::error::js_error;

#[allow(clippy::cast_precision_loss)] // certificate times are milliseconds, far below 2^53
fn certificate_to_js(cert: &KeyCertificate) -> JsValue {
    object(&[
        ("accountId", JsValue::from_str(&cert.account_id)),
        ("issuerKey", bytes(&cert.issuer_key)),
        ("subjectKey", bytes(&cert.subject_key)),
        ("issuedMs", JsValue::from_f64(cert.issued_ms as f64)),
        ("expiresMs", JsValue::from_f64(cert.expires_ms as f64)),
    ])
}

/// Checks the account claim of a file whose signature by `public_key` verified: `null` when
/// the signer JSON claims no account, the certificate's fields when it attributes the file to
/// the claimed account (issued by `trusted_issuer`, the key service's published certificate
/// key, for this key, valid at `created_ms`); throws `BAD_CERTIFICATE` (details: `reason`)
/// otherwise. Revocation is the caller's online look-up.
#[wasm_bindgen(js_name = checkSignerCertificate)]
pub fn check_signer_certificate(
    public_key: &[u8],
    signer_json: &str,
    created_ms: f64,
    trusted_issuer: &[u8],
) -> Result<JsValue, JsValue> {
    let public_key = array32(public_key, "publicKey").map_err(js_error)?;
    let issuer = array32(trusted_issuer, "trustedIssuer").map_err(js_error)?;
    if !(0.0..=9_007_199_254_740_991.0).contains(&created_ms) || created_ms.fract() != 0.0 {
        return Err(argument_error(
            "createdMs",
            "must be an integer from 0 to 2^53 - 1",
        ));
    }
    let signer = SignerInfo::from_json(signer_json.as_bytes()).map_err(js_error)?;
    #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)] // checked above
    let found = check_signer(&public_key, &signer, created_ms as u64, &issuer).map_err(js_error)?;
    Ok(found.as_ref().map_or(JsValue::NULL, certificate_to_js))
}

/// The fields of a certificate (base64url text), for display only: nothing is verified.
/// Throws `BAD_CERTIFICATE` when the text is not a well-formed certificate.
#[wasm_bindgen(js_name = describeCertificate)]
pub fn describe_certificate(text: &str) -> Result<JsValue, JsValue> {
    let cert = KeyCertificate::from_base64url(text).map_err(js_error)?;
    Ok(certificate_to_js(&cert))
}

/// The bytes a device key signs to prove possession when it is registered with `account_id`
/// (`POST /api/keys/signing`): `"IKI-KEY-REGISTRATION-V1" || 0x00 || account_id`. For keys
/// held outside WASM (a browser's WebCrypto key); `WasmSigningKey.registrationProof` signs
/// them inside.
#[wasm_bindgen(js_name = registrationMessage)]
pub fn registration_message(account_id: &str) -> Result<Vec<u8>, JsValue> {
    iki_license::registration_message(account_id).map_err(license_error)
}

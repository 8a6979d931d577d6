//! The license and key service at the WASM boundary (SPEC "What the service does" 3 and 4,
//! behaviour rules 1 to 7; docs/format.md sections 7.2, 8 and 9). It adapts
//! `iki_license::{ServiceKeys, MasterVerifier, LicenseCopier}` and holds no logic: every rule
//! (key derivations, the upload check, the copy, sealing, certificates, identify) is in
//! `iki-license`.
//!
//! The Express service builds one [`WasmServiceKeys`] from its root secret at start; every
//! service secret (root, X25519, the two Ed25519 keys, license and watermark keys) stays in
//! WASM memory. Zeroization: the root arrives as an owned `Vec` wiped as soon as it is copied
//! into a `SecretKey32`; `iki_license::ServiceKeys` zeroizes its keys when the handle is
//! freed, the copier its license and watermark keys when it drops.
//!
//! A sealed key (format §8.2) crosses as 104 bytes, `ephemeral(32) || nonce(24) ||
//! sealed(48)`, in both directions: none of it is secret, and one fixed layout keeps the
//! surface to bytes. License ids cross as `u64` (a JS `bigint`); the TS wrapper converts the
//! 16-hex-digit form.

use core::cell::RefCell;

use iki_license::{
    ImageBound, LicenseCopier, LicenseInfo, MasterRef, MasterSummary, MasterVerifier,
    ReleaseSender, SealedKey, ServiceKeys,
};
use wasm_bindgen::prelude::*;
use zeroize::Zeroizing;

use crate::convert::{argument_error, array32, license_error, object};
use crate::error::{js_error, Error};

/// Length of a sealed key on the boundary: ephemeral, nonce and the sealed 32-byte key.
pub const SEALED_KEY_BYTES: usize = 32 + 24 + 48;

/// `ephemeral || nonce || sealed`, 104 bytes.
pub(crate) fn sealed_to_bytes(sealed: &SealedKey) -> Vec<u8> {
    [&sealed.ephemeral[..], &sealed.nonce[..], &sealed.sealed[..]].concat()
}

/// The inverse of [`sealed_to_bytes`]; `INVALID_ARGUMENT` naming `argument` otherwise.
pub(crate) fn sealed_from_bytes(
    bytes: &[u8],
    argument: &'static str,
) -> Result<SealedKey, JsValue> {
    let wrong = || {
        argument_error(
            argument,
            "must be exactly 104 bytes (ephemeral, nonce, sealed)",
        )
    };
    let (ephemeral, rest) = bytes.split_first_chunk::<32>().ok_or_else(wrong)?;
    let (nonce, sealed) = rest.split_first_chunk::<24>().ok_or_else(wrong)?;
    Ok(SealedKey {
        ephemeral: *ephemeral,
        nonce: *nonce,
        sealed: sealed.try_into().map_err(|_| wrong())?,
    })
}

pub(crate) fn master_ref(master_id: String, master_sha256: &[u8]) -> Result<MasterRef, JsValue> {
    Ok(MasterRef {
        id: master_id,
        sha256: array32(master_sha256, "master.sha256").map_err(js_error)?,
    })
}

fn key32(bytes: &[u8], argument: &'static str) -> Result<[u8; 32], JsValue> {
    array32(bytes, argument).map_err(js_error)
}

/// The service's keys, derived once from the root secret.
#[wasm_bindgen]
pub struct WasmServiceKeys {
    pub(crate) inner: ServiceKeys,
    /// The key release's service key pair, kept across releases (iki-license
    /// `release_sender`); one WASM instance is one thread, so a `RefCell` is enough.
    release_sender: RefCell<ReleaseSender>,
}

#[wasm_bindgen]
impl WasmServiceKeys {
    /// Derives every service key from the 32-byte root secret (format §8.4). `service_id`
    /// (the base URL) names the service in license slots and copies' signer JSON.
    #[wasm_bindgen(constructor)]
    pub fn new(root: Vec<u8>, service_id: &str) -> Result<WasmServiceKeys, JsValue> {
        let root = Zeroizing::new(root);
        let root = iki_license::SecretKey32::try_from_slice(&root)
            .map_err(|_| argument_error("root", "must be exactly 32 bytes"))?;
        let inner = ServiceKeys::from_root(root, service_id).map_err(license_error)?;
        Ok(Self {
            inner,
            release_sender: RefCell::new(ReleaseSender::new()),
        })
    }

    /// The service identifier.
    #[wasm_bindgen(getter, js_name = serviceId)]
    pub fn service_id(&self) -> String {
        self.inner.service_id().to_owned()
    }

    /// The X25519 public key masters are sealed to.
    #[wasm_bindgen(getter, js_name = x25519PublicKey)]
    pub fn x25519_public_key(&self) -> Vec<u8> {
        self.inner.x25519_public().to_vec()
    }

    /// The Ed25519 public key that signs license copies.
    #[wasm_bindgen(getter, js_name = licenseSigningPublicKey)]
    pub fn license_signing_public_key(&self) -> Vec<u8> {
        self.inner.signing_public().to_vec()
    }

    /// The Ed25519 public key that signs key certificates.
    #[wasm_bindgen(getter, js_name = certificatePublicKey)]
    pub fn certificate_public_key(&self) -> Vec<u8> {
        self.inner.certificate_public().to_vec()
    }

    /// Key release (format §8.2): the license key sealed to the player's key, 104 bytes,
    /// from the service key pair this handle keeps for up to a minute or 4096 releases.
    #[wasm_bindgen(js_name = sealLicenseKey)]
    pub fn seal_license_key(
        &self,
        master_id: String,
        master_sha256: &[u8],
        license_id: u64,
        player_public_key: &[u8],
    ) -> Result<Vec<u8>, JsValue> {
        let master = master_ref(master_id, master_sha256)?;
        let player = key32(player_public_key, "playerPublicKey")?;
        let mut sender = self.release_sender.try_borrow_mut().map_err(|_| {
            js_error(Error::InvalidState {
                operation: "sealLicenseKey while sealing",
            })
        })?;
        // Date.now() is a finite non-negative number of milliseconds; `as` saturates.
        let now_ms = js_sys::Date::now() as u64;
        let sealed = self
            .inner
            .seal_license_key_from(&mut sender, now_ms, &master, license_id, &player)
            .map_err(license_error)?;
        Ok(sealed_to_bytes(&sealed))
    }

    /// A fresh upload check (behaviour rule 1).
    #[wasm_bindgen(js_name = masterVerifier)]
    pub fn master_verifier(&self) -> WasmMasterVerifier {
        WasmMasterVerifier {
            inner: Some(self.inner.master_verifier()),
        }
    }

    /// A copier of `master` for one license (format §9).
    #[allow(clippy::too_many_arguments)] // the license record's fields, flat across the boundary
    #[wasm_bindgen(js_name = licenseCopier)]
    pub fn license_copier(
        &self,
        master_id: String,
        master_sha256: &[u8],
        license_id: u64,
        licensee: String,
        licensee_name: String,
        seller: String,
        issued_at_ms: u64,
    ) -> Result<WasmLicenseCopier, JsValue> {
        let master = master_ref(master_id, master_sha256)?;
        let license = LicenseInfo {
            id: license_id,
            licensee,
            licensee_name,
            seller,
            issued_at_ms,
        };
        let copier = self
            .inner
            .license_copier(&master, &license)
            .map_err(license_error)?;
        Ok(WasmLicenseCopier {
            inner: Some(copier),
        })
    }

    /// Reads the watermark of a leaked texture (PNG, JPEG or WebP bytes) of `master`:
    /// `{ found, licenseId?, confidence }`. "No mark" is an answer, not an error. The image
    /// is decoded only when its header is within `max_side_px` a side and `max_pixels` in all
    /// (the master's largest texture; capped at `iki_license::ImageBound::CEILING`), else it
    /// is `IMAGE_TOO_LARGE` before any pixel is decoded.
    pub fn identify(
        &self,
        master_id: String,
        master_sha256: &[u8],
        image: &[u8],
        max_side_px: u32,
        max_pixels: u32,
    ) -> Result<JsValue, JsValue> {
        let master = master_ref(master_id, master_sha256)?;
        let bound = ImageBound::new(max_side_px, max_pixels.into());
        let (width, height, rgba) =
            iki_license::decode_image_within(image, bound).map_err(license_error)?;
        let detection = self
            .inner
            .identify(&master, width, height, &rgba)
            .map_err(license_error)?;
        let mut fields = vec![
            ("found", JsValue::from_bool(detection.found.is_some())),
            ("confidence", JsValue::from_f64(detection.confidence)),
        ];
        if let Some(id) = detection.found {
            fields.push((
                "licenseId",
                JsValue::from_str(&iki_license::license_id_hex(id)),
            ));
        }
        Ok(object(&fields))
    }

    /// An account slot's blob (format §8.3) from a content key the client sealed to this
    /// service for `account_id` (104 bytes).
    #[wasm_bindgen(js_name = createAccountBlob)]
    pub fn create_account_blob(
        &self,
        account_id: &str,
        sealed_content_key: &[u8],
    ) -> Result<Vec<u8>, JsValue> {
        let sealed = sealed_from_bytes(sealed_content_key, "sealedContentKey")?;
        self.inner
            .create_account_blob(account_id, &sealed)
            .map_err(license_error)
    }

    /// Opens an account slot's blob for `account_id` and seals the content key to the
    /// client's key (104 bytes). The caller has checked that `account_id` is signed in.
    #[wasm_bindgen(js_name = unwrapAccountBlob)]
    pub fn unwrap_account_blob(
        &self,
        account_id: &str,
        blob: &[u8],
        client_public_key: &[u8],
    ) -> Result<Vec<u8>, JsValue> {
        let client = key32(client_public_key, "clientPublicKey")?;
        let sealed = self
            .inner
            .unwrap_account_blob(account_id, blob, &client)
            .map_err(license_error)?;
        Ok(sealed_to_bytes(&sealed))
    }

    /// Checks a device key's registration proof and issues its certificate (format §7.2).
    #[wasm_bindgen(js_name = certifyRegisteredKey)]
    pub fn certify_registered_key(
        &self,
        subject: &[u8],
        proof: &[u8],
        account_id: &str,
        issued_ms: u64,
        expires_ms: u64,
    ) -> Result<Vec<u8>, JsValue> {
        let subject = key32(subject, "subjectPublicKey")?;
        let proof: &[u8; 64] = proof
            .try_into()
            .map_err(|_| argument_error("proof", "must be exactly 64 bytes"))?;
        self.inner
            .certify_registered_key(&subject, proof, account_id, issued_ms, expires_ms)
            .map_err(license_error)
    }
}

/// The upload check of one master: `push` its bytes in order, then `finish` once.
#[wasm_bindgen]
pub struct WasmMasterVerifier {
    inner: Option<MasterVerifier>,
}

#[wasm_bindgen]
impl WasmMasterVerifier {
    /// Checks the next bytes of the master; any error is final.
    pub fn push(&mut self, bytes: &[u8]) -> Result<(), JsValue> {
        let verifier = self
            .inner
            .as_mut()
            .ok_or_else(|| finished("push after finish"))?;
        verifier.push(bytes).map_err(license_error)
    }

    /// Refuses, at its manifest, a master whose entries decode to more than `max` bytes
    /// (a whole number up to 2^53).
    #[wasm_bindgen(js_name = limitDecodedBytes)]
    pub fn limit_decoded_bytes(&mut self, max: f64) -> Result<(), JsValue> {
        if !(max.is_finite() && max >= 0.0 && max.fract() == 0.0 && max <= 9_007_199_254_740_991.0)
        {
            return Err(argument_error("max", "must be a whole number of bytes"));
        }
        let verifier = self
            .inner
            .as_mut()
            .ok_or_else(|| finished("limit after finish"))?;
        #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
        verifier.limit_decoded_bytes(max as u64);
        Ok(())
    }

    /// Ends the input; returns the summary of a sound master as JSON text (see
    /// [`summary_json`]).
    pub fn finish(&mut self) -> Result<String, JsValue> {
        let verifier = self
            .inner
            .take()
            .ok_or_else(|| finished("finish after finish"))?;
        let summary = verifier.finish().map_err(license_error)?;
        summary_json(&summary).map_err(license_error)
    }
}

/// A license copy in the making: `push` master bytes, `takeOutput` copy bytes, `finish` once.
#[wasm_bindgen]
pub struct WasmLicenseCopier {
    inner: Option<LicenseCopier>,
}

#[wasm_bindgen]
impl WasmLicenseCopier {
    /// Reads the next bytes of the master (checked again while copying).
    pub fn push(&mut self, master_bytes: &[u8]) -> Result<(), JsValue> {
        let copier = self
            .inner
            .as_mut()
            .ok_or_else(|| finished("push after finish"))?;
        copier.push(master_bytes).map_err(license_error)
    }

    /// The copy bytes produced so far (possibly none).
    #[wasm_bindgen(js_name = takeOutput)]
    pub fn take_output(&mut self) -> Result<Vec<u8>, JsValue> {
        let copier = self
            .inner
            .as_mut()
            .ok_or_else(|| finished("takeOutput after finish"))?;
        Ok(copier.take_output())
    }

    /// Ends the master's input and returns the rest of the copy, SIGN included. Fails
    /// (`TRUNCATED`, `BAD_SIGNATURE`, `MASTER_MISMATCH`, ...) when the stored master is not
    /// the recorded one: the caller must then abort the download.
    pub fn finish(&mut self) -> Result<Vec<u8>, JsValue> {
        let copier = self
            .inner
            .take()
            .ok_or_else(|| finished("finish after finish"))?;
        copier.finish().map_err(license_error)
    }
}

fn finished(operation: &'static str) -> JsValue {
    js_error(Error::InvalidState { operation })
}

/// The summary as JSON text: `{ sha256 (hex), size, name, createdMs, entries: [{path, type,
/// size, encoding, sha256?, meta?}], textures: [{path, width, height}], signerPublicKey
/// (hex), signer, signerJson, certifiedAccount }`. Nothing in it is secret.
fn summary_json(summary: &MasterSummary) -> Result<String, iki_license::Error> {
    let textures: Vec<serde_json::Value> = summary
        .textures
        .iter()
        .map(|t| serde_json::json!({ "path": t.path, "width": t.width, "height": t.height }))
        .collect();
    let value = serde_json::json!({
        "sha256": hex::encode(summary.sha256),
        "size": summary.size,
        "name": summary.name,
        "createdMs": summary.created_ms,
        "entries": summary.entries,
        "textures": textures,
        "signerPublicKey": hex::encode(summary.signer_public),
        "signer": summary.signer,
        "signerJson": String::from_utf8_lossy(&summary.signer_json),
        "certifiedAccount": summary.certified_account,
    });
    serde_json::to_string(&value).map_err(|_| iki_license::Error::InvalidState {
        reason: "master summary does not serialise",
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sealed_keys_cross_as_104_bytes() {
        let sealed = SealedKey {
            ephemeral: [1; 32],
            nonce: [2; 24],
            sealed: [3; 48],
        };
        let bytes = sealed_to_bytes(&sealed);
        assert_eq!(bytes.len(), SEALED_KEY_BYTES);
        assert_eq!(
            (&bytes[..32], &bytes[32..56], &bytes[56..]),
            (&[1u8; 32][..], &[2u8; 24][..], &[3u8; 48][..])
        );
        assert_eq!(sealed_from_bytes(&bytes, "sealed").ok(), Some(sealed));
    }

    #[test]
    fn summary_json_carries_the_record() {
        let summary = MasterSummary {
            sha256: [0xAB; 32],
            size: 1234,
            name: "Haru".to_owned(),
            created_ms: 1_700_000_000_000,
            entries: Vec::new(),
            textures: vec![iki_license::TextureInfo {
                path: "t.png".to_owned(),
                width: 2,
                height: 3,
            }],
            signer_public: [0xCD; 32],
            signer_json: br#"{"kind":"device"}"#.to_vec(),
            signer: iki_format::SignerInfo::device(None),
            certificate: None,
            certified_account: None,
        };
        let json: serde_json::Value =
            serde_json::from_str(&summary_json(&summary).unwrap()).unwrap();
        assert_eq!(json["sha256"], "ab".repeat(32));
        assert_eq!(json["signerPublicKey"], "cd".repeat(32));
        assert_eq!(
            (json["size"].as_u64(), json["createdMs"].as_u64()),
            (Some(1234), Some(1_700_000_000_000))
        );
        assert_eq!(
            json["textures"][0],
            serde_json::json!({ "path": "t.png", "width": 2, "height": 3 })
        );
        assert_eq!(json["signer"]["kind"], "device");
        assert_eq!(json["signerJson"], r#"{"kind":"device"}"#);
        assert!(json["certifiedAccount"].is_null());
    }
}

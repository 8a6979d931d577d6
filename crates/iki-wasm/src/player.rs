//! The client side of the license and key service at the WASM boundary (SPEC behaviour rules
//! 4 and 7; docs/format.md sections 8.2 and 8.3). It adapts `iki_license::{PlayerSession,
//! LicenseReader, AccountUnwrap, seal_content_key_for_account}` and holds no logic.
//!
//! The player's ephemeral X25519 secret is made inside [`WasmPlayerSession`]; the license key
//! it accepts never leaves WASM: [`WasmPlayerSession::open_reader`] hands a container reader
//! that unlocks the copy from inside, and JS sees only plaintext of authenticated chunks.
//! Zeroization: `iki_license::PlayerSession` drops the ephemeral secret at the first
//! `acceptLicenseKey` and zeroizes the license key when the handle is freed; the reader holds
//! its own copy, zeroized when it is handed to the container reader or freed.
//!
//! Account slots: [`seal_content_key_for_account`] seals a [`WasmContentKey`] to the key
//! service, and [`WasmAccountUnwrap`] opens the service's answer into a new
//! [`WasmContentKey`], so the content key of an account-protected file stays in WASM too.

use iki_license::{AccountUnwrap, PlayerSession};
use wasm_bindgen::prelude::*;

use crate::container::WasmReader;
use crate::convert::{array32, license_error};
use crate::error::{js_error, Error};
use crate::keys::WasmContentKey;
use crate::service::{sealed_from_bytes, sealed_to_bytes};

/// One key release on the player: an ephemeral key pair, then the license key it accepted.
#[wasm_bindgen]
pub struct WasmPlayerSession {
    inner: PlayerSession,
}

#[wasm_bindgen]
impl WasmPlayerSession {
    /// A session with a fresh ephemeral X25519 key pair.
    #[wasm_bindgen(constructor)]
    pub fn new() -> Result<WasmPlayerSession, JsValue> {
        Ok(Self {
            inner: PlayerSession::new().map_err(license_error)?,
        })
    }

    /// The ephemeral public key to send with `POST /api/licenses/{id}/key`.
    #[wasm_bindgen(getter, js_name = publicKey)]
    pub fn public_key(&self) -> Vec<u8> {
        self.inner.public_key().to_vec()
    }

    /// The accepted license id, once a key was accepted.
    #[wasm_bindgen(getter, js_name = licenseId)]
    pub fn license_id(&self) -> Option<u64> {
        self.inner.license_id()
    }

    /// Opens the service's answer (104 bytes: ephemeral, nonce, sealed) for `license_id`.
    /// The ephemeral secret is consumed by the first call, successful or not.
    #[wasm_bindgen(js_name = acceptLicenseKey)]
    pub fn accept_license_key(&mut self, license_id: u64, sealed: &[u8]) -> Result<(), JsValue> {
        let sealed = sealed_from_bytes(sealed, "sealed")?;
        self.inner
            .accept_license_key(license_id, &sealed)
            .map_err(license_error)
    }

    /// A reader of the license copy (`.ikm`, role `license`) that unlocks itself with the
    /// accepted key; its events are a [`WasmReader`]'s without `header` and `locked`. With
    /// `service_signing_key` (32 bytes), the copy must be signed by that key.
    #[wasm_bindgen(js_name = openReader)]
    pub fn open_reader(&self, service_signing_key: Option<Vec<u8>>) -> Result<WasmReader, JsValue> {
        let expected = match service_signing_key {
            Some(key) => Some(array32(&key, "servicePublicKey").map_err(js_error)?),
            None => None,
        };
        let reader = self.inner.open_reader(expected).map_err(license_error)?;
        Ok(WasmReader::from_license_reader(reader))
    }
}

/// App side of an account slot: `content_key` sealed to the key service's X25519 key
/// (`service_public_key`) for `account_id`, 104 bytes for `POST /api/keys/wrap`.
#[wasm_bindgen(js_name = sealContentKeyForAccount)]
pub fn seal_content_key_for_account(
    service_public_key: &[u8],
    account_id: &str,
    content_key: &WasmContentKey,
) -> Result<Vec<u8>, JsValue> {
    let service = array32(service_public_key, "servicePublicKey").map_err(js_error)?;
    let sealed =
        iki_license::seal_content_key_for_account(&service, account_id, &content_key.key())
            .map_err(license_error)?;
    Ok(sealed_to_bytes(&sealed))
}

/// App side of `POST /api/keys/unwrap`: an ephemeral key whose answer opens once, into a
/// content key that stays in WASM.
#[wasm_bindgen]
pub struct WasmAccountUnwrap {
    inner: Option<AccountUnwrap>,
    public: [u8; 32],
}

#[wasm_bindgen]
impl WasmAccountUnwrap {
    /// A fresh ephemeral X25519 key.
    #[wasm_bindgen(constructor)]
    pub fn new() -> Result<WasmAccountUnwrap, JsValue> {
        let inner = AccountUnwrap::new().map_err(license_error)?;
        Ok(Self {
            public: inner.public_key(),
            inner: Some(inner),
        })
    }

    /// The public key to send with the unwrap request.
    #[wasm_bindgen(getter, js_name = publicKey)]
    pub fn public_key(&self) -> Vec<u8> {
        self.public.to_vec()
    }

    /// Opens the service's answer (104 bytes) for `account_id`; the ephemeral secret is
    /// consumed by the first call, successful or not.
    pub fn open(&mut self, account_id: &str, sealed: &[u8]) -> Result<WasmContentKey, JsValue> {
        let unwrap = self.inner.take().ok_or_else(|| {
            js_error(Error::InvalidState {
                operation: "open after open",
            })
        })?;
        let sealed = sealed_from_bytes(sealed, "sealed")?;
        let key = unwrap.open(account_id, &sealed).map_err(license_error)?;
        // `fromBytes` takes an owned buffer and wipes it (keys.rs); `key` zeroizes on drop.
        WasmContentKey::from_bytes(key.expose_secret().to_vec())
    }
}

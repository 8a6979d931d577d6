//! Key handles: an Ed25519 signing key (docs/format.md section 7), an X25519 identity for
//! recipient slots (section 3.3) and a content key (section 4) for account slots.
//!
//! The secrets stay in WASM memory inside these handles; JS sees public keys, and the raw
//! secret only through the explicit `exportSeed`/`exportSecret` used to write the user's own
//! key file. Zeroization: every handle holds its secret in a type that zeroizes on drop
//! (`iki_crypto::SigningKey`, `SecretKey32`), and JS `free()` drops it. Secret bytes passed
//! in arrive as an owned `Vec` that is wrapped in `Zeroizing` at once, so the copy
//! wasm-bindgen made in WASM memory is wiped when the call returns.

use iki_crypto::{SecretKey32, X25519Secret};
use js_sys::Uint8Array;
use wasm_bindgen::prelude::*;
use zeroize::Zeroizing;

use crate::convert::{argument_error, LicenseError};
use crate::error::js_error;

/// Copies a 32-byte secret out of an owned buffer, wiping the buffer.
fn secret32(bytes: Vec<u8>, argument: &'static str) -> Result<SecretKey32, JsValue> {
    let bytes = Zeroizing::new(bytes);
    if bytes.len() != 32 {
        return Err(argument_error(argument, "must be exactly 32 bytes"));
    }
    SecretKey32::try_from_slice(&bytes).map_err(js_error)
}

/// An Ed25519 signing key (strict Ed25519, RFC 8032), for signing containers.
#[wasm_bindgen]
pub struct WasmSigningKey {
    inner: iki_crypto::SigningKey,
}

#[wasm_bindgen]
impl WasmSigningKey {
    /// A fresh key from the OS random source.
    pub fn generate() -> Result<WasmSigningKey, JsValue> {
        let inner = iki_crypto::SigningKey::generate().map_err(js_error)?;
        Ok(Self { inner })
    }

    /// The key with this 32-byte seed.
    #[wasm_bindgen(js_name = fromSeed)]
    pub fn from_seed(seed: Vec<u8>) -> Result<WasmSigningKey, JsValue> {
        let seed = secret32(seed, "seed")?;
        Ok(Self {
            inner: iki_crypto::SigningKey::from_seed(&seed),
        })
    }

    /// The 32-byte public key.
    #[wasm_bindgen(getter, js_name = publicKey)]
    pub fn public_key(&self) -> Vec<u8> {
        self.inner.public_key().to_vec()
    }

    /// The 64-byte proof of possession that registers this key with `account_id`
    /// (`POST /api/keys/signing`); the key itself never leaves WASM.
    #[wasm_bindgen(js_name = registrationProof)]
    pub fn registration_proof(&self, account_id: &str) -> Result<Vec<u8>, JsValue> {
        iki_license::registration_proof(&self.inner, account_id)
            .map(|proof| proof.to_vec())
            .map_err(|e| js_error(LicenseError(e)))
    }

    /// The plain Ed25519 signature (RFC 8032 PureEdDSA, 64 bytes) of `message`: what a
    /// WebCrypto key gives for `sign({ name: 'Ed25519' }, key, message)`, so a key held here
    /// serves as the writer's external signer like a browser's key.
    pub fn sign(&self, message: &[u8]) -> Vec<u8> {
        self.inner.sign(message).to_vec()
    }

    /// The 32-byte seed, only for writing the user's own key file.
    #[wasm_bindgen(js_name = exportSeed)]
    pub fn export_seed(&self) -> Uint8Array {
        // Copied straight into a JS array: no Vec is left behind in WASM memory, and the
        // seed's SecretKey32 is zeroized when it drops here.
        Uint8Array::from(&self.inner.seed().expose_secret()[..])
    }
}

impl WasmSigningKey {
    /// A copy of the key for a writer (the writer owns and zeroizes its own copy).
    pub(crate) fn copy(&self) -> iki_crypto::SigningKey {
        iki_crypto::SigningKey::from_seed(&self.inner.seed())
    }
}

/// An X25519 identity: opens recipient slots sealed to its public key.
#[wasm_bindgen]
pub struct WasmX25519Identity {
    secret: SecretKey32,
    public: [u8; 32],
}

#[wasm_bindgen]
impl WasmX25519Identity {
    /// A fresh identity from the OS random source.
    pub fn generate() -> Result<WasmX25519Identity, JsValue> {
        Ok(Self::from_secret(SecretKey32::random().map_err(js_error)?))
    }

    /// The identity with this 32-byte secret (RFC 7748 clamping applies when it is used).
    #[wasm_bindgen(js_name = fromBytes)]
    pub fn from_bytes(secret: Vec<u8>) -> Result<WasmX25519Identity, JsValue> {
        Ok(Self::from_secret(secret32(secret, "secret")?))
    }

    /// The 32-byte public key that recipient slots name.
    #[wasm_bindgen(getter, js_name = publicKey)]
    pub fn public_key(&self) -> Vec<u8> {
        self.public.to_vec()
    }

    /// The 32-byte secret, only for writing the user's own key file.
    #[wasm_bindgen(js_name = exportSecret)]
    pub fn export_secret(&self) -> Uint8Array {
        // Copied straight into a JS array, as in `WasmSigningKey::export_seed`.
        Uint8Array::from(&self.secret.expose_secret()[..])
    }
}

impl WasmX25519Identity {
    fn from_secret(secret: SecretKey32) -> Self {
        let public = X25519Secret::from_key(secret.clone()).public_key();
        Self { secret, public }
    }

    /// The identity as the reader takes it (a copy, zeroized when it drops).
    pub(crate) fn x25519(&self) -> X25519Secret {
        X25519Secret::from_key(self.secret.clone())
    }
}

/// A 256-bit content key (section 4) that never leaves WASM: used for account slots, where
/// the key service wraps it, and to open a file with a key obtained elsewhere.
#[wasm_bindgen]
pub struct WasmContentKey {
    key: SecretKey32,
}

#[wasm_bindgen]
impl WasmContentKey {
    /// A fresh key from the OS random source.
    pub fn generate() -> Result<WasmContentKey, JsValue> {
        Ok(Self {
            key: SecretKey32::random().map_err(js_error)?,
        })
    }

    /// A content key given as 32 bytes (test vectors, keys unwrapped elsewhere).
    #[wasm_bindgen(js_name = fromBytes)]
    pub fn from_bytes(key: Vec<u8>) -> Result<WasmContentKey, JsValue> {
        Ok(Self {
            key: secret32(key, "key")?,
        })
    }
}

impl WasmContentKey {
    /// A copy of the key (zeroized when it drops).
    pub(crate) fn key(&self) -> SecretKey32 {
        self.key.clone()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn identity_public_key_matches_x25519() {
        let id = WasmX25519Identity::from_secret(SecretKey32::from_bytes([0x1D; 32]));
        let expected = X25519Secret::from_key(SecretKey32::from_bytes([0x1D; 32])).public_key();
        assert_eq!(id.public_key(), expected.to_vec());
        assert_eq!(id.secret.expose_secret(), &[0x1D; 32]);
        assert_eq!(id.x25519().public_key(), expected);
    }

    #[test]
    fn signing_key_copy_is_the_same_key() {
        let key = WasmSigningKey {
            inner: iki_crypto::SigningKey::from_seed(&SecretKey32::from_bytes([0x51; 32])),
        };
        assert_eq!(key.copy().public_key().to_vec(), key.public_key());
        assert_eq!(key.inner.seed().expose_secret(), &[0x51; 32]);
    }
}

//! SHA-256 (FIPS 180-4) at the boundary: a one-shot function and a streaming
//! handle, so a large file can be hashed one chunk at a time with memory
//! around one chunk (STYLE.md "WASM boundary": bytes cross by copy).
//! The hashing itself is `iki_crypto::hash`; this module only adapts it.

use iki_crypto::hash::{Digest, Sha256};
use wasm_bindgen::prelude::*;

use crate::error::{js_error, Error};

/// SHA-256 of `bytes` (32 bytes).
#[wasm_bindgen]
pub fn sha256(bytes: &[u8]) -> Vec<u8> {
    iki_crypto::hash::sha256(bytes).to_vec()
}

/// Incremental SHA-256: `update` any number of times, then `finish` once.
///
/// Using the handle after `finish` throws `INVALID_STATE`. Call `free()`
/// when done (the TS wrapper does so in `finally`).
#[wasm_bindgen]
pub struct Sha256Hasher {
    state: Option<Sha256>,
}

#[wasm_bindgen]
impl Sha256Hasher {
    /// A fresh hasher.
    #[wasm_bindgen(constructor)]
    #[allow(clippy::new_without_default)] // a JS constructor, not a Rust API
    pub fn new() -> Self {
        Self {
            state: Some(Sha256::new()),
        }
    }

    /// Feeds `bytes` into the hash.
    pub fn update(&mut self, bytes: &[u8]) -> Result<(), JsValue> {
        self.try_update(bytes).map_err(js_error)
    }

    /// Returns the 32-byte digest; the handle cannot be used afterwards.
    pub fn finish(&mut self) -> Result<Vec<u8>, JsValue> {
        self.try_finish().map_err(js_error)
    }
}

impl Sha256Hasher {
    fn try_update(&mut self, bytes: &[u8]) -> Result<(), Error> {
        let state = self.state.as_mut().ok_or(Error::InvalidState {
            operation: "update after finish",
        })?;
        state.update(bytes);
        Ok(())
    }

    fn try_finish(&mut self) -> Result<Vec<u8>, Error> {
        let state = self.state.take().ok_or(Error::InvalidState {
            operation: "finish after finish",
        })?;
        Ok(state.finalize().to_vec())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // FIPS 180-2 appendix B.1: SHA-256("abc").
    const ABC: &str = "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad";

    fn hex(bytes: &[u8]) -> String {
        bytes.iter().map(|b| format!("{b:02x}")).collect()
    }

    #[test]
    fn one_shot_matches_fips_vector() {
        assert_eq!(hex(&sha256(b"abc")), ABC);
    }

    #[test]
    fn streaming_matches_one_shot() {
        let mut h = Sha256Hasher::new();
        for part in [&b"a"[..], b"", b"bc"] {
            assert!(h.try_update(part).is_ok());
        }
        assert_eq!(h.try_finish().map(|d| hex(&d)), Ok(ABC.to_string()));
    }

    #[test]
    fn use_after_finish_is_invalid_state() {
        let mut h = Sha256Hasher::new();
        assert!(h.try_finish().is_ok());
        assert_eq!(
            h.try_update(b"x"),
            Err(Error::InvalidState {
                operation: "update after finish"
            })
        );
        assert_eq!(
            h.try_finish(),
            Err(Error::InvalidState {
                operation: "finish after finish"
            })
        );
    }
}

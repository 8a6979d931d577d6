//! SHA-256 (FIPS 180-4) at the boundary: a one-shot function and a streaming
//! handle, so a large file can be hashed one chunk at a time with memory
//! around one chunk (STYLE.md "WASM boundary": bytes cross by copy).
//! The hashing itself is `iki_crypto::hash`; this module only adapts it.
//!
//! It also installs a host SHA-256 backend (`installHostSha256`): the Node
//! loader (ts/src/wasm.ts) passes `node:crypto` hooks, about 6x faster than
//! the WASM compression function; browsers install nothing and keep `sha2`.
//! The hooks receive a view of WASM memory for each update (no copy) and use
//! it before returning. Any exception from a hook, or a digest that is not 32
//! bytes, fails that hash with `INVALID_STATE` (docs/format.md section 2, "Who computes SHA-256").

use std::cell::RefCell;

use iki_crypto::hash::{install_host_sha256 as install, HostSha256, Sha256, SHA256_BYTES};
use wasm_bindgen::prelude::*;

use crate::error::{js_error, Error};

#[wasm_bindgen]
extern "C" {
    /// The JS hooks of a host SHA-256 (see `ts/src/host-hash.ts`).
    pub type HostSha256Hooks;

    #[wasm_bindgen(method, catch)]
    fn start(this: &HostSha256Hooks) -> Result<u32, JsValue>;

    #[wasm_bindgen(method, catch)]
    fn update(this: &HostSha256Hooks, handle: u32, bytes: &[u8]) -> Result<(), JsValue>;

    #[wasm_bindgen(method, catch)]
    fn fork(this: &HostSha256Hooks, handle: u32) -> Result<u32, JsValue>;

    #[wasm_bindgen(method, catch)]
    fn finish(this: &HostSha256Hooks, handle: u32) -> Result<Vec<u8>, JsValue>;

    #[wasm_bindgen(method, catch)]
    fn release(this: &HostSha256Hooks, handle: u32) -> Result<(), JsValue>;
}

thread_local! {
    static HOOKS: RefCell<Option<JsValue>> = const { RefCell::new(None) };
}

/// The installed hooks, cloned out so that a hook may call back into this module.
fn hooks() -> Result<HostSha256Hooks, iki_crypto::Error> {
    HOOKS
        .with(|cell| cell.borrow().clone())
        .map(JsCast::unchecked_into::<HostSha256Hooks>)
        .ok_or(iki_crypto::Error::HostHashFailed)
}

fn host_start() -> Result<u32, iki_crypto::Error> {
    hooks()?
        .start()
        .map_err(|_| iki_crypto::Error::HostHashFailed)
}

fn host_update(handle: u32, bytes: &[u8]) -> Result<(), iki_crypto::Error> {
    hooks()?
        .update(handle, bytes)
        .map_err(|_| iki_crypto::Error::HostHashFailed)
}

fn host_fork(handle: u32) -> Result<u32, iki_crypto::Error> {
    hooks()?
        .fork(handle)
        .map_err(|_| iki_crypto::Error::HostHashFailed)
}

fn host_finish(handle: u32) -> Result<[u8; SHA256_BYTES], iki_crypto::Error> {
    let digest = hooks()?
        .finish(handle)
        .map_err(|_| iki_crypto::Error::HostHashFailed)?;
    <[u8; SHA256_BYTES]>::try_from(digest.as_slice()).map_err(|_| iki_crypto::Error::HostHashFailed)
}

fn host_release(handle: u32) {
    if let Ok(hooks) = hooks() {
        let _ignored = hooks.release(handle);
    }
}

/// Installs `hooks` as this instance's SHA-256 backend for hashes of at least
/// `minBytes` bytes, or removes it when `hooks` is `null` or `undefined`
/// (WASM's own SHA-256 again). Hashes already running keep going; if their
/// hooks were removed, they fail with `INVALID_STATE`.
///
/// `hooks` has `start(): number`, `update(handle, bytes)`, `fork(handle): number`,
/// `finish(handle): Uint8Array` (32 bytes; releases the handle) and `release(handle)`.
#[wasm_bindgen(js_name = installHostSha256)]
pub fn install_host_sha256(hooks: JsValue, min_bytes: usize) {
    let hooks = (!hooks.is_null() && !hooks.is_undefined()).then_some(hooks);
    let backend = hooks.is_some().then_some(HostSha256 {
        start: host_start,
        update: host_update,
        fork: host_fork,
        finish: host_finish,
        release: host_release,
        min_bytes,
    });
    HOOKS.with(|cell| *cell.borrow_mut() = hooks);
    install(backend);
}

/// Whether a host SHA-256 backend is installed in this instance.
#[wasm_bindgen(js_name = hostSha256Installed)]
pub fn host_sha256_installed() -> bool {
    iki_crypto::hash::host_sha256_installed()
}

/// SHA-256 of `bytes` (32 bytes), through the host backend when one is
/// installed; throws `INVALID_STATE` if that backend fails.
#[wasm_bindgen]
pub fn sha256(bytes: &[u8]) -> Result<Vec<u8>, JsValue> {
    let mut hasher = Sha256::new();
    hasher.update(bytes);
    hasher.finalize().map(|d| d.to_vec()).map_err(js_error)
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
        match self.try_finish() {
            Ok(digest) => digest.map_err(js_error),
            Err(e) => Err(js_error(e)),
        }
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

    fn try_finish(&mut self) -> Result<Result<Vec<u8>, iki_crypto::Error>, Error> {
        let state = self.state.take().ok_or(Error::InvalidState {
            operation: "finish after finish",
        })?;
        Ok(state.finalize().map(|d| d.to_vec()))
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
        assert_eq!(sha256(b"abc").map(|d| hex(&d)).ok(), Some(ABC.to_string()));
    }

    #[test]
    fn streaming_matches_one_shot() {
        let mut h = Sha256Hasher::new();
        for part in [&b"a"[..], b"", b"bc"] {
            assert!(h.try_update(part).is_ok());
        }
        assert_eq!(
            h.try_finish().map(|d| d.map(|d| hex(&d))),
            Ok(Ok(ABC.to_string()))
        );
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

//! iki-wasm: the WebAssembly adapter, the only crate that uses wasm-bindgen.
//!
//! It adapts and holds no logic (STYLE.md "Layout"). Every export returns
//! `Result<_, JsValue>` when it can fail, and failures become a JS `Error`
//! with `code`, `message` and `details` through [`error::js_error`]; nothing
//! unwraps at the boundary, because a panic becomes an opaque trap.
//!
//! Built by `make wasm` into `pkg/` (`wasm-bindgen --target web`); the same
//! `.wasm` loads in Node 20 and in browsers.
#![forbid(unsafe_code)]
#![deny(missing_docs)]

pub mod bench;
pub mod container;
pub mod convert;
pub mod error;
pub mod hash;
pub mod identify;
pub mod image;
pub mod keys;
pub mod player;
pub mod service;
pub mod signer;
pub mod stored_png;
pub mod texture;
pub mod watermark;
pub mod writer;

use wasm_bindgen::prelude::*;

/// The version of this build of the iki core (the crate version).
#[wasm_bindgen]
pub fn version() -> String {
    env!("CARGO_PKG_VERSION").to_string()
}

#[cfg(test)]
mod tests {
    #[test]
    fn version_is_the_crate_version() {
        assert_eq!(super::version(), env!("CARGO_PKG_VERSION"));
        assert!(super::version().split('.').count() == 3);
    }
}

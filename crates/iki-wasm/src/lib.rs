//! iki-wasm (under construction).
#![forbid(unsafe_code)]

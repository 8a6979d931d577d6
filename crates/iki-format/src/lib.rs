//! The iki container: a signed, chunked, optionally encrypted file format.
//!
//! Implements docs/format.md. The crate is pure: no I/O, no clock, no wasm-bindgen.
#![forbid(unsafe_code)]
#![deny(missing_docs)]
#![deny(clippy::unwrap_used, clippy::expect_used, clippy::panic, clippy::indexing_slicing)]

pub mod chunk;
pub mod error;
pub mod header;
pub mod limits;

pub use error::Error;
pub use header::{Header, Kind};

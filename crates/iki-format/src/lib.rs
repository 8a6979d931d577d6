//! The iki container: a signed, chunked, optionally encrypted file format.
//!
//! Implements docs/format.md. The crate is pure: no I/O, no clock, no wasm-bindgen.
#![forbid(unsafe_code)]
#![deny(missing_docs)]
#![deny(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

pub mod certificate;
pub mod chunk;
pub mod content;
mod cursor;
pub mod encoding;
pub mod error;
pub mod header;
pub mod keys;
pub mod limits;
pub mod manifest;
mod meta;
pub mod reader;
pub mod sign;
pub mod writer;

pub use encoding::{deflate_chunk, DeflateHint};
pub use error::Error;
pub use header::{Cipher, Header, Kind};
pub use keys::{NewSlot, Slot, SlotEntropy};
pub use manifest::{Encoding, Entry, EntryMeta, Manifest, Meta};
pub use reader::{read_all, Event, Opened, Reader, Unlock};
pub use sign::{SignerInfo, SignerKind, Verified};
pub use writer::{
    manifest_entry_for, write_all, DigestRequest, PendingSignature, Protection, SignWith, Writer,
    WriterOptions,
};

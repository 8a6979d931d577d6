//! iki-license: the license service and player core (SPEC "Master and license copy",
//! "Watermark", behaviour rules 1 to 7; docs/format.md sections 3, 8 and 9).
//!
//! The license service (Express, `server/`) and the in-browser player run the same
//! WebAssembly module, and every secret (root secret, license keys, content keys, watermark
//! keys, the player's ephemeral X25519 secret) stays inside it. `iki-wasm` adapts; the logic
//! is here, in a pure crate: no I/O, no clock, no wasm-bindgen. It builds natively and for
//! `wasm32-unknown-unknown`.
//!
//! - [`ServiceKeys`]: the service's keys from its root secret; key release
//!   ([`ServiceKeys::seal_license_key`], and [`ServiceKeys::seal_license_key_from`] with a
//!   [`ReleaseSender`] kept across releases), account slots, key certificates and identify.
//! - [`Identifier`]: identify of a leaked texture, blind and then registered on the master's
//!   textures when it was resized or cropped.
//! - [`MasterVerifier`]: the upload check of a master, streamed (behaviour rule 1).
//! - [`LicenseCopier`]: a license copy made from the master's bytes, streamed (rule 3).
//! - [`PlayerSession`] and [`LicenseReader`]: the player's ephemeral key, the license key it
//!   accepts, and the copy read with it (rule 4).
//! - [`seal_content_key_for_account`] and [`AccountUnwrap`]: the app's side of account
//!   slots (rule 7).
//! - [`decode_image_within`], [`encode_png`]: image codecs within an [`ImageBound`] checked
//!   against the header before decoding.
//!
//! Errors are one [`Error`] type whose `code()` passes `iki-format`'s and `iki-crypto`'s
//! codes through and adds [`OWN_CODES`].
#![forbid(unsafe_code)]
#![deny(missing_docs)]
#![deny(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]
#![cfg_attr(
    test,
    allow(
        clippy::unwrap_used,
        clippy::expect_used,
        clippy::panic,
        clippy::indexing_slicing
    )
)]

mod account;
mod copy;
mod error;
mod identify;
mod image;
mod master;
mod player;
mod release_sender;
mod service;
mod types;
mod verify;

pub use crate::account::{
    seal_content_key_for_account, AccountUnwrap, ACCOUNT_BLOB_BYTES, ACCOUNT_BLOB_VERSION,
};
pub use crate::copy::{LicenseCopier, COPY_DEFLATE_LEVEL};
pub use crate::error::{Error, OWN_CODES};
pub use crate::identify::{
    Identification, Identifier, NotFoundReason, TextureMatch, MIN_VISIBLE_PIXELS,
};
pub use crate::image::{
    decode_image, decode_image_within, encode_png, image_dimensions, ImageBound,
    MAX_IMAGE_RGBA_BYTES, MAX_IMAGE_SIDE_PX,
};
pub use crate::player::{LicenseReader, PlayerSession};
pub use crate::release_sender::{
    ReleaseSender, RELEASE_SENDER_MAX_AGE_MS, RELEASE_SENDER_MAX_USES,
};
pub use crate::service::{
    registration_message, registration_proof, ServiceKeys, MAX_SERVICE_ID_BYTES,
};
pub use crate::types::{license_id_hex, LicenseInfo, MasterRef, SealedKey};
pub use crate::verify::{MasterSummary, MasterVerifier, TextureInfo};
pub use iki_crypto::SecretKey32;
pub use iki_format::Event;
pub use iki_watermark::{Capacity, Detection, Region, Registration};

//! Thin, misuse-resistant wrappers over RustCrypto and dalek for iki.
//!
//! This crate is the only place in iki that touches cryptographic primitives. It implements
//! the algorithms of `docs/format.md` ("Algorithms" in the SPEC): XChaCha20-Poly1305
//! (draft-irtf-cfrg-xchacha, RFC 8439), HKDF-SHA256 (RFC 5869), Argon2id v0x13 (RFC 9106),
//! strict Ed25519 (RFC 8032 §5.1), X25519 that refuses low-order points (RFC 7748 §5, §6.1),
//! the ephemeral-static "seal to an X25519 key" construction (format §3.3, §8.2), and the
//! service key derivations of format §8. Every domain label lives in [`labels`].
//!
//! Design rules, which every module follows:
//! - No I/O except OS randomness (`getrandom`), no clock.
//! - Secret material is held in types that zeroize on drop ([`SecretKey32`], [`Aead`],
//!   [`SigningKey`], [`X25519Secret`]); none of them prints its bytes in `Debug`.
//! - Nothing here panics on any input: lengths are typed (`&[u8; N]`) or checked, and every
//!   failure is an [`Error`] with a stable code. Authentication failures are coarse on
//!   purpose ([`Error::DecryptFailed`], [`Error::BadSignature`]).
#![forbid(unsafe_code)]
#![deny(missing_docs)]
#![deny(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]
// Unit tests may index and unwrap; the library itself is still checked without `cfg(test)`.
#![cfg_attr(
    test,
    allow(
        clippy::unwrap_used,
        clippy::expect_used,
        clippy::panic,
        clippy::indexing_slicing
    )
)]

mod aead;
mod chacha;
pub mod derive;
mod ed25519;
mod error;
pub mod hash;
mod kdf;
pub mod labels;
#[doc(hidden)]
pub mod parts;
mod poly1305;
mod seal;
mod secret;
#[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
mod simd128;
#[cfg(test)]
mod wycheproof;
mod x25519;
mod xchacha;

pub use crate::aead::{unwrap_key, wrap_key, Aead, TAG_BYTES, WRAPPED_KEY_BYTES, XNONCE_BYTES};
pub use crate::chacha::chacha8_keystream;
pub use crate::ed25519::{
    SigningKey, VerifyingKey, ED25519_PUBLIC_KEY_BYTES, ED25519_SIGNATURE_BYTES,
};
pub use crate::error::Error;
pub use crate::kdf::{
    argon2id, hkdf_sha256, hkdf_sha256_into, Argon2Params, HKDF_SHA256_MAX_OUTPUT_BYTES,
};
pub use crate::seal::{open_sealed, seal_from, seal_to, x25519_kek, Sealed, SenderKey};
pub use crate::secret::{fill_random, random_bytes, SecretKey32, SECRET_KEY_BYTES};
pub use crate::x25519::{is_low_order_x25519, X25519Secret, X25519_KEY_BYTES};
#[doc(hidden)]
pub use crate::xchacha::cross_check as xchacha20poly1305_cross_check;

/// Re-export of the `zeroize` crate so callers name the same `Zeroizing` type that
/// [`open_sealed`] returns.
pub use zeroize;

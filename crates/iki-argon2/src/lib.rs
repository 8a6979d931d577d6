//! Argon2id version 0x13 (RFC 9106), written for iki's WebAssembly build.
//!
//! Why our own: RustCrypto's `argon2` 0.5 has scalar and AVX2 compression functions but
//! nothing for wasm32, where its scalar BlaMka runs one 64-bit word at a time. With
//! `simd128` enabled (scripts/build-wasm.sh does), the second backend of `compress` keeps
//! two 64-bit words per v128, in the layout of the reference implementation's SSE2 `opt.c`
//! (P-H-C `blake2-round-opt.h`); in V8 it takes half the time of the scalar backend built
//! for wasm32. Everywhere else the portable scalar backend runs; both give the same bytes
//! (tested natively against the `argon2` crate and the RFC 9106 / P-H-C vectors, and
//! through WASM against tags pinned from the native build).
//!
//! Scope: Argon2id only (type `y = 2`), version 0x13, any tag of at least 4 bytes, optional
//! secret `K` and associated data `X` (RFC 9106 §3.2). The `p` lanes are computed one after
//! another, slice by slice, which gives the same tag as running them in parallel (§3.4: a
//! block only references blocks of other lanes from finished slices).
//!
//! Zeroization: the block memory (password-derived) is the caller's in [`hash_into`] and is
//! wiped by [`hash`] before it is freed; H0, the H' buffers and the compression scratch are
//! wiped where they are created (see the `h` and `fill` modules), and the BLAKE2b hashers
//! (`blake2b`, our own because the `blake2` crate cannot wipe its state) when they drop.
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

mod blake2b;
mod block;
mod compress;
mod fill;
mod h;

use core::fmt;

pub use block::Block;
use zeroize::Zeroize;

/// The shortest salt RFC 9106 §3.1 allows, in bytes.
pub const MIN_SALT_BYTES: usize = 8;
/// The shortest tag RFC 9106 §3.1 allows, in bytes.
pub const MIN_TAG_BYTES: usize = 4;
/// The largest number of lanes RFC 9106 §3.1 allows.
pub const MAX_LANES: u32 = (1 << 24) - 1;
/// Slices per pass (RFC 9106 §3.4, "SL").
const SYNC_POINTS: u32 = 4;

/// Everything that can go wrong. No variant carries secret data.
#[non_exhaustive]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Error {
    /// `p` is 0 or above [`MAX_LANES`], `t` is 0, or `m_kib < 8 · p`. Code `PARAMS`.
    Params,
    /// An input or the tag has a length RFC 9106 §3.1 refuses (salt under 8 bytes, tag under
    /// 4 bytes, anything at or above 4 GiB). Code `LENGTH`.
    Length {
        /// Which input: `"password"`, `"salt"`, `"secret"`, `"associated data"` or `"tag"`.
        what: &'static str,
        /// Its length in bytes.
        len: usize,
    },
    /// The block memory could not be reserved, or the caller's is shorter than
    /// [`block_count`]. Code `MEMORY`.
    Memory,
}

impl Error {
    /// A stable SCREAMING_SNAKE code for this error.
    #[must_use]
    pub const fn code(&self) -> &'static str {
        match self {
            Self::Params => "PARAMS",
            Self::Length { .. } => "LENGTH",
            Self::Memory => "MEMORY",
        }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Params => f.write_str("argon2id parameters refused"),
            Self::Length { what, len } => write!(f, "argon2id {what} length {len} refused"),
            Self::Memory => f.write_str("argon2id block memory unavailable"),
        }
    }
}

impl std::error::Error for Error {}

/// Cost parameters (RFC 9106 §3.1).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Params {
    /// Memory in KiB (`m`); at least `8 · p`. Rounded down to a multiple of `4 · p` blocks.
    pub m_kib: u32,
    /// Passes (`t`); at least 1.
    pub t: u32,
    /// Lanes (`p`); 1 to [`MAX_LANES`].
    pub p: u32,
}

/// The secret inputs of one derivation (RFC 9106 §3.1: `P`, `S`, `K`, `X`).
#[derive(Clone, Copy)]
pub struct Inputs<'a> {
    /// The password `P`.
    pub password: &'a [u8],
    /// The salt `S`, at least [`MIN_SALT_BYTES`].
    pub salt: &'a [u8],
    /// The optional secret `K` (empty for none).
    pub secret: &'a [u8],
    /// The optional associated data `X` (empty for none).
    pub ad: &'a [u8],
}

impl fmt::Debug for Inputs<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Inputs { .. }")
    }
}

/// The number of blocks `m'` = `4 · p · floor(m / 4p)` (RFC 9106 §3.2 step 4) that
/// [`hash_into`] needs, after checking the parameters.
pub fn block_count(params: &Params) -> Result<usize, Error> {
    let lanes = u64::from(params.p);
    if params.p == 0 || params.p > MAX_LANES || params.t == 0 {
        return Err(Error::Params);
    }
    let m = u64::from(params.m_kib);
    if m < 8 * lanes {
        return Err(Error::Params);
    }
    let per_lane = m / (u64::from(SYNC_POINTS) * lanes) * u64::from(SYNC_POINTS);
    usize::try_from(per_lane * lanes).map_err(|_| Error::Memory)
}

/// Argon2id v0x13 of `inputs` into `tag`, in the caller's block `memory` (at least
/// [`block_count`] blocks; extra blocks are left alone). `memory` holds password-derived
/// data afterwards: the caller wipes it (Block implements `Zeroize`).
pub fn hash_into(
    params: &Params,
    inputs: &Inputs<'_>,
    memory: &mut [Block],
    tag: &mut [u8],
) -> Result<(), Error> {
    check_lengths(inputs, tag)?;
    let blocks = block_count(params)?;
    let memory = memory.get_mut(..blocks).ok_or(Error::Memory)?;
    let h0 = h::h0(params, inputs, tag.len())?;
    fill::fill(params, &h0, memory)?;
    let last = fill::xor_last_column(params, memory)?;
    h::h_prime(&[&last.to_bytes()[..]], tag)
}

/// [`hash_into`] over memory it reserves fallibly (so that an impossible size is
/// [`Error::Memory`], not an abort) and wipes before freeing, on success and failure alike.
pub fn hash(params: &Params, inputs: &Inputs<'_>, tag: &mut [u8]) -> Result<(), Error> {
    check_lengths(inputs, tag)?;
    let blocks = block_count(params)?;
    let mut memory: Vec<Block> = Vec::new();
    memory
        .try_reserve_exact(blocks)
        .map_err(|_| Error::Memory)?;
    memory.resize(blocks, Block::default());
    let result = hash_into(params, inputs, &mut memory, tag);
    memory.iter_mut().for_each(Zeroize::zeroize);
    result
}

fn check_lengths(inputs: &Inputs<'_>, tag: &[u8]) -> Result<(), Error> {
    let fields = [
        ("password", inputs.password.len()),
        ("salt", inputs.salt.len()),
        ("secret", inputs.secret.len()),
        ("associated data", inputs.ad.len()),
        ("tag", tag.len()),
    ];
    for (what, len) in fields {
        if u32::try_from(len).is_err() {
            return Err(Error::Length { what, len });
        }
    }
    if inputs.salt.len() < MIN_SALT_BYTES {
        return Err(Error::Length {
            what: "salt",
            len: inputs.salt.len(),
        });
    }
    if tag.len() < MIN_TAG_BYTES {
        return Err(Error::Length {
            what: "tag",
            len: tag.len(),
        });
    }
    Ok(())
}

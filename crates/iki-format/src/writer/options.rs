//! Writer options and the manifest-entry helper.

use iki_crypto::hash::sha256;
use iki_crypto::{SecretKey32, SigningKey};

use crate::encoding::DEFAULT_DEFLATE_LEVEL;
use crate::header::Kind;
use crate::keys::{NewSlot, SlotEntropy};
use crate::limits::DEFAULT_CHUNK_SIZE_BYTES;
use crate::manifest::{Encoding, Entry};
use crate::sign::SignerInfo;

/// Whether and how the content is encrypted.
#[derive(Debug)]
pub enum Protection {
    /// Cipher 0: no KEYS chunk; every entry needs its sha256.
    None,
    /// Cipher 1: the content key and the slots that wrap (or name) it. The key is zeroized
    /// when the writer drops it.
    Encrypted {
        /// 32 random bytes per file (the license key for a license copy).
        content_key: SecretKey32,
        /// 1 to 64 slots.
        slots: Vec<NewSlot>,
    },
}

/// What signs the file (docs/format.md section 7).
pub enum SignWith {
    /// A key held here; [`super::Writer::finish`] signs.
    Key(SigningKey),
    /// A key held elsewhere (a browser's non-extractable WebCrypto key, a hardware token):
    /// only its public key is known here, [`super::Writer::finish_external`] hands out the
    /// message to sign and [`super::PendingSignature::attach`] checks the signature made for
    /// it before it is written.
    External([u8; 32]),
}

impl SignWith {
    /// The public key that goes into SIGN.
    #[must_use]
    pub fn public_key(&self) -> [u8; 32] {
        match self {
            Self::Key(key) => key.public_key(),
            Self::External(public_key) => *public_key,
        }
    }
}

impl core::fmt::Debug for SignWith {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            Self::Key(key) => f.debug_tuple("Key").field(key).finish(),
            Self::External(_) => f.write_str("External(..)"),
        }
    }
}

/// Everything a [`super::Writer`] needs besides the manifest.
#[derive(Debug)]
pub struct WriterOptions {
    /// Project or model file.
    pub kind: Kind,
    /// Decoded bytes per DATA chunk, 4096 to 16777216.
    pub chunk_size: u32,
    /// 16 random bytes per file.
    pub file_id: [u8; 16],
    /// Milliseconds since the Unix epoch (the crate has no clock).
    pub created_ms: u64,
    /// Encryption.
    pub protection: Protection,
    /// What signs the file.
    pub signing: SignWith,
    /// The signer JSON.
    pub signer: SignerInfo,
    /// DEFLATE level, 0 to 10 (default 6).
    pub deflate_level: u8,
    /// Source of slot salts, nonces and ephemeral keys (default: the OS).
    pub slot_entropy: SlotEntropy,
    /// The caller computed every manifest `sha256` from the very bytes it writes, and they
    /// cannot change in between (a browser `Blob` is immutable): the writer does not hash the
    /// entries again. Default false: the writer checks each entry against its `sha256`.
    pub entry_hashes_trusted: bool,
}

impl WriterOptions {
    /// Options with the defaults: 1 MiB chunks, no encryption, level 6, OS entropy.
    #[must_use]
    pub fn new(
        kind: Kind,
        file_id: [u8; 16],
        created_ms: u64,
        signing_key: SigningKey,
        signer: SignerInfo,
    ) -> Self {
        Self::signed_by(
            kind,
            file_id,
            created_ms,
            SignWith::Key(signing_key),
            signer,
        )
    }

    /// Options as [`WriterOptions::new`], for a file signed outside this crate by the key
    /// whose public half is `public_key` (see [`SignWith::External`]).
    #[must_use]
    pub fn new_external(
        kind: Kind,
        file_id: [u8; 16],
        created_ms: u64,
        public_key: [u8; 32],
        signer: SignerInfo,
    ) -> Self {
        Self::signed_by(
            kind,
            file_id,
            created_ms,
            SignWith::External(public_key),
            signer,
        )
    }

    /// Options with the defaults, signed by `signing`.
    #[must_use]
    pub fn signed_by(
        kind: Kind,
        file_id: [u8; 16],
        created_ms: u64,
        signing: SignWith,
        signer: SignerInfo,
    ) -> Self {
        Self {
            kind,
            chunk_size: DEFAULT_CHUNK_SIZE_BYTES,
            file_id,
            created_ms,
            protection: Protection::None,
            signing,
            signer,
            deflate_level: DEFAULT_DEFLATE_LEVEL,
            slot_entropy: SlotEntropy::Os,
            entry_hashes_trusted: false,
        }
    }
}

/// A manifest entry for `bytes`, with their size and sha256 (no `meta`; rgba8 entries
/// need `meta.width` and `meta.height` added).
#[must_use]
pub fn manifest_entry_for(path: &str, media_type: &str, encoding: Encoding, bytes: &[u8]) -> Entry {
    Entry {
        path: path.to_owned(),
        media_type: media_type.to_owned(),
        size: bytes.len() as u64,
        encoding,
        sha256: Some(sha256(bytes)),
        meta: None,
    }
}

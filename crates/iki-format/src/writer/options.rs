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
    /// The key that signs the file.
    pub signing_key: SigningKey,
    /// The signer JSON.
    pub signer: SignerInfo,
    /// DEFLATE level, 0 to 10 (default 6).
    pub deflate_level: u8,
    /// Source of slot salts, nonces and ephemeral keys (default: the OS).
    pub slot_entropy: SlotEntropy,
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
        Self {
            kind,
            chunk_size: DEFAULT_CHUNK_SIZE_BYTES,
            file_id,
            created_ms,
            protection: Protection::None,
            signing_key,
            signer,
            deflate_level: DEFAULT_DEFLATE_LEVEL,
            slot_entropy: SlotEntropy::Os,
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

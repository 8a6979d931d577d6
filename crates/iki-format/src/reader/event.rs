//! What a [`super::Reader`] reports, in file order (docs/format.md sections 1 to 7, 6.2).

use crate::header::Header;
use crate::keys::Slot;
use crate::manifest::Manifest;
use crate::sign::Verified;

/// What the reader found next.
#[derive(Clone, Debug, PartialEq)]
pub enum Event {
    /// HEAD was read.
    Header(Header),
    /// Cipher 1: the key slots (unknown types kept). The caller must now call one of the
    /// `unlock_*` methods or `skip_content` before `next`.
    Locked(Vec<Slot>),
    /// The manifest, validated.
    Manifest(Manifest),
    /// The decoded bytes of one chunk.
    Chunk {
        /// Entry id.
        entry: u32,
        /// Chunk index within the entry.
        index: u32,
        /// Whether this is the entry's last chunk.
        last: bool,
        /// Decoded bytes.
        data: Vec<u8>,
    },
    /// An entry's sha256 (when present) and size matched.
    EntryVerified {
        /// Entry id.
        entry: u32,
    },
    /// The signature verified strictly and nothing follows SIGN.
    End(Verified),
    /// Only after [`Reader::tolerate_damage`]: an entry that ended with a chunk that did not
    /// decrypt or decode, or whose bytes do not match its manifest `sha256`. None of its
    /// damaged chunks was released; the entry as a whole must not be used.
    EntryDamaged {
        /// Entry id.
        entry: u32,
    },
    /// Only after [`Reader::tolerate_damage`], in place of `End`: the signature does not
    /// verify, so the file was modified after it was signed (or signed by a forger). Nothing
    /// follows SIGN. The signer JSON is the unverified claim as found.
    Modified {
        /// The public key in SIGN.
        public_key: [u8; 32],
        /// The signer JSON bytes as found (not checked).
        info: Vec<u8>,
    },
}

//! The 1024-byte Argon2 block (RFC 9106 §3.2), as 128 little-endian 64-bit words.
//!
//! Aligned to 64 bytes so that the simd128 backend can view it as 64 `v128` values with a
//! checked, safe cast (which never fails at this alignment) and so that a block never
//! straddles two cache lines more than it must.

use zeroize::Zeroize;

/// Words in a block.
pub(crate) const WORDS: usize = 128;
/// Bytes in a block.
pub(crate) const BYTES: usize = 8 * WORDS;

/// One Argon2 block. Holds password-derived data once filled; wipe it with `zeroize`.
#[derive(Clone)]
#[repr(C, align(64))]
pub struct Block(pub(crate) [u64; WORDS]);

impl Default for Block {
    fn default() -> Self {
        Self([0; WORDS])
    }
}

impl Zeroize for Block {
    fn zeroize(&mut self) {
        self.0.zeroize();
    }
}

impl core::fmt::Debug for Block {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str("Block { .. }")
    }
}

impl Block {
    /// Overwrites the block with the little-endian words of `bytes` (in place, so that no
    /// copy of password-derived data is left on the stack).
    pub(crate) fn load_bytes(&mut self, bytes: &[u8; BYTES]) {
        for (word, chunk) in self.0.iter_mut().zip(bytes.chunks_exact(8)) {
            *word = chunk
                .iter()
                .rev()
                .fold(0u64, |acc, &b| (acc << 8) | u64::from(b));
        }
    }

    /// The little-endian encoding, in a buffer the caller wipes.
    pub(crate) fn to_bytes(&self) -> zeroize::Zeroizing<[u8; BYTES]> {
        let mut bytes = zeroize::Zeroizing::new([0u8; BYTES]);
        for (chunk, word) in bytes.chunks_exact_mut(8).zip(self.0.iter()) {
            chunk.copy_from_slice(&word.to_le_bytes());
        }
        bytes
    }

    /// `self ^= other`, word by word.
    pub(crate) fn xor_assign(&mut self, other: &Self) {
        for (a, b) in self.0.iter_mut().zip(other.0.iter()) {
            *a ^= b;
        }
    }
}

//! Entries whose sha256 the caller computed over the very bytes it is about to write (a
//! texture decoded once inside WASM, hashed there, then written from the same buffer):
//! [`Writer::verify_entry_hash`] compares that digest with the manifest's before the first
//! byte, and the writer then does not hash the entry a second time (docs/format.md section 6:
//! a SHA-256 pass over an atlas costs about as much as decoding its PNG). Holding the caller
//! to "exactly those bytes" is the caller's part: the WASM adapter writes such an entry only
//! from the buffer the digest was taken of, which nothing can change in between.

use super::Writer;
use crate::error::Error;

impl Writer {
    /// Checks `digest`, the SHA-256 of the bytes the caller will write as the current entry,
    /// against the entry's manifest sha256 before any of them is written; when they agree the
    /// entry is not hashed again while it is written. An entry without a manifest sha256 (an
    /// encrypted file's, or a writer with trusted hashes) has nothing to compare: a no-op.
    ///
    /// # Errors
    /// `INVALID_STATE` after the last entry or once bytes of the entry were written (not
    /// final); `HASH_MISMATCH` when the digest differs from the manifest's (final, as at
    /// `end_entry`).
    pub fn verify_entry_hash(&mut self, digest: &[u8; 32]) -> Result<(), Error> {
        self.check()?;
        if self.plans.get(self.entry as usize).is_none() {
            return Err(Error::state("verify_entry_hash after the last entry ended"));
        }
        if self.written != 0 || self.index != 0 || !self.pending.is_empty() {
            return Err(Error::state("verify_entry_hash after bytes of the entry"));
        }
        match self.expected_hash() {
            Some(expected) if expected != *digest => {
                self.fail(Error::HashMismatch { entry: self.entry })
            }
            Some(_) => {
                if let Some(slot) = self.hashes.get_mut(self.entry as usize) {
                    *slot = None;
                }
                Ok(())
            }
            None => Ok(()),
        }
    }

    /// Decoded bytes per full DATA chunk of the current entry (whole rows for rgba8), or `None`
    /// after the last entry: how to hand the entry to `write` a whole chunk at a time.
    #[must_use]
    pub fn current_chunk_bytes(&self) -> Option<u32> {
        self.chunk_bytes(self.entry)
    }
}

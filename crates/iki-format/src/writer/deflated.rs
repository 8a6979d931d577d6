//! Chunks deflated elsewhere ([`crate::encoding::deflate_chunk`] on a worker thread or Web
//! Worker), handed to the writer whole: [`Writer::write_deflated`] checks each one, then
//! seals and emits it exactly as [`Writer::write`] would have (the same stream, because a
//! chunk's stream depends only on its bytes, the level, chunk_size and encryption).
//!
//! The check decodes the stream (it must give exactly the claimed length, which must be the
//! chunk's) and hashes what it gave (it must be the claimed SHA-256), so a stream that is not
//! what its worker claims (a damaged buffer, another chunk's stream under this chunk's claims)
//! never reaches the file: the call fails with a typed error, nothing is emitted and the
//! writer stays where it was (the caller may retry, or write that chunk's bytes with `write`).
//! A true chunk handed in at another chunk's place of the same length is caught by the entry's
//! manifest sha256 at `end_entry` when the writer hashes the entry; callers keep chunks in
//! order by construction. Keys never leave the writer: workers see only plaintext they were
//! given to deflate.

use iki_crypto::hash::sha256;

use super::Writer;
use crate::encoding::{DeflatedChunk, Inflater};
use crate::error::Error;
use crate::manifest::Encoding;

/// The decoder and buffer that check chunks deflated elsewhere (one chunk long).
pub(super) struct Verify {
    inflater: Inflater,
    raw: Vec<u8>,
}

impl Writer {
    /// Emits the current entry's next chunk from a stream deflated elsewhere (see the module
    /// comment). The entry must be `deflate` or `rgba8`, and no bytes of the chunk may have
    /// been given to `write` before.
    ///
    /// # Errors
    /// Not final (nothing is emitted and the writer is unchanged): `INVALID_STATE` after the
    /// last entry or in the middle of a chunk; `INVALID_ARGUMENT` for a `stored` entry, a
    /// chunk past the entry's last, or a claimed length that is not the chunk's;
    /// `LIMIT_EXCEEDED` for a stream longer than a DATA chunk holds; `BAD_DATA` when the
    /// stream does not decode to exactly the claimed length; `HASH_MISMATCH` when what it
    /// decodes to does not have the claimed SHA-256. Final: a failure to seal.
    pub fn write_deflated(&mut self, chunk: &DeflatedChunk) -> Result<(), Error> {
        self.check()?;
        let Some(plan) = self.plans.get(self.entry as usize).copied() else {
            return Err(Error::state("write_deflated after the last entry ended"));
        };
        if !self.pending.is_empty() {
            return Err(Error::state(
                "write_deflated in the middle of a chunk given to write",
            ));
        }
        if plan.encoding == Encoding::Stored {
            return Err(Error::argument("a stored entry's chunks are not deflated"));
        }
        if self.index >= plan.count {
            return Err(Error::argument("more chunks than the entry's manifest size"));
        }
        if chunk.raw_len != plan.decoded_len(self.index) {
            return Err(Error::argument(
                "the claimed length is not the length of the entry's next chunk",
            ));
        }
        let max = self.max_encoded();
        if chunk.data.len() > max {
            return Err(Error::limit(
                "max_data_payload_bytes",
                chunk.data.len() as u64,
                max as u64,
            ));
        }
        let (entry, index) = (self.entry, self.index);
        let verify = self.verify.get_or_insert_with(|| Verify {
            inflater: Inflater::new(),
            raw: Vec::new(),
        });
        verify
            .inflater
            .inflate_into(&chunk.data, chunk.raw_len as usize, &mut verify.raw)
            .map_err(|()| Error::BadData { entry, index })?;
        if sha256(&verify.raw) != chunk.raw_sha256 {
            return Err(Error::HashMismatch { entry });
        }
        // Checked: from here on it is the chunk `write` would have emitted.
        if let (Some(_), Some(verify)) = (self.expected_hash(), self.verify.as_ref()) {
            self.entry_hasher.update(&verify.raw);
        }
        self.written += u64::from(chunk.raw_len);
        self.work.clear();
        self.work.reserve(chunk.data.len() + self.tag_bytes());
        self.work.extend_from_slice(&chunk.data);
        if let Err(e) = self.seal_and_emit(&plan) {
            return self.fail(e);
        }
        Ok(())
    }
}

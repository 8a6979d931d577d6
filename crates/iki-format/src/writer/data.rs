//! DATA chunks (docs/format.md section 6): each chunk is built where it ends up, in the output
//! buffer. Its headers are appended, then its encoded bytes (the caller's bytes of a stored
//! chunk, or the deflater's stream), which are sealed in place there when the file is
//! encrypted, the tag appended after them. So every chunk reaches the output in one copy: no
//! `work` buffer between the encoding and the output (issue 28 item 4). The bytes of the file
//! are the same as when the chunk was sealed in a buffer of its own and copied
//! (`testdata/container` holds them).
//!
//! A stored chunk may also be copied into the output by the caller itself
//! ([`Writer::write_stored_chunk`]): from a buffer outside WASM straight into the output,
//! without first crossing into WASM memory as a slice of its own.

use super::Writer;
use crate::chunk::{DataHeader, CHUNK_HEADER_BYTES, DATA, FLAG_LAST};
use crate::content::data_aad;
use crate::encoding::ChunkPlan;
use crate::error::Error;
use crate::limits::DATA_HEADER_BYTES;
use crate::manifest::Encoding;

/// Bytes of a DATA chunk before its payload: the chunk header and the DATA header.
const DATA_HEADS: usize = CHUNK_HEADER_BYTES + DATA_HEADER_BYTES as usize;

impl Writer {
    /// The header of the current entry's next DATA chunk; counts the chunk (its nonce number).
    pub(super) fn next_header(&mut self, plan: &ChunkPlan) -> DataHeader {
        let last = self.index + 1 == plan.count;
        self.chunk_number += 1;
        DataHeader {
            entry: self.entry,
            index: self.index,
            flags: if last { FLAG_LAST } else { 0 },
        }
    }

    /// Encodes, encrypts and emits one whole chunk of the current entry, `input` (the
    /// caller's bytes or `pending`).
    pub(super) fn emit_data(&mut self, plan: &ChunkPlan, input: &[u8]) -> Result<(), Error> {
        // A SHA-256 pass over the decoded bytes is about a quarter of a license copy's time
        // (bench/RESULTS.md); an entry without a manifest sha256 (rgba8 entries of license
        // copies) has nothing to check it against, so it is not hashed.
        if self.expected_hash().is_some() {
            self.entry_hasher.update(input);
        }
        self.written += input.len() as u64;
        let max = self.max_encoded();
        let tag = self.tag_bytes();
        let header = self.next_header(plan);
        let start = self.out.len();
        match plan.encoding {
            Encoding::Stored => {
                push_data_heads(&mut self.out, &header, input.len(), tag)?;
                self.out.extend_from_slice(input);
            }
            Encoding::Deflate | Encoding::Rgba8 => {
                let stream = self.deflater.deflate_hinted(input, max, self.hint)?;
                push_data_heads(&mut self.out, &header, stream.len(), tag)?;
                self.out.extend_from_slice(stream);
            }
        }
        self.end_data_chunk(&header, start)
    }

    /// Emits `stream`, the current entry's next chunk encoded elsewhere and checked
    /// (`deflated.rs`), as its DATA chunk.
    pub(super) fn emit_encoded(&mut self, plan: &ChunkPlan, stream: &[u8]) -> Result<(), Error> {
        let tag = self.tag_bytes();
        let header = self.next_header(plan);
        let start = self.out.len();
        push_data_heads(&mut self.out, &header, stream.len(), tag)?;
        self.out.extend_from_slice(stream);
        self.end_data_chunk(&header, start)
    }

    /// Whether [`Writer::write_stored_chunk`] takes `len` bytes now: the current entry is
    /// `stored`, no bytes of its next chunk were given to `write`, and `len` is that chunk's
    /// whole length (an empty entry's single chunk is written by `end_entry`).
    #[must_use]
    pub fn takes_stored_chunk(&self, len: usize) -> bool {
        self.failed.is_none()
            && self.pending.is_empty()
            && len > 0
            && self.plans.get(self.entry as usize).is_some_and(|plan| {
                plan.encoding == Encoding::Stored
                    && self.index < plan.count
                    && plan.decoded_len(self.index) as usize == len
            })
    }

    /// Writes the current entry's next whole chunk, `len` bytes of a `stored` entry that
    /// `fill` copies into the slice it is given (exactly `len` bytes: the chunk's place in the
    /// output buffer) — the bytes reach the output in one copy from wherever the caller holds
    /// them, and are sealed there when the file is encrypted. The same file as [`Writer::write`]
    /// of those bytes. The entry's manifest sha256, when it has one, is computed over the bytes
    /// `fill` left.
    ///
    /// # Errors
    /// Not final (nothing written, `fill` not called): `INVALID_ARGUMENT` when
    /// [`Writer::takes_stored_chunk`] is false for `len` (use `write`), `INVALID_STATE` after a
    /// failure. Final: as `write`.
    pub fn write_stored_chunk(
        &mut self,
        len: usize,
        fill: impl FnOnce(&mut [u8]),
    ) -> Result<(), Error> {
        self.check()?;
        let plan = match self.plans.get(self.entry as usize).copied() {
            Some(plan) if self.takes_stored_chunk(len) => plan,
            _ => {
                return Err(Error::argument(
                    "not the whole next chunk of a stored entry; use write",
                ))
            }
        };
        let tag = self.tag_bytes();
        let hash_entry = self.expected_hash().is_some();
        let header = self.next_header(&plan);
        let start = self.out.len();
        if let Err(e) = push_data_heads(&mut self.out, &header, len, tag) {
            return self.fail(e);
        }
        let payload_at = self.out.len();
        self.out.resize(payload_at + len, 0);
        let payload = self.out.get_mut(payload_at..).unwrap_or_default();
        fill(payload);
        if hash_entry {
            self.entry_hasher.update(payload);
        }
        self.written += len as u64;
        if let Err(e) = self.end_data_chunk(&header, start) {
            return self.fail(e);
        }
        Ok(())
    }

    /// Ends the DATA chunk begun at `start` in the output (its headers, then its encoded
    /// payload up to the end of the output): seals the payload where it lies and appends the
    /// tag when the file is encrypted, counts and hashes the whole chunk as output, and moves
    /// to the entry's next chunk. On failure the chunk is taken out of the output again, so
    /// no plaintext of an encrypted file is ever left there.
    fn end_data_chunk(&mut self, header: &DataHeader, start: usize) -> Result<(), Error> {
        if let Some(cipher) = &self.cipher {
            let aad = data_aad(&self.keys_digest, header);
            let payload = self.out.get_mut(start + DATA_HEADS..).unwrap_or_default();
            match cipher.seal_detached(self.chunk_number, &aad, payload) {
                Ok(tag) => self.out.extend_from_slice(&tag),
                Err(e) => {
                    self.out.truncate(start);
                    return Err(e);
                }
            }
        }
        let chunk = self.out.get(start..).unwrap_or_default();
        if self.hash_output {
            self.hasher.update(chunk);
        }
        self.emitted += chunk.len() as u64;
        self.index += 1;
        Ok(())
    }
}

/// Appends the chunk header and DATA header of a chunk whose payload is `payload` bytes
/// before sealing (`tag` more after), with room reserved for all of it: one allocation of the
/// chunk's size when the output was just drained, none once its capacity has grown.
///
/// # Errors
/// `INVALID_STATE` for a chunk longer than a u32 (unreachable within the limits); nothing is
/// appended then.
fn push_data_heads(
    out: &mut Vec<u8>,
    header: &DataHeader,
    payload: usize,
    tag: usize,
) -> Result<(), Error> {
    let header_bytes = header.to_bytes();
    let length = u32::try_from(header_bytes.len() + payload + tag)
        .map_err(|_| Error::state("data length"))?;
    out.reserve(DATA_HEADS + payload + tag);
    out.extend_from_slice(&DATA);
    out.extend_from_slice(&length.to_le_bytes());
    out.extend_from_slice(&header_bytes);
    Ok(())
}

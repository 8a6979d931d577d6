//! DATA chunks (docs/format.md section 6): the header of each, sealing when the file is
//! encrypted, and the chunk's bytes appended to the output. A stored chunk of a file that is
//! not encrypted goes from the caller's bytes to the output in one copy (no `work` buffer).

use super::Writer;
use crate::chunk::{DataHeader, CHUNK_HEADER_BYTES, DATA, FLAG_LAST};
use crate::content::data_aad;
use crate::encoding::ChunkPlan;
use crate::error::Error;

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

    /// Encrypts `work` (the current chunk's encoded bytes) and emits it as the next DATA chunk.
    pub(super) fn seal_and_emit(&mut self, plan: &ChunkPlan) -> Result<(), Error> {
        let header = self.next_header(plan);
        let tag = self.tag_bytes();
        self.work.reserve(tag);
        if let Some(cipher) = &self.cipher {
            cipher.seal(
                self.chunk_number,
                &data_aad(&self.keys_digest, &header),
                &mut self.work,
            )?;
        }
        let work = std::mem::take(&mut self.work);
        let result = self.emit_data_chunk(&header, &work);
        self.work = work;
        result
    }

    /// Emits a DATA chunk of `header` and `payload` (encoded, sealed when encrypted) and moves
    /// to the entry's next chunk.
    pub(super) fn emit_data_chunk(
        &mut self,
        header: &DataHeader,
        payload: &[u8],
    ) -> Result<(), Error> {
        let header_bytes = header.to_bytes();
        let length = u32::try_from(payload.len() + header_bytes.len())
            .map_err(|_| Error::state("data length"));
        if let Ok(length) = length {
            let mut head = [0u8; CHUNK_HEADER_BYTES];
            let (t, l) = head.split_at_mut(4);
            t.copy_from_slice(&DATA);
            l.copy_from_slice(&length.to_le_bytes());
            // One allocation of the chunk's size when the output was just drained.
            self.out
                .reserve(CHUNK_HEADER_BYTES + header_bytes.len() + payload.len());
            self.emit_raw(&head);
            self.emit_raw(&header_bytes);
            self.emit_raw(payload);
        }
        self.index += 1;
        length.map(|_| ())
    }
}

//! DATA chunks: sequence, decryption and decoding (docs/format.md sections 4, 6), and the
//! byte span of each entry for reading it again ([`super::EntryReader`]).

use iki_crypto::hash::Sha256;

use super::entries::EntrySpan;
use super::Event;
use crate::chunk::{DataHeader, CHUNK_HEADER_BYTES};
use crate::content::{data_aad, ContentCipher};
use crate::encoding::{ChunkPlan, Inflater};
use crate::error::Error;
use crate::manifest::{Encoding, Manifest};

/// What a DATA chunk needs from the reader.
pub(super) struct ChunkContext<'a> {
    pub(super) cipher: Option<&'a ContentCipher>,
    pub(super) keys_digest: &'a [u8; 32],
    /// No key: check the sequence only (entry count unknown).
    pub(super) skipping: bool,
    /// File offset of the payload (for the entry spans).
    pub(super) payload_offset: u64,
}

/// Progress through the entries, and the buffers reused across chunks.
#[derive(Default)]
pub(super) struct DataState {
    plans: Vec<ChunkPlan>,
    hashes: Vec<Option<[u8; 32]>>,
    entry: u32,
    index: u32,
    chunk_number: u64,
    entry_hasher: Sha256,
    /// Set by [`super::Reader::skip_entry_hashes`]: manifest sha256 values are not checked.
    pub(super) skip_hashes: bool,
    /// Set by [`super::Reader::tolerate_damage`]: a damaged chunk marks its entry damaged.
    pub(super) tolerant: bool,
    /// A chunk of the current entry was damaged (tolerant mode).
    damaged: bool,
    /// Where each entry's DATA chunks lie in the file, filled as they are read.
    spans: Vec<EntrySpan>,
    inflater: Inflater,
    work: Vec<u8>,
    /// A chunk buffer handed back by [`super::Reader::recycle`], decoded into next.
    spare: Vec<u8>,
    /// Encoded length of the last chunk decoded ([`super::Reader::last_chunk_encoded_len`]).
    pub(super) last_encoded_len: usize,
}

fn sequence(entry: u32, index: u32, reason: &'static str) -> Error {
    Error::DataSequence {
        entry,
        index,
        reason,
    }
}

impl DataState {
    /// Plans every entry of a validated manifest.
    pub(super) fn start(&mut self, manifest: &Manifest, chunk_size: u32) -> Result<(), Error> {
        self.plans = manifest
            .entries
            .iter()
            .map(|e| ChunkPlan::new(e, chunk_size))
            .collect::<Result<_, _>>()?;
        self.hashes = manifest.entries.iter().map(|e| e.sha256).collect();
        self.spans = Vec::with_capacity(self.plans.len());
        Ok(())
    }

    /// Entry plans, hashes and spans of a file read to its end, for an [`super::EntryReader`]:
    /// positioned nowhere until it seeks.
    pub(super) fn into_index(self) -> Self {
        Self {
            plans: self.plans,
            hashes: self.hashes,
            spans: self.spans,
            ..Self::default()
        }
    }

    /// The span of `entry`, once read.
    pub(super) fn span(&self, entry: u32) -> Option<EntrySpan> {
        self.spans.get(entry as usize).copied()
    }

    /// Number of entries of the manifest.
    pub(super) fn entry_count(&self) -> u32 {
        self.entries()
    }

    /// Positions the state at the first chunk of `entry` (for reading it again).
    pub(super) fn seek(&mut self, entry: u32, span: &EntrySpan) {
        self.entry = entry;
        self.index = 0;
        self.chunk_number = span.first_chunk - 1;
        self.entry_hasher = Sha256::new();
        self.damaged = false;
    }

    fn entries(&self) -> u32 {
        u32::try_from(self.plans.len()).unwrap_or(u32::MAX)
    }

    /// A DATA chunk header arrived: is another chunk expected?
    pub(super) fn check_more(&self, skipping: bool) -> Result<(), Error> {
        if !skipping && self.entry >= self.entries() {
            return Err(sequence(self.entry, 0, "chunk after the last entry"));
        }
        Ok(())
    }

    /// SIGN arrived: did every entry end?
    pub(super) fn check_complete(&self, skipping: bool) -> Result<(), Error> {
        let complete = if skipping {
            self.index == 0
        } else {
            self.entry == self.entries()
        };
        if complete {
            Ok(())
        } else {
            Err(sequence(
                self.entry,
                self.index,
                "entry missing its last chunk",
            ))
        }
    }

    /// Checks, decrypts and decodes one DATA payload. Returns the chunk event (none when
    /// skipping or, in tolerant mode, when the chunk is damaged) and, at an entry's last
    /// chunk, `EntryVerified` or (tolerant mode) `EntryDamaged`.
    pub(super) fn process(
        &mut self,
        payload: &[u8],
        ctx: &ChunkContext<'_>,
    ) -> Result<(Option<Event>, Option<Event>), Error> {
        let (header, data) = DataHeader::parse(payload)?;
        if header.entry != self.entry || header.index != self.index {
            return Err(sequence(header.entry, header.index, "not the next chunk"));
        }
        self.chunk_number += 1;
        if ctx.skipping {
            self.advance(&header)?;
            return Ok((None, None));
        }
        let plan = *self.plans.get(header.entry as usize).ok_or(sequence(
            header.entry,
            0,
            "no such entry",
        ))?;
        if header.last() != (header.index + 1 == plan.count) {
            return Err(sequence(
                header.entry,
                header.index,
                "last flag does not match the entry's size",
            ));
        }
        self.record_span(&header, ctx.payload_offset, payload.len());
        let decoded = match self.decode(&plan, &header, data, ctx) {
            Ok(decoded) => Some(decoded),
            Err(Error::DecryptFailed | Error::BadData { .. }) if self.tolerant => {
                self.damaged = true;
                None
            }
            Err(e) => return Err(e),
        };
        let ended = if header.last() {
            Some(self.finish_entry(header.entry)?)
        } else {
            None
        };
        self.advance(&header)?;
        let event = decoded.map(|data| Event::Chunk {
            entry: header.entry,
            index: header.index,
            last: header.last(),
            data,
        });
        Ok((event, ended))
    }

    /// Notes where the chunk lies, at the entry's first and last chunk (a first reading only;
    /// an [`super::EntryReader`] already knows).
    fn record_span(&mut self, header: &DataHeader, payload_offset: u64, payload_len: usize) {
        let entry = header.entry as usize;
        if header.index == 0 && self.spans.len() == entry && self.spans.len() < self.plans.len() {
            self.spans.push(EntrySpan {
                start: payload_offset - CHUNK_HEADER_BYTES as u64,
                end: 0,
                first_chunk: self.chunk_number,
            });
        }
        if header.last() {
            if let Some(span) = self.spans.get_mut(entry) {
                if span.end == 0 {
                    span.end = payload_offset + payload_len as u64;
                }
            }
        }
    }

    /// Decrypts (cipher 1) and decodes one chunk's data to its exact length, and counts it
    /// into the entry's hash.
    fn decode(
        &mut self,
        plan: &ChunkPlan,
        header: &DataHeader,
        data: &[u8],
        ctx: &ChunkContext<'_>,
    ) -> Result<Vec<u8>, Error> {
        let encoded: &[u8] = match ctx.cipher {
            Some(cipher) => {
                self.work.clear();
                self.work.extend_from_slice(data);
                cipher.open(
                    self.chunk_number,
                    &data_aad(ctx.keys_digest, header),
                    &mut self.work,
                )?;
                &self.work
            }
            None => data,
        };
        self.last_encoded_len = encoded.len();
        let expected = plan.decoded_len(header.index) as usize;
        let bad = Error::BadData {
            entry: header.entry,
            index: header.index,
        };
        let mut decoded = std::mem::take(&mut self.spare);
        match plan.encoding {
            Encoding::Stored if encoded.len() == expected => {
                decoded.clear();
                decoded.extend_from_slice(encoded);
            }
            Encoding::Stored => return Err(bad),
            Encoding::Deflate | Encoding::Rgba8 => {
                if self
                    .inflater
                    .inflate_into(encoded, expected, &mut decoded)
                    .is_err()
                {
                    self.spare = decoded;
                    return Err(bad);
                }
            }
        }
        // Only entries with a manifest sha256 are hashed (license copies omit it for
        // textures), and none when the caller checks the whole file against a record.
        if !self.skip_hashes && matches!(self.hashes.get(header.entry as usize), Some(Some(_))) {
            self.entry_hasher.update(&decoded);
        }
        Ok(decoded)
    }

    /// Keeps `buffer` to decode the next chunk into (the larger one, when offered twice).
    pub(super) fn recycle(&mut self, buffer: Vec<u8>) {
        if buffer.capacity() > self.spare.capacity() {
            self.spare = buffer;
        }
    }

    /// `EntryVerified`, or `HASH_MISMATCH` (`EntryDamaged` in tolerant mode, also for an
    /// entry with a damaged chunk).
    fn finish_entry(&mut self, entry: u32) -> Result<Event, Error> {
        let damaged = std::mem::take(&mut self.damaged);
        let digest: [u8; 32] = std::mem::take(&mut self.entry_hasher).finalize()?;
        let mismatch = match self.hashes.get(entry as usize) {
            Some(Some(expected)) if !self.skip_hashes => *expected != digest,
            _ => false,
        };
        match (damaged || mismatch, self.tolerant) {
            (false, _) => Ok(Event::EntryVerified { entry }),
            (true, true) => Ok(Event::EntryDamaged { entry }),
            (true, false) => Err(Error::HashMismatch { entry }),
        }
    }

    fn advance(&mut self, header: &DataHeader) -> Result<(), Error> {
        let overflow = || sequence(header.entry, header.index, "entry or index overflows");
        if header.last() {
            self.entry = self.entry.checked_add(1).ok_or_else(overflow)?;
            self.index = 0;
        } else {
            self.index = self.index.checked_add(1).ok_or_else(overflow)?;
        }
        Ok(())
    }
}

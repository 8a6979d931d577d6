//! Reading one entry again from its byte span (docs/format.md section 6.1): random access for
//! an app that opened a large file from a re-readable source (a browser `Blob`, a file) and
//! keeps only the entries it shows in memory.
//!
//! A first, complete reading ([`super::Reader`]) checks the whole file and notes where each
//! entry's DATA chunks lie ([`EntrySpan`]). [`EntryReader`] then reads one entry at a time from
//! just those bytes, with the same checks as the first reading: the DATA sequence (entry,
//! index, last flag), decryption under the chunk's own number (cipher 1: the nonce and AAD
//! bind every chunk to its place, so bytes from elsewhere fail with `DECRYPT_FAILED`),
//! decoding to the exact length and, at the entry's last chunk, its manifest `sha256` (always
//! present when cipher is 0). So bytes that changed since the first reading never pass as the
//! entry; the caller should still hold the content of an entry back until its
//! `EntryVerified`, as with the first reading.
//!
//! Ancillary chunks inside a span are skipped without buffering, as the reader does.
//! Zeroization: the content cipher moved here from the reader zeroizes its key when the
//! `EntryReader` drops.

use super::data::{ChunkContext, DataState};
use super::{Event, Reader, Stage as ReaderStage};
use crate::chunk::{check_length, classify, parse_chunk_header, ChunkClass, CHUNK_HEADER_BYTES};
use crate::content::ContentCipher;
use crate::error::Error;

impl Reader {
    /// Reads on past damaged content, for an app that shows a modified file after the user
    /// acknowledged the warning (SPEC "Errors": a signature mismatch when opening a project
    /// is shown as modified after it was signed). A DATA chunk that does not decrypt or
    /// decode is not released and its entry ends with [`Event::EntryDamaged`] (so does an
    /// entry whose bytes do not match its `sha256`), and a signature that does not verify
    /// ends the file with [`Event::Modified`] instead of an error. Everything else stays an
    /// error: the structure (chunk order, lengths, limits, the DATA sequence), the manifest
    /// (a wrong content key included), a malformed SIGN payload, truncation and trailing
    /// bytes. Call it before the first `next`.
    pub fn tolerate_damage(&mut self) {
        self.tolerant = true;
        self.data.tolerant = true;
    }

    /// Turns a reader that reached the end of a file it could read (after [`Event::End`] or
    /// [`Event::Modified`], with the manifest known) into an [`EntryReader`] that reads any
    /// entry again from its byte span of the same file (random access for an app that keeps
    /// assets on disk instead of in memory).
    ///
    /// # Errors
    /// `INVALID_STATE` before the end, after a failure, or when the file was read without
    /// its key.
    pub fn into_entry_reader(self) -> Result<EntryReader, Error> {
        self.check()?;
        if self.stage != ReaderStage::Ended || self.skipping {
            return Err(Error::state(
                "entry reader before the end of a file read with its key",
            ));
        }
        let Some(header) = &self.header else {
            return Err(Error::state("entry reader without a header"));
        };
        let chunk_size = header.chunk_size;
        Ok(EntryReader::new(
            self.data.into_index(),
            self.cipher,
            self.keys_digest,
            chunk_size,
        ))
    }
}

/// Where an entry's DATA chunks lie in the file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct EntrySpan {
    /// File offset of the first DATA chunk's type field.
    pub start: u64,
    /// File offset just past the last DATA chunk's payload.
    pub end: u64,
    /// Chunk number (section 4) of the entry's first DATA chunk.
    pub first_chunk: u64,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Stage {
    /// No entry chosen.
    Idle,
    ChunkHeader,
    Payload(usize),
    Skip(u64),
    /// The entry's last chunk was read.
    Done,
}

/// Reads entries of a file read before, one at a time: [`EntryReader::seek`] to an entry,
/// push the bytes of its [`EntrySpan`], drain [`EntryReader::next`].
pub struct EntryReader {
    data: DataState,
    cipher: Option<ContentCipher>,
    keys_digest: [u8; 32],
    chunk_size: u32,
    stage: Stage,
    buf: Vec<u8>,
    pos: usize,
    eof: bool,
    pending: Option<Event>,
    failed: Option<Error>,
}

impl core::fmt::Debug for EntryReader {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("EntryReader")
            .field("stage", &self.stage)
            .finish_non_exhaustive()
    }
}

impl EntryReader {
    pub(super) fn new(
        data: DataState,
        cipher: Option<ContentCipher>,
        keys_digest: [u8; 32],
        chunk_size: u32,
    ) -> Self {
        Self {
            data,
            cipher,
            keys_digest,
            chunk_size,
            stage: Stage::Idle,
            buf: Vec::new(),
            pos: 0,
            eof: false,
            pending: None,
            failed: None,
        }
    }

    /// Number of entries.
    #[must_use]
    pub fn entries(&self) -> u32 {
        self.data.entry_count()
    }

    /// Where `entry`'s chunks lie; `None` when it was not read to its end the first time.
    #[must_use]
    pub fn span(&self, entry: u32) -> Option<EntrySpan> {
        self.data.span(entry)
    }

    /// Starts reading `entry`; the caller then pushes exactly the bytes of its span.
    ///
    /// # Errors
    /// `INVALID_ARGUMENT` for an entry that does not exist or has no span.
    pub fn seek(&mut self, entry: u32) -> Result<EntrySpan, Error> {
        let span = self.span(entry).ok_or(Error::argument(
            "no such entry, or it was not read to its end",
        ))?;
        self.data.seek(entry, &span);
        self.stage = Stage::ChunkHeader;
        self.buf.clear();
        self.pos = 0;
        self.eof = false;
        self.pending = None;
        self.failed = None;
        Ok(span)
    }

    /// Appends bytes of the span.
    ///
    /// # Errors
    /// The stored error after a failure; `INVALID_STATE` without `seek` or after `finish`.
    pub fn push(&mut self, bytes: &[u8]) -> Result<(), Error> {
        self.check()?;
        if self.stage == Stage::Idle || self.eof {
            return self.fail(Error::state("push without seek, or after finish"));
        }
        if self.pos > 0 {
            self.buf.drain(..self.pos);
            self.pos = 0;
        }
        self.buf.extend_from_slice(bytes);
        Ok(())
    }

    /// Declares that the span's bytes ended.
    ///
    /// # Errors
    /// The stored error after a failure.
    pub fn finish(&mut self) -> Result<(), Error> {
        self.check()?;
        self.eof = true;
        Ok(())
    }

    /// The next `Chunk` or the final `EntryVerified`, or `None` when more input is needed (or
    /// the entry is done).
    ///
    /// # Errors
    /// As the first reading's DATA checks (`DATA_SEQUENCE`, `DECRYPT_FAILED`, `BAD_DATA`,
    /// `HASH_MISMATCH`, `LIMIT_EXCEEDED`, `MALFORMED_CHUNK`), `CHUNK_ORDER` for a chunk that
    /// is neither DATA nor ancillary, `TRUNCATED` when the span ended early,
    /// `TRAILING_BYTES` when bytes follow the entry's last chunk. Final until the next `seek`.
    #[allow(clippy::should_implement_trait)]
    pub fn next(&mut self) -> Result<Option<Event>, Error> {
        self.check()?;
        match self.step() {
            Ok(event) => Ok(event),
            Err(e) => self.fail(e),
        }
    }

    /// Hands back a chunk's `data` for the next chunk to be decoded into.
    pub fn recycle(&mut self, buffer: Vec<u8>) {
        self.data.recycle(buffer);
    }

    fn check(&self) -> Result<(), Error> {
        self.failed.as_ref().map_or(Ok(()), |e| Err(e.clone()))
    }

    fn fail<T>(&mut self, error: Error) -> Result<T, Error> {
        self.failed = Some(error.clone());
        self.buf = Vec::new();
        Err(error)
    }

    fn available(&self) -> &[u8] {
        self.buf.get(self.pos..).unwrap_or_default()
    }

    fn need_more(&self) -> Result<Option<Event>, Error> {
        if self.eof {
            Err(Error::Truncated)
        } else {
            Ok(None)
        }
    }

    fn step(&mut self) -> Result<Option<Event>, Error> {
        loop {
            if let Some(event) = self.pending.take() {
                return Ok(Some(event));
            }
            match self.stage {
                Stage::Idle => return Err(Error::state("next without seek")),
                Stage::Done => {
                    return if self.available().is_empty() {
                        Ok(None)
                    } else {
                        Err(Error::TrailingBytes)
                    }
                }
                Stage::ChunkHeader => {
                    let Some(raw) = self
                        .available()
                        .first_chunk::<CHUNK_HEADER_BYTES>()
                        .copied()
                    else {
                        return self.need_more();
                    };
                    let (chunk_type, length) = parse_chunk_header(&raw);
                    let class = classify(chunk_type)?;
                    if !matches!(class, ChunkClass::Data | ChunkClass::Ancillary) {
                        return Err(Error::ChunkOrder {
                            chunk: crate::error::ChunkType(chunk_type),
                            found: None,
                        });
                    }
                    check_length(class, length, self.chunk_size)?;
                    self.pos += CHUNK_HEADER_BYTES;
                    self.stage = match class {
                        ChunkClass::Data => {
                            Stage::Payload(usize::try_from(length).map_err(|_| Error::Truncated)?)
                        }
                        _ => Stage::Skip(length.into()),
                    };
                }
                Stage::Skip(remaining) => {
                    let n = self
                        .available()
                        .len()
                        .min(usize::try_from(remaining).unwrap_or(usize::MAX));
                    self.pos += n;
                    let remaining = remaining - n as u64;
                    if remaining > 0 {
                        self.stage = Stage::Skip(remaining);
                        return self.need_more();
                    }
                    self.stage = Stage::ChunkHeader;
                }
                Stage::Payload(len) => {
                    if self.available().len() < len {
                        return self.need_more();
                    }
                    let buf = std::mem::take(&mut self.buf);
                    let payload = buf.get(self.pos..self.pos + len).unwrap_or_default();
                    let context = ChunkContext {
                        cipher: self.cipher.as_ref(),
                        keys_digest: &self.keys_digest,
                        skipping: false,
                        payload_offset: 0,
                    };
                    let result = self.data.process(payload, &context);
                    self.buf = buf;
                    self.pos += len;
                    let (chunk, ended) = result?;
                    self.stage = if ended.is_some() {
                        Stage::Done
                    } else {
                        Stage::ChunkHeader
                    };
                    self.pending = ended;
                    if chunk.is_some() {
                        return Ok(chunk);
                    }
                }
            }
        }
    }
}

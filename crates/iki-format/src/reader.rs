//! The push-based, sans-IO reader (docs/format.md sections 1 to 7).
//!
//! The caller pushes bytes as they arrive and pulls [`Event`]s. The input buffer holds at
//! most the unconsumed part of what was pushed plus one chunk: every length field is
//! checked against its limit before the payload is buffered, and ancillary chunks are
//! hashed and dropped as they stream by. A chunk's decoded bytes are released only after
//! it authenticated (cipher 1) and decoded to its exact length. The signature verdict is
//! released only at the very end, after `finish` confirmed that nothing follows SIGN.
//! Any error is final: every later call returns it again. The one exception is a failed
//! unlock (`unlock_password`, `unlock_identity` refused by the key slots): the reader stays
//! at `Event::Locked` so the caller can try another password or key. Nothing of the file
//! changed state, and each try pays its slots' Argon2id cost, at most
//! `MAX_UNLOCK_ARGON2_KIB_PASSES` over at most `MAX_PASSWORD_SLOTS_TRIED` slots.
//! `unlock_password_step` derives at most one slot's key per call, so that a caller can
//! check for cancellation between slots.

mod chunks;
mod data;
mod entries;
mod event;
mod read_all;
mod unlock;

use iki_crypto::hash::Sha256;

use crate::chunk::{
    check_length, classify, parse_chunk_header, ChunkClass, CHUNK_HEADER_BYTES, HEAD, KEYS, MANI,
};
use crate::content::ContentCipher;
use crate::error::{ChunkType, Error};
use crate::header::{check_magic, check_preamble, Header, Kind, PREAMBLE_BYTES};
use crate::keys::{PasswordAttempt, Slot};
use crate::sign::Verified;

pub use entries::{EntryReader, EntrySpan};
pub use event::Event;
pub use read_all::{read_all, Opened, Unlock};

/// Where in the chunk order of section 1.1 the reader stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Order {
    Head,
    Keys,
    Mani,
    Data,
    Done,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Stage {
    Preamble,
    ChunkHeader,
    Payload { class: ChunkClass, len: usize },
    Skip { remaining: u64 },
    AwaitUnlock,
    Ended,
}

/// The reader state machine.
pub struct Reader {
    kind: Kind,
    buf: Vec<u8>,
    pos: usize,
    /// File offset of `buf[0]` (bytes consumed before it), for the entry spans.
    base: u64,
    eof: bool,
    failed: Option<Error>,
    stage: Stage,
    order: Order,
    minor: u16,
    hasher: Sha256,
    header: Option<Header>,
    slots: Vec<Slot>,
    keys_digest: [u8; 32],
    cipher: Option<ContentCipher>,
    skipping: bool,
    data: data::DataState,
    pending: Option<Event>,
    verified: Option<Verified>,
    /// Set by [`Reader::tolerate_damage`].
    tolerant: bool,
    /// A signature that did not verify, in tolerant mode.
    modified: Option<([u8; 32], Vec<u8>)>,
    attempt: Option<PasswordAttempt>,
}

impl core::fmt::Debug for Reader {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Reader")
            .field("kind", &self.kind)
            .field("stage", &self.stage)
            .finish_non_exhaustive()
    }
}

impl Reader {
    /// A reader expecting a file of `kind`.
    #[must_use]
    pub fn new(kind: Kind) -> Self {
        Self {
            kind,
            buf: Vec::new(),
            pos: 0,
            base: 0,
            eof: false,
            failed: None,
            stage: Stage::Preamble,
            order: Order::Head,
            minor: 0,
            hasher: Sha256::new(),
            header: None,
            slots: Vec::new(),
            keys_digest: [0; 32],
            cipher: None,
            skipping: false,
            data: data::DataState::default(),
            pending: None,
            verified: None,
            tolerant: false,
            modified: None,
            attempt: None,
        }
    }

    /// Appends input. Memory stays around one chunk if the caller pushes what it reads in
    /// modest pieces and drains events between pushes.
    ///
    /// # Errors
    /// The stored error after a failure; `INVALID_STATE` after `finish`.
    pub fn push(&mut self, mut bytes: &[u8]) -> Result<(), Error> {
        self.check()?;
        if self.eof {
            return self.fail(Error::state("push after finish"));
        }
        if self.pos > 0 {
            self.buf.drain(..self.pos);
            self.base += self.pos as u64;
            self.pos = 0;
        }
        if let Stage::Skip { remaining } = &mut self.stage {
            if self.buf.is_empty() {
                // Ancillary bytes are hashed straight from the caller's slice.
                let n = bytes
                    .len()
                    .min(usize::try_from(*remaining).unwrap_or(usize::MAX));
                let (skipped, rest) = bytes.split_at(n);
                self.hasher.update(skipped);
                self.base += n as u64;
                *remaining -= n as u64;
                if *remaining == 0 {
                    self.stage = Stage::ChunkHeader;
                }
                bytes = rest;
            }
        }
        if matches!(self.stage, Stage::Ended) && !bytes.is_empty() {
            return self.fail(Error::TrailingBytes);
        }
        self.buf.extend_from_slice(bytes);
        Ok(())
    }

    /// Declares the end of input.
    ///
    /// # Errors
    /// The stored error after a failure.
    pub fn finish(&mut self) -> Result<(), Error> {
        self.check()?;
        self.eof = true;
        Ok(())
    }

    /// The next event, or `None` when more input is needed (or after `End`).
    ///
    /// # Errors
    /// Any error of docs/format.md section 11; it is final.
    #[allow(clippy::should_implement_trait)]
    pub fn next(&mut self) -> Result<Option<Event>, Error> {
        self.check()?;
        match self.step() {
            Ok(event) => Ok(event),
            Err(e) => self.fail(e),
        }
    }

    /// Stops checking entries against their manifest `sha256` (sizes, AEAD tags, the DATA
    /// sequence and the signature are still checked; `EntryVerified` then means "size
    /// matched"). Only for a caller that compares the SHA-256 of the whole file with the
    /// record of a file that was fully verified before, as the license copier does with a
    /// master checked at upload, or that relies on the signature over every byte and checks
    /// each entry when it reads it again (the app's open, section 6.1): hashing every decoded
    /// byte again would be a quarter of its time for no added assurance.
    pub fn skip_entry_hashes(&mut self) {
        self.data.skip_hashes = true;
    }

    /// SHA-256 of every byte of the file, once `End` (or `Modified`) was returned: the hash
    /// the signature covers, continued over the signature, so a caller that needs the whole
    /// file's digest (a master's identity) does not hash the file a second time.
    ///
    /// # Errors
    /// `INVALID_STATE` before the end of a file that was read to its end, or after an error.
    pub fn file_sha256(&mut self) -> Result<[u8; 32], Error> {
        self.check()?;
        if self.stage != Stage::Ended {
            return Err(Error::state("file_sha256 before the end of the file"));
        }
        Ok(self.hasher.digest_so_far()?)
    }

    /// Length of the encoded data (decrypted, not yet decoded) of the last [`Event::Chunk`]
    /// returned, 0 before the first: beside the chunk's decoded length it tells how its writer
    /// judged it (a stream longer than its bytes was written as stored blocks). A license copy
    /// passes that on as a `DeflateHint` instead of sampling the chunk again.
    #[must_use]
    pub fn last_chunk_encoded_len(&self) -> usize {
        self.data.last_encoded_len
    }

    /// Hands back the `data` of an [`Event::Chunk`] once the caller is done with it: the next
    /// chunk is decoded into it, so a caller that always recycles reads a whole file with
    /// one chunk buffer instead of an allocation per chunk.
    pub fn recycle(&mut self, buffer: Vec<u8>) {
        self.data.recycle(buffer);
    }

    pub(super) fn check(&self) -> Result<(), Error> {
        self.failed.as_ref().map_or(Ok(()), |e| Err(e.clone()))
    }

    pub(super) fn fail<T>(&mut self, error: Error) -> Result<T, Error> {
        self.failed = Some(error.clone());
        // Buffers may hold decrypted bytes of a chunk being processed; drop them now.
        self.buf = Vec::new();
        self.data = data::DataState::default();
        Err(error)
    }

    fn available(&self) -> &[u8] {
        self.buf.get(self.pos..).unwrap_or_default()
    }

    /// Input ended while more was needed?
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
                Stage::Preamble => {
                    if !self.read_preamble()? {
                        return self.need_more();
                    }
                }
                Stage::ChunkHeader => {
                    if self.order == Order::Done {
                        return self.end();
                    }
                    if !self.read_chunk_header()? {
                        return self.need_more();
                    }
                }
                Stage::Skip { remaining } => {
                    let n = self
                        .available()
                        .len()
                        .min(usize::try_from(remaining).unwrap_or(usize::MAX));
                    let end = self.pos + n;
                    self.hasher
                        .update(self.buf.get(self.pos..end).unwrap_or_default());
                    self.pos = end;
                    let remaining = remaining - n as u64;
                    if remaining > 0 {
                        self.stage = Stage::Skip { remaining };
                        return self.need_more();
                    }
                    self.stage = Stage::ChunkHeader;
                }
                Stage::Payload { class, len } => {
                    if self.available().len() < len {
                        return self.need_more();
                    }
                    let buf = std::mem::take(&mut self.buf);
                    let payload = buf.get(self.pos..self.pos + len).unwrap_or_default();
                    let result = self.payload(class, payload);
                    self.buf = buf;
                    self.pos += len;
                    if let Some(event) = result? {
                        return Ok(Some(event));
                    }
                }
                Stage::AwaitUnlock => {
                    return Err(Error::state("unlock or skip_content after Event::Locked"))
                }
                Stage::Ended => return Ok(None),
            }
        }
    }

    fn read_preamble(&mut self) -> Result<bool, Error> {
        check_magic(self.kind, self.available())?;
        let Some(preamble) = self.available().first_chunk::<PREAMBLE_BYTES>().copied() else {
            return Ok(false);
        };
        self.minor = check_preamble(self.kind, &preamble)?;
        self.hasher.update(preamble);
        self.pos += PREAMBLE_BYTES;
        self.stage = Stage::ChunkHeader;
        Ok(true)
    }

    fn read_chunk_header(&mut self) -> Result<bool, Error> {
        let Some(raw) = self
            .available()
            .first_chunk::<CHUNK_HEADER_BYTES>()
            .copied()
        else {
            return Ok(false);
        };
        let (chunk_type, length) = parse_chunk_header(&raw);
        let class = classify(chunk_type)?;
        self.check_order(class, chunk_type)?;
        let chunk_size = self.header.as_ref().map_or(0, |h| h.chunk_size);
        check_length(class, length, chunk_size)?;
        self.hasher.update(raw);
        self.pos += CHUNK_HEADER_BYTES;
        self.stage = match class {
            ChunkClass::Ancillary => Stage::Skip {
                remaining: length.into(),
            },
            _ => Stage::Payload {
                class,
                len: usize::try_from(length).map_err(|_| Error::Truncated)?,
            },
        };
        Ok(true)
    }

    /// Names the chunk that is missing when a later one stands in its place (HEAD of
    /// cipher 1 followed by MANI: KEYS is missing), else the chunk that is out of place.
    fn order_error(&self, class: ChunkClass, chunk_type: [u8; 4]) -> Error {
        let rank = |class: ChunkClass| match class {
            ChunkClass::Head => 0,
            ChunkClass::Keys => 1,
            ChunkClass::Mani => 2,
            _ => 3,
        };
        let expected = match self.order {
            Order::Head => Some((HEAD, 0)),
            Order::Keys => Some((KEYS, 1)),
            Order::Mani => Some((MANI, 2)),
            Order::Data | Order::Done => None,
        };
        let found = ChunkType(chunk_type);
        match expected {
            Some((missing, at)) if self.order == Order::Head || rank(class) > at => {
                Error::ChunkOrder {
                    chunk: ChunkType(missing),
                    found: Some(found),
                }
            }
            _ => Error::ChunkOrder {
                chunk: found,
                found: None,
            },
        }
    }

    /// Section 1.1: HEAD KEYS? MANI DATA* SIGN, ancillary chunks anywhere after HEAD.
    fn check_order(&self, class: ChunkClass, chunk_type: [u8; 4]) -> Result<(), Error> {
        let allowed = match (self.order, class) {
            (Order::Head, ChunkClass::Head)
            | (Order::Keys, ChunkClass::Keys)
            | (Order::Mani, ChunkClass::Mani)
            | (Order::Data, ChunkClass::Data | ChunkClass::Sign) => true,
            (Order::Head, _) => false,
            (_, ChunkClass::Ancillary) => true,
            _ => false,
        };
        if !allowed {
            return Err(self.order_error(class, chunk_type));
        }
        match class {
            ChunkClass::Data => self.data.check_more(self.skipping),
            ChunkClass::Sign => self.data.check_complete(self.skipping),
            _ => Ok(()),
        }
    }
}

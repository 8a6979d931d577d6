//! Opening a master as it streams in (SPEC "Master and license copy", behaviour rule 1;
//! docs/format.md sections 3.3 and 5.2), shared by the upload check ([`crate::verify`]) and
//! the license copy ([`crate::copy`]).
//!
//! [`MasterStream`] wraps `iki_format::Reader` for `.ikm` files. It takes the SHA-256 of
//! every byte (the master's SHA-256 is its identity: it salts the license and watermark
//! keys) from the reader's own pass (`Reader::file_sha256`, the signature's hash continued
//! over the signature) instead of hashing the file a second time,
//! refuses an unencrypted file, opens the recipient slot addressed to the service's X25519
//! key, and refuses a manifest whose role is not `master`. Header and Locked events are
//! consumed here; the caller sees Manifest, Chunk, EntryVerified and End. Any error is
//! final, as in the reader.
//!
//! Zeroization: the service's X25519 secret is re-derived per stream and zeroized when the
//! stream drops; the content key lives only inside the reader's cipher.

use iki_crypto::{derive, X25519Secret};
use iki_format::manifest::Role;
use iki_format::{Cipher, Event, Header, Kind, Manifest, Meta, Reader, Slot};

use crate::error::{Error, Latch};
use crate::service::ServiceKeys;

/// A master being read: the reader, the file's size and the service's identity.
pub(crate) struct MasterStream {
    reader: Reader,
    size: u64,
    identity: X25519Secret,
    header: Option<Header>,
    failed: Latch,
}

impl MasterStream {
    pub(crate) fn new(keys: &ServiceKeys) -> Self {
        Self {
            reader: Reader::new(Kind::Model),
            size: 0,
            identity: derive::service_x25519(&keys.root),
            header: None,
            failed: Latch::default(),
        }
    }

    /// For the license copier: entries are not hashed again against the manifest, because
    /// the whole master's SHA-256 is compared with the record of a master that passed the
    /// full upload check (see `iki_format::Reader::skip_entry_hashes`).
    pub(crate) fn for_recorded_master(keys: &ServiceKeys) -> Self {
        let mut stream = Self::new(keys);
        stream.reader.skip_entry_hashes();
        stream
    }

    /// Buffers the next bytes of the master (the reader hashes them).
    pub(crate) fn push(&mut self, bytes: &[u8]) -> Result<(), Error> {
        self.failed.check()?;
        self.size = self.size.saturating_add(bytes.len() as u64);
        let result = self.reader.push(bytes).map_err(Error::from);
        self.failed.record(result)
    }

    /// Declares the end of the master's bytes.
    pub(crate) fn finish_input(&mut self) -> Result<(), Error> {
        self.failed.check()?;
        let result = self.reader.finish().map_err(Error::from);
        self.failed.record(result)
    }

    /// The next event for the caller: Manifest (role checked), Chunk, EntryVerified or End.
    pub(crate) fn next(&mut self) -> Result<Option<Event>, Error> {
        self.failed.check()?;
        let result = self.step();
        self.failed.record(result)
    }

    /// HEAD of the master, once read.
    pub(crate) fn header(&self) -> Option<&Header> {
        self.header.as_ref()
    }

    /// Encoded length of the last chunk returned (see `iki_format::Reader::last_chunk_encoded_len`).
    pub(crate) fn last_chunk_encoded_len(&self) -> usize {
        self.reader.last_chunk_encoded_len()
    }

    /// Hands a chunk's buffer back to the reader (see `iki_format::Reader::recycle`).
    pub(crate) fn recycle(&mut self, buffer: Vec<u8>) {
        self.reader.recycle(buffer);
    }

    /// SHA-256 and size of every byte pushed, once the reader returned `End` (`INVALID_STATE`
    /// before; fails otherwise only if a host SHA-256 backend fails).
    pub(crate) fn digest(mut self) -> Result<([u8; 32], u64), Error> {
        Ok((self.reader.file_sha256()?, self.size))
    }

    fn step(&mut self) -> Result<Option<Event>, Error> {
        loop {
            match self.reader.next()? {
                Some(Event::Header(header)) => {
                    if header.cipher != Cipher::XChaCha20Poly1305 {
                        return Err(Error::not_master(
                            "the file is not encrypted; a master must be",
                        ));
                    }
                    self.header = Some(header);
                }
                Some(Event::Locked(slots)) => self.unlock(&slots)?,
                Some(Event::Manifest(manifest)) => {
                    check_master_manifest(&manifest)?;
                    return Ok(Some(Event::Manifest(manifest)));
                }
                other => return Ok(other),
            }
        }
    }

    /// Opens the recipient slot addressed to the service. A file without one is not a master
    /// for this service; a slot for this key that does not open is `DECRYPT_FAILED`.
    fn unlock(&mut self, slots: &[Slot]) -> Result<(), Error> {
        let public = self.identity.public_key();
        let ours = slots
            .iter()
            .any(|slot| matches!(slot, Slot::Recipient(s) if s.recipient == public));
        if !ours {
            return Err(Error::not_master("no recipient slot for this service"));
        }
        Ok(self.reader.unlock_identity(&self.identity)?)
    }
}

/// The manifest's meta is a model's with role `master` (the reader already validated it).
fn check_master_manifest(manifest: &Manifest) -> Result<(), Error> {
    match &manifest.meta {
        Meta::Model(meta) if meta.role == Role::Master => Ok(()),
        Meta::Model(_) => Err(Error::not_master("role is not master")),
        Meta::Project(_) => Err(Error::not_master("not model meta")),
    }
}

//! Whole-file convenience over [`Reader`] for tests and small files.

use iki_crypto::{SecretKey32, X25519Secret};

use super::{Event, Reader};
use crate::error::Error;
use crate::header::{Header, Kind};
use crate::keys::Slot;
use crate::manifest::Manifest;
use crate::sign::Verified;

/// Bytes pushed per step, so the reader's buffer stays around one chunk.
const PUSH_BYTES: usize = 64 * 1024;

/// How to open an encrypted file in [`read_all`].
pub enum Unlock<'a> {
    /// No key: an encrypted file is checked (structure, signature) but not opened.
    None,
    /// A password slot.
    Password(&'a [u8]),
    /// A recipient slot.
    Identity(&'a X25519Secret),
    /// A content key obtained elsewhere (account or license slots).
    ContentKey(SecretKey32),
}

/// Everything [`read_all`] found.
#[derive(Clone, Debug, PartialEq)]
pub struct Opened {
    /// HEAD.
    pub header: Header,
    /// Key slots (empty when not encrypted).
    pub slots: Vec<Slot>,
    /// The manifest (none when an encrypted file was read without a key).
    pub manifest: Option<Manifest>,
    /// Decoded bytes of each entry, in manifest order.
    pub entries: Vec<Vec<u8>>,
    /// The verified signature.
    pub verified: Verified,
}

/// Reads a whole file held in memory.
///
/// # Errors
/// Any error of docs/format.md section 11.
pub fn read_all(kind: Kind, bytes: &[u8], key: Unlock<'_>) -> Result<Opened, Error> {
    let mut reader = Reader::new(kind);
    let mut pieces = bytes.chunks(PUSH_BYTES);
    let mut key = Some(key);
    let (mut header, mut slots, mut manifest, mut entries) = (None, Vec::new(), None, Vec::new());
    loop {
        let Some(event) = reader.next()? else {
            match pieces.next() {
                Some(piece) => reader.push(piece)?,
                None => reader.finish()?,
            }
            continue;
        };
        match event {
            Event::Header(h) => header = Some(h),
            Event::Locked(found) => {
                slots = found;
                match key.take().unwrap_or(Unlock::None) {
                    Unlock::None => reader.skip_content()?,
                    Unlock::Password(password) => reader.unlock_password(password)?,
                    Unlock::Identity(secret) => reader.unlock_identity(secret)?,
                    Unlock::ContentKey(content_key) => reader.unlock_content_key(content_key)?,
                }
            }
            Event::Manifest(m) => {
                entries = vec![Vec::new(); m.entries.len()];
                manifest = Some(m);
            }
            Event::Chunk { entry, data, .. } => {
                entries
                    .get_mut(entry as usize)
                    .ok_or(Error::state("chunk of an unknown entry"))?
                    .extend_from_slice(&data);
                reader.recycle(data);
            }
            Event::EntryVerified { .. } => {}
            // read_all never asks for tolerance; were it asked, these would be refusals.
            Event::EntryDamaged { entry } => return Err(Error::HashMismatch { entry }),
            Event::Modified { .. } => return Err(Error::BadSignature),
            Event::End(verified) => {
                let header = header.ok_or(Error::state("end without header"))?;
                return Ok(Opened {
                    header,
                    slots,
                    manifest,
                    entries,
                    verified,
                });
            }
        }
    }
}

//! Processing of one buffered chunk payload: HEAD, KEYS, MANI, DATA and SIGN.

use super::{data, Event, Order, Reader, Stage};
use crate::chunk::ChunkClass;
use crate::content::{mani_aad, MANI_CHUNK_NUMBER};
use crate::error::Error;
use crate::header::{Cipher, Header};
use crate::keys::parse_keys;
use crate::manifest::Manifest;
use crate::sign::{SignPayload, SIGNATURE_BYTES};

impl Reader {
    pub(super) fn payload(
        &mut self,
        class: ChunkClass,
        payload: &[u8],
    ) -> Result<Option<Event>, Error> {
        if class != ChunkClass::Sign {
            self.hasher.update(payload);
        }
        match class {
            ChunkClass::Head => {
                let header = Header::parse(self.kind, self.minor, payload)?;
                self.order = if header.cipher == Cipher::XChaCha20Poly1305 {
                    Order::Keys
                } else {
                    Order::Mani
                };
                self.header = Some(header.clone());
                self.stage = Stage::ChunkHeader;
                Ok(Some(Event::Header(header)))
            }
            ChunkClass::Keys => {
                self.slots = parse_keys(payload)?;
                self.keys_digest = self.hasher.digest_so_far()?;
                self.order = Order::Mani;
                self.stage = Stage::AwaitUnlock;
                Ok(Some(Event::Locked(self.slots.clone())))
            }
            ChunkClass::Mani => {
                self.order = Order::Data;
                self.stage = Stage::ChunkHeader;
                self.manifest(payload)
            }
            ChunkClass::Data => {
                self.stage = Stage::ChunkHeader;
                self.data_chunk(payload)
            }
            ChunkClass::Sign => {
                self.sign(payload)?;
                self.order = Order::Done;
                self.stage = Stage::ChunkHeader;
                Ok(None)
            }
            ChunkClass::Ancillary => Err(Error::state("ancillary chunks are skipped")),
        }
    }

    fn manifest(&mut self, payload: &[u8]) -> Result<Option<Event>, Error> {
        let Some(header) = self.header.clone() else {
            return Err(Error::state("manifest before header"));
        };
        if self.skipping {
            return Ok(None);
        }
        let mut json = payload.to_vec();
        if let Some(cipher) = &self.cipher {
            cipher.open(MANI_CHUNK_NUMBER, &mani_aad(&self.keys_digest), &mut json)?;
        }
        let manifest = Manifest::from_json(self.kind, &json)?;
        manifest.validate(self.kind, header.cipher, header.chunk_size)?;
        self.data.start(&manifest, header.chunk_size)?;
        Ok(Some(Event::Manifest(manifest)))
    }

    fn data_chunk(&mut self, payload: &[u8]) -> Result<Option<Event>, Error> {
        let context = data::ChunkContext {
            cipher: self.cipher.as_ref(),
            keys_digest: &self.keys_digest,
            skipping: self.skipping,
            // `step` hands the payload over before moving `pos` past it.
            payload_offset: self.base + self.pos as u64,
        };
        let (chunk, ended) = self.data.process(payload, &context)?;
        self.pending = ended;
        Ok(chunk)
    }

    fn sign(&mut self, payload: &[u8]) -> Result<(), Error> {
        let parsed = SignPayload::parse(payload)?;
        let (prefix, signature) = payload.split_at(payload.len().saturating_sub(SIGNATURE_BYTES));
        self.hasher.update(prefix);
        let digest: [u8; 32] = self.hasher.digest_so_far()?;
        // The signature is the file's last bytes: hashed too, the hasher then holds the
        // SHA-256 of the whole file (`Reader::file_sha256`) without a second pass over it.
        self.hasher.update(signature);
        match parsed.verify(&digest) {
            Ok(verified) => self.verified = Some(verified),
            Err(Error::BadSignature) if self.tolerant => {
                self.modified = Some((parsed.public_key, parsed.info.to_vec()));
            }
            Err(e) => return Err(e),
        }
        Ok(())
    }

    /// After SIGN: `End` once input has ended with nothing after SIGN.
    pub(super) fn end(&mut self) -> Result<Option<Event>, Error> {
        if !self.available().is_empty() {
            return Err(Error::TrailingBytes);
        }
        if !self.eof {
            return Ok(None);
        }
        self.stage = Stage::Ended;
        self.buf = Vec::new();
        self.pos = 0;
        if let Some((public_key, info)) = self.modified.take() {
            return Ok(Some(Event::Modified { public_key, info }));
        }
        self.verified
            .take()
            .map(|v| Some(Event::End(v)))
            .ok_or(Error::state("end without signature"))
    }
}

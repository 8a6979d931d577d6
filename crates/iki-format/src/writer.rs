//! The push-based writer (docs/format.md sections 1 to 7).
//!
//! `new` validates the manifest and emits the preamble, HEAD, KEYS and MANI; `write`
//! takes the current entry's bytes and emits a DATA chunk each time one chunk of input is
//! buffered; `end_entry` checks size and sha256; `finish` emits SIGN. Output is drained
//! with `take_output` at any time. Each DATA chunk is built in the output buffer and
//! sealed there (`data.rs`), the deflater reuses its buffer, and the signature digest is
//! computed over the output as it is produced.
//!
//! The key that signs may live outside (a browser's non-extractable WebCrypto key):
//! `finish_external` returns the output up to the signature and a [`PendingSignature`]
//! holding the exact message of section 7 (`"IKIFMT-SIGNATURE-V1" || 0x00 || digest`, 52
//! bytes), which the external key signs with plain Ed25519; `attach` verifies that signature
//! strictly against SIGN's public key before handing back the last 64 bytes, so a signer
//! that signed the wrong thing, or with another key, never yields a file.
//!
//! The file digest may be computed elsewhere (`finish.rs`: a second Web Worker hashing the
//! output as it streams out): [`Writer::digest_elsewhere`] stops hashing the output here,
//! and [`Writer::finish_elsewhere`] takes the digest and the count of bytes it covers.
//!
//! Chunks may be deflated elsewhere (`encoding::deflate_chunk` on a worker) and handed in
//! whole with `write_deflated` (`deflated.rs`) beside the chunk's bytes, which checks that
//! each stream decodes to exactly those bytes before sealing it; encryption and signing stay
//! here.

mod data;
mod deflated;
mod finish;
mod options;
mod pending;
mod verified;

use iki_crypto::hash::Sha256;

use crate::chunk::{write_chunk, HEAD, KEYS, MANI};
use crate::content::{mani_aad, ContentCipher, MANI_CHUNK_NUMBER};
use crate::encoding::{max_encoded_bytes, ChunkPlan, DeflateHint, Deflater};
use crate::error::Error;
use crate::header::{check_chunk_size, preamble, Cipher, Header};
use crate::keys::{seal_slots, write_keys};
use crate::limits::{AEAD_TAG_BYTES, MAX_MANI_PAYLOAD_BYTES};
use crate::manifest::Manifest;
use crate::sign::sign_payload_prefix;

pub use finish::DigestRequest;
pub use options::{manifest_entry_for, Protection, SignWith, WriterOptions};
pub use pending::PendingSignature;

/// The writer state machine.
pub struct Writer {
    out: Vec<u8>,
    hasher: Sha256,
    plans: Vec<ChunkPlan>,
    hashes: Vec<Option<[u8; 32]>>,
    cipher: Option<ContentCipher>,
    keys_digest: [u8; 32],
    chunk_size: u32,
    entry: u32,
    index: u32,
    written: u64,
    pending: Vec<u8>,
    entry_hasher: Sha256,
    chunk_number: u64,
    deflater: Deflater,
    /// What the caller of [`Writer::write_hinted`] knows of the chunks it completes.
    hint: DeflateHint,
    /// Checks chunks deflated elsewhere (`deflated.rs`); made on first use.
    verify: Option<deflated::Verify>,
    signing: SignWith,
    signer_json: Vec<u8>,
    failed: Option<Error>,
    /// False once the caller computes the file digest ([`Writer::digest_elsewhere`]).
    hash_output: bool,
    /// Bytes emitted so far (the preamble included): what a digest computed elsewhere covers.
    emitted: u64,
}

impl core::fmt::Debug for Writer {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Writer")
            .field("entry", &self.entry)
            .field("index", &self.index)
            .finish_non_exhaustive()
    }
}

impl Writer {
    /// Validates the options and manifest, and emits the preamble, HEAD, KEYS and MANI.
    ///
    /// # Errors
    /// `LIMIT_EXCEEDED` (chunk_size, KEYS, MANI, SIGN), `BAD_MANIFEST`, `MALFORMED_CHUNK`
    /// for signer JSON breaking section 7.1, and the slot errors of `keys::seal_slots`.
    pub fn new(options: WriterOptions, manifest: &Manifest) -> Result<Self, Error> {
        let WriterOptions {
            kind,
            chunk_size,
            file_id,
            created_ms,
            protection,
            signing,
            signer,
            deflate_level,
            slot_entropy,
            entry_hashes_trusted,
        } = options;
        check_chunk_size(chunk_size)?;
        let signer_json = signer.to_json()?;
        sign_payload_prefix(&signing.public_key(), &signer_json)?;
        let (cipher_id, keys) = match &protection {
            Protection::None => (Cipher::None, None),
            Protection::Encrypted { content_key, slots } => {
                let sealed = seal_slots(slots, file_id, content_key, &slot_entropy)?;
                (
                    Cipher::XChaCha20Poly1305,
                    Some((
                        write_keys(&sealed)?,
                        ContentCipher::new(content_key, file_id),
                    )),
                )
            }
        };
        manifest.validate(kind, cipher_id, chunk_size)?;
        let header = Header {
            kind,
            minor: 0,
            cipher: cipher_id,
            chunk_size,
            file_id,
            created_ms,
        };
        let mut writer = Self {
            out: Vec::new(),
            hasher: Sha256::new(),
            plans: manifest
                .entries
                .iter()
                .map(|e| ChunkPlan::new(e, chunk_size))
                .collect::<Result<_, _>>()?,
            // Trusted hashes are not checked, so the entries are not hashed (`emit_data`).
            hashes: if entry_hashes_trusted {
                vec![None; manifest.entries.len()]
            } else {
                manifest.entries.iter().map(|e| e.sha256).collect()
            },
            cipher: None,
            keys_digest: [0; 32],
            chunk_size,
            entry: 0,
            index: 0,
            written: 0,
            pending: Vec::new(),
            entry_hasher: Sha256::new(),
            chunk_number: 0,
            deflater: Deflater::new(deflate_level)?,
            hint: DeflateHint::Unknown,
            verify: None,
            signing,
            signer_json,
            failed: None,
            hash_output: true,
            emitted: 0,
        };
        writer.emit_raw(&preamble(kind));
        writer.emit_chunk(HEAD, &header.to_payload())?;
        if let Some((keys_payload, cipher)) = keys {
            writer.emit_chunk(KEYS, &keys_payload)?;
            writer.keys_digest = writer.hasher.digest_so_far()?;
            writer.cipher = Some(cipher);
        }
        writer.emit_manifest(manifest)?;
        Ok(writer)
    }

    /// Rows of pixels per DATA chunk of an rgba8 entry (for watermark band offsets).
    #[must_use]
    pub fn rows_per_chunk(&self, entry: u32) -> Option<u32> {
        self.plans.get(entry as usize).and_then(|p| p.rows)
    }

    /// Decoded bytes per full DATA chunk of `entry` (`chunk_size`, or whole rows of an rgba8
    /// entry): how a caller deflating chunks elsewhere cuts the entry.
    #[must_use]
    pub fn chunk_bytes(&self, entry: u32) -> Option<u32> {
        self.plans.get(entry as usize).map(|p| p.step)
    }

    /// Appends bytes of the current entry (entries in manifest order).
    ///
    /// # Errors
    /// `INVALID_ARGUMENT` for more bytes than the entry's size, `INVALID_STATE` when every
    /// entry has ended; final like every error.
    pub fn write(&mut self, mut bytes: &[u8]) -> Result<(), Error> {
        self.check()?;
        let Some(plan) = self.plans.get(self.entry as usize).copied() else {
            return self.fail(Error::state("write after the last entry ended"));
        };
        while !bytes.is_empty() {
            if self.index >= plan.count {
                return self.fail(Error::argument("more bytes than the entry's manifest size"));
            }
            let want = plan.decoded_len(self.index) as usize - self.pending.len();
            let (now, rest) = bytes.split_at(want.min(bytes.len()));
            bytes = rest;
            let result = if now.len() < want {
                self.pending.extend_from_slice(now);
                Ok(())
            } else if self.pending.is_empty() {
                // A whole chunk in one piece (a license copy writes chunk by chunk): encoded
                // straight from the caller's bytes, without a copy into `pending`.
                self.emit_data(&plan, now)
            } else {
                self.pending.extend_from_slice(now);
                let pending = std::mem::take(&mut self.pending);
                let result = self.emit_data(&plan, &pending);
                self.pending = pending;
                self.pending.clear();
                result
            };
            if let Err(e) = result {
                return self.fail(e);
            }
        }
        Ok(())
    }

    /// [`Writer::write`], with `hint` for every chunk these bytes complete (see
    /// [`DeflateHint`]; ignored for `stored` entries). A license copy writes one master chunk
    /// per call and passes on how the master's writer judged it, so the copy's deflater skips
    /// its compressibility sample.
    ///
    /// # Errors
    /// As [`Writer::write`].
    pub fn write_hinted(&mut self, bytes: &[u8], hint: DeflateHint) -> Result<(), Error> {
        self.hint = hint;
        let result = self.write(bytes);
        self.hint = DeflateHint::Unknown;
        result
    }

    /// Ends the current entry.
    ///
    /// # Errors
    /// `INVALID_ARGUMENT` when fewer bytes than the manifest size were written,
    /// `HASH_MISMATCH` when they do not match the manifest's sha256.
    pub fn end_entry(&mut self) -> Result<(), Error> {
        self.check()?;
        let Some(plan) = self.plans.get(self.entry as usize).copied() else {
            return self.fail(Error::state("end_entry after the last entry ended"));
        };
        if self.written != plan.size {
            return self.fail(Error::argument(
                "fewer bytes than the entry's manifest size",
            ));
        }
        if self.index < plan.count {
            // The single empty chunk of an empty entry.
            if let Err(e) = self.emit_data(&plan, &[]) {
                return self.fail(e);
            }
        }
        // Only entries whose manifest carries a sha256 are hashed (see `emit_data`).
        if let Some(expected) = self.expected_hash() {
            let digest: [u8; 32] = match std::mem::take(&mut self.entry_hasher).finalize() {
                Ok(digest) => digest,
                Err(e) => return self.fail(e.into()),
            };
            if digest != expected {
                return self.fail(Error::HashMismatch { entry: self.entry });
            }
        }
        self.entry += 1;
        self.index = 0;
        self.written = 0;
        Ok(())
    }

    /// Drains the bytes produced so far.
    pub fn take_output(&mut self) -> Vec<u8> {
        std::mem::take(&mut self.out)
    }

    /// Bytes produced and not yet drained.
    #[must_use]
    pub fn output_len(&self) -> usize {
        self.out.len()
    }

    /// Drains the bytes produced so far through `copy`, which copies them where the caller
    /// wants them (a buffer outside WASM), and keeps the buffer's capacity for the next chunk.
    pub fn drain_output(&mut self, copy: impl FnOnce(&[u8])) {
        copy(&self.out);
        self.out.clear();
    }

    /// The manifest sha256 of the current entry, if it has one.
    fn expected_hash(&self) -> Option<[u8; 32]> {
        self.hashes.get(self.entry as usize).copied().flatten()
    }

    fn check(&self) -> Result<(), Error> {
        self.failed.as_ref().map_or(Ok(()), |e| Err(e.clone()))
    }

    fn fail<T>(&mut self, error: Error) -> Result<T, Error> {
        self.failed = Some(error.clone());
        self.pending = Vec::new();
        Err(error)
    }

    fn emit_raw(&mut self, bytes: &[u8]) {
        if self.hash_output {
            self.hasher.update(bytes);
        }
        self.emitted += bytes.len() as u64;
        self.out.extend_from_slice(bytes);
    }

    fn emit_chunk(&mut self, chunk_type: [u8; 4], payload: &[u8]) -> Result<(), Error> {
        let start = self.out.len();
        write_chunk(&mut self.out, chunk_type, payload)?;
        let chunk = self.out.get(start..).unwrap_or_default();
        if self.hash_output {
            self.hasher.update(chunk);
        }
        self.emitted += chunk.len() as u64;
        Ok(())
    }

    fn emit_manifest(&mut self, manifest: &Manifest) -> Result<(), Error> {
        let mut json = manifest.to_json()?;
        if let Some(cipher) = &self.cipher {
            cipher.seal(MANI_CHUNK_NUMBER, &mani_aad(&self.keys_digest), &mut json)?;
        }
        if json.len() > MAX_MANI_PAYLOAD_BYTES as usize {
            return Err(Error::limit(
                "MAX_MANI_PAYLOAD_BYTES",
                json.len() as u64,
                MAX_MANI_PAYLOAD_BYTES.into(),
            ));
        }
        self.emit_chunk(MANI, &json)
    }

    /// Largest encoded data of one chunk of this file.
    fn max_encoded(&self) -> usize {
        usize::try_from(max_encoded_bytes(self.chunk_size, self.cipher.is_some()))
            .unwrap_or(usize::MAX)
    }

    fn tag_bytes(&self) -> usize {
        if self.cipher.is_some() {
            AEAD_TAG_BYTES as usize
        } else {
            0
        }
    }
}

/// Writes a whole file from in-memory entries (tests and small files).
///
/// # Errors
/// As [`Writer::new`], [`Writer::write`] and [`Writer::end_entry`].
pub fn write_all(
    options: WriterOptions,
    manifest: &Manifest,
    entries: &[&[u8]],
) -> Result<Vec<u8>, Error> {
    let mut writer = Writer::new(options, manifest)?;
    for bytes in entries {
        writer.write(bytes)?;
        writer.end_entry()?;
    }
    writer.finish()
}

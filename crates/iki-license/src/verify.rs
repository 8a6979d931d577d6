//! The upload check of a master (SPEC behaviour rule 1): while the seller's file streams in,
//! every chunk is decrypted and verified, the kind (`.ikm`) and role (`master`) are checked,
//! the seller's signature is verified strictly, and the whole file is hashed. Only when
//! [`MasterVerifier::finish`] succeeds may the service record the master and its SHA-256.
//!
//! Memory stays around one chunk: decoded chunks are dropped as soon as the reader has
//! authenticated them and counted them into the entry's hash check. Nothing here is secret
//! except the service identity inside [`crate::master::MasterStream`].

use core::fmt;

use iki_format::certificate::check_signer;
use iki_format::{Encoding, Entry, Event, Manifest, Meta, SignerInfo, Verified};

use crate::error::Error;
use crate::master::MasterStream;
use crate::service::ServiceKeys;

/// A texture of the master: an `rgba8` entry, which license copies watermark.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TextureInfo {
    /// Entry path (the PNG path in the model package).
    pub path: String,
    /// Width in pixels.
    pub width: u32,
    /// Height in pixels.
    pub height: u32,
}

/// What the upload check found in a sound master.
#[derive(Clone, Debug, PartialEq)]
pub struct MasterSummary {
    /// SHA-256 of the whole file: record it; it salts the license and watermark keys.
    pub sha256: [u8; 32],
    /// Size of the file in bytes.
    pub size: u64,
    /// `meta.name` of the model.
    pub name: String,
    /// HEAD's `created_ms`.
    pub created_ms: u64,
    /// The manifest entries, in order (paths, types, sizes, encodings).
    pub entries: Vec<Entry>,
    /// The `rgba8` entries.
    pub textures: Vec<TextureInfo>,
    /// The Ed25519 key that signed the master (verified strictly).
    pub signer_public: [u8; 32],
    /// The signer JSON as found (a claim, covered by the signature).
    pub signer_json: Vec<u8>,
    /// The parsed signer JSON.
    pub signer: SignerInfo,
    /// The key certificate carried in the signer JSON (base64url), if any.
    pub certificate: Option<String>,
    /// The account the file is attributed to: set only when the signer is of kind
    /// `account`, its certificate was issued by this service's certificate key for the
    /// signing key and the file's creation time, and names the same account. The caller
    /// still checks that the key is not revoked and that the account is the uploader's.
    pub certified_account: Option<String>,
}

/// Streams a master through the upload check. Push its bytes as they arrive, then `finish`.
pub struct MasterVerifier {
    stream: MasterStream,
    certificate_public: [u8; 32],
    manifest: Option<Manifest>,
    end: Option<Verified>,
    max_decoded_bytes: Option<u64>,
}

/// The name the decoded-size limit is reported under (`LIMIT_EXCEEDED`'s `limit`).
pub const MASTER_DECODED_LIMIT: &str = "IKI_MASTER_MAX_DECODED_BYTES";

impl ServiceKeys {
    /// A fresh upload check for this service.
    #[must_use]
    pub fn master_verifier(&self) -> MasterVerifier {
        MasterVerifier {
            stream: MasterStream::new(self),
            certificate_public: self.certificate_public(),
            manifest: None,
            end: None,
            max_decoded_bytes: None,
        }
    }
}

impl MasterVerifier {
    /// Refuses a master whose entries decode to more than `max` bytes in all (issue 22
    /// item 10). The sizes are the manifest's, so the refusal comes as soon as the manifest
    /// is read, before any entry is decoded: a small upload that inflates to gigabytes costs
    /// the check nothing more than its manifest.
    pub fn limit_decoded_bytes(&mut self, max: u64) {
        self.max_decoded_bytes = Some(max);
    }

    /// Checks the next bytes of the master. Any error is final.
    ///
    /// # Errors
    /// Every container error (`DECRYPT_FAILED`, `BAD_MANIFEST`, `WRONG_KIND`,
    /// `LIMIT_EXCEEDED`, ...) and `NOT_A_MASTER` (unencrypted, no recipient slot for this
    /// service, role not `master`).
    pub fn push(&mut self, bytes: &[u8]) -> Result<(), Error> {
        self.stream.push(bytes)?;
        self.drain()
    }

    /// Ends the input and returns the summary of a sound master.
    ///
    /// # Errors
    /// `TRUNCATED` when the file ended early, `BAD_SIGNATURE` for a bad signature, and the
    /// errors of [`MasterVerifier::push`].
    pub fn finish(mut self) -> Result<MasterSummary, Error> {
        self.stream.finish_input()?;
        self.drain()?;
        let (Some(end), Some(manifest)) = (self.end.take(), self.manifest.take()) else {
            return Err(Error::state("input ended without a signature"));
        };
        let created_ms = self.stream.header().map_or(0, |h| h.created_ms);
        let certified_account = certified_account(&end, created_ms, &self.certificate_public);
        let (sha256, size) = self.stream.digest()?;
        let name = match &manifest.meta {
            Meta::Model(meta) => meta.name.clone(),
            Meta::Project(meta) => meta.name.clone(),
        };
        Ok(MasterSummary {
            sha256,
            size,
            name,
            created_ms,
            textures: manifest.entries.iter().filter_map(texture_info).collect(),
            entries: manifest.entries,
            signer_public: end.public_key,
            certificate: end.signer.certificate.clone(),
            signer_json: end.info,
            signer: end.signer,
            certified_account,
        })
    }

    fn drain(&mut self) -> Result<(), Error> {
        while let Some(event) = self.stream.next()? {
            match event {
                Event::Manifest(manifest) => {
                    if let Some(max) = self.max_decoded_bytes {
                        let value = manifest
                            .entries
                            .iter()
                            .fold(0u64, |sum, e| sum.saturating_add(e.size));
                        if value > max {
                            return Err(iki_format::Error::LimitExceeded {
                                limit: MASTER_DECODED_LIMIT,
                                value,
                                max,
                            }
                            .into());
                        }
                    }
                    self.manifest = Some(manifest);
                }
                Event::End(verified) => self.end = Some(verified),
                Event::Chunk { data, .. } => self.stream.recycle(data),
                // Chunks were authenticated and decoded by the reader, and counted into the
                // entry's size and hash check (EntryVerified); nothing else to keep.
                _ => {}
            }
        }
        Ok(())
    }
}

impl fmt::Debug for MasterVerifier {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("MasterVerifier")
            .field("manifest_read", &self.manifest.is_some())
            .finish_non_exhaustive()
    }
}

/// The texture of an `rgba8` entry (the reader guarantees its width and height).
fn texture_info(entry: &Entry) -> Option<TextureInfo> {
    let meta = entry.meta.as_ref()?;
    (entry.encoding == Encoding::Rgba8).then_some(TextureInfo {
        path: entry.path.clone(),
        width: meta.width?,
        height: meta.height?,
    })
}

/// The account a certificate attributes the file to (format §7.2, the readers' one check
/// `iki_format::certificate::check_signer`), or `None`.
fn certified_account(end: &Verified, created_ms: u64, issuer: &[u8; 32]) -> Option<String> {
    check_signer(&end.public_key, &end.signer, created_ms, issuer)
        .ok()
        .flatten()
        .map(|cert| cert.account_id)
}

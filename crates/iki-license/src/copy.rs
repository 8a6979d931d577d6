//! License copies (SPEC "Master and license copy", behaviour rule 3; docs/format.md
//! section 9), made on each download from the master's bytes and never stored.
//!
//! The master streams through [`crate::master::MasterStream`] (recipient slot opened, every
//! chunk authenticated); each decoded chunk of an `rgba8` entry gets the license watermark
//! on its row band (`first_row = index * rows_per_chunk`, `iki_watermark::embed_rows`), and
//! every chunk is re-encoded by `iki_format::Writer` under the license key. The copy:
//!
//! - HEAD: the master's chunk_size, `file_id = derive::license_file_id(license_key)`,
//!   `created_ms = issued_at`; cipher 1.
//! - KEYS: one license slot (service id, license id as 16 hex digits, master id).
//! - MANI: the master's manifest with role `license`, the license object added and
//!   `sha256` removed from `rgba8` entries (their pixels changed).
//! - DATA: one copy chunk per master chunk, deflated at [`COPY_DEFLATE_LEVEL`], or stored
//!   blocks where the master stored that chunk (`master_hint`); a marked `rgba8` chunk the
//!   master deflated to under an eighth of its length goes to the pixel encoder
//!   (`DeflateHint::Pixels`, docs/format.md section 6) instead of the level-1 search.
//! - SIGN: the service's Ed25519 key, signer JSON `{"kind":"service","service":...}`.
//!
//! Every input of the output is fixed by the license, so every download of one license is
//! byte-identical. Memory stays around one chunk: the reader's buffer, one decoded chunk,
//! and the writer's buffers and pending output (drain it with `take_output`).
//!
//! Bytes leave before the end of the master is read. A master altered in storage is caught
//! at the latest by [`LicenseCopier::finish`] (signature and SHA-256 against the record):
//! the caller must then abort the download, and the partial copy has no SIGN, so no reader
//! accepts it. Zeroization: the license key is a [`SecretKey32`] moved into the writer
//! (zeroized on drop); the watermark key is zeroized when the copier drops.

use core::fmt;

use iki_crypto::{derive, SecretKey32};
use iki_format::manifest::{LicenseInfo as ManifestLicense, Role};
use iki_format::{
    DeflateHint, Encoding, Event, Manifest, Meta, NewSlot, Protection, SignerInfo, SignerKind,
    SlotEntropy, Writer, WriterOptions,
};
use iki_watermark::WatermarkKey;

use crate::error::Error;
use crate::master::MasterStream;
use crate::service::ServiceKeys;
use crate::types::{license_id_hex, LicenseInfo, MasterRef};

/// DEFLATE level of every copy chunk. Fixed, so that downloads stay byte-identical whatever
/// level the seller's editor used. The watermark's +-2 moves turn flat colour into noise that
/// DEFLATE's match search mostly fails on, so on marked pixels the search is the cost: in
/// WASM on the CC0 atlases (bench/RESULTS.md, "The copy's DEFLATE at other levels") level 1
/// runs about 3.5 times faster than level 3 for an output about 40 % larger (10-11 % of the
/// pixels instead of 7-8 %); level 6 is 3 times slower than level 3 for 5 % less. Level 1
/// keeps a copy within reach of the native pipeline without the mark (issue 6's goal).
pub const COPY_DEFLATE_LEVEL: u8 = 1;

/// Everything the copy's writer needs, until the master's manifest arrives.
struct CopyPlan {
    license_key: SecretKey32,
    signing_seed: SecretKey32,
    service_id: String,
    license: LicenseInfo,
    master: MasterRef,
}

/// Turns a master's bytes into one license's copy, chunk by chunk.
pub struct LicenseCopier {
    stream: MasterStream,
    watermark: WatermarkKey,
    license_id: u64,
    master_sha256: [u8; 32],
    plan: Option<CopyPlan>,
    writer: Option<Writer>,
    /// Width of each entry when it is `rgba8`, from the master's manifest.
    rgba8_widths: Vec<Option<u32>>,
    signed: bool,
}

impl ServiceKeys {
    /// A copier of `master` for `license`. Feed it the master's stored bytes.
    ///
    /// # Errors
    /// `INVALID_ARGUMENT` for a master id outside 1 to 256 bytes.
    pub fn license_copier(
        &self,
        master: &MasterRef,
        license: &LicenseInfo,
    ) -> Result<LicenseCopier, Error> {
        master.check()?;
        let plan = CopyPlan {
            license_key: self.license_key(master, &license_id_hex(license.id)),
            signing_seed: self.signing.seed(),
            service_id: self.service_id.clone(),
            license: license.clone(),
            master: master.clone(),
        };
        Ok(LicenseCopier {
            stream: MasterStream::for_recorded_master(self),
            watermark: self.watermark_key(master),
            license_id: license.id,
            master_sha256: master.sha256,
            plan: Some(plan),
            writer: None,
            rgba8_widths: Vec::new(),
            signed: false,
        })
    }
}

impl LicenseCopier {
    /// Reads the next bytes of the master and produces what copy bytes it can.
    ///
    /// # Errors
    /// The errors of the upload check (the master is checked again while copying).
    pub fn push(&mut self, master_bytes: &[u8]) -> Result<(), Error> {
        self.stream.push(master_bytes)?;
        self.drain()
    }

    /// Drains the copy bytes produced so far.
    pub fn take_output(&mut self) -> Vec<u8> {
        self.writer
            .as_mut()
            .map(Writer::take_output)
            .unwrap_or_default()
    }

    /// Ends the master's input and returns the rest of the copy (from SIGN back to whatever
    /// was not taken yet).
    ///
    /// # Errors
    /// `TRUNCATED` or `BAD_SIGNATURE` when the master is cut short or its signature fails,
    /// `MASTER_MISMATCH` when its SHA-256 is not the recorded one.
    pub fn finish(mut self) -> Result<Vec<u8>, Error> {
        self.stream.finish_input()?;
        self.drain()?;
        if !self.signed {
            return Err(Error::state("master ended without a signature"));
        }
        let (sha256, _) = self.stream.digest()?;
        if sha256 != self.master_sha256 {
            return Err(Error::MasterMismatch {
                reason: "sha256 differs from the recorded master",
            });
        }
        let writer = self
            .writer
            .take()
            .ok_or(Error::state("master without a manifest"))?;
        Ok(writer.finish()?)
    }

    fn drain(&mut self) -> Result<(), Error> {
        while let Some(event) = self.stream.next()? {
            match event {
                Event::Manifest(manifest) => self.start(&manifest)?,
                Event::Chunk {
                    entry,
                    index,
                    last,
                    mut data,
                } => {
                    let hint = copy_hint(
                        self.stream.last_chunk_encoded_len(),
                        data.len(),
                        self.rgba8_widths.get(entry as usize),
                    );
                    self.chunk(entry, index, last, hint, &mut data)?;
                    self.stream.recycle(data);
                }
                Event::End(_) => self.signed = true,
                _ => {}
            }
        }
        Ok(())
    }

    /// Builds the copy's manifest and writer from the master's manifest.
    fn start(&mut self, master: &Manifest) -> Result<(), Error> {
        let plan = self.plan.take().ok_or(Error::state("second manifest"))?;
        let chunk_size = self
            .stream
            .header()
            .ok_or(Error::state("manifest before header"))?
            .chunk_size;
        let license_hex = license_id_hex(plan.license.id);
        let manifest = copy_manifest(master, &plan, &license_hex)?;
        self.rgba8_widths = manifest
            .entries
            .iter()
            .map(|e| {
                (e.encoding == Encoding::Rgba8)
                    .then(|| e.meta.as_ref().and_then(|m| m.width))
                    .flatten()
            })
            .collect();
        let signer = SignerInfo {
            kind: SignerKind::Service,
            name: None,
            account: None,
            certificate: None,
            service: Some(plan.service_id.clone()),
        };
        let file_id = derive::license_file_id(&plan.license_key);
        let mut options = WriterOptions::new(
            iki_format::Kind::Model,
            file_id,
            plan.license.issued_at_ms,
            iki_crypto::SigningKey::from_seed(&plan.signing_seed),
            signer,
        );
        options.chunk_size = chunk_size;
        options.deflate_level = COPY_DEFLATE_LEVEL;
        options.slot_entropy = SlotEntropy::Os; // a license slot draws no entropy
        options.protection = Protection::Encrypted {
            content_key: plan.license_key,
            slots: vec![NewSlot::License {
                service: plan.service_id,
                license_id: license_hex,
                master_id: plan.master.id,
            }],
        };
        self.writer = Some(Writer::new(options, &manifest)?);
        Ok(())
    }

    /// Watermarks an rgba8 chunk in place and writes it to the copy.
    fn chunk(
        &mut self,
        entry: u32,
        index: u32,
        last: bool,
        hint: DeflateHint,
        data: &mut [u8],
    ) -> Result<(), Error> {
        let writer = self
            .writer
            .as_mut()
            .ok_or(Error::state("chunk before manifest"))?;
        if let Some(Some(width)) = self.rgba8_widths.get(entry as usize) {
            let rows = writer
                .rows_per_chunk(entry)
                .ok_or(Error::state("rgba8 entry without rows"))?;
            let first_row = index
                .checked_mul(rows)
                .ok_or(Error::state("row index overflow"))?;
            iki_watermark::embed_rows(&self.watermark, self.license_id, *width, first_row, data)?;
        }
        writer.write_hinted(data, hint)?;
        if last {
            writer.end_entry()?;
        }
        Ok(())
    }
}

impl fmt::Debug for LicenseCopier {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("LicenseCopier")
            .field("license_id", &license_id_hex(self.license_id))
            .field("started", &self.writer.is_some())
            .finish_non_exhaustive()
    }
}

/// How the master's writer judged a chunk of `decoded` bytes that it wrote as `encoded` bytes:
/// a stream longer than its bytes is stored blocks (the chunk did not compress, and the
/// watermark's small moves do not make it compress), a shorter one compressed. The copy's
/// deflater then skips its own sample of the chunk (on an atlas, four searches and four
/// compressor resets per 1 MiB chunk). An empty chunk is left to the deflater.
fn master_hint(encoded: usize, decoded: usize) -> DeflateHint {
    match decoded {
        0 => DeflateHint::Unknown,
        _ if encoded > decoded => DeflateHint::Incompressible,
        _ => DeflateHint::Compressible,
    }
}

/// The master chunks of an `rgba8` entry deflated to under 1/`PIXELS_BELOW` of their length go to
/// the pixel encoder. Flat colour compresses that well, and the watermark turns it into short
/// whole-pixel repeats, which the pixel encoder codes in as few bytes as level 1 at half its cost
/// (the fixture atlases' master chunks are at 0.2-4.4 %). Pixels that repeat less (the bench
/// texture's gradients and noise channel, 45-49 %) have matches that are not whole pixels, which
/// level 1 finds and the pixel encoder does not (83 % of the pixels instead of 54 %).
const PIXELS_BELOW: usize = 8;

/// The copy's hint for a chunk its master wrote as `encoded` bytes for `decoded` ones, in an
/// entry of `width` (the entry's width when it is `rgba8`): [`master_hint`], or the pixel
/// encoder (rows of `width * 4` bytes) for a marked chunk the master deflated to under
/// 1/[`PIXELS_BELOW`] of its length.
fn copy_hint(encoded: usize, decoded: usize, width: Option<&Option<u32>>) -> DeflateHint {
    let hint = master_hint(encoded, decoded);
    let row_bytes = width.copied().flatten().and_then(|w| w.checked_mul(4));
    match (hint, row_bytes) {
        (DeflateHint::Compressible, Some(row_bytes))
            if encoded.saturating_mul(PIXELS_BELOW) < decoded =>
        {
            DeflateHint::Pixels { row_bytes }
        }
        _ => hint,
    }
}

/// The master's manifest with role `license`, the license object, and no `sha256` on
/// `rgba8` entries (format §9).
fn copy_manifest(master: &Manifest, plan: &CopyPlan, license_hex: &str) -> Result<Manifest, Error> {
    let mut manifest = master.clone();
    let Meta::Model(meta) = &mut manifest.meta else {
        return Err(Error::not_master("not model meta"));
    };
    meta.role = Role::License;
    meta.license = Some(ManifestLicense {
        id: license_hex.to_owned(),
        master_id: plan.master.id.clone(),
        licensee: plan.license.licensee.clone(),
        licensee_name: plan.license.licensee_name.clone(),
        seller: plan.license.seller.clone(),
        issued_at: plan.license.issued_at_ms,
    });
    for entry in manifest
        .entries
        .iter_mut()
        .filter(|e| e.encoding == Encoding::Rgba8)
    {
        entry.sha256 = None;
    }
    Ok(manifest)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_masters_verdict_becomes_the_copys_hint() {
        // Stored blocks: 1 MiB in 17 blocks of at most 65535 bytes, 5 bytes of framing each.
        assert_eq!(
            master_hint((1 << 20) + 17 * 5, 1 << 20),
            DeflateHint::Incompressible
        );
        assert_eq!(master_hint(1 << 18, 1 << 20), DeflateHint::Compressible);
        assert_eq!(master_hint(1 << 20, 1 << 20), DeflateHint::Compressible);
        assert_eq!(master_hint(2, 0), DeflateHint::Unknown);
    }

    #[test]
    fn well_compressed_rgba8_chunks_go_to_the_pixel_encoder() {
        let mib = 1 << 20;
        let rows = DeflateHint::Pixels { row_bytes: 4096 };
        assert_eq!(copy_hint(mib / 9, mib, Some(&Some(1024))), rows);
        // A chunk the master deflated less well goes to level 1, stored stays stored.
        let compressible = DeflateHint::Compressible;
        assert_eq!(copy_hint(mib / 8, mib, Some(&Some(1024))), compressible);
        assert_eq!(copy_hint(mib / 2, mib, Some(&Some(1024))), compressible);
        assert_eq!(
            copy_hint(mib + 85, mib, Some(&Some(1024))),
            DeflateHint::Incompressible
        );
        // Other entries, an empty chunk and a width too large for a row length keep the
        // master's hint.
        assert_eq!(copy_hint(mib / 9, mib, Some(&None)), compressible);
        assert_eq!(copy_hint(mib / 9, mib, None), compressible);
        assert_eq!(copy_hint(2, 0, Some(&Some(1024))), DeflateHint::Unknown);
        assert_eq!(copy_hint(mib / 9, mib, Some(&Some(u32::MAX))), compressible);
    }
}

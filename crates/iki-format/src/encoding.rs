//! Chunk geometry of the three encodings (docs/format.md section 6), and the DEFLATE codec
//! (`deflate.rs`; `pixels.rs` with `huffman.rs` and `bits.rs` is the encoder of a license copy's
//! rgba8 chunks).
//!
//! `stored` and `deflate` cut an entry every `chunk_size` decoded bytes; `rgba8` cuts it
//! every `rows = max(1, floor(chunk_size / (width * 4)))` pixel rows.
//!
//! [`deflate_chunk`] deflates one chunk away from the writer (a worker thread), exactly as
//! the writer would, for [`crate::Writer::write_deflated`].

mod bits;
mod deflate;
mod huffman;
mod inflate;
mod pixels;

use std::cell::RefCell;

pub use deflate::{DeflateHint, Deflater};
pub use inflate::Inflater;
pub use pixels::cross_check as pixel_encoder_cross_check;

use crate::error::Error;
use crate::header::check_chunk_size;
use crate::limits::{max_data_payload_bytes, AEAD_TAG_BYTES, DATA_HEADER_BYTES};
use crate::manifest::{Encoding, Entry};

/// DEFLATE level writers use unless told otherwise.
pub const DEFAULT_DEFLATE_LEVEL: u8 = 6;

/// How one entry is cut into DATA chunks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ChunkPlan {
    /// Encoding of the entry.
    pub encoding: Encoding,
    /// Decoded size of the entry, in bytes.
    pub size: u64,
    /// Number of DATA chunks, at least 1.
    pub count: u32,
    /// Decoded bytes per full chunk: chunk_size, or `rows * width * 4` for rgba8.
    pub step: u32,
    /// Rows per chunk for rgba8.
    pub rows: Option<u32>,
}

impl ChunkPlan {
    /// The plan of `entry` at `chunk_size` (entry rules already hold, see
    /// `Manifest::validate`).
    ///
    /// # Errors
    /// `BAD_MANIFEST` when an rgba8 entry lacks its dimensions or its row does not fit, or
    /// when the entry would need more than 2^32 chunks.
    pub fn new(entry: &Entry, chunk_size: u32) -> Result<Self, Error> {
        let (step, rows) = match entry.encoding {
            Encoding::Stored | Encoding::Deflate => (chunk_size, None),
            Encoding::Rgba8 => {
                let meta = entry.meta.as_ref();
                let (Some(width), Some(_)) =
                    (meta.and_then(|m| m.width), meta.and_then(|m| m.height))
                else {
                    return Err(Error::manifest(
                        "rgba8 entry without width and height",
                        None,
                    ));
                };
                let row = u64::from(width) * 4;
                if row == 0 || row > u64::from(chunk_size) {
                    return Err(Error::manifest("rgba8 row does not fit chunk_size", None));
                }
                let rows = u64::from(chunk_size) / row;
                // rows * row <= chunk_size, so both fit u32.
                let step = u32::try_from(rows * row)
                    .map_err(|_| Error::manifest("rgba8 geometry", None))?;
                (
                    step,
                    Some(u32::try_from(rows).map_err(|_| Error::manifest("rgba8 geometry", None))?),
                )
            }
        };
        let count = entry.size.div_ceil(u64::from(step)).max(1);
        let count = u32::try_from(count)
            .map_err(|_| Error::manifest("entry needs more than 2^32 chunks", None))?;
        Ok(Self {
            encoding: entry.encoding,
            size: entry.size,
            count,
            step,
            rows,
        })
    }

    /// Decoded length of chunk `index`, in bytes (0 for the single chunk of an empty entry).
    /// For rgba8, `min(rows, height - i * rows) * width * 4` equals this because the size is
    /// exactly `height * width * 4`.
    #[must_use]
    pub fn decoded_len(&self, index: u32) -> u32 {
        let start = u64::from(index) * u64::from(self.step);
        let left = self.size.saturating_sub(start);
        // min(step, left) <= step, a u32.
        u32::try_from(left.min(u64::from(self.step))).unwrap_or(self.step)
    }
}

/// Largest encoded (not yet encrypted) data of one DATA chunk at `chunk_size`, in bytes.
#[must_use]
pub fn max_encoded_bytes(chunk_size: u32, encrypted: bool) -> u64 {
    let tag = if encrypted {
        u64::from(AEAD_TAG_BYTES)
    } else {
        0
    };
    max_data_payload_bytes(chunk_size) - u64::from(DATA_HEADER_BYTES) - tag
}

thread_local! {
    /// One encoder per thread, kept for the next chunk (its state is a few hundred KiB).
    static DEFLATER: RefCell<Option<(u8, Deflater)>> = const { RefCell::new(None) };
}

/// Deflates one chunk's decoded bytes as a writer at `level` and `chunk_size` (`encrypted`
/// or not) deflates it, into the raw DEFLATE stream [`crate::Writer::write_deflated`] takes
/// beside those bytes: the same stream, because a chunk's stream depends only on its input
/// and these three. Stateless for the caller, so a pool of threads or Web Workers can deflate
/// the chunks of one file in any order while one writer seals and signs them in order.
///
/// # Errors
/// `INVALID_ARGUMENT` for a level above 10 or `raw` longer than `chunk_size`;
/// `LIMIT_EXCEEDED` for a chunk size outside the format's bounds.
pub fn deflate_chunk(
    raw: &[u8],
    level: u8,
    chunk_size: u32,
    encrypted: bool,
) -> Result<Vec<u8>, Error> {
    check_chunk_size(chunk_size)?;
    if raw.len() > chunk_size as usize {
        return Err(Error::argument(
            "a chunk's bytes are longer than chunk_size",
        ));
    }
    let max = usize::try_from(max_encoded_bytes(chunk_size, encrypted)).unwrap_or(usize::MAX);
    let mut data = Vec::new();
    DEFLATER.with(|cell| {
        let mut cached = cell.borrow_mut();
        let (_, deflater) = match cached.take() {
            Some((at, d)) if at == level => cached.insert((at, d)),
            _ => cached.insert((level, Deflater::new(level)?)),
        };
        deflater.deflate_into(raw, max, &mut data)
    })?;
    Ok(data)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::manifest::EntryMeta;

    fn entry(encoding: Encoding, size: u64, dims: Option<(u32, u32)>) -> Entry {
        Entry {
            path: "a".into(),
            media_type: "x/y".into(),
            size,
            encoding,
            sha256: None,
            meta: dims.map(|(w, h)| EntryMeta {
                width: Some(w),
                height: Some(h),
                ..EntryMeta::default()
            }),
        }
    }

    #[test]
    fn stored_and_deflate_geometry() {
        let plan = ChunkPlan::new(&entry(Encoding::Stored, 0, None), 4096).unwrap();
        assert_eq!((plan.count, plan.decoded_len(0)), (1, 0));
        let plan = ChunkPlan::new(&entry(Encoding::Deflate, 4096, None), 4096).unwrap();
        assert_eq!((plan.count, plan.decoded_len(0)), (1, 4096));
        let plan = ChunkPlan::new(&entry(Encoding::Deflate, 4097, None), 4096).unwrap();
        assert_eq!(
            (plan.count, plan.decoded_len(0), plan.decoded_len(1)),
            (2, 4096, 1)
        );
        let huge = entry(Encoding::Stored, (1u64 << 32) * 4096 + 1, None);
        assert_eq!(
            ChunkPlan::new(&huge, 4096).unwrap_err().code(),
            "BAD_MANIFEST"
        );
    }

    #[test]
    fn rgba8_geometry_whole_rows() {
        // 1000 px wide: 4000-byte rows, one row per 4096-byte chunk.
        let plan =
            ChunkPlan::new(&entry(Encoding::Rgba8, 1000 * 3 * 4, Some((1000, 3))), 4096).unwrap();
        assert_eq!(
            (plan.count, plan.rows, plan.decoded_len(2)),
            (3, Some(1), 4000)
        );
        // 256 px wide divides 4096 * 4: four rows per chunk, last chunk one row.
        let plan =
            ChunkPlan::new(&entry(Encoding::Rgba8, 256 * 9 * 4, Some((256, 9))), 4096).unwrap();
        assert_eq!(
            (
                plan.count,
                plan.rows,
                plan.decoded_len(0),
                plan.decoded_len(2)
            ),
            (3, Some(4), 4096, 1024)
        );
        let wide = entry(Encoding::Rgba8, 1025 * 4, Some((1025, 1)));
        assert_eq!(
            ChunkPlan::new(&wide, 4096).unwrap_err().code(),
            "BAD_MANIFEST"
        );
    }
}

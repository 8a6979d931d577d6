//! Chunks deflated elsewhere ([`crate::encoding::deflate_chunk`] on a worker thread or Web
//! Worker), handed to the writer whole: [`Writer::write_deflated`] checks each one, then
//! seals and emits it exactly as [`Writer::write`] would have (the same stream, because a
//! chunk's stream depends only on its bytes, the level, chunk_size and encryption).
//!
//! The caller hands in the chunk's bytes beside the stream (it read them, and gave a copy to
//! the worker). The check decodes the stream, which must give exactly as many bytes, and
//! compares what it gave with them byte for byte (a memcmp: cheap beside the SHA-256 a claimed
//! digest would need, which in WASM costs as much as the level-6 deflate the worker took
//! away), so a stream that is not the chunk's (a damaged buffer, another chunk's stream, a
//! worker that deflated something else) never reaches the file: the call fails with a typed
//! error, nothing is emitted and the writer stays where it was (the caller may retry, or write
//! that chunk's bytes with `write`). The entry's manifest sha256, when it has one, is computed
//! over the caller's bytes once, as `write` computes it; callers keep chunks in order by
//! construction, and a chunk out of place is caught by that hash at `end_entry`. Keys never
//! leave the writer: workers see only plaintext they were given to deflate.

use super::Writer;
use crate::encoding::Inflater;
use crate::error::Error;
use crate::manifest::Encoding;

/// The decoder and buffer that check chunks deflated elsewhere (one chunk long).
pub(super) struct Verify {
    inflater: Inflater,
    decoded: Vec<u8>,
}

impl Writer {
    /// Emits the current entry's next chunk, whose decoded bytes are `raw`, from `stream`, its
    /// raw DEFLATE stream made elsewhere (see the module comment). The entry must be `deflate`
    /// or `rgba8`, and no bytes of the chunk may have been given to `write` before.
    ///
    /// # Errors
    /// Not final (nothing is emitted and the writer is unchanged): `INVALID_STATE` after the
    /// last entry or in the middle of a chunk; `INVALID_ARGUMENT` for a `stored` entry, a
    /// chunk past the entry's last, or `raw` not as long as the entry's next chunk;
    /// `LIMIT_EXCEEDED` for a stream longer than a DATA chunk holds; `BAD_DATA` when the
    /// stream does not decode to exactly `raw`. Final: a failure to seal.
    pub fn write_deflated(&mut self, raw: &[u8], stream: &[u8]) -> Result<(), Error> {
        self.check()?;
        let Some(plan) = self.plans.get(self.entry as usize).copied() else {
            return Err(Error::state("write_deflated after the last entry ended"));
        };
        if !self.pending.is_empty() {
            return Err(Error::state(
                "write_deflated in the middle of a chunk given to write",
            ));
        }
        if plan.encoding == Encoding::Stored {
            return Err(Error::argument("a stored entry's chunks are not deflated"));
        }
        if self.index >= plan.count {
            return Err(Error::argument(
                "more chunks than the entry's manifest size",
            ));
        }
        if raw.len() != plan.decoded_len(self.index) as usize {
            return Err(Error::argument(
                "the chunk's bytes are not as long as the entry's next chunk",
            ));
        }
        let max = self.max_encoded();
        if stream.len() > max {
            return Err(Error::limit(
                "max_data_payload_bytes",
                stream.len() as u64,
                max as u64,
            ));
        }
        let (entry, index) = (self.entry, self.index);
        let verify = self.verify.get_or_insert_with(|| Verify {
            inflater: Inflater::new(),
            decoded: Vec::new(),
        });
        let decoded = verify
            .inflater
            .inflate_into(stream, raw.len(), &mut verify.decoded);
        if decoded.is_err() || !same_bytes(&verify.decoded, raw) {
            return Err(Error::BadData { entry, index });
        }
        // Checked: from here on it is the chunk `write` would have emitted.
        if self.expected_hash().is_some() {
            self.entry_hasher.update(raw);
        }
        self.written += raw.len() as u64;
        if let Err(e) = self.emit_encoded(&plan, stream) {
            return self.fail(e);
        }
        Ok(())
    }
}

/// Whether `a` and `b` hold the same bytes. WASM's `memcmp` (compiler-builtins) compares one
/// byte at a time; XOR-folding 8-byte words in blocks is what the compiler vectorises (simd128
/// in WASM), and a block that differs ends the comparison.
fn same_bytes(a: &[u8], b: &[u8]) -> bool {
    const BLOCK: usize = 4096;
    if a.len() != b.len() {
        return false;
    }
    a.chunks(BLOCK).zip(b.chunks(BLOCK)).all(|(x, y)| {
        let (xw, yw) = (x.chunks_exact(8), y.chunks_exact(8));
        let tail = xw.remainder() != yw.remainder();
        let diff = xw.zip(yw).fold(0u64, |acc, (p, q)| {
            let word = |s: &[u8]| u64::from_ne_bytes(s.try_into().unwrap_or([0; 8]));
            acc | (word(p) ^ word(q))
        });
        diff == 0 && !tail
    })
}

#[cfg(test)]
mod tests {
    use super::same_bytes;

    #[test]
    fn same_bytes_finds_any_difference() {
        let a: Vec<u8> = (0..10_007u32).map(|i| (i * 31 % 251) as u8).collect();
        assert!(same_bytes(&a, &a.clone()));
        assert!(same_bytes(&[], &[]));
        assert!(!same_bytes(&a, &a[1..]));
        for at in [0, 7, 8, 4095, 4096, 9_999, 10_000, 10_006] {
            let mut b = a.clone();
            b[at] ^= 0x80;
            assert!(!same_bytes(&a, &b), "a difference at {at}");
        }
    }
}

//! The raw DEFLATE decoder of DATA chunks (docs/format.md section 6). Inflation writes into a
//! reused buffer of the decoded length + 1 and stops there (RFC 1951 raw streams, via
//! miniz_oxide), so a chunk can never expand without bound.

use miniz_oxide::inflate::core::{decompress, inflate_flags, DecompressorOxide};
use miniz_oxide::inflate::TINFLStatus;

/// Raw DEFLATE decoder with a reused state and output buffer.
pub struct Inflater {
    state: Box<DecompressorOxide>,
    out: Vec<u8>,
}

impl Default for Inflater {
    fn default() -> Self {
        Self::new()
    }
}

impl Inflater {
    /// A decoder; its output buffer grows to the largest chunk it decoded + 1.
    #[must_use]
    pub fn new() -> Self {
        Self {
            state: Box::default(),
            out: Vec::new(),
        }
    }

    /// Inflates one complete raw DEFLATE stream that must produce exactly `expected` bytes
    /// and consume all of `input`. Returns the decoded bytes (valid until the next call).
    ///
    /// # Errors
    /// `Err(())` for an invalid or incomplete stream, input left over, or any other length;
    /// the caller turns it into `BAD_DATA` with the chunk's position.
    #[allow(clippy::result_unit_err)]
    pub fn inflate_exact(&mut self, input: &[u8], expected: usize) -> Result<&[u8], ()> {
        let mut out = std::mem::take(&mut self.out);
        let result = self.inflate_into(input, expected, &mut out);
        self.out = out;
        result?;
        self.out.get(..expected).ok_or(())
    }

    /// Like [`Inflater::inflate_exact`], but decodes into `out`, which holds exactly the
    /// `expected` decoded bytes on success. Its earlier contents are overwritten, not zeroed
    /// first, and its capacity is reused, so a buffer handed back chunk after chunk is
    /// allocated once and never cleared byte by byte.
    ///
    /// # Errors
    /// As [`Inflater::inflate_exact`]; `out`'s contents are then unspecified.
    #[allow(clippy::result_unit_err)]
    pub fn inflate_into(
        &mut self,
        input: &[u8],
        expected: usize,
        out: &mut Vec<u8>,
    ) -> Result<(), ()> {
        // One byte of room past `expected`: a stream that would decode longer stops with
        // more output pending instead of ending exactly at the buffer's end.
        let bound = expected.checked_add(1).ok_or(())?;
        // Truncates a longer buffer; only bytes past its current length are zero-filled.
        out.resize(bound, 0);
        self.state.init();
        let flags = inflate_flags::TINFL_FLAG_USING_NON_WRAPPING_OUTPUT_BUF;
        let (status, consumed, written) = decompress(&mut self.state, input, out, 0, flags);
        if status != TINFLStatus::Done || consumed != input.len() || written != expected {
            return Err(());
        }
        out.truncate(expected);
        Ok(())
    }
}

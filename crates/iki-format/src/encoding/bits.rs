//! The little-endian bit writer of the pixel encoder's DEFLATE streams (RFC 1951 section 3.1.1:
//! bits fill each byte from its least significant bit), with stored blocks.

/// Little-endian bit writer into a Vec from byte `pos` on: up to 64 bits wait in `buf` (`n`
/// of them) and go out as one 8-byte store when it fills. The Vec is kept at least as long
/// as what is written ([`Bits::reserve`]; zero-filled only where it grows), so a store is a
/// bounds check, not a call.
pub(crate) struct Bits<'a> {
    pub(super) out: &'a mut Vec<u8>,
    pub(super) pos: usize,
    pub(super) buf: u64,
    pub(super) n: u32,
}

/// Appends the `len` low bits of `code` (`len` at most 64, `code` below 2^len) after the `n`
/// bits in `buf`, storing `buf` at `out[pos..]` when it fills.
#[inline(always)]
pub(super) fn put(
    out: &mut Vec<u8>,
    pos: &mut usize,
    buf: &mut u64,
    n: &mut u32,
    code: u64,
    len: u32,
) {
    *buf |= code << *n;
    let total = *n + len;
    if total >= 64 {
        store(out, *pos, &buf.to_le_bytes());
        *pos += 8;
        // The bits of `code` that did not fit (none when total is 64); len > total - 64.
        *buf = (code >> 1) >> (len - 1 - (total - 64));
        *n = total - 64;
    } else {
        *n = total;
    }
}

/// Writes `bytes` at `out[pos..]`, growing `out` if it is too short (never, after
/// [`Bits::reserve`]).
#[inline(always)]
fn store(out: &mut Vec<u8>, pos: usize, bytes: &[u8]) {
    match out.get_mut(pos..pos + bytes.len()) {
        Some(to) => to.copy_from_slice(bytes),
        None => {
            out.truncate(pos);
            out.resize(pos, 0);
            out.extend_from_slice(bytes);
        }
    }
}

impl<'a> Bits<'a> {
    /// A writer at the start of `out` (whose length is kept, see [`Bits`]).
    pub(crate) fn new(out: &'a mut Vec<u8>) -> Self {
        Self {
            out,
            pos: 0,
            buf: 0,
            n: 0,
        }
    }

    /// Appends the `len` low bits of `code` (see [`put`]).
    #[inline(always)]
    pub(crate) fn put(&mut self, code: u64, len: u32) {
        put(
            self.out,
            &mut self.pos,
            &mut self.buf,
            &mut self.n,
            code,
            len,
        );
    }

    /// Appends a table entry `code << 6 | len`.
    pub(crate) fn put_entry(&mut self, entry: u64) {
        self.put(entry >> 6, (entry & 63) as u32);
    }

    /// Room for `bytes` more bytes after what is written and pending.
    pub(crate) fn reserve(&mut self, bytes: usize) {
        let need = self.pos + 8 + bytes + 8;
        if self.out.len() < need {
            self.out.resize(need, 0);
        }
    }

    /// Pads to a byte boundary and writes out what is pending; returns the bytes written.
    pub(crate) fn align(&mut self) -> usize {
        let bytes = self.n.div_ceil(8) as usize;
        let pending = self.buf.to_le_bytes();
        store(self.out, self.pos, pending.get(..bytes).unwrap_or_default());
        self.pos += bytes;
        self.buf = 0;
        self.n = 0;
        self.pos
    }

    /// `bytes` as stored blocks of up to 65535 bytes, the last one final when `last`.
    pub(crate) fn stored(&mut self, bytes: &[u8], last: bool) {
        let mut parts = bytes.chunks(0xFFFF).peekable();
        while let Some(part) = parts.next() {
            let final_block = last && parts.peek().is_none();
            self.put(u64::from(final_block), 3);
            self.align();
            self.reserve(part.len() + 4);
            let len = u16::try_from(part.len()).unwrap_or(u16::MAX);
            let ([l0, l1], [n0, n1]) = (len.to_le_bytes(), (!len).to_le_bytes());
            store(self.out, self.pos, &[l0, l1, n0, n1]);
            store(self.out, self.pos + 4, part);
            self.pos += 4 + part.len();
        }
    }
}

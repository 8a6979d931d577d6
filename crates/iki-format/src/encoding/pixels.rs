//! The pixel encoder: raw DEFLATE (RFC 1951) of rgba8 rows for license copies, where the
//! watermark's +-2 moves make flat colour into two-valued noise that a hash match search
//! (miniz_oxide's level 1) mostly fails on and pays for at every byte.
//!
//! It looks for matches only where pixels repeat: at the left pixel (distance 4), two
//! pixels left (8), and one row up (the stride, when it is at most 32768), by comparing
//! the pixel word there, with no hash table; a match runs in whole pixels, up to 256 bytes.
//! Everything else is literal bytes. Each segment of [`SEGMENT`] input bytes becomes one
//! dynamic-Huffman block (codes of at most 15 bits, code-length codes of at most 7), or
//! stored blocks where those are shorter. The output is a standard raw stream that any
//! inflater reads, and a function of the input and the stride alone.
//!
//! Not used by any writer yet (`DeflateHint::Pixels`): on the copy's marked atlas chunks it
//! runs 0.92-1.00x the instructions of miniz_oxide's level 1 and writes 18-53 % more bytes
//! (bench/RESULTS.md, "Codec cost per MiB, fifth pass"): most marked pixels become short
//! matches (about 10 bytes per token on the 2X tilesheet), and the per-token work is where
//! the instructions go.

use super::huffman::{canonical_codes, code_lengths, Bits, Header};

/// Input bytes per block (a multiple of 4, so blocks start on a pixel).
const SEGMENT: usize = 256 * 1024;
/// Longest match, in bytes: 64 pixels (DEFLATE allows 258).
const MAX_MATCH: usize = 256;
/// DEFLATE's window.
const WINDOW: usize = 32 * 1024;
/// End of block.
const EOB: usize = 256;
/// A match token's flag; other tokens are runs of literal bytes (their count).
const MATCH: u32 = 1 << 31;

/// Length symbol (257..285) and its extra bits for each match length 3..=258, as
/// `symbol | extra_bits << 16 | extra_value << 20`. Built at compile time, where an
/// out-of-range index is a build error rather than a panic, hence the local `allow`.
#[allow(clippy::indexing_slicing)]
const LENGTH_SYMBOLS: [u32; 259] = {
    let mut t = [0u32; 259];
    let mut len = 3;
    while len <= 258 {
        let l = len - 3;
        t[len] = if len == 258 {
            285
        } else if l < 8 {
            257 + l as u32
        } else {
            let nb = 31 - (l as u32).leading_zeros();
            let extra = nb - 2;
            (257 + 4 * (nb - 1) + ((l as u32 >> extra) & 3))
                | extra << 16
                | (l as u32 & ((1 << extra) - 1)) << 20
        };
        len += 1;
    }
    t
};

/// Distance code (0..29), its extra bits and their value for a distance of 1..=32768.
fn distance_code(dist: u32) -> (usize, u32, u32) {
    let v = dist.saturating_sub(1);
    if v < 4 {
        return (v as usize, 0, 0);
    }
    let nb = 31 - v.leading_zeros();
    let extra = nb - 1;
    (
        (2 * nb + ((v >> extra) & 1)) as usize,
        extra,
        v & ((1 << extra) - 1),
    )
}

/// The pixel word at `i`, if 4 bytes are there.
#[inline(always)]
fn word(data: &[u8], i: usize) -> Option<u32> {
    data.get(i..i + 4)
        .and_then(|w| w.try_into().ok())
        .map(u32::from_le_bytes)
}

/// Length in whole pixels (bytes, a multiple of 4) of the match of `data[i..end]` with the
/// bytes `dist` before, knowing its first pixel matches; at most [`MAX_MATCH`].
#[inline(always)]
fn match_len(data: &[u8], i: usize, dist: usize, end: usize) -> usize {
    let max = (end - i).min(MAX_MATCH);
    let mut len = 4;
    while len + 8 <= max {
        let a = data.get(i + len..i + len + 8);
        let b = data.get(i + len - dist..i + len - dist + 8);
        let (Some(a), Some(b)) = (a, b) else { break };
        let x = u64::from_le_bytes(a.try_into().unwrap_or_default())
            ^ u64::from_le_bytes(b.try_into().unwrap_or_default());
        if x != 0 {
            return (len + (x.trailing_zeros() / 8) as usize) & !3;
        }
        len += 8;
    }
    while len + 4 <= max
        && word(data, i + len).is_some()
        && word(data, i + len) == word(data, i + len - dist)
    {
        len += 4;
    }
    len
}

/// The encoder's reused buffers.
#[derive(Default)]
pub(crate) struct PixelEncoder {
    tokens: Vec<u32>,
}

/// Frequencies and codes of one block.
struct Block {
    lit_freq: [u32; 286],
    dist_freq: [u32; 30],
    lit_len: [u8; 286],
    dist_len: [u8; 30],
    lit_code: [u32; 286],
    dist_code: [u32; 30],
}

impl PixelEncoder {
    /// `data` (rows of `stride` bytes) as one raw DEFLATE stream appended to `out`.
    pub(crate) fn encode(&mut self, data: &[u8], stride: usize, out: &mut Vec<u8>) {
        out.reserve(data.len() / 8 + 64);
        let mut bits = Bits { out, buf: 0, n: 0 };
        if data.is_empty() {
            // A final fixed-Huffman block holding only end-of-block (seven 0 bits).
            bits.put(0b011, 3);
            bits.put(0, 7);
            bits.align();
            return;
        }
        let up = if stride > 8 && stride <= WINDOW && stride % 4 == 0 {
            stride
        } else {
            0
        };
        let mut block = Block {
            lit_freq: [0; 286],
            dist_freq: [0; 30],
            lit_len: [0; 286],
            dist_len: [0; 30],
            lit_code: [0; 286],
            dist_code: [0; 30],
        };
        let mut start = 0;
        while start < data.len() {
            let end = (start + SEGMENT).min(data.len());
            let last = end == data.len();
            self.tokenize(data, start, end, up, &mut block);
            write_block(&mut bits, data, start, end, last, &self.tokens, &mut block);
            start = end;
        }
        bits.align();
    }

    /// The tokens of `data[start..end]` and their frequencies.
    fn tokenize(&mut self, data: &[u8], start: usize, end: usize, up: usize, block: &mut Block) {
        block.lit_freq = [0; 286];
        block.dist_freq = [0; 30];
        self.tokens.clear();
        let (up_code, _, _) = distance_code(up as u32);
        let mut literals = 0u32;
        let mut i = start;
        while i + 4 <= end {
            let Some(cur) = word(data, i) else { break };
            let dist = if i >= 4 && word(data, i - 4) == Some(cur) {
                4
            } else if i >= 8 && word(data, i - 8) == Some(cur) {
                8
            } else if up != 0 && i >= up && word(data, i - up) == Some(cur) {
                up
            } else {
                for b in cur.to_le_bytes() {
                    if let Some(f) = block.lit_freq.get_mut(usize::from(b)) {
                        *f += 1;
                    }
                }
                literals += 4;
                i += 4;
                continue;
            };
            let len = match_len(data, i, dist, end);
            if literals > 0 {
                self.tokens.push(literals);
                literals = 0;
            }
            self.tokens.push(MATCH | (dist as u32) << 9 | len as u32);
            let sym = LENGTH_SYMBOLS.get(len).copied().unwrap_or(0) & 0xFFFF;
            if let Some(f) = block.lit_freq.get_mut(sym as usize) {
                *f += 1;
            }
            let code = match dist {
                4 => 3,
                8 => 5,
                _ => up_code,
            };
            if let Some(f) = block.dist_freq.get_mut(code) {
                *f += 1;
            }
            i += len;
        }
        // A tail shorter than a pixel.
        for &b in data.get(i..end).unwrap_or_default() {
            if let Some(f) = block.lit_freq.get_mut(usize::from(b)) {
                *f += 1;
            }
            literals += 1;
        }
        if literals > 0 {
            self.tokens.push(literals);
        }
        block.lit_freq[EOB] = 1;
    }
}

/// Writes `data[start..end]` as one dynamic block of `tokens`, or as stored blocks when
/// those are shorter.
fn write_block(
    bits: &mut Bits<'_>,
    data: &[u8],
    start: usize,
    end: usize,
    last: bool,
    tokens: &[u32],
    block: &mut Block,
) {
    // Two used symbols in each code, so that every code is complete.
    if block.lit_freq.iter().filter(|&&f| f > 0).count() < 2 {
        block.lit_freq[0] = block.lit_freq[0].max(1);
    }
    let used_dists = block.dist_freq.iter().filter(|&&f| f > 0).count();
    if used_dists < 2 {
        block.dist_freq[0] = block.dist_freq[0].max(1);
        block.dist_freq[1] = block.dist_freq[1].max(1);
    }
    code_lengths(&block.lit_freq, 15, &mut block.lit_len);
    code_lengths(&block.dist_freq, 15, &mut block.dist_len);
    let header = Header::new(&block.lit_len, &block.dist_len);
    // Bits of the block: its header, each symbol's code and extra bits.
    let mut body = header.bits + 3;
    for (sym, (&f, &l)) in block.lit_freq.iter().zip(&block.lit_len).enumerate() {
        let extra = if sym > 256 { length_extra_bits(sym) } else { 0 };
        body += u64::from(f) * u64::from(u32::from(l) + extra);
    }
    for (code, (&f, &l)) in block.dist_freq.iter().zip(&block.dist_len).enumerate() {
        let extra = if code >= 4 { code as u32 / 2 - 1 } else { 0 };
        body += u64::from(f) * u64::from(u32::from(l) + extra);
    }
    let len = end - start;
    let stored = (len as u64 + 5 * len.div_ceil(0xFFFF) as u64) * 8 + 7;
    if body > stored {
        write_stored(bits, data.get(start..end).unwrap_or_default(), last);
        return;
    }
    bits.out.reserve((body / 8) as usize + 16);
    canonical_codes(&block.lit_len, &mut block.lit_code);
    canonical_codes(&block.dist_len, &mut block.dist_code);
    bits.put(u32::from(last) | 0b10 << 1, 3);
    header.write(bits);
    let lit = &block.lit_code;
    let mut pos = start;
    for &token in tokens {
        if token & MATCH == 0 {
            let run = token as usize;
            for &b in data.get(pos..pos + run).unwrap_or_default() {
                let c = lit.get(usize::from(b)).copied().unwrap_or(0);
                bits.put(c & 0xFFFF, c >> 16);
            }
            pos += run;
        } else {
            let len = (token & 0x1FF) as usize;
            let dist = (token >> 9) & 0xFFFF;
            let entry = LENGTH_SYMBOLS.get(len).copied().unwrap_or(0);
            let c = lit.get((entry & 0xFFFF) as usize).copied().unwrap_or(0);
            let (cl, eb) = (c >> 16, (entry >> 16) & 0xF);
            bits.put((c & 0xFFFF) | (entry >> 20) << cl, cl + eb);
            let (code, eb, ev) = distance_code(dist);
            let d = block.dist_code.get(code).copied().unwrap_or(0);
            bits.put((d & 0xFFFF) | ev << (d >> 16), (d >> 16) + eb);
            pos += len;
        }
    }
    let c = lit.get(EOB).copied().unwrap_or(0);
    bits.put(c & 0xFFFF, c >> 16);
}

/// Extra bits of length symbol `sym` (257..285).
fn length_extra_bits(sym: usize) -> u32 {
    match sym {
        265..=284 => (sym as u32 - 261) / 4,
        _ => 0,
    }
}

/// `piece` as stored blocks of up to 65535 bytes, the last one final when `last`.
fn write_stored(bits: &mut Bits<'_>, piece: &[u8], last: bool) {
    let mut parts = piece.chunks(0xFFFF).peekable();
    while let Some(part) = parts.next() {
        let final_block = last && parts.peek().is_none();
        bits.put(u32::from(final_block), 3);
        bits.align();
        let len = u16::try_from(part.len()).unwrap_or(u16::MAX);
        bits.out.extend_from_slice(&len.to_le_bytes());
        bits.out.extend_from_slice(&(!len).to_le_bytes());
        bits.out.extend_from_slice(part);
    }
}

//! The pixel encoder: raw DEFLATE (RFC 1951) of rgba8 rows for license copies, at about half
//! the instructions of miniz_oxide's level 1 on marked atlas pixels for fewer bytes
//! (bench/RESULTS.md, "Codec cost per MiB, sixth pass").
//!
//! There is no hash search. At each pixel the encoder compares the pixel word with eight
//! candidates, in order: 1 to 5 pixels to the left, the pixel one row up, and the pixels
//! above-right and above-left of it (when a row is at least 8 and less than 8192 pixels, so
//! that all three are within DEFLATE's 32 KiB window; otherwise 6, 7 and 8 pixels to the
//! left). The first candidate whose pixel is equal gives the match, run in whole pixels up
//! to 64 (256 bytes); a pixel that equals none is four literal bytes. The watermark's +-2 moves leave a flat
//! area two-valued per pixel, so most matches are one or two pixels long and the first
//! equal candidate is about as good as the longest. Symbols are counted while tokenizing;
//! each block of up to [`BLOCK_PIXELS`] pixels (1 MiB, a copy chunk) is then one dynamic-
//! Huffman block whose codes come from its own counts, or stored blocks when those are
//! shorter. A match is written with one table look-up (its length and distance codes
//! together) and a literal pixel with one put of its four codes. The output is standard raw
//! DEFLATE that any inflater reads, and a function of the input and the row length alone.

mod block;
mod check;
#[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
mod vectors;

use block::Block;

pub use check::cross_check;
#[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
use vectors::tokenize_vectors;

use super::bits::Bits;

/// Pixels per block (1 MiB of rgba8).
const BLOCK_PIXELS: usize = 256 * 1024;
/// Longest match, in pixels (256 bytes; DEFLATE allows 258).
const MAX_PIXELS: usize = 64;
/// Match candidates per pixel.
const CANDIDATES: usize = 8;
/// Farthest DEFLATE distance, in pixels (32 KiB).
const WINDOW_PIXELS: usize = 8192;
/// A literal token's flag; the token's low 32 bits are the pixel. A match token is its
/// entry in the match table.
const LITERAL: u64 = 1 << 32;
/// Entries of the per-block match table: candidate * 65 + pixels, at most 7 * 65 + 64.
const MATCH_TABLE: usize = 1024;
/// End of block.
const EOB: usize = 256;
/// Symbols of the literal/length code.
const LITLEN: usize = 286;

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

/// Distance code (0..29), its extra bits and their value for a distance of 1..=32768 bytes.
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

/// The candidates' distances in pixels for rows of `row_bytes`.
fn candidates(row_bytes: usize) -> [usize; CANDIDATES] {
    let up = row_bytes / 4;
    if row_bytes % 4 == 0 && (8..WINDOW_PIXELS).contains(&up) {
        [1, 2, 3, 4, 5, up, up - 1, up + 1]
    } else {
        [1, 2, 3, 4, 5, 6, 7, 8]
    }
}

/// A tokenizer: the tokens of the pixels from `start` on (those before are the window),
/// their symbols counted.
type Tokenizer = fn(Seen<'_>, usize, &[usize; CANDIDATES], &mut Vec<u64>, &mut Counts);

/// The tokenizer of this build: [`tokenize_vectors`] where WASM SIMD is enabled (the
/// service's and the player's module), [`tokenize`] elsewhere. Both give the same tokens.
#[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
const TOKENIZER: Tokenizer = tokenize_vectors;
#[cfg(not(all(target_arch = "wasm32", target_feature = "simd128")))]
const TOKENIZER: Tokenizer = tokenize;

/// The encoder's reused buffers.
pub(crate) struct PixelEncoder {
    tokenizer: Tokenizer,
    words: Vec<u32>,
    tokens: Vec<u64>,
    /// The last stream is `out[..len]`; `out` keeps its length (see [`Bits`]).
    out: Vec<u8>,
    len: usize,
}

/// Symbol counts of one block.
struct Counts {
    literals: [u32; LITLEN],
    /// Matches by candidate * 65 + pixels.
    matches: [u32; MATCH_TABLE],
}

impl Default for PixelEncoder {
    fn default() -> Self {
        Self::with(TOKENIZER)
    }
}

impl PixelEncoder {
    /// An encoder using `tokenizer`.
    fn with(tokenizer: Tokenizer) -> Self {
        Self {
            tokenizer,
            words: Vec::new(),
            tokens: Vec::new(),
            out: Vec::new(),
            len: 0,
        }
    }

    /// The stream [`PixelEncoder::encode`] wrote last.
    pub(crate) fn stream(&self) -> &[u8] {
        self.out.get(..self.len).unwrap_or_default()
    }

    /// Encodes `data` (rows of `row_bytes` bytes) as one raw DEFLATE stream (see
    /// [`PixelEncoder::stream`]) and returns its length.
    pub(crate) fn encode(&mut self, data: &[u8], row_bytes: usize) -> usize {
        let mut bits = Bits::new(&mut self.out);
        if data.is_empty() {
            // A final fixed-Huffman block holding only end-of-block (seven 0 bits).
            bits.put(0b011, 3);
            bits.put(0, 7);
            self.len = bits.align();
            return self.len;
        }
        self.words.clear();
        self.words.extend(
            data.chunks_exact(4)
                .map(|p| u32::from_le_bytes(p.try_into().unwrap_or_default())),
        );
        let dists = candidates(row_bytes);
        let pixels = self.words.len();
        let mut start = 0;
        loop {
            let end = (start + BLOCK_PIXELS).min(pixels);
            let last = end == pixels;
            // Bytes after the last whole pixel end the last block as literals.
            let tail = if last {
                data.get(end * 4..).unwrap_or_default()
            } else {
                &[]
            };
            let mut counts = Counts {
                literals: [0; LITLEN],
                matches: [0; MATCH_TABLE],
            };
            self.tokens.clear();
            self.tokens.reserve(end - start + 1);
            let seen = Seen {
                words: self.words.get(..end).unwrap_or_default(),
                bytes: data.get(..end * 4).unwrap_or_default(),
            };
            (self.tokenizer)(seen, start, &dists, &mut self.tokens, &mut counts);
            for &b in tail {
                count(&mut counts.literals, usize::from(b));
            }
            let block = Block {
                bytes: data
                    .get(start * 4..end * 4 + tail.len())
                    .unwrap_or_default(),
                tail,
                tokens: &self.tokens,
                last,
            };
            block.write(&mut bits, &mut counts, &dists);
            if last {
                break;
            }
            start = end;
        }
        self.len = bits.align();
        self.len
    }
}

/// Adds one to `counts[i]`.
#[inline(always)]
fn count(counts: &mut [u32], i: usize) {
    if let Some(c) = counts.get_mut(i) {
        *c += 1;
    }
}

/// The pixels up to a block's end, as words and as bytes.
#[derive(Clone, Copy)]
struct Seen<'a> {
    words: &'a [u32],
    bytes: &'a [u8],
}

/// The tokens of the pixels from `start` on (those before are the window), their symbols
/// counted in `counts`.
#[inline(never)]
fn tokenize(
    seen: Seen<'_>,
    start: usize,
    dists: &[usize; CANDIDATES],
    tokens: &mut Vec<u64>,
    counts: &mut Counts,
) {
    let (w, bytes) = (seen.words, seen.bytes);
    let n = w.len();
    let mut i = start;
    'pixel: while let Some(&cur) = w.get(i) {
        for (c, &d) in dists.iter().enumerate() {
            let Some(j) = i.checked_sub(d) else { continue };
            if w.get(j) != Some(&cur) {
                continue;
            }
            // Most matches are one pixel: the next pixel decides before the run is measured,
            // two pixels (8 bytes) at a time.
            let len = if w.get(i + 1) != w.get(j + 1) {
                1
            } else {
                let max = (n - i).min(MAX_PIXELS);
                let ahead = bytes.get((i + 2) * 4..(i + max) * 4).unwrap_or_default();
                let back = bytes.get((j + 2) * 4..).unwrap_or_default();
                let pairs = ahead
                    .chunks_exact(8)
                    .zip(back.chunks_exact(8))
                    .take_while(|(a, b)| a == b)
                    .count();
                let len = 2 + 2 * pairs;
                if len < max && w.get(i + len) == w.get(j + len) {
                    len + 1
                } else {
                    len
                }
            };
            let entry = (c * 65 + len) % MATCH_TABLE;
            tokens.push(entry as u64);
            count(&mut counts.matches, entry);
            i += len;
            continue 'pixel;
        }
        for b in cur.to_le_bytes() {
            count(&mut counts.literals, usize::from(b));
        }
        tokens.push(LITERAL | u64::from(cur));
        i += 1;
    }
}

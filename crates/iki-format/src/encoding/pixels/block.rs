//! One block of the pixel encoder's stream: its Huffman codes from the block's counts, then
//! its tokens as those codes ([`emit`]), or stored blocks when those are shorter.

use super::super::bits::{put, Bits};
use super::super::huffman::{canonical_codes, code_lengths, Header};
use super::{
    distance_code, Counts, CANDIDATES, EOB, LENGTH_SYMBOLS, LITERAL, LITLEN, MATCH_TABLE,
    MAX_PIXELS,
};

/// One block's bytes and tokens.
pub(super) struct Block<'a> {
    /// Its bytes (the pixels and the tail).
    pub(super) bytes: &'a [u8],
    /// Bytes after the last whole pixel (last block only).
    pub(super) tail: &'a [u8],
    pub(super) tokens: &'a [u64],
    pub(super) last: bool,
}

impl Block<'_> {
    /// Writes the block as one dynamic-Huffman block, or as stored blocks when those are
    /// shorter.
    pub(super) fn write(
        &self,
        bits: &mut Bits<'_>,
        counts: &mut Counts,
        dists: &[usize; CANDIDATES],
    ) {
        let mut lit_freq = counts.literals;
        let mut dist_freq = [0u32; 30];
        for (c, &d) in dists.iter().enumerate() {
            let (code, _, _) = distance_code((d * 4) as u32);
            for len in 1..=MAX_PIXELS {
                let f = counts.matches.get(c * 65 + len).copied().unwrap_or(0);
                let sym = LENGTH_SYMBOLS.get(len * 4).copied().unwrap_or(0) & 0xFFFF;
                if let Some(x) = lit_freq.get_mut(sym as usize) {
                    *x += f;
                }
                if let Some(x) = dist_freq.get_mut(code) {
                    *x += f;
                }
            }
        }
        lit_freq[EOB] = 1;
        // Two used symbols in each code, so that every code is complete.
        if lit_freq.iter().filter(|&&f| f > 0).count() < 2 {
            lit_freq[0] = lit_freq[0].max(1);
        }
        if dist_freq.iter().filter(|&&f| f > 0).count() < 2 {
            dist_freq[0] = dist_freq[0].max(1);
            dist_freq[1] = dist_freq[1].max(1);
        }
        let mut lit_len = [0u8; LITLEN];
        let mut dist_len = [0u8; 30];
        code_lengths(&lit_freq, 15, &mut lit_len);
        code_lengths(&dist_freq, 15, &mut dist_len);
        let header = Header::new(&lit_len, &dist_len);
        // Bits of the block: its header, each symbol's code and extra bits.
        let mut body = header.bits + 3;
        for (sym, (&f, &l)) in lit_freq.iter().zip(&lit_len).enumerate() {
            let extra = if (265..=284).contains(&sym) {
                (sym as u64 - 261) / 4
            } else {
                0
            };
            body += u64::from(f) * (u64::from(l) + extra);
        }
        for (code, (&f, &l)) in dist_freq.iter().zip(&dist_len).enumerate() {
            let extra = if code >= 4 { code as u64 / 2 - 1 } else { 0 };
            body += u64::from(f) * (u64::from(l) + extra);
        }
        let len = self.bytes.len();
        let stored = (len as u64 + 5 * len.div_ceil(0xFFFF) as u64) * 8 + 7;
        if body > stored {
            bits.stored(self.bytes, self.last);
            return;
        }
        bits.reserve((body / 8) as usize + 8);
        let mut lit_code = [0u32; LITLEN];
        let mut dist_code = [0u32; 30];
        canonical_codes(&lit_len, &mut lit_code);
        canonical_codes(&dist_len, &mut dist_code);
        // Entries `code << 6 | length in bits`.
        let entry = |c: u32| u64::from(c & 0xFFFF) << 6 | u64::from(c >> 16);
        let mut literals = [0u64; 256];
        for (e, &c) in literals.iter_mut().zip(&lit_code) {
            *e = entry(c);
        }
        let mut matches = [0u64; MATCH_TABLE];
        for (c, &d) in dists.iter().enumerate() {
            let (code, extra, value) = distance_code((d * 4) as u32);
            let h = dist_code.get(code).copied().unwrap_or(0);
            let dist = (
                u64::from(h & 0xFFFF) | u64::from(value) << (h >> 16),
                (h >> 16) + extra,
            );
            for len in 1..=MAX_PIXELS {
                let e = LENGTH_SYMBOLS.get(len * 4).copied().unwrap_or(0);
                let h = lit_code.get((e & 0xFFFF) as usize).copied().unwrap_or(0);
                let n = (h >> 16) + ((e >> 16) & 0xF);
                let code = u64::from(h & 0xFFFF) | u64::from(e >> 20) << (h >> 16);
                if let Some(m) = matches.get_mut(c * 65 + len) {
                    *m = (code | dist.0 << n) << 6 | u64::from(n + dist.1);
                }
            }
        }
        bits.put(u64::from(self.last) | 0b10 << 1, 3);
        header.write(bits);
        emit(bits, self.tokens, &literals, &matches);
        for &b in self.tail {
            bits.put_entry(literals.get(usize::from(b)).copied().unwrap_or(0));
        }
        bits.put_entry(entry(lit_code[EOB]));
    }
}

/// The codes of `tokens`. The writer's state is kept in locals here, the encoder's hottest
/// loop after the tokenizer.
#[inline(never)]
fn emit(bits: &mut Bits<'_>, tokens: &[u64], literals: &[u64; 256], matches: &[u64; MATCH_TABLE]) {
    let (mut pos, mut buf, mut n) = (bits.pos, bits.buf, bits.n);
    let out = &mut *bits.out;
    let lit = |b: u64| literals.get((b & 0xFF) as usize).copied().unwrap_or(0);
    for &t in tokens {
        if t & LITERAL == 0 {
            let e = matches.get(t as usize % MATCH_TABLE).copied().unwrap_or(0);
            put(out, &mut pos, &mut buf, &mut n, e >> 6, (e & 63) as u32);
        } else {
            // Four codes of at most 15 bits: one put.
            let (e0, e1, e2, e3) = (lit(t), lit(t >> 8), lit(t >> 16), lit(t >> 24));
            let l0 = (e0 & 63) as u32;
            let l1 = l0 + (e1 & 63) as u32;
            let l2 = l1 + (e2 & 63) as u32;
            let l3 = l2 + (e3 & 63) as u32;
            let code = (e0 >> 6) | (e1 >> 6) << l0 | (e2 >> 6) << l1 | (e3 >> 6) << l2;
            put(out, &mut pos, &mut buf, &mut n, code, l3);
        }
    }
    bits.pos = pos;
    bits.buf = buf;
    bits.n = n;
}

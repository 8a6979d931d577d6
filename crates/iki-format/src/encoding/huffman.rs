//! Length-limited canonical Huffman codes for the pixel encoder's dynamic DEFLATE blocks
//! (RFC 1951 section 3.2.2): code lengths by Moffat and Katajainen's in-place minimum-
//! redundancy algorithm, lengths above the limit pushed down as miniz does (the code stays
//! complete), then canonical codes with their bits reversed, since DEFLATE sends a Huffman
//! code from its most significant bit and the bit writer (`bits.rs`) fills from the least;
//! and a dynamic block's header, the two codes' lengths run-length coded ([`Header`]).

use super::bits::Bits;

/// Sets `lengths` (as long as `freq`) to code lengths of at most `max_bits` for `freq`. A
/// symbol of frequency 0 gets length 0. With two or more used symbols the code is complete;
/// the caller sees to it that there are two (a lone symbol gets length 1).
pub(crate) fn code_lengths(freq: &[u32], max_bits: u8, lengths: &mut [u8]) {
    lengths.iter_mut().for_each(|l| *l = 0);
    // (frequency, symbol), rarest first; the symbol breaks ties, so the result is fixed.
    let mut used: Vec<(u32, u16)> = freq
        .iter()
        .zip(0u16..)
        .filter(|(f, _)| **f > 0)
        .map(|(f, s)| (*f, s))
        .collect();
    used.sort_unstable();
    if used.len() == 1 {
        if let Some(l) = used
            .first()
            .and_then(|(_, s)| lengths.get_mut(usize::from(*s)))
        {
            *l = 1;
        }
        return;
    }
    let mut work: Vec<u32> = used.iter().map(|(f, _)| *f).collect();
    minimum_redundancy(&mut work);
    // Symbols per length, the lengths past the limit counted at the limit.
    let max = usize::from(max_bits);
    let mut counts = [0u32; 33];
    for &depth in &work {
        if let Some(c) = counts.get_mut((depth as usize).min(max)) {
            *c += 1;
        }
    }
    // Kraft: sum of 2^(max - len) must be 2^max. Take one code off the longest length and
    // split a shorter leaf until it holds (miniz's tdefl_huffman_enforce_max_code_size).
    let mut total: u64 = (1..=max)
        .map(|len| u64::from(counts.get(len).copied().unwrap_or(0)) << (max - len))
        .sum();
    while total > 1u64 << max {
        if let Some(c) = counts.get_mut(max) {
            *c = c.saturating_sub(1);
        }
        for len in (1..max).rev() {
            if counts.get(len).copied().unwrap_or(0) != 0 {
                if let Some(c) = counts.get_mut(len) {
                    *c -= 1;
                }
                if let Some(c) = counts.get_mut(len + 1) {
                    *c += 2;
                }
                break;
            }
        }
        total -= 1;
    }
    // Longest codes to the rarest symbols.
    let mut symbols = used.iter().map(|(_, s)| usize::from(*s));
    for len in (1..=max).rev() {
        for _ in 0..counts.get(len).copied().unwrap_or(0) {
            if let Some(l) = symbols.next().and_then(|s| lengths.get_mut(s)) {
                *l = len as u8;
            }
        }
    }
}

/// Moffat and Katajainen's in-place code lengths: `a` holds frequencies sorted ascending
/// (at least two) and ends holding each one's code length (the rarest the longest).
fn minimum_redundancy(a: &mut [u32]) {
    let n = a.len();
    if n < 2 {
        return;
    }
    // Every index below is under n by construction; get/set keep the crate free of panics.
    let at = |a: &[u32], i: usize| a.get(i).copied().unwrap_or(0);
    let set = |a: &mut [u32], i: usize, v: u32| {
        if let Some(x) = a.get_mut(i) {
            *x = v;
        }
    };
    set(a, 0, at(a, 0) + at(a, 1));
    let (mut root, mut leaf) = (0usize, 2usize);
    for next in 1..n - 1 {
        if leaf >= n || at(a, root) < at(a, leaf) {
            set(a, next, at(a, root));
            set(a, root, next as u32);
            root += 1;
        } else {
            set(a, next, at(a, leaf));
            leaf += 1;
        }
        if leaf >= n || (root < next && at(a, root) < at(a, leaf)) {
            set(a, next, at(a, next) + at(a, root));
            set(a, root, next as u32);
            root += 1;
        } else {
            set(a, next, at(a, next) + at(a, leaf));
            leaf += 1;
        }
    }
    set(a, n - 2, 0);
    for next in (0..n - 2).rev() {
        let parent = at(a, next) as usize;
        set(a, next, at(a, parent) + 1);
    }
    let (mut avail, mut used, mut depth) = (1usize, 0usize, 0u32);
    let (mut root, mut next) = (n as isize - 2, n as isize - 1);
    while avail > 0 {
        while root >= 0 && at(a, root as usize) == depth {
            used += 1;
            root -= 1;
        }
        while avail > used {
            set(a, next as usize, depth);
            next -= 1;
            avail -= 1;
        }
        avail = 2 * used;
        depth += 1;
        used = 0;
    }
}

/// Canonical codes of `lengths` (RFC 1951 section 3.2.2), bit-reversed for an LSB-first
/// writer, each as `code | length << 16` in `codes`.
pub(crate) fn canonical_codes(lengths: &[u8], codes: &mut [u32]) {
    let mut counts = [0u32; 16];
    for &l in lengths {
        if let Some(c) = counts.get_mut(usize::from(l)) {
            *c += 1;
        }
    }
    counts[0] = 0;
    let mut next = [0u32; 16];
    let mut code = 0u32;
    for bits in 1..16 {
        code = (code + counts.get(bits - 1).copied().unwrap_or(0)) << 1;
        if let Some(n) = next.get_mut(bits) {
            *n = code;
        }
    }
    for (&len, out) in lengths.iter().zip(codes.iter_mut()) {
        let Some(n) = next.get_mut(usize::from(len)) else {
            continue;
        };
        if len == 0 {
            *out = 0;
            continue;
        }
        let reversed = n.reverse_bits() >> (32 - u32::from(len));
        *n += 1;
        *out = reversed | u32::from(len) << 16;
    }
}

/// Order of the code-length code's lengths in the header (RFC 1951 section 3.2.7).
const CL_ORDER: [usize; 19] = [
    16, 17, 18, 0, 8, 7, 9, 6, 10, 5, 11, 4, 12, 3, 13, 2, 14, 1, 15,
];
/// A dynamic block's header: the two codes' lengths, run-length coded (RFC 1951 section
/// 3.2.7) under the code-length code.
pub(crate) struct Header {
    /// (symbol 0..18, extra value) of the run-length coded lengths.
    runs: Vec<(u8, u8)>,
    lits: usize,
    dists: usize,
    cl_len: [u8; 19],
    cl_code: [u32; 19],
    cl_count: usize,
    /// Bits of the header after BFINAL and BTYPE.
    pub(crate) bits: u64,
}

impl Header {
    pub(crate) fn new(lit_len: &[u8; 286], dist_len: &[u8; 30]) -> Self {
        let lits = lit_len
            .iter()
            .rposition(|&l| l > 0)
            .map_or(257, |p| (p + 1).max(257));
        let dists = dist_len.iter().rposition(|&l| l > 0).map_or(1, |p| p + 1);
        let all: Vec<u8> = lit_len
            .iter()
            .take(lits)
            .chain(dist_len.iter().take(dists))
            .copied()
            .collect();
        let mut runs = Vec::new();
        let mut i = 0;
        while let Some(&l) = all.get(i) {
            let run = all
                .get(i..)
                .unwrap_or_default()
                .iter()
                .take_while(|&&x| x == l)
                .count();
            if l == 0 && run >= 11 {
                let n = run.min(138);
                runs.push((18, (n - 11) as u8));
                i += n;
            } else if l == 0 && run >= 3 {
                runs.push((17, (run - 3) as u8));
                i += run;
            } else if l != 0 && run >= 4 {
                // The length once, then repeats of 3 to 6.
                runs.push((l, 0));
                let n = (run - 1).min(6);
                runs.push((16, (n - 3) as u8));
                i += 1 + n;
            } else {
                runs.push((l, 0));
                i += 1;
            }
        }
        let mut cl_freq = [0u32; 19];
        for &(s, _) in &runs {
            if let Some(f) = cl_freq.get_mut(usize::from(s)) {
                *f += 1;
            }
        }
        if cl_freq.iter().filter(|&&f| f > 0).count() < 2 {
            // Two used symbols: a complete code.
            let spare = usize::from(cl_freq[0] > 0);
            if let Some(f) = cl_freq.get_mut(spare) {
                *f = (*f).max(1);
            }
        }
        let mut cl_len = [0u8; 19];
        code_lengths(&cl_freq, 7, &mut cl_len);
        let mut cl_code = [0u32; 19];
        canonical_codes(&cl_len, &mut cl_code);
        let cl_count = CL_ORDER
            .iter()
            .rposition(|&s| cl_len.get(s).copied().unwrap_or(0) > 0)
            .map_or(4, |p| (p + 1).max(4));
        let mut bits = 5 + 5 + 4 + 3 * cl_count as u64;
        for &(s, _) in &runs {
            let extra = match s {
                16 => 2,
                17 => 3,
                18 => 7,
                _ => 0,
            };
            bits += u64::from(cl_len.get(usize::from(s)).copied().unwrap_or(0)) + extra;
        }
        Self {
            runs,
            lits,
            dists,
            cl_len,
            cl_code,
            cl_count,
            bits,
        }
    }

    pub(crate) fn write(&self, bits: &mut Bits<'_>) {
        bits.put((self.lits - 257) as u64, 5);
        bits.put((self.dists - 1) as u64, 5);
        bits.put((self.cl_count - 4) as u64, 4);
        for &s in CL_ORDER.iter().take(self.cl_count) {
            bits.put(u64::from(self.cl_len.get(s).copied().unwrap_or(0)), 3);
        }
        for &(s, extra) in &self.runs {
            let c = self.cl_code.get(usize::from(s)).copied().unwrap_or(0);
            bits.put(u64::from(c & 0xFFFF), c >> 16);
            match s {
                16 => bits.put(u64::from(extra), 2),
                17 => bits.put(u64::from(extra), 3),
                18 => bits.put(u64::from(extra), 7),
                _ => {}
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kraft(lengths: &[u8], max: u8) -> u64 {
        lengths
            .iter()
            .filter(|&&l| l > 0)
            .map(|&l| 1u64 << (max - l))
            .sum()
    }

    #[test]
    fn lengths_are_complete_and_limited() {
        // Fibonacci frequencies make the deepest unlimited tree (a length per symbol).
        let mut fib = vec![1u32, 1];
        while fib.len() < 40 {
            let n = fib[fib.len() - 1] + fib[fib.len() - 2];
            fib.push(n);
        }
        for max in [7u8, 15] {
            let mut lengths = vec![0u8; fib.len()];
            code_lengths(&fib, max, &mut lengths);
            assert!(
                lengths.iter().all(|&l| (1..=max).contains(&l)),
                "{lengths:?}"
            );
            assert_eq!(kraft(&lengths, max), 1 << max, "complete at {max}");
        }
        // Unused symbols get no code; two symbols get one bit each.
        let mut lengths = [9u8; 5];
        code_lengths(&[0, 5, 0, 0, 1], 15, &mut lengths);
        assert_eq!(lengths, [0, 1, 0, 0, 1]);
        code_lengths(&[0, 0, 3], 15, &mut lengths[..3]);
        assert_eq!(&lengths[..3], &[0, 0, 1]);
        // Optimal where the limit does not bind: 1/2, 1/4, 1/8, 1/8.
        let mut lengths = [0u8; 4];
        code_lengths(&[8, 4, 2, 2], 15, &mut lengths);
        assert_eq!(lengths, [1, 2, 3, 3]);
    }

    #[test]
    fn canonical_codes_follow_rfc_1951() {
        // RFC 1951 section 3.2.2's example: lengths (3, 3, 3, 3, 3, 2, 4, 4) give
        // 010 011 100 101 110 00 1110 1111 (here bit-reversed).
        let lengths = [3u8, 3, 3, 3, 3, 2, 4, 4];
        let mut codes = [0u32; 8];
        canonical_codes(&lengths, &mut codes);
        let expect = [0b010u32, 0b011, 0b100, 0b101, 0b110, 0b00, 0b1110, 0b1111];
        for ((&c, &e), &l) in codes.iter().zip(&expect).zip(&lengths) {
            assert_eq!(c >> 16, u32::from(l));
            assert_eq!(c & 0xFFFF, e.reverse_bits() >> (32 - u32::from(l)));
        }
    }
}

//! BLAKE2b (RFC 7693), unkeyed, with outputs of 1 to 64 bytes: the hash behind H0 and H'.
//!
//! Why our own: the `blake2` crate (0.10) cannot wipe its hasher, and H0's hasher buffers the
//! password itself (every Argon2 input is shorter than one 128-byte block plus what follows),
//! while its chaining value ends as H0. Here the state, the block buffer and the message
//! words are wiped when the hasher drops and after every compression. Speed does not matter:
//! BLAKE2b runs over a few hundred bytes per Argon2 call, next to 3 x 64 MiB of BlaMka.

use zeroize::{Zeroize, ZeroizeOnDrop};

/// Bytes per BLAKE2b block.
const BLOCK_BYTES: usize = 128;
/// BLAKE2b's longest output, in bytes.
pub(crate) const MAX_OUT_BYTES: usize = 64;

/// The initial chaining value (RFC 7693 §2.6: SHA-512's IV).
const IV: [u64; 8] = [
    0x6a09_e667_f3bc_c908,
    0xbb67_ae85_84ca_a73b,
    0x3c6e_f372_fe94_f82b,
    0xa54f_f53a_5f1d_36f1,
    0x510e_527f_ade6_82d1,
    0x9b05_688c_2b3e_6c1f,
    0x1f83_d9ab_fb41_bd6b,
    0x5be0_cd19_137e_2179,
];

/// The message schedule (RFC 7693 §2.7); rounds 10 and 11 reuse rows 0 and 1.
const SIGMA: [[u8; 16]; 12] = [
    [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15],
    [14, 10, 4, 8, 9, 15, 13, 6, 1, 12, 0, 2, 11, 7, 5, 3],
    [11, 8, 12, 0, 5, 2, 15, 13, 10, 14, 3, 6, 7, 1, 9, 4],
    [7, 9, 3, 1, 13, 12, 11, 14, 2, 6, 5, 10, 4, 0, 15, 8],
    [9, 0, 5, 7, 2, 4, 10, 15, 14, 1, 11, 12, 6, 8, 3, 13],
    [2, 12, 6, 10, 0, 11, 8, 3, 4, 13, 7, 5, 15, 14, 1, 9],
    [12, 5, 1, 15, 14, 13, 4, 10, 0, 7, 6, 3, 9, 2, 8, 11],
    [13, 11, 7, 14, 12, 1, 3, 9, 5, 0, 15, 4, 8, 6, 2, 10],
    [6, 15, 14, 9, 11, 3, 0, 8, 12, 2, 13, 7, 1, 4, 10, 5],
    [10, 2, 8, 4, 7, 6, 1, 5, 15, 11, 9, 14, 3, 12, 13, 0],
    [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15],
    [14, 10, 4, 8, 9, 15, 13, 6, 1, 12, 0, 2, 11, 7, 5, 3],
];

/// An unkeyed BLAKE2b hasher of `out_len` bytes. Wiped on drop.
#[derive(Zeroize, ZeroizeOnDrop)]
pub(crate) struct Blake2b {
    h: [u64; 8],
    /// Message bytes so far (the 128-bit counter `t`; Argon2's inputs stay far below 2^64).
    t: u64,
    buf: [u8; BLOCK_BYTES],
    /// Bytes held in `buf`: 1 to 128 once anything was written, so that the last block is
    /// always compressed by `finalize_into`, with the final flag.
    filled: usize,
    out_len: usize,
}

impl Blake2b {
    /// A hasher with an output of `out_len` bytes; `None` outside 1 to 64.
    pub(crate) fn new(out_len: usize) -> Option<Self> {
        let param = u64::try_from(out_len)
            .ok()
            .filter(|n| (1..=MAX_OUT_BYTES as u64).contains(n))?;
        let mut h = IV;
        // Parameter block word 0: digest length, key length 0, fanout 1, depth 1.
        h[0] ^= 0x0101_0000 ^ param;
        Some(Self {
            h,
            t: 0,
            buf: [0; BLOCK_BYTES],
            filled: 0,
            out_len,
        })
    }

    /// Absorbs `data`.
    pub(crate) fn update(&mut self, mut data: &[u8]) {
        while !data.is_empty() {
            if self.filled == BLOCK_BYTES {
                // A full buffer is compressed only once more input follows it.
                self.t = self.t.wrapping_add(BLOCK_BYTES as u64);
                compress(&mut self.h, &self.buf, self.t, false);
                self.filled = 0;
            }
            let room = BLOCK_BYTES - self.filled;
            let take = room.min(data.len());
            let (head, rest) = data.split_at(take);
            if let Some(slot) = self.buf.get_mut(self.filled..self.filled + take) {
                slot.copy_from_slice(head);
            }
            self.filled += take;
            data = rest;
        }
    }

    /// Writes the hash into `out`, which must be `out_len` bytes long (else nothing is
    /// written and `false` is returned), and wipes the hasher.
    pub(crate) fn finalize_into(mut self, out: &mut [u8]) -> bool {
        if out.len() != self.out_len {
            return false;
        }
        self.t = self.t.wrapping_add(self.filled as u64);
        if let Some(tail) = self.buf.get_mut(self.filled..) {
            tail.fill(0);
        }
        compress(&mut self.h, &self.buf, self.t, true);
        for (chunk, word) in out.chunks_mut(8).zip(self.h) {
            for (o, b) in chunk.iter_mut().zip(word.to_le_bytes()) {
                *o = b;
            }
        }
        true
    }
}

/// The mixing function G (RFC 7693 §3.1).
#[inline(always)]
fn g(a: &mut u64, b: &mut u64, c: &mut u64, d: &mut u64, x: u64, y: u64) {
    *a = a.wrapping_add(*b).wrapping_add(x);
    *d = (*d ^ *a).rotate_right(32);
    *c = c.wrapping_add(*d);
    *b = (*b ^ *c).rotate_right(24);
    *a = a.wrapping_add(*b).wrapping_add(y);
    *d = (*d ^ *a).rotate_right(16);
    *c = c.wrapping_add(*d);
    *b = (*b ^ *c).rotate_right(63);
}

/// The compression function F (RFC 7693 §3.2) over one block, `t` bytes in.
fn compress(h: &mut [u64; 8], block: &[u8; BLOCK_BYTES], t: u64, last: bool) {
    let mut m = [0u64; 16];
    for (word, bytes) in m.iter_mut().zip(block.chunks_exact(8)) {
        let mut le = [0u8; 8];
        le.copy_from_slice(bytes);
        *word = u64::from_le_bytes(le);
    }
    let mut v = [0u64; 16];
    let (low, high) = v.split_at_mut(8);
    low.copy_from_slice(h);
    high.copy_from_slice(&IV);
    v[12] ^= t;
    if last {
        v[14] = !v[14];
    }
    // SIGMA's entries are below 16, so `get` never misses.
    let word = |i: u8| m.get(usize::from(i)).copied().unwrap_or(0);
    for s in SIGMA {
        let [v0, v1, v2, v3, v4, v5, v6, v7, v8, v9, v10, v11, v12, v13, v14, v15] = &mut v;
        let [s0, s1, s2, s3, s4, s5, s6, s7, s8, s9, s10, s11, s12, s13, s14, s15] = s;
        g(v0, v4, v8, v12, word(s0), word(s1));
        g(v1, v5, v9, v13, word(s2), word(s3));
        g(v2, v6, v10, v14, word(s4), word(s5));
        g(v3, v7, v11, v15, word(s6), word(s7));
        g(v0, v5, v10, v15, word(s8), word(s9));
        g(v1, v6, v11, v12, word(s10), word(s11));
        g(v2, v7, v8, v13, word(s12), word(s13));
        g(v3, v4, v9, v14, word(s14), word(s15));
    }
    let (low, high) = v.split_at(8);
    for ((hi, l), r) in h.iter_mut().zip(low).zip(high) {
        *hi ^= l ^ r;
    }
    m.zeroize();
    v.zeroize();
}

#[cfg(test)]
mod tests {
    use super::*;
    use blake2::digest::{Update, VariableOutput};
    use rand_chacha::rand_core::{RngCore, SeedableRng};

    fn ours(parts: &[&[u8]], out_len: usize) -> Vec<u8> {
        let mut h = Blake2b::new(out_len).unwrap();
        parts.iter().for_each(|p| h.update(p));
        let mut out = vec![0u8; out_len];
        assert!(h.finalize_into(&mut out));
        out
    }

    #[test]
    fn rfc7693_appendix_a() {
        assert_eq!(
            hex::encode(ours(&[b"abc"], 64)),
            "ba80a53f981c4d0d6a2797b69f12f6e94c212f14685ac4b74b12bb6fdbffa2d1\
             7d87c5392aab792dc252d5de4533cc9518d38aa8dbf1925ab92386edd4009923"
        );
    }

    /// Every output length, message lengths around the block boundaries, and the message
    /// split at random points, against the `blake2` crate.
    #[test]
    fn agrees_with_the_blake2_crate() {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(7);
        let mut data = vec![0u8; 3 * BLOCK_BYTES + 5];
        rng.fill_bytes(&mut data);
        for len in (0..=data.len()).filter(|n| n % 128 < 3 || n % 128 > 125 || n % 37 == 0) {
            for out_len in [1, 4, 16, 31, 32, 33, 63, 64] {
                let msg = &data[..len];
                let cut = (rng.next_u32() as usize) % (len + 1);
                let mut theirs = blake2::Blake2bVar::new(out_len).unwrap();
                theirs.update(msg);
                let mut expected = vec![0u8; out_len];
                theirs.finalize_variable(&mut expected).unwrap();
                assert_eq!(ours(&[msg], out_len), expected, "len {len} out {out_len}");
                let (a, b) = msg.split_at(cut);
                assert_eq!(ours(&[a, &[], b], out_len), expected, "split at {cut}");
            }
        }
    }

    #[test]
    fn refuses_output_lengths_outside_1_to_64() {
        assert!(Blake2b::new(0).is_none());
        assert!(Blake2b::new(65).is_none());
        let mut out = [0u8; 32];
        assert!(!Blake2b::new(64).unwrap().finalize_into(&mut out));
        assert_eq!(out, [0; 32]);
    }

    #[test]
    fn zeroize_wipes_state_and_buffer() {
        let mut h = Blake2b::new(64).unwrap();
        h.update(b"correct horse battery staple");
        h.zeroize();
        assert_eq!((h.h, h.t, h.filled, h.out_len), ([0; 8], 0, 0, 0));
        assert!(h.buf.iter().all(|&b| b == 0));
    }
}

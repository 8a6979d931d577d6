//! Poly1305 (RFC 8439 §2.5) in five 26-bit limbs, poly1305-donna's 32-bit arithmetic (the
//! same as RustCrypto's `poly1305` "soft" backend), plus the block-group scheme that the
//! simd128 kernel of [`super::simd`] runs.
//!
//! Groups: Horner's rule over 16 blocks `m_0..m_15`, `h ← (h + m_i)·r`, is the same as
//! `h ← (h + m_0)·r^16 + m_1·r^15 + … + m_15·r`. With `r^1..r^16` computed once per message,
//! the 16 products are independent (four SIMD lanes at a time) and are summed in 64-bit
//! accumulators without any reduction in between; one carry per group brings `h` back to
//! 26-bit limbs. Headroom: power limbs are below 2^26 + 2^13 and message limbs below 2^26
//! (2^27 + 2^13 for the first block, which carries `h`), so each of the 5·16 products that
//! meet in one accumulator is below 2^27.1 · 5·(2^26 + 2^13) < 2^55.5 and their sum below
//! 2^61.9 < 2^64.
//!
//! Constant time: no branch and no index depends on the key, `h` or the message (only on
//! lengths). Zeroization: [`State`] holds `r`, the pad `s`, `h` and the powers of `r`, and
//! wipes them all on drop (`ZeroizeOnDrop`); the limb arrays of the arithmetic are values
//! in WASM locals.

use zeroize::{Zeroize, ZeroizeOnDrop};

/// Bytes of one Poly1305 block.
pub(super) const BLOCK_BYTES: usize = 16;
/// Bytes of one group: 16 blocks (the powers `r^1..r^16`).
pub(super) const GROUP_BYTES: usize = 16 * BLOCK_BYTES;
/// Bytes of one quad: the 4 blocks that share one SIMD multiply (one lane each).
pub(super) const QUAD_BYTES: usize = 4 * BLOCK_BYTES;
/// A 26-bit limb.
const MASK26: u32 = 0x3ff_ffff;
/// The `2^128` bit of a full block (RFC 8439 §2.5.1: "add one bit beyond the number of
/// octets"), in limb 4.
pub(super) const HIBIT: u32 = 1 << 24;

/// A number modulo 2^130 − 5 in 26-bit limbs, least significant first (partially reduced:
/// a limb may exceed 26 bits by a few carries).
pub(super) type Limbs = [u32; 5];

/// The multipliers of one group, quad by quad: `table[q][j][l]` is limb `j` of `r^(16 − 4q −
/// l)` for `j < 5`, and 5 times limb `j − 4` of it for `j ≥ 5` (the `2^130 ≡ 5` fold); lane
/// `l` of quad `q` is block `4q + l` of the group.
pub(super) type Table = [[[u32; 4]; 9]; 4];

/// The little-endian `u32` at `at` in `bytes`, 0 past the end (lengths are public).
fn word(bytes: &[u8], at: usize) -> u32 {
    bytes
        .get(at..at + 4)
        .and_then(|s| <[u8; 4]>::try_from(s).ok())
        .map_or(0, u32::from_le_bytes)
}

/// The limbs of one 16-byte block plus `hibit` (RFC 8439 §2.5.1).
pub(super) fn block_limbs(block: &[u8], hibit: u32) -> Limbs {
    [
        word(block, 0) & MASK26,
        (word(block, 3) >> 2) & MASK26,
        (word(block, 6) >> 4) & MASK26,
        (word(block, 9) >> 6) & MASK26,
        (word(block, 12) >> 8) | hibit,
    ]
}

/// Carries 64-bit limb sums (each below 2^62) back to 26-bit limbs, folding the carry out
/// of limb 4 into limb 0 times 5 (2^130 ≡ 5). Limb 1 may end up to 2^13 over 26 bits.
pub(super) fn carry(d: [u64; 5]) -> Limbs {
    let [mut d0, mut d1, mut d2, mut d3, mut d4] = d;
    let m = u64::from(MASK26);
    d1 = d1.wrapping_add(d0 >> 26);
    d0 &= m;
    d2 = d2.wrapping_add(d1 >> 26);
    d1 &= m;
    d3 = d3.wrapping_add(d2 >> 26);
    d2 &= m;
    d4 = d4.wrapping_add(d3 >> 26);
    d3 &= m;
    d0 = d0.wrapping_add((d4 >> 26).wrapping_mul(5));
    d4 &= m;
    d1 = d1.wrapping_add(d0 >> 26);
    d0 &= m;
    // Every value now fits in 32 bits: d0, d2..d4 < 2^26 and d1 < 2^26 + 2^13.
    [d0 as u32, d1 as u32, d2 as u32, d3 as u32, d4 as u32]
}

/// `a · b mod 2^130 − 5`, partially reduced; `a` below 2^27.1 and `b` below 2^26 + 2^13 per
/// limb, so that every sum of five products fits in 64 bits.
pub(super) fn mul(a: &Limbs, b: &Limbs) -> Limbs {
    let p = |x: u32, y: u32| u64::from(x) * u64::from(y);
    let [a0, a1, a2, a3, a4] = *a;
    let [b0, b1, b2, b3, b4] = *b;
    let (s1, s2, s3, s4) = (b1 * 5, b2 * 5, b3 * 5, b4 * 5);
    carry([
        p(a0, b0) + p(a1, s4) + p(a2, s3) + p(a3, s2) + p(a4, s1),
        p(a0, b1) + p(a1, b0) + p(a2, s4) + p(a3, s3) + p(a4, s2),
        p(a0, b2) + p(a1, b1) + p(a2, b0) + p(a3, s4) + p(a4, s3),
        p(a0, b3) + p(a1, b2) + p(a2, b1) + p(a3, b0) + p(a4, s4),
        p(a0, b4) + p(a1, b3) + p(a2, b2) + p(a3, b1) + p(a4, b0),
    ])
}

/// Limb-wise sum (inputs below 2^27 per limb, so no overflow).
pub(super) fn add(a: &Limbs, b: &Limbs) -> Limbs {
    let mut out = *a;
    out.iter_mut().zip(b).for_each(|(o, x)| *o += x);
    out
}

/// The group table of `r` (see [`Table`]): `r^1..r^16`, then arranged lane by lane.
fn table(r: &Limbs) -> Table {
    let mut powers = [[0u32; 5]; 16];
    let mut p = *r;
    for slot in &mut powers {
        *slot = p;
        p = mul(&p, r);
    }
    p.zeroize();
    let mut table = [[[0u32; 4]; 9]; 4];
    for (q, quad) in table.iter_mut().enumerate() {
        for (j, lanes) in quad.iter_mut().enumerate() {
            for (l, lane) in lanes.iter_mut().enumerate() {
                // Block 4q + l of the group is multiplied by r^(16 − 4q − l), powers[15 − 4q − l].
                let power = powers.get(15 - 4 * q - l);
                *lane = match j {
                    0..=4 => power.and_then(|x| x.get(j)).copied().unwrap_or(0),
                    _ => power.and_then(|x| x.get(j - 4)).map_or(0, |x| x * 5),
                };
            }
        }
    }
    powers.zeroize();
    table
}

/// One Poly1305 computation: the clamped `r`, the pad `s`, the accumulator `h` and, from
/// the first whole group on, the group table of `r`.
#[derive(Zeroize, ZeroizeOnDrop)]
pub(super) struct State {
    r: Limbs,
    s: [u32; 4],
    h: Limbs,
    table: Table,
    table_ready: bool,
}

impl State {
    /// Clamps `r` (RFC 8439 §2.5: `r &= 0x0ffffffc0ffffffc0ffffffc0fffffff`), keeps `s`.
    pub(super) fn new(key: &[u8; 32]) -> Self {
        Self {
            r: [
                word(key, 0) & 0x3ff_ffff,
                (word(key, 3) >> 2) & 0x3ff_ff03,
                (word(key, 6) >> 4) & 0x3ff_c0ff,
                (word(key, 9) >> 6) & 0x3f0_3fff,
                (word(key, 12) >> 8) & 0x00f_ffff,
            ],
            s: [word(key, 16), word(key, 20), word(key, 24), word(key, 28)],
            h: [0; 5],
            table: [[[0; 4]; 9]; 4],
            table_ready: false,
        }
    }

    /// Absorbs whole blocks, each with the 2^128 bit: whole groups through the group
    /// kernel, the rest one block at a time. `data` is a multiple of 16 bytes long; a short
    /// tail is ignored (the callers pad it).
    fn blocks(&mut self, data: &[u8]) {
        let grouped = data.len() - data.len() % GROUP_BYTES;
        let (groups, rest) = data.split_at(grouped);
        if !groups.is_empty() {
            if !self.table_ready {
                self.table = table(&self.r);
                self.table_ready = true;
            }
            groups_kernel(&mut self.h, &self.table, groups);
        }
        for block in rest.chunks_exact(BLOCK_BYTES) {
            self.h = mul(&add(&self.h, &block_limbs(block, HIBIT)), &self.r);
        }
    }

    /// Absorbs `data` zero-padded to a multiple of 16 bytes, every block with the 2^128 bit
    /// (RFC 8439 §2.8: `pad16`).
    pub(super) fn update_padded(&mut self, data: &[u8]) {
        let whole = data.len() - data.len() % BLOCK_BYTES;
        let (blocks, tail) = data.split_at(whole);
        self.blocks(blocks);
        if !tail.is_empty() {
            let mut last = [0u8; BLOCK_BYTES];
            last.iter_mut().zip(tail).for_each(|(d, s)| *d = *s);
            self.blocks(&last);
        }
    }

    /// Absorbs all of `msg` as a complete message (RFC 8439 §2.5.1): a final partial block
    /// gets a 0x01 byte after it and no 2^128 bit.
    pub(super) fn update_unpadded(&mut self, msg: &[u8]) {
        let whole = msg.len() - msg.len() % BLOCK_BYTES;
        let (blocks, tail) = msg.split_at(whole);
        self.blocks(blocks);
        if !tail.is_empty() {
            let mut last = [0u8; BLOCK_BYTES];
            last.iter_mut()
                .zip(tail.iter().chain([1u8].iter()))
                .for_each(|(d, s)| *d = *s);
            self.h = mul(&add(&self.h, &block_limbs(&last, 0)), &self.r);
        }
    }

    /// `(h mod 2^130 − 5) + s mod 2^128`, little-endian (poly1305-donna's finish).
    pub(super) fn finalize(self) -> [u8; 16] {
        let [h0, h1, h2, h3, h4] = self.h;
        // Full carry: every limb below 2^26 (limb 0 possibly up to 2^26 + 4).
        let h = carry([h0, h1, h2, h3, h4].map(u64::from));
        let h = carry(h.map(u64::from));
        // g = h + 5 − 2^130; keep g when it is not negative (h ≥ p), else h.
        let [mut g0, mut g1, mut g2, mut g3, mut g4] = [0u32; 5];
        let mut c = 5u32;
        for (g, x) in [&mut g0, &mut g1, &mut g2, &mut g3, &mut g4]
            .into_iter()
            .zip(h)
        {
            let v = x.wrapping_add(c);
            c = v >> 26;
            *g = v & MASK26;
        }
        g4 = g4.wrapping_add(c << 26).wrapping_sub(1 << 26);
        let keep_g = (g4 >> 31).wrapping_sub(1); // all ones when g4 ≥ 0
        let g = [g0, g1, g2, g3, g4 & MASK26];
        let mut out = [0u32; 5];
        for ((o, x), y) in out.iter_mut().zip(h).zip(g) {
            *o = (x & !keep_g) | (y & keep_g);
        }
        let [o0, o1, o2, o3, o4] = out;
        // The 130-bit value as four 32-bit words (mod 2^128), plus s with carries.
        let words = [
            o0 | (o1 << 26),
            (o1 >> 6) | (o2 << 20),
            (o2 >> 12) | (o3 << 14),
            (o3 >> 18) | (o4 << 8),
        ];
        let mut tag = [0u8; 16];
        let mut acc = 0u64;
        for ((t, w), s) in tag.chunks_exact_mut(4).zip(words).zip(self.s) {
            acc = acc + u64::from(w) + u64::from(s);
            t.copy_from_slice(&(acc as u32).to_le_bytes());
            acc >>= 32;
        }
        tag
    }
}

/// Absorbs whole groups of 16 blocks with the table of `r`.
#[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
fn groups_kernel(h: &mut Limbs, table: &Table, groups: &[u8]) {
    super::simd::groups(h, table, groups);
}

/// The group scheme of the simd128 kernel, lane by lane in scalar code: the same sums in
/// the same 64-bit accumulators, so that native tests check the scheme and its headroom.
#[cfg(not(all(target_arch = "wasm32", target_feature = "simd128")))]
fn groups_kernel(h: &mut Limbs, table: &Table, groups: &[u8]) {
    for group in groups.chunks_exact(GROUP_BYTES) {
        let mut d = [0u64; 5];
        let mut carried = *h;
        for (quad, multipliers) in group.chunks_exact(QUAD_BYTES).zip(table) {
            for (l, block) in quad.chunks_exact(BLOCK_BYTES).enumerate() {
                let m = add(&block_limbs(block, HIBIT), &carried);
                carried = [0; 5];
                let lane: [u32; 9] = multipliers.map(|x| x.get(l).copied().unwrap_or(0));
                let [r0, r1, r2, r3, r4, s1, s2, s3, s4] = lane;
                let [m0, m1, m2, m3, m4] = m.map(u64::from);
                let coefficients = [
                    [r0, s4, s3, s2, s1],
                    [r1, r0, s4, s3, s2],
                    [r2, r1, r0, s4, s3],
                    [r3, r2, r1, r0, s4],
                    [r4, r3, r2, r1, r0],
                ];
                for (dk, c) in d.iter_mut().zip(coefficients) {
                    let [c0, c1, c2, c3, c4] = c.map(u64::from);
                    *dk += m0 * c0 + m1 * c1 + m2 * c2 + m3 * c3 + m4 * c4;
                }
            }
        }
        *h = carry(d);
    }
}

//! The per-master watermark key and the per-row keystream (docs/watermark.md
//! section 3).
//!
//! Row `y` of an image is driven by the ChaCha8 stream with the key as the
//! 256-bit ChaCha key, the 64-bit nonce ("stream") equal to `y`, and the 64-bit
//! block counter starting at 0: `rand_chacha::ChaCha8Rng` seeded with the key,
//! `set_stream(y)`, `set_word_pos(0)`. Each row therefore stands alone, which is
//! what lets a streaming service mark any row band in any order.
//!
//! Keystream bytes of one row, in order:
//! - bytes 0..316: 79 little-endian u32 words that shuffle the 80 payload bits
//!   into this row's bit permutation (Fisher-Yates, see [`RowStream::load`]);
//! - bytes 316..320: unused, so the chips start on a ChaCha block boundary;
//! - bytes 320..: one chip per pixel position, bit `x % 8` of byte
//!   `320 + x / 8` (1 is chip +1, 0 is chip -1), for every pixel of the row
//!   whatever its alpha. Consuming by position keeps detection aligned when
//!   the suspect's alpha differs from the original's (JPEG, re-thresholding).
//!
//! Natively the stream comes from `rand_chacha`. The WASM build (simd128) takes the same
//! bytes from `iki_crypto::chacha8_keystream`, four blocks per vector, because rand_chacha
//! has no wasm32 SIMD backend; [`keystream_cross_check`] holds the two together inside the
//! module.

use core::fmt;

use rand_chacha::rand_core::{RngCore, SeedableRng};
use rand_chacha::ChaCha8Rng;
use zeroize::{Zeroize, ZeroizeOnDrop, Zeroizing};

use crate::payload::PAYLOAD_BITS;

/// Length of a watermark key in bytes.
pub const KEY_BYTES: usize = 32;

/// Keystream bytes before the first chip: 80 words, the first 79 used.
const PRELUDE_BYTES: usize = PAYLOAD_BITS * 4;
/// The ChaCha block of the first chip (blocks are 64 bytes).
const CHIP_BLOCK: u32 = (PRELUDE_BYTES / 64) as u32;

/// A per-master 256-bit watermark secret.
///
/// The bytes are zeroized when the key is dropped, and `Debug` prints only
/// `WatermarkKey(..)`. The service derives it with HKDF (docs/format.md
/// section 8, info `watermark-key-v1`); this crate never derives or stores it.
#[derive(Zeroize, ZeroizeOnDrop)]
pub struct WatermarkKey([u8; KEY_BYTES]);

impl WatermarkKey {
    /// Wraps 32 secret bytes. The caller should zeroize its own copy.
    #[must_use]
    pub fn from_bytes(bytes: [u8; KEY_BYTES]) -> Self {
        Self(bytes)
    }
}

impl fmt::Debug for WatermarkKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("WatermarkKey(..)")
    }
}

/// Whether rows take their keystream from `iki_crypto::chacha8_keystream`.
const VECTOR_STREAM: bool = cfg!(all(target_arch = "wasm32", target_feature = "simd128"));

/// The keystream of one row at a time: its bit permutation and its chips.
///
/// `rand_chacha` 0.3 does not zeroize its state (which holds the key words),
/// so [`Drop`] overwrites the generator with a zero-keyed one and wipes the
/// buffers; `black_box` keeps the compiler from eliding those stores.
pub(crate) struct RowStream {
    rng: ChaCha8Rng,
    /// The key, for `iki_crypto::chacha8_keystream` ([`VECTOR_STREAM`]; zero otherwise).
    key: Zeroizing<[u8; KEY_BYTES]>,
    prelude: Zeroizing<[u8; PRELUDE_BYTES]>,
    /// `perm[k]` is the payload bit carried by pixel positions `x % 80 == k`.
    pub(crate) perm: [u8; PAYLOAD_BITS],
    /// Chip bits of the row, `ceil(width / 8)` bytes, LSB first.
    pub(crate) chips: Zeroizing<Vec<u8>>,
}

impl RowStream {
    /// A stream for rows of `width` pixels. Allocates `ceil(width / 8)` bytes;
    /// callers check `width` against the buffer length first.
    pub(crate) fn new(key: &WatermarkKey, width: usize) -> Self {
        Self {
            rng: ChaCha8Rng::from_seed(if VECTOR_STREAM {
                [0u8; KEY_BYTES]
            } else {
                key.0
            }),
            key: Zeroizing::new(if VECTOR_STREAM {
                key.0
            } else {
                [0u8; KEY_BYTES]
            }),
            prelude: Zeroizing::new([0u8; PRELUDE_BYTES]),
            perm: [0u8; PAYLOAD_BITS],
            chips: Zeroizing::new(vec![0u8; width.div_ceil(8)]),
        }
    }

    /// Loads row `row`: derives its permutation and fills its chips.
    ///
    /// The permutation starts as the identity; for `k` from 79 down to 1,
    /// word `79 - k` (u32 little-endian at byte `4 * (79 - k)`) picks
    /// `j = (word * (k + 1)) >> 32` and `perm[k]` swaps with `perm[j]`. The
    /// multiply-shift bias is below `80 / 2^32`.
    pub(crate) fn load(&mut self, row: u32) {
        if VECTOR_STREAM {
            let stream = u64::from(row);
            iki_crypto::chacha8_keystream(&self.key, stream, 0, &mut self.prelude[..]);
            iki_crypto::chacha8_keystream(&self.key, stream, CHIP_BLOCK, &mut self.chips);
        } else {
            self.rng.set_stream(u64::from(row));
            self.rng.set_word_pos(0);
            self.rng.fill_bytes(&mut self.prelude[..]);
            self.rng.fill_bytes(&mut self.chips);
        }
        for (i, slot) in self.perm.iter_mut().enumerate() {
            *slot = i as u8;
        }
        for (i, word) in self
            .prelude
            .chunks_exact(4)
            .take(PAYLOAD_BITS - 1)
            .enumerate()
        {
            let k = PAYLOAD_BITS - 1 - i;
            let w = word
                .iter()
                .rev()
                .fold(0u64, |acc, &b| (acc << 8) | u64::from(b));
            let j = ((w * (k as u64 + 1)) >> 32) as usize;
            // j <= k < 80 by construction, so swap cannot go out of bounds.
            self.perm.swap(k, j);
        }
    }
}

impl Drop for RowStream {
    fn drop(&mut self) {
        self.rng = ChaCha8Rng::from_seed([0u8; KEY_BYTES]);
        core::hint::black_box(&mut self.rng);
        self.perm.zeroize();
    }
}

/// Loads rows of many widths and row numbers (up to `u32::MAX`) under a key from `seed` and
/// compares their prelude and chips with `rand_chacha`'s, and `iki_crypto::chacha8_keystream`
/// at other block offsets (partial groups of four blocks, a counter that carries into its high
/// word) with `rand_chacha` too; true when every byte agrees. In the WASM build this holds the
/// simd128 stream to rand_chacha inside the module; natively it checks the scalar ChaCha8.
#[must_use]
pub fn keystream_cross_check(seed: u64) -> bool {
    let key: [u8; KEY_BYTES] = core::array::from_fn(|i| (seed >> (8 * (i % 8))) as u8 ^ i as u8);
    let rows = [0u32, 1, 2, 79, 4096, 1 << 31, u32::MAX];
    let widths = [1usize, 7, 8, 9, 80, 511, 2048, 4097];
    let mut rng = ChaCha8Rng::from_seed(key);
    let rows_agree = widths.iter().all(|&width| {
        let mut stream = RowStream::new(&WatermarkKey::from_bytes(key), width);
        rows.iter().all(|&row| {
            stream.load(row);
            let mut prelude = [0u8; PRELUDE_BYTES];
            let mut chips = vec![0u8; width.div_ceil(8)];
            rng.set_stream(u64::from(row));
            rng.set_word_pos(0);
            rng.fill_bytes(&mut prelude);
            rng.fill_bytes(&mut chips);
            prelude == *stream.prelude && chips == *stream.chips
        })
    });
    let offsets = [
        (0u32, 1usize),
        (3, 300),
        (5, 256),
        (7, 1000),
        (u32::MAX - 5, 700),
    ];
    let offsets_agree = offsets.iter().all(|&(block, len)| {
        let mut ours = vec![0u8; len];
        let mut theirs = vec![0u8; len];
        iki_crypto::chacha8_keystream(&key, seed, block, &mut ours);
        rng.set_stream(seed);
        rng.set_word_pos(u128::from(block) * 16);
        rng.fill_bytes(&mut theirs);
        ours == theirs
    });
    rows_agree && offsets_agree
}

#[cfg(test)]
mod tests;

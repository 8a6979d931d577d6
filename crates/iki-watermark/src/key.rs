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

use core::fmt;

use rand_chacha::rand_core::{RngCore, SeedableRng};
use rand_chacha::ChaCha8Rng;
use zeroize::{Zeroize, ZeroizeOnDrop, Zeroizing};

use crate::payload::PAYLOAD_BITS;

/// Length of a watermark key in bytes.
pub const KEY_BYTES: usize = 32;

/// Keystream bytes before the first chip: 80 words, the first 79 used.
const PRELUDE_BYTES: usize = PAYLOAD_BITS * 4;

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

/// The keystream of one row at a time: its bit permutation and its chips.
///
/// `rand_chacha` 0.3 does not zeroize its state (which holds the key words),
/// so [`Drop`] overwrites the generator with a zero-keyed one and wipes the
/// buffers; `black_box` keeps the compiler from eliding those stores.
pub(crate) struct RowStream {
    rng: ChaCha8Rng,
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
            rng: ChaCha8Rng::from_seed(key.0),
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
        self.rng.set_stream(u64::from(row));
        self.rng.set_word_pos(0);
        self.rng.fill_bytes(&mut self.prelude[..]);
        self.rng.fill_bytes(&mut self.chips);
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

#[cfg(test)]
mod tests;

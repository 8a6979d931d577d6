//! [`cross_check`]: the build's tokenizer against the scalar one, inside the build, so that
//! the WASM module (whose tokenizer is [`super::vectors`]) can prove its own streams.

use super::{tokenize, PixelEncoder};

/// A SplitMix64 step (the inputs need only be varied and repeatable).
fn next(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// `len` bytes of pixels with what the encoder meets in a copy: flat areas moved by +-2 in
/// R, G and B (a watermark on flat art), long runs, repeats of the row above, and noise.
fn pixels(state: &mut u64, len: usize, row_pixels: usize) -> Vec<u8> {
    let mut out: Vec<u8> = Vec::with_capacity(len);
    let base = next(state) as u32;
    while out.len() < len {
        let area = (next(state) % 300 + 1) as usize;
        let kind = next(state) % 4;
        for _ in 0..area {
            let at = out.len();
            let word = match kind {
                // A flat colour, each channel moved by -2, 0 or +2.
                0 => {
                    let r = next(state);
                    let mut px = base.to_le_bytes();
                    for (k, b) in px.iter_mut().take(3).enumerate() {
                        *b = b
                            .wrapping_add(((r >> (2 * k)) % 3) as u8 * 2)
                            .wrapping_sub(2);
                    }
                    u32::from_le_bytes(px)
                }
                // A run of one colour.
                1 => base,
                // The row above, where there is one.
                2 => match out
                    .get(at.wrapping_sub(row_pixels * 4)..)
                    .and_then(|s| s.get(..4))
                {
                    Some(&[a, b, c, d]) => u32::from_le_bytes([a, b, c, d]),
                    _ => base,
                },
                _ => next(state) as u32,
            };
            out.extend_from_slice(&word.to_le_bytes());
        }
    }
    out.truncate(len);
    out
}

/// Encodes pseudo-random pixels from `seed` (edge sizes, rows at and past the window, tails
/// shorter than a pixel, more than one block) with this build's encoder and with one using
/// the scalar tokenizer; true when every stream is the same. In WASM the build's encoder uses
/// the simd128 tokenizer; natively both are the scalar one.
#[must_use]
pub fn cross_check(seed: u64) -> bool {
    let mut state = seed;
    let mut built = PixelEncoder::default();
    let mut scalar = PixelEncoder::with(tokenize);
    // (bytes, row bytes): no rows, short rows, rows the candidates use (8 to 8191 pixels),
    // rows past the window, rows not of whole pixels, and more than one 1 MiB block.
    let shapes: [(usize, usize); 14] = [
        (0, 4),
        (1, 4),
        (4, 4),
        (35, 4),
        (64, 16),
        (4096, 32),
        (4099, 32),
        (9 * 64 * 4, 9 * 4),
        (20_000, 400),
        (50_000, 1002),
        (8191 * 4 * 3, 8191 * 4),
        (8192 * 4 * 3, 8192 * 4),
        (100_003, 3000),
        ((1 << 20) + 9000, 4000),
    ];
    shapes.iter().all(|&(len, row)| {
        let data = pixels(&mut state, len, (row / 4).max(1));
        built.encode(&data, row);
        scalar.encode(&data, row);
        built.stream() == scalar.stream()
    })
}

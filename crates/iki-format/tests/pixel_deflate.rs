//! The pixel encoder (`DeflateHint::Pixels`, a license copy's marked rgba8 chunks): every
//! stream is standard raw DEFLATE, read back exactly by miniz_oxide's inflater (iki's
//! `Inflater`) and by an independent one (zlib-rs, zlib's algorithms), on edge lengths,
//! lengths that are not whole pixels, block boundaries, strides at and past DEFLATE's
//! window, marked-looking pixels and a seeded random run of mixed inputs; it is
//! deterministic, never longer than stored blocks, and stored when it would not fit.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

use iki_format::encoding::{Deflater, Inflater};
use iki_format::DeflateHint;

/// The encoder's block length in bytes (pixels.rs `BLOCK_PIXELS` pixels).
const BLOCK: usize = 1 << 20;

/// A 64-bit LCG (Knuth's MMIX constants; its high bits), so a failure replays from its seed.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        self.0 >> 16
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

/// `px` as the watermark moves a visible pixel: R, G and B by +2 (`up`) or -2.
fn marked(px: [u8; 4], up: bool) -> [u8; 4] {
    let m = |c: u8| {
        if up {
            c.saturating_add(2)
        } else {
            c.saturating_sub(2)
        }
    };
    [m(px[0]), m(px[1]), m(px[2]), px[3]]
}

/// zlib-rs's raw inflate of a whole stream that must end exactly at its last byte.
fn zlib_inflate(stream: &[u8], len: usize) -> Vec<u8> {
    let mut inflate = zlib_rs::Inflate::new(false, 15);
    let mut out = vec![0u8; len + 1];
    let status = inflate
        .decompress(stream, &mut out, zlib_rs::InflateFlush::Finish)
        .unwrap();
    assert_eq!(status, zlib_rs::Status::StreamEnd);
    assert_eq!(inflate.total_in() as usize, stream.len(), "input left over");
    out.truncate(inflate.total_out() as usize);
    out
}

/// The pixel stream of `data` (rows of `row_bytes`), checked by both inflaters; never longer
/// than stored blocks.
fn round_trip(data: &[u8], row_bytes: u32) -> Vec<u8> {
    let mut deflater = Deflater::new(1).unwrap();
    let stored = data.len() + 5 * data.len().div_ceil(0xFFFF).max(1);
    let hint = DeflateHint::Pixels { row_bytes };
    let packed = deflater
        .deflate_hinted(data, 2 * stored, hint)
        .unwrap()
        .to_vec();
    assert!(packed.len() <= stored, "{} > stored {stored}", packed.len());
    let mut inflater = Inflater::new();
    assert_eq!(
        inflater.inflate_exact(&packed, data.len()).unwrap(),
        data,
        "miniz_oxide, {} bytes, rows of {row_bytes}",
        data.len()
    );
    assert_eq!(
        zlib_inflate(&packed, data.len()),
        data,
        "zlib-rs, {} bytes",
        data.len()
    );
    // The same bytes from the same deflater (whose buffers now hold this and other streams)
    // and from a new one at another level: copies of one license stay byte-identical.
    deflater
        .deflate_hinted(&[1, 2, 3, 4, 5, 6, 7, 8, 9], 64, hint)
        .unwrap();
    let again = deflater.deflate_hinted(data, 2 * stored, hint).unwrap();
    assert_eq!(again, packed, "deterministic");
    let mut other = Deflater::new(9).unwrap();
    assert_eq!(
        other.deflate_hinted(data, 2 * stored, hint).unwrap(),
        packed
    );
    packed
}

/// `w` x `h` pixels of flat colour areas, transparent bands and a gradient, with the
/// watermark's kind of change: each visible pixel's R, G and B moved by +2 or -2 at random.
fn marked_like(w: usize, h: usize, rng: &mut Rng) -> Vec<u8> {
    let mut out = Vec::with_capacity(w * h * 4);
    for y in 0..h {
        for x in 0..w {
            let px: [u8; 4] = match (x / 37 + y / 23) % 4 {
                0 => [0, 0, 0, 0],
                1 => [200, 80, 40, 255],
                2 => [(x % 256) as u8, (y % 256) as u8, 90, 255],
                _ => [30, 160, 220, 128],
            };
            if px[3] >= 8 {
                out.extend_from_slice(&marked(px, rng.next() & 1 == 1));
            } else {
                out.extend_from_slice(&px);
            }
        }
    }
    out
}

#[test]
fn edge_lengths_round_trip() {
    let mut rng = Rng(0x1234_5678);
    for len in [
        0usize, 1, 2, 3, 4, 5, 7, 8, 9, 12, 13, 255, 256, 257, 260, 1000,
    ] {
        let noise: Vec<u8> = (0..len).map(|_| rng.next() as u8).collect();
        let flat = vec![0xAB; len];
        for stride in [4u32, 8, 12, 64] {
            round_trip(&noise, stride);
            round_trip(&flat, stride);
        }
    }
    // The empty stream is one final fixed block holding end-of-block.
    assert_eq!(round_trip(&[], 4), [0x03, 0x00]);
}

#[test]
fn block_boundaries_round_trip() {
    let mut rng = Rng(99);
    for len in [
        BLOCK - 4,
        BLOCK,
        BLOCK + 4,
        BLOCK + 3,
        2 * BLOCK,
        3 * BLOCK + 100,
    ] {
        let w = 256;
        let mut pixels = marked_like(w, len.div_ceil(w * 4), &mut rng);
        pixels.truncate(len);
        round_trip(&pixels, (w * 4) as u32);
        // A block of incompressible bytes among compressible ones goes as stored blocks.
        let mut mixed = pixels.clone();
        for b in mixed.iter_mut().take(len.min(BLOCK)) {
            *b = rng.next() as u8;
        }
        round_trip(&mixed, (w * 4) as u32);
    }
}

#[test]
fn strides_past_the_window_round_trip() {
    let mut rng = Rng(7);
    // 8191 pixels: the pixel above-left is 8192 pixels (32768 bytes) back, the farthest
    // DEFLATE reaches; wider rows are matched only within the row.
    for w in [8191usize, 8192, 8193, 9000] {
        let pixels = marked_like(w, 6, &mut rng);
        round_trip(&pixels, (w * 4) as u32);
        // Rows that repeat exactly.
        let row: Vec<u8> = (0..w * 4).map(|_| rng.next() as u8).collect();
        let rows: Vec<u8> = row.iter().cycle().take(w * 4 * 3).copied().collect();
        let packed = round_trip(&rows, (w * 4) as u32);
        if w < 8192 {
            assert!(packed.len() < rows.len() / 2, "{w}: the rows above matched");
        } else {
            assert!(packed.len() > rows.len() / 2, "{w}: no match a row up");
        }
    }
}

#[test]
fn marked_pixels_compress() {
    let mut rng = Rng(3);
    let (w, h) = (512, 512);
    let pixels = marked_like(w, h, &mut rng);
    let packed = round_trip(&pixels, (w * 4) as u32);
    // A third of the bytes of these bands (a quarter transparent, a gradient band mostly
    // literals, where miniz_oxide's level 1, matching bytes at any offset, writes fewer;
    // bench/RESULTS.md has the atlases, where this encoder writes as few).
    assert!(packed.len() < pixels.len() / 3, "{}", packed.len());
    // Flat colour alone, marked: about five bits a pixel (matches a few pixels to the
    // left), where literal bytes would take 8 or more.
    let flat = marked_like_flat(w, h, &mut rng);
    let packed = round_trip(&flat, (w * 4) as u32);
    assert!(packed.len() < flat.len() / 6, "{}", packed.len());
}

/// One colour, marked as [`marked_like`] marks it.
fn marked_like_flat(w: usize, h: usize, rng: &mut Rng) -> Vec<u8> {
    (0..w * h)
        .flat_map(|_| marked([200, 80, 40, 255], rng.next() & 1 == 1))
        .collect()
}

#[test]
fn streams_that_do_not_fit_become_stored_blocks() {
    let mut rng = Rng(11);
    let noise: Vec<u8> = (0..100_000).map(|_| rng.next() as u8).collect();
    let mut deflater = Deflater::new(1).unwrap();
    let hint = DeflateHint::Pixels { row_bytes: 400 };
    // Noise is stored blocks (each block falls back to them), whatever the bound.
    let packed = round_trip(&noise, 400);
    assert_eq!(packed.len(), noise.len() + 5 * noise.len().div_ceil(0xFFFF));
    let max = noise.len() + 10;
    let packed = deflater.deflate_hinted(&noise, max, hint).unwrap().to_vec();
    assert!(packed.len() <= max);
    assert_eq!(zlib_inflate(&packed, noise.len()), noise);
    // Compressible bytes under too small a bound: stored would not fit either.
    let flat = vec![9u8; 100_000];
    assert!(deflater.deflate_hinted(&flat, 20, hint).is_err());
    // Level 0 stores whatever the hint.
    let mut none = Deflater::new(0).unwrap();
    let stored = none.deflate_hinted(&flat, 200_000, hint).unwrap();
    assert_eq!(stored.len(), flat.len() + 10);
}

#[test]
fn seeded_random_inputs_round_trip() {
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    for round in 0..300 {
        let w = 1 + rng.below(if round % 10 == 0 { 10_000 } else { 300 });
        let row = w * 4;
        let len = rng.below(if round % 25 == 0 { 700_000 } else { 40_000 });
        let mut data: Vec<u8> = Vec::with_capacity(len);
        while data.len() < len {
            let run = 1 + rng.below(600);
            match rng.below(6) {
                0 => data.extend(std::iter::repeat_n(rng.next() as u8, run)),
                1 => {
                    let px = (rng.next() as u32).to_le_bytes();
                    for _ in 0..run / 4 + 1 {
                        data.extend_from_slice(&px);
                    }
                }
                2 if data.len() >= row => {
                    // A copy of the row above, a pixel off now and then.
                    for _ in 0..run {
                        let b = data[data.len() - row];
                        data.push(if rng.below(40) == 0 { b ^ 1 } else { b });
                    }
                }
                3 if data.len() > 8 => {
                    let d = [4, 8, 12, 1, 3][rng.below(5)].min(data.len());
                    for _ in 0..run {
                        data.push(data[data.len() - d]);
                    }
                }
                4 => {
                    let base = (rng.next() as u32).to_le_bytes();
                    for _ in 0..run / 4 + 1 {
                        data.extend_from_slice(&marked(base, rng.next() & 1 == 1));
                    }
                }
                _ => data.extend((0..run).map(|_| rng.next() as u8)),
            }
        }
        data.truncate(len);
        round_trip(&data, row as u32);
    }
}

//! Native speed of embedding and reading, as the license service and the
//! identify endpoint use them. Run with
//! `cargo run --release -p iki-watermark --example throughput`.
//!
//! Embedding is timed in 1 MiB row bands (the default container chunk size:
//! 64 rows of a 4096-wide texture), the way the service streams a copy.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

use std::time::Instant;

use iki_watermark::{detect, embed_rows, WatermarkKey};

const SIDE: u32 = 4096;
const CHUNK_BYTES: usize = 1 << 20;

/// A 4096 x 4096 texture of flat tiles on a gradient, 60 % visible.
fn texture() -> Vec<u8> {
    let mut rgba = Vec::with_capacity((SIDE * SIDE * 4) as usize);
    for y in 0..SIDE {
        for x in 0..SIDE {
            let tile = (x / 97) * 31 + (y / 89) * 17;
            let visible = (x / 97 + y / 89) % 5 < 3;
            rgba.extend_from_slice(&[
                (tile * 7) as u8,
                (tile * 13 + y / 64) as u8,
                (x / 32) as u8,
                if visible { 255 } else { 0 },
            ]);
        }
    }
    rgba
}

fn main() {
    let key = WatermarkKey::from_bytes([0x5A; 32]); // obviously fake
    let original = texture();
    let megapixels = f64::from(SIDE * SIDE) / 1e6;
    let band_bytes = CHUNK_BYTES / (SIDE as usize * 4) * SIDE as usize * 4;
    let mut best_embed = f64::MAX;
    let mut image = original.clone();
    for _ in 0..5 {
        image.copy_from_slice(&original);
        let start = Instant::now();
        for (i, band) in image.chunks_mut(band_bytes).enumerate() {
            let first_row = (i * band_bytes / (SIDE as usize * 4)) as u32;
            embed_rows(&key, 0xC0FF_EE00_1234_5678, SIDE, first_row, band).unwrap();
        }
        best_embed = best_embed.min(start.elapsed().as_secs_f64());
    }
    let mut best_detect = f64::MAX;
    let mut found = None;
    for _ in 0..3 {
        let start = Instant::now();
        let read = detect(&key, SIDE, SIDE, &image).unwrap();
        best_detect = best_detect.min(start.elapsed().as_secs_f64());
        found = read.found;
    }
    assert_eq!(found, Some(0xC0FF_EE00_1234_5678));
    println!(
        "texture: {SIDE}x{SIDE} ({megapixels:.1} MP), bands of {} rows",
        band_bytes / (SIDE as usize * 4)
    );
    println!(
        "embed:   {:.1} ms  = {:.0} MP/s (best of 5)",
        best_embed * 1e3,
        megapixels / best_embed
    );
    println!(
        "detect:  {:.1} ms  = {:.0} MP/s (best of 3)",
        best_detect * 1e3,
        megapixels / best_detect
    );
}

//! Reads that must come back `NotFound`: wrong keys, unmarked textures, and
//! the SPEC's "does not survive" cases. Also measures false accepts and checks
//! that the overall confidence is calibrated (about N(0, 1)) on null reads.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

mod common;

use common::*;
use iki_watermark::{detect, embed_image, WatermarkKey, CONFIDENCE_MIN};

fn random_key(rng: &mut TestRng) -> WatermarkKey {
    let mut bytes = [0u8; 32];
    bytes.iter_mut().for_each(|b| *b = rng.byte());
    WatermarkKey::from_bytes(bytes)
}

#[test]
fn a_different_key_reads_not_found_on_every_atlas() {
    for name in ATLASES {
        let mut t = load_atlas(name);
        embed_image(&key_a(), 0x77, t.width, t.height, &mut t.rgba).unwrap();
        let read = detect(&key_b(), t.width, t.height, &t.rgba).unwrap();
        assert_eq!(read.found, None, "{name}");
        assert!(
            read.confidence < CONFIDENCE_MIN / 2.0,
            "{name}: {}",
            read.confidence
        );
    }
}

#[test]
fn false_accepts_over_1200_null_reads() {
    let mut rng = TestRng(31);
    let mut confidences = Vec::new();
    for i in 0..1200u64 {
        let (w, h) = (64 + rng.below(64) as u32, 64 + rng.below(64) as u32);
        let mut t = flat_art(w, h, i);
        if i % 2 == 0 {
            // Marked under one key, read under another.
            embed_image(&key_a(), rng.next_u64(), w, h, &mut t.rgba).unwrap();
        } else if i % 4 == 1 {
            cut_disc(&mut t, f64::from(w) / 3.0, 0, Some([200, 30, 30]));
        }
        let read = detect(&random_key(&mut rng), w, h, &t.rgba).unwrap();
        assert_eq!(read.found, None, "read {i}: {read:?}");
        confidences.push(read.confidence);
    }
    let n = confidences.len() as f64;
    let mean = confidences.iter().sum::<f64>() / n;
    let sd = (confidences.iter().map(|c| (c - mean).powi(2)).sum::<f64>() / n).sqrt();
    let max = confidences.iter().copied().fold(f64::MIN, f64::max);
    assert!(
        mean.abs() < 0.2 && (0.8..1.2).contains(&sd),
        "mean {mean}, sd {sd}"
    );
    assert!(max < CONFIDENCE_MIN / 2.0, "max {max}");
}

#[test]
fn a_one_pixel_shift_reads_not_found() {
    let mut t = load_atlas(TILES);
    embed_image(&key_a(), 5, t.width, t.height, &mut t.rgba).unwrap();
    let row_bytes = t.width as usize * 4;
    // Right by one pixel: drop each row's last pixel, repeat its first.
    let mut right = t.rgba.clone();
    for row in right.chunks_exact_mut(row_bytes) {
        row.copy_within(..row_bytes - 4, 4);
    }
    // Down by one row.
    let mut down = t.rgba.clone();
    down.copy_within(..t.rgba.len() - row_bytes, row_bytes);
    // A shifted pixel's neighbour taps still see the original chip at that
    // position, with the Laplacian's negative weight: a shift reads the
    // complement of the payload at about 1/8 strength. The complement of a
    // valid payload never has a valid CRC (payload.rs), so it is refused.
    for shifted in [right, down] {
        let read = detect(&key_a(), t.width, t.height, &shifted).unwrap();
        assert_eq!(read.found, None);
        assert!(!read.crc_ok);
        assert!(bit_errors(&read, 5) > 70, "{read:?}");
    }
}

#[test]
fn an_average_of_two_licensed_copies_reads_not_found() {
    let atlas = load_atlas(TILES);
    let (mut one, mut two) = (atlas.clone(), atlas.clone());
    embed_image(
        &key_a(),
        0x1111_2222_3333_4444,
        atlas.width,
        atlas.height,
        &mut one.rgba,
    )
    .unwrap();
    embed_image(
        &key_a(),
        0x9999_AAAA_BBBB_CCCC,
        atlas.width,
        atlas.height,
        &mut two.rgba,
    )
    .unwrap();
    let average: Vec<u8> = one
        .rgba
        .iter()
        .zip(&two.rgba)
        .map(|(a, b)| (u16::from(*a) + u16::from(*b)).div_ceil(2) as u8)
        .collect();
    let read = detect(&key_a(), atlas.width, atlas.height, &average).unwrap();
    assert_eq!(read.found, None, "{read:?}");
    // The shared bits are still strong: it is the balance rule that refuses.
    assert!(read.confidence > CONFIDENCE_MIN);
}

//! Embed-then-read on the four fixture atlases and on synthetic hard cases.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

mod common;

use common::*;
use iki_watermark::{detect, embed_image, CONFIDENCE_MIN, PAYLOAD_BITS};

fn assert_round_trip(name: &str, t: &Texture, license_id: u64) -> f64 {
    let mut marked = t.clone();
    embed_image(&key_a(), license_id, t.width, t.height, &mut marked.rgba).unwrap();
    let read = detect(&key_a(), t.width, t.height, &marked.rgba).unwrap();
    assert_eq!(read.found, Some(license_id), "{name}: {read:?}");
    assert_eq!(bit_errors(&read, license_id), 0, "{name}");
    assert!(read.confidence >= CONFIDENCE_MIN, "{name}");
    let unmarked = detect(&key_a(), t.width, t.height, &t.rgba).unwrap();
    assert_eq!(unmarked.found, None, "{name}: the original must not read");
    read.confidence
}

#[test]
fn every_fixture_atlas_reads_back_exactly() {
    for (i, name) in ATLASES.iter().enumerate() {
        let atlas = load_atlas(name);
        let confidence =
            assert_round_trip(name, &atlas, 0x5EED_0000_0000_0001 ^ ((i as u64) << 40));
        // The atlases have 0.6 to 6.9 million visible pixels: the mark is far
        // above the threshold, which is what leaves room for JPEG and noise.
        assert!(confidence > 20.0 * CONFIDENCE_MIN, "{name}: {confidence}");
    }
}

#[test]
fn synthetic_256_and_64_read_back() {
    assert_round_trip("flat art 256", &flat_art(256, 256, 1), u64::MAX);
    assert_round_trip("flat art 64", &flat_art(64, 64, 2), 0);
}

#[test]
fn a_tiny_texture_reads_right_or_not_at_all() {
    // 64 x 17 carries ~14 pixels per bit: below what reads reliably (SPEC
    // "Watermark", caveat). It may miss, but it must never name a wrong id.
    let mut rng = TestRng(3);
    let mut found = 0;
    for seed in 0..20 {
        let t = flat_art(64, 17, seed);
        let id = rng.next_u64();
        let mut marked = t.clone();
        embed_image(&key_a(), id, 64, 17, &mut marked.rgba).unwrap();
        let read = detect(&key_a(), 64, 17, &marked.rgba).unwrap();
        assert!(read.found.is_none() || read.found == Some(id));
        found += usize::from(read.found.is_some());
    }
    assert!(found > 0, "some tiny reads still succeed");
}

#[test]
fn mostly_transparent_texture_with_colour_bleed_reads_back() {
    // ~12% visible: a disc of radius 100 in 512 x 512, random colour under alpha 0.
    let mut t = flat_art(512, 512, 4);
    cut_disc(&mut t, 100.0, 0, None);
    let mut rng = TestRng(5);
    for px in t.rgba.chunks_exact_mut(4).filter(|p| p[3] == 0) {
        px[..3].copy_from_slice(&[rng.byte(), rng.byte(), rng.byte()]);
    }
    assert_round_trip("disc with bleed", &t, 42);
}

#[test]
fn white_and_black_areas_read_back() {
    // Left half pure white, right half pure black: every mark pixel is clamped
    // on one side, so only half of the moves happen.
    let mut t = flat_art(256, 256, 6);
    for px in t
        .rgba
        .chunks_exact_mut(4)
        .enumerate()
        .filter(|(i, _)| i % 256 < 128)
        .map(|(_, p)| p)
    {
        px[..3].copy_from_slice(&[255, 255, 255]);
    }
    for px in t
        .rgba
        .chunks_exact_mut(4)
        .enumerate()
        .filter(|(i, _)| i % 256 >= 128)
        .map(|(_, p)| p)
    {
        px[..3].copy_from_slice(&[0, 0, 0]);
    }
    assert_round_trip("white and black", &t, 0xFFFF_0000_FFFF_0000);
}

#[test]
fn many_ids_on_a_small_texture() {
    let mut rng = TestRng(8);
    for seed in 0..20 {
        assert_round_trip("flat art 64", &flat_art(64, 64, 100 + seed), rng.next_u64());
        assert_round_trip(
            "flat art 128",
            &flat_art(128, 128, 200 + seed),
            rng.next_u64(),
        );
    }
}

#[test]
fn a_fully_transparent_texture_reads_nothing_and_stays_unchanged() {
    let mut t = flat_art(64, 64, 9);
    cut_disc(&mut t, -1.0, 7, None);
    let before = t.rgba.clone();
    embed_image(&key_a(), 1, 64, 64, &mut t.rgba).unwrap();
    assert_eq!(t.rgba, before);
    let read = detect(&key_a(), 64, 64, &t.rgba).unwrap();
    assert_eq!((read.found, read.visible_pixels), (None, 0));
    assert_eq!(read.bit_confidence, [0.0; PAYLOAD_BITS]);
}

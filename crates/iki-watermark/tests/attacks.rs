//! The mark survives what a leaked texture typically goes through: JPEG at
//! quality 90 and uniform tone changes (SPEC "Watermark", "Survives").
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

mod common;

use common::*;
use iki_watermark::{detect, embed_image, CONFIDENCE_MIN};

const ID: u64 = 0x0BAD_C0DE_1234_5678;

fn marked_tiles() -> Texture {
    let mut t = load_atlas(TILES);
    embed_image(&key_a(), ID, t.width, t.height, &mut t.rgba).unwrap();
    t
}

fn assert_reads(name: &str, t: &Texture) {
    let read = detect(&key_a(), t.width, t.height, &t.rgba).unwrap();
    assert_eq!(read.found, Some(ID), "{name}: {read:?}");
    assert_eq!(bit_errors(&read, ID), 0, "{name}");
    assert!(
        read.confidence > 2.0 * CONFIDENCE_MIN,
        "{name}: {}",
        read.confidence
    );
}

#[test]
fn jpeg_quality_90_reads_exactly() {
    let marked = marked_tiles();
    // A pipeline that keeps the texture's alpha beside a JPEG colour plane.
    assert_reads(
        "jpeg 90, original alpha",
        &jpeg_round_trip(&marked, 90, Some(&marked.rgba)),
    );
    // A JPEG read on its own: no alpha at all, every pixel counts as visible
    // (the fixtures' transparent areas are black, i.e. composited over black).
    assert_reads("jpeg 90, opaque", &jpeg_round_trip(&marked, 90, None));
}

#[test]
fn tone_changes_read_exactly() {
    let marked = marked_tiles();
    assert_reads("brightness x0.9", &tone(&marked, |v| v * 0.9));
    assert_reads("brightness +10", &tone(&marked, |v| v + 10.0));
    assert_reads(
        "contrast 0.8",
        &tone(&marked, |v| (v - 128.0) * 0.8 + 128.0),
    );
}

#[test]
fn mild_noise_reads_exactly() {
    let marked = marked_tiles();
    let mut rng = TestRng(21);
    assert_reads(
        "gaussian noise 2",
        &tone(&marked, |v| v + 2.0 * rng.gauss()),
    );
}

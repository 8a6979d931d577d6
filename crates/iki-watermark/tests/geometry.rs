//! Harder geometry and compositing (docs/watermark.md sections 11.2 and 11.3): a leak turned a
//! few degrees, shrunk to a third and compressed, a tight crop, and a texture drawn small over
//! a checkerboard (the player's preview), each read through a registration on the original
//! and named among the issued licenses; unmarked and foreign textures name nobody.
mod common;

use common::*;
use iki_watermark::{
    embed_image, match_licenses, read_informed, InformedRead, SoftMatch, Suspect, WatermarkKey,
};

const ID: u64 = 0x51a7_e0c1_77d2_9b04;

/// A 1024 x 1024 part of the tiles atlas.
fn original() -> Texture {
    crop(&load_atlas(TILES), 400, 200, 1024, 1024)
}

fn marked(t: &Texture, key: &WatermarkKey, id: u64) -> Texture {
    let mut m = t.clone();
    embed_image(key, id, m.width, m.height, &mut m.rgba).unwrap();
    m
}

fn informed(original: &Texture, leak: &Texture, key: &WatermarkKey) -> InformedRead {
    let mut suspect = Suspect::new(leak.width, leak.height, leak.rgba.clone()).unwrap();
    read_informed(
        key,
        original.width,
        original.height,
        &original.rgba,
        &mut suspect,
        &mut || true,
    )
    .unwrap()
}

/// 100 issued ids, `ID` among them.
fn issued() -> Vec<u64> {
    let mut rng = TestRng(0x0015_51ed);
    let mut ids: Vec<u64> = (0..99).map(|_| rng.next_u64()).collect();
    ids.insert(37, ID);
    ids
}

/// The read scored against the issued licenses.
fn named(read: &InformedRead) -> (Option<u64>, SoftMatch) {
    let d = read.detection.as_ref().expect("registered");
    (
        d.found,
        match_licenses(&d.bit_confidence, d.confidence, &issued(), 2.0),
    )
}

fn assert_named(name: &str, read: &InformedRead) {
    let (found, m) = named(read);
    let names: Vec<u64> = m.named().collect();
    assert!(
        found == Some(ID) || names == [ID],
        "{name}: found {found:?}, named {names:?}, {:?}",
        read.registration
    );
    assert!(found.is_none_or(|f| f == ID), "{name}");
}

#[test]
fn a_turned_shrunk_and_compressed_leak_is_named() {
    let o = original();
    let m = marked(&o, &key_a(), ID);
    // Turned 3 degrees (the centred 90 % kept), resized to a third, JPEG 75.
    let leak = jpeg_round_trip(&scaled(&turned(&m, 3.0, 0.9), 1.0 / 3.0), 75, None);
    let read = informed(&o, &leak, &key_a());
    let r = read.registration.expect("registered");
    // The registration turns the leak's axes back onto the texture's: -3 degrees.
    assert!((r.angle + 3.0).abs() < 0.1, "{r:?}");
    assert!((r.scale_x * 3.0 - 1.0).abs() < 0.01, "{r:?}");
    assert_named("turn 3 + 33 % + JPEG 75", &read);
    // Turned the other way, 5 degrees, and a tight crop: 10 % of the area.
    let tight = crop(&turned(&m, -5.0, 0.9), 200, 300, 324, 324);
    let read = informed(&o, &jpeg_round_trip(&tight, 75, None), &key_a());
    assert!(
        read.registration
            .is_some_and(|r| (r.angle - 5.0).abs() < 0.1),
        "{:?}",
        read.registration
    );
    assert_named("turn -5 + crop 10 % + JPEG 75", &read);
}

#[test]
fn a_tall_leak_turned_five_degrees_with_fill_in_its_corners_is_named() {
    // A 512 x 1024 part turned 5 degrees, the centred 90 % of each side kept: the turn moves
    // the leak's corners about 13 texture pixels past the part's edges (filled with the edge's
    // colour), as the players atlas (1024 x 2048) turned 5 degrees does by 27.
    let o = crop(&load_atlas(TILES), 400, 200, 512, 1024);
    let leak = jpeg_round_trip(&turned(&marked(&o, &key_a(), ID), 5.0, 0.9), 75, None);
    let read = informed(&o, &leak, &key_a());
    let r = read.registration.expect("registered");
    assert!(
        (r.angle + 5.0).abs() < 0.1 && (r.scale_x - 1.0).abs() < 0.005,
        "{r:?}"
    );
    assert_named("tall part turned 5 degrees + JPEG 75", &read);
}

#[test]
fn a_quarter_size_preview_over_a_checkerboard_is_named() {
    // The whole tiles atlas (1988 x 1470) drawn at 25 % over a checkerboard, as a screenshot
    // of a preview: the checkerboard shows through every transparent pixel.
    let atlas = load_atlas(TILES);
    let leak = jpeg_round_trip(
        &over_checkerboard(&scaled(&marked(&atlas, &key_a(), ID), 0.25), 8),
        90,
        None,
    );
    let read = informed(&atlas, &leak, &key_a());
    let r = read.registration.expect("registered");
    assert!(
        (r.scale_x - 0.25).abs() < 0.003 && r.angle.abs() < 0.1,
        "{r:?}"
    );
    assert_named("25 % over a checkerboard", &read);
    // A part enlarged to 300 % over a checkerboard is named too.
    let o = original();
    let m = marked(&o, &key_a(), ID);
    let big = over_checkerboard(&scaled(&crop(&m, 300, 300, 400, 400), 3.0), 24);
    assert_named("300 % over a checkerboard", &informed(&o, &big, &key_a()));
}

#[test]
fn unmarked_and_foreign_textures_name_nobody() {
    let o = original();
    let cases = [
        (
            "unmarked, turned",
            jpeg_round_trip(&scaled(&turned(&o, 3.0, 0.9), 1.0 / 3.0), 75, None),
        ),
        (
            "unmarked over a checkerboard",
            over_checkerboard(&scaled(&o, 0.25), 8),
        ),
        (
            "another master's copy, turned",
            jpeg_round_trip(&turned(&marked(&o, &key_b(), ID), -2.0, 0.9), 75, None),
        ),
    ];
    for (name, leak) in cases {
        let read = informed(&o, &leak, &key_a());
        assert!(
            read.registration.is_some(),
            "{name}: registers (image content only)"
        );
        let (found, m) = named(&read);
        assert_eq!(found, None, "{name}");
        assert_eq!(m.named().count(), 0, "{name}: {:?}", m.candidates.first());
    }
    // A foreign texture (a part of the atlas outside the original), marked under the same
    // key: whatever it registers on, it names nobody.
    let foreign = marked(&crop(&load_atlas(TILES), 1430, 0, 558, 1470), &key_a(), ID);
    let read = informed(&o, &turned(&foreign, 2.0, 0.9), &key_a());
    if read.detection.is_some() {
        let (found, m) = named(&read);
        assert!(
            found.is_none() && m.named().count() == 0,
            "foreign: {:?}",
            read.registration
        );
    }
}

//! Informed reading: a marked texture resized, cropped and compressed, read back given the
//! unmarked original (docs/watermark.md section 11).
mod common;

use std::time::Instant;

use common::*;
use iki_watermark::{embed_image, read_informed, Suspect};

const ID: u64 = 0x0f1e_2d3c_4b5a_6978;

fn marked(t: &Texture) -> Texture {
    let mut m = t.clone();
    embed_image(&key_a(), ID, m.width, m.height, &mut m.rgba).unwrap();
    m
}

fn informed(original: &Texture, leak: &Texture) -> iki_watermark::InformedRead {
    let mut suspect = Suspect::new(leak.width, leak.height, leak.rgba.clone()).unwrap();
    read_informed(&key_a(), original.width, original.height, &original.rgba, &mut suspect, &mut || true).unwrap()
}

#[test]
#[ignore = "experiment"]
fn experiment() {
    let original = load_atlas(TILES);
    let m = marked(&original);
    for (name, leak) in [
        ("scale 90", scaled(&m, 0.9)),
        ("scale 50", scaled(&m, 0.5)),
        ("scale 75", scaled(&m, 0.75)),
        ("scale 125", scaled(&m, 1.25)),
        ("scale 200", scaled(&m, 2.0)),
        ("crop 60", crop(&m, 200, 150, 1540, 1139)),
        ("crop 30", crop(&m, 500, 300, 1089, 805)),
        ("scale 90 jpeg 85", jpeg_round_trip(&scaled(&m, 0.9), 85, None)),
        ("scale 75 crop jpeg 85", jpeg_round_trip(&crop(&scaled(&m, 0.75), 100, 80, 1200, 900), 85, None)),
        ("unmarked crop", crop(&original, 200, 150, 1540, 1139)),
    ] {
        let t = Instant::now();
        let r = informed(&original, &leak);
        println!(
            "{name}: found {:?} conf {:.1} reg {:?} candidates {} in {:.2}s",
            r.detection.as_ref().and_then(|d| d.found),
            r.detection.as_ref().map_or(0.0, |d| d.confidence),
            r.registration,
            r.candidates,
            t.elapsed().as_secs_f64()
        );
    }
}

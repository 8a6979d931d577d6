//! Informed reading (docs/watermark.md section 11): a marked texture resized, cropped and
//! compressed, read back given the unmarked original; unrelated and unmarked images are not.
mod common;

use common::*;
use iki_watermark::{
    embed_image, read_informed, read_registered, InformedRead, Suspect, WatermarkKey,
};

const ID: u64 = 0x0f1e_2d3c_4b5a_6978;

/// A 640 x 480 part of the tiles atlas: real sprite art, small enough to keep tests quick.
fn original() -> Texture {
    crop(&load_atlas(TILES), 300, 200, 640, 480)
}

fn marked(t: &Texture) -> Texture {
    let mut m = t.clone();
    embed_image(&key_a(), ID, m.width, m.height, &mut m.rgba).unwrap();
    m
}

fn informed(original: &Texture, leak: &Texture) -> InformedRead {
    let mut suspect = Suspect::new(leak.width, leak.height, leak.rgba.clone()).unwrap();
    read_informed(
        &key_a(),
        original.width,
        original.height,
        &original.rgba,
        &mut suspect,
        &mut || true,
    )
    .unwrap()
}

/// Asserts the leak reads `ID` through a registration at `scale` with the crop at `(x, y)`.
fn assert_identified(
    name: &str,
    original: &Texture,
    leak: &Texture,
    scale: f64,
    (x, y): (f64, f64),
) {
    let read = informed(original, leak);
    let d = read
        .detection
        .as_ref()
        .unwrap_or_else(|| panic!("{name}: no registration"));
    assert_eq!(d.found, Some(ID), "{name}: {read:?}");
    let r = read.registration.unwrap();
    assert!(
        (r.scale_x / scale - 1.0).abs() < 0.005 && (r.scale_y / scale - 1.0).abs() < 0.005,
        "{name}: {r:?}"
    );
    assert!(
        (r.offset_x - x).abs() < 1.0 && (r.offset_y - y).abs() < 1.0,
        "{name}: {r:?}"
    );
    // An unturned leak is registered at exactly 0 degrees (the unturned hypothesis, refined with
    // the angle kept), so it is read through the separable path, not the turned one.
    assert_eq!(r.angle, 0.0, "{name}: {r:?}");
    // Blind, the same leak reads nothing: registration is what finds it.
    let blind = iki_watermark::detect(&key_a(), leak.width, leak.height, &leak.rgba).unwrap();
    assert_eq!(blind.found, None, "{name}");
}

#[test]
fn resized_leaks_are_identified() {
    let o = original();
    let m = marked(&o);
    for scale in [0.5, 0.75, 0.9, 1.25, 2.0] {
        assert_identified(
            &format!("scale {scale}"),
            &o,
            &scaled(&m, scale),
            scale,
            (0.0, 0.0),
        );
    }
}

#[test]
fn cropped_leaks_are_identified() {
    let o = original();
    let m = marked(&o);
    // 60 % and 30 % of the area (496 x 372 and 350 x 263 of 640 x 480).
    assert_identified(
        "crop 60 %",
        &o,
        &crop(&m, 70, 50, 496, 372),
        1.0,
        (70.0, 50.0),
    );
    assert_identified(
        "crop 30 %",
        &o,
        &crop(&m, 200, 120, 350, 263),
        1.0,
        (200.0, 120.0),
    );
}

#[test]
fn resized_and_jpeg_compressed_leaks_are_identified() {
    let o = original();
    let m = marked(&o);
    // JPEG has no alpha: the leak is opaque, colour under alpha 0 shows.
    assert_identified(
        "scale 0.9 + JPEG 85",
        &o,
        &jpeg_round_trip(&scaled(&m, 0.9), 85, None),
        0.9,
        (0.0, 0.0),
    );
    let cropped = crop(&scaled(&m, 0.8), 60, 40, 400, 300);
    assert_identified(
        "scale 0.8, crop, JPEG 85",
        &o,
        &jpeg_round_trip(&cropped, 85, None),
        0.8,
        (75.0, 50.0),
    );
}

#[test]
fn unrelated_images_and_unmarked_crops_are_not_identified() {
    let o = original();
    // An unmarked crop matches its texture, and reads nothing.
    let read = informed(&o, &scaled(&crop(&o, 100, 80, 480, 360), 0.9));
    assert!(read.registration.is_some(), "{read:?}");
    assert_eq!(read.detection.unwrap().found, None);
    // An unrelated image (another part of the atlas, marked) does not match at all.
    let other = marked(&crop(&load_atlas(TILES), 1300, 900, 600, 450));
    let read = informed(&o, &other);
    assert!(
        read.registration.is_none() && read.detection.is_none(),
        "{read:?}"
    );
    // A marked leak read under another key: registered, nothing read.
    let leak = scaled(&marked(&o), 0.9);
    let mut suspect = Suspect::new(leak.width, leak.height, leak.rgba.clone()).unwrap();
    let wrong = read_informed(
        &key_b(),
        o.width,
        o.height,
        &o.rgba,
        &mut suspect,
        &mut || true,
    )
    .unwrap();
    assert!(wrong.registration.is_some());
    assert_eq!(wrong.detection.unwrap().found, None);
}

#[test]
fn null_reads_through_a_registration_stay_calibrated() {
    // 300 random keys through one registration of an unmarked resized crop: the detector's
    // z-scores keep their null distribution (mean 0, standard deviation 1), so registration
    // adds no false accepts. The benchmark runs 10,000 such reads.
    let o = original();
    let leak = scaled(&crop(&o, 40, 30, 560, 420), 0.85);
    let mut suspect = Suspect::new(leak.width, leak.height, leak.rgba.clone()).unwrap();
    let read = read_informed(
        &key_a(),
        o.width,
        o.height,
        &o.rgba,
        &mut suspect,
        &mut || true,
    )
    .unwrap();
    let registration = read.registration.unwrap();
    let mut rng = TestRng(0x6e75_6c6c);
    let mut confidences = Vec::new();
    for _ in 0..300 {
        let key = WatermarkKey::from_bytes(core::array::from_fn(|_| rng.byte()));
        let d = read_registered(&key, o.width, o.height, &o.rgba, &suspect, &registration).unwrap();
        assert_eq!(d.found, None);
        confidences.push(d.confidence);
    }
    let n = confidences.len() as f64;
    let mean = confidences.iter().sum::<f64>() / n;
    let sd = (confidences.iter().map(|c| (c - mean).powi(2)).sum::<f64>() / n).sqrt();
    assert!(
        mean.abs() < 0.25 && (0.75..1.3).contains(&sd),
        "mean {mean}, sd {sd}"
    );
}

#[test]
fn the_budget_and_bad_arguments() {
    let o = original();
    let leak = scaled(&marked(&o), 0.9);
    let mut suspect = Suspect::new(leak.width, leak.height, leak.rgba.clone()).unwrap();
    let stopped = read_informed(
        &key_a(),
        o.width,
        o.height,
        &o.rgba,
        &mut suspect,
        &mut || false,
    )
    .unwrap();
    assert!(!stopped.complete && stopped.detection.is_none());
    let short = read_informed(
        &key_a(),
        o.width,
        o.height,
        &o.rgba[4..],
        &mut suspect,
        &mut || true,
    );
    assert_eq!(short.unwrap_err().code(), "INVALID_ARGUMENT");
    assert_eq!(
        Suspect::new(2, 2, vec![0; 15]).unwrap_err().code(),
        "INVALID_ARGUMENT"
    );
    assert!(iki_watermark::could_register(640, 480, 576, 432));
    assert!(
        !iki_watermark::could_register(640, 480, 40, 30),
        "under 10 % of the area even at 25 %"
    );
    assert!(
        !iki_watermark::could_register(640, 480, 2816, 2112),
        "enlarged beyond 400 %"
    );
}

//! Identify through the master's textures (docs/watermark.md section 11): a license copy's
//! texture resized, cropped and compressed is found with the texture and the transform; an
//! unmarked crop, an unrelated image and images that cannot carry the mark are not, and the
//! answer says why.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

mod common;

use common::*;
use iki_crypto::hash::sha256;
use iki_format::{manifest_entry_for, Encoding, EntryMeta};
use iki_license::{Identification, MasterRef, NotFoundReason, ServiceKeys};
use image::imageops::FilterType;

const ID: u64 = 0x0123_4567_89ab_cdef;
const NOISY_PATH: &str = "Model.2048/noisy.png";

fn texture_entry(path: &str, w: u32, h: u32, rgba: &[u8]) -> (iki_format::Entry, Vec<u8>) {
    let mut entry = manifest_entry_for(path, "image/x-rgba8", Encoding::Rgba8, rgba);
    entry.meta = Some(EntryMeta {
        kind: Some("texture".into()),
        width: Some(w),
        height: Some(h),
        source: None,
    });
    (entry, rgba.to_vec())
}

/// A 200 x 120 texture of smooth shapes under per-pixel noise of +-40: issue 14's case.
fn noisy_texture() -> Vec<u8> {
    let grain = noise(200 * 120 * 3, 11);
    (0..200 * 120usize)
        .flat_map(|i| {
            let (x, y) = (i % 200, i / 200);
            let base = if (x / 25 + y / 20) % 2 == 0 { 90 } else { 160 };
            let g = |k: usize| (base + i32::from(grain[i * 3 + k] % 81) - 40).clamp(0, 255) as u8;
            [g(0), g(1), g(2), 255]
        })
        .collect()
}

struct Setup {
    service: ServiceKeys,
    master_ref: MasterRef,
    master: Vec<u8>,
    /// The license copy's synthetic (512 x 640) and noisy (200 x 120) textures.
    synthetic: Vec<u8>,
    noisy: Vec<u8>,
}

fn setup() -> Setup {
    let service = service();
    let mut package = package();
    package.files.retain(|(e, _)| e.path != ATLAS_PATH);
    package
        .files
        .push(texture_entry(NOISY_PATH, 200, 120, &noisy_texture()));
    let master = write_master(&package, MasterSpec::good(&service));
    let master_ref = MasterRef {
        id: "mst_1".into(),
        sha256: sha256(&master),
    };
    let played = play(
        &service,
        &master_ref,
        ID,
        &copy(&service, &master_ref, &master, &license(ID)).unwrap(),
    )
    .unwrap();
    let entry = |path: &str| {
        played.entries[played
            .manifest
            .entries
            .iter()
            .position(|e| e.path == path)
            .unwrap()]
        .clone()
    };
    Setup {
        synthetic: entry(SYNTHETIC_PATH),
        noisy: entry(NOISY_PATH),
        service,
        master_ref,
        master,
    }
}

fn identify(
    s: &Setup,
    w: u32,
    h: u32,
    rgba: Vec<u8>,
    keep_going: &mut dyn FnMut() -> bool,
) -> Identification {
    let mut identifier = s.service.identifier(&s.master_ref, w, h, rgba).unwrap();
    for piece in s.master.chunks(64 * 1024) {
        if identifier.done() {
            break;
        }
        identifier.push(piece, keep_going).unwrap();
    }
    identifier.finish()
}

fn resized(w: u32, h: u32, rgba: &[u8], scale: f64) -> (u32, u32, Vec<u8>) {
    let img = image::RgbaImage::from_raw(w, h, rgba.to_vec()).unwrap();
    let (nw, nh) = (
        (f64::from(w) * scale).round() as u32,
        (f64::from(h) * scale).round() as u32,
    );
    (
        nw,
        nh,
        image::imageops::resize(&img, nw, nh, FilterType::Triangle).into_raw(),
    )
}

fn jpeg(w: u32, h: u32, rgba: &[u8], quality: u8) -> Vec<u8> {
    use image::ImageEncoder as _;
    let rgb: Vec<u8> = rgba.chunks(4).flat_map(|p| [p[0], p[1], p[2]]).collect();
    let mut out = Vec::new();
    image::codecs::jpeg::JpegEncoder::new_with_quality(&mut out, quality)
        .write_image(&rgb, w, h, image::ExtendedColorType::Rgb8)
        .unwrap();
    let (_, _, decoded) = iki_license::decode_image(&out).unwrap();
    decoded
}

#[test]
fn a_resized_compressed_copy_texture_is_found_with_its_texture_and_transform() {
    let s = setup();
    // The synthetic texture is transparent on its left band: a JPEG of it is opaque.
    let (w, h, small) = resized(512, 640, &s.synthetic, 0.8);
    let leak = jpeg(w, h, &small, 85);
    let found = identify(&s, w, h, leak, &mut || true);
    assert_eq!(found.found, Some(ID), "{found:?}");
    assert!(found.registered && found.reason.is_none());
    let texture = found.texture.unwrap();
    assert_eq!(
        (texture.path.as_str(), texture.width, texture.height),
        (SYNTHETIC_PATH, 512, 640)
    );
    let r = texture.registration;
    assert!(
        (r.scale_x - 0.8).abs() < 0.002 && (r.scale_y - 0.8).abs() < 0.002,
        "{r:?}"
    );
    assert!(r.offset_x.abs() < 1.0 && r.offset_y.abs() < 1.0, "{r:?}");
    assert_eq!(
        found.textures_tried, 1,
        "the noisy texture is too small to hold this leak"
    );
}

#[test]
fn an_unaltered_copy_texture_is_found_blind() {
    let s = setup();
    let found = identify(&s, 512, 640, s.synthetic.clone(), &mut || {
        panic!("no search needed")
    });
    assert_eq!(
        (found.found, found.registered, found.textures_tried),
        (Some(ID), false, 0)
    );
}

#[test]
fn issue_14_a_small_noisy_texture_is_found_through_its_original() {
    let s = setup();
    // Blind, the noise mostly drowns the mark; against the original it reads. Whether the blind
    // reader already succeeds depends on floating-point details of the build (it does with the
    // whole workspace's features), so either path may answer, but the answer is the license.
    let found = identify(&s, 200, 120, s.noisy.clone(), &mut || true);
    assert_eq!(found.found, Some(ID), "{found:?}");
    assert!(found.reason.is_none(), "{found:?}");
    if found.registered {
        assert_eq!(found.texture.unwrap().path, NOISY_PATH);
    }
}

#[test]
fn unmarked_and_unrelated_images_are_not_found_and_the_answer_says_why() {
    let s = setup();
    // The master's own (unmarked) texture, cropped: it matches, but carries no mark.
    let (_, _, original) = synthetic_texture();
    let crop: Vec<u8> = original
        .chunks(512 * 4)
        .skip(100)
        .take(400)
        .flat_map(|r| r[80 * 4..430 * 4].to_vec())
        .collect();
    let unmarked = identify(&s, 350, 400, crop, &mut || true);
    assert_eq!(
        (unmarked.found, unmarked.reason),
        (None, Some(NotFoundReason::NotMarked)),
        "{unmarked:?}"
    );
    assert_eq!(unmarked.texture.unwrap().registration.region.x, 80);

    // An unrelated image that could carry a mark: no texture matches.
    let unrelated: Vec<u8> = (0..300 * 300u32)
        .flat_map(|i| [(i % 300) as u8, (i / 300 * 7 % 256) as u8, 60, 255])
        .collect();
    let other = identify(&s, 300, 300, unrelated, &mut || true);
    assert_eq!(
        (other.found, other.reason),
        (None, Some(NotFoundReason::NoMatchingTexture)),
        "{other:?}"
    );
    assert!(other.capacity.unwrap().reads);

    // Too small: 40 x 30 pixels; too busy: pure noise. Flat white is neither: it could
    // carry a mark (on the pixels the mark moves down), so it is simply not a texture here.
    let tiny: Vec<u8> = (0..40 * 30u32)
        .flat_map(|i| [(i * 3 % 256) as u8, 90, 120, 255])
        .collect();
    let tiny = identify(&s, 40, 30, tiny, &mut || true);
    assert_eq!(tiny.reason, Some(NotFoundReason::TooSmall));
    assert_eq!(tiny.capacity.unwrap().visible_pixels, 1200);
    let busy: Vec<u8> = noise(160 * 160 * 4, 5)
        .chunks(4)
        .flat_map(|p| [p[0], p[1], p[2], 255])
        .collect();
    let busy = identify(&s, 160, 160, busy, &mut || true);
    assert_eq!(busy.reason, Some(NotFoundReason::TooBusy), "{busy:?}");
    assert!(busy.capacity.unwrap().confidence < iki_watermark::CONFIDENCE_MIN);
    let white = identify(&s, 150, 150, vec![255; 150 * 150 * 4], &mut || true);
    assert_eq!(
        white.reason,
        Some(NotFoundReason::NoMatchingTexture),
        "{white:?}"
    );
    assert!(white.capacity.unwrap().reads);
}

#[test]
fn the_time_budget_stops_the_search() {
    let s = setup();
    let (w, h, small) = resized(512, 640, &s.synthetic, 0.8);
    let mut calls = 0;
    let stopped = identify(&s, w, h, small, &mut || {
        calls += 1;
        calls < 3
    });
    assert_eq!(
        (stopped.found, stopped.reason),
        (None, Some(NotFoundReason::TimeBudget)),
        "{stopped:?}"
    );
}

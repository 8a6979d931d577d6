//! Soft-decision identify (docs/watermark.md section 12): the service scores every license it
//! issued for the master against the per-bit scores of the read. A leak whose bits no longer
//! decode (CRC fails) is still named; an average of two buyers' copies is recognised as a mix
//! and its colluders named; an unmarked texture and another master's copy name nobody.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

mod common;

use common::*;
use iki_crypto::hash::sha256;
use iki_license::{Identification, MasterRef, NotFoundReason, ServiceKeys};

const ID: u64 = 0x0123_4567_89ab_cdef;
const OTHER: u64 = 0x7e57_c0de_5eed_f00d;

struct Setup {
    service: ServiceKeys,
    master_ref: MasterRef,
    master: Vec<u8>,
}

fn setup(master_id: &str) -> Setup {
    let service = service();
    let mut package = package();
    package.files.retain(|(e, _)| e.path != ATLAS_PATH);
    let master = write_master(&package, MasterSpec::good(&service));
    let master_ref = MasterRef {
        id: master_id.into(),
        sha256: sha256(&master),
    };
    Setup {
        service,
        master_ref,
        master,
    }
}

/// The synthetic texture (512 x 640) of `license`'s copy.
fn copy_texture(s: &Setup, license_id: u64) -> Vec<u8> {
    let played = play(
        &s.service,
        &s.master_ref,
        license_id,
        &copy(&s.service, &s.master_ref, &s.master, &license(license_id)).unwrap(),
    )
    .unwrap();
    played.entries[played
        .manifest
        .entries
        .iter()
        .position(|e| e.path == SYNTHETIC_PATH)
        .unwrap()]
    .clone()
}

/// 10,000 random issued ids (splitmix64) with `guilty` among them.
fn issued(guilty: &[u64]) -> Vec<u64> {
    let mut x = 0x1d_5eed_u64;
    let mut ids: Vec<u64> = (0..10_000)
        .map(|_| {
            x = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
            let mut z = x;
            z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
            z ^ (z >> 31)
        })
        .collect();
    for (k, &g) in guilty.iter().enumerate() {
        ids[1234 + 4321 * k] = g;
    }
    ids
}

fn identify(s: &Setup, w: u32, h: u32, rgba: Vec<u8>, issued: Vec<u64>) -> Identification {
    let mut identifier = s.service.identifier(&s.master_ref, w, h, rgba).unwrap();
    identifier.set_issued(issued);
    for piece in s.master.chunks(64 * 1024) {
        if identifier.done() {
            break;
        }
        identifier.push(piece, &mut || true).unwrap();
    }
    identifier.finish()
}

fn jpeg(w: u32, h: u32, rgba: &[u8], quality: u8) -> Vec<u8> {
    use image::ImageEncoder as _;
    let rgb: Vec<u8> = rgba.chunks(4).flat_map(|p| [p[0], p[1], p[2]]).collect();
    let mut out = Vec::new();
    image::codecs::jpeg::JpegEncoder::new_with_quality(&mut out, quality)
        .write_image(&rgb, w, h, image::ExtendedColorType::Rgb8)
        .unwrap();
    iki_license::decode_image(&out).unwrap().2
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
        image::imageops::resize(&img, nw, nh, image::imageops::FilterType::Triangle).into_raw(),
    )
}

#[test]
fn a_leak_whose_crc_no_longer_checks_is_named_by_its_score() {
    let s = setup("mst_1");
    let marked = copy_texture(&s, ID);
    let (w, h, small) = resized(512, 640, &marked, 0.8);
    let leak = jpeg(w, h, &small, 45);
    // Without the issued licenses (the reader before soft matching): the bits do not decode.
    let hard = identify(&s, w, h, leak.clone(), Vec::new());
    assert_eq!(
        (hard.found, hard.reason),
        (None, Some(NotFoundReason::NotMarked)),
        "{hard:?}"
    );
    assert!(hard.candidates.is_empty());
    let soft = identify(&s, w, h, leak, issued(&[ID]));
    assert_eq!(
        (soft.found, soft.soft, soft.mixed, soft.reason),
        (Some(ID), true, false, None),
        "{soft:?}"
    );
    assert!(soft.registered && soft.texture.is_some());
    let first = soft.candidates[0];
    assert_eq!((first.license_id, first.named), (ID, true));
    assert!(
        first.false_accusation <= iki_watermark::NAME_SINGLE_MAX,
        "{first:?}"
    );
    assert!(
        soft.candidates[1..]
            .iter()
            .all(|c| !c.named && c.false_accusation > 1e-3),
        "{soft:?}"
    );
}

/// Each pixel's colour the mean of `a` and `b` (alpha of `a`), or taken from one of them.
fn mix(a: &[u8], b: &[u8], pick: bool) -> Vec<u8> {
    let mut x = 99u64;
    a.chunks(4)
        .zip(b.chunks(4))
        .flat_map(|(p, q)| {
            x = x
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            if pick {
                if x >> 63 == 0 {
                    [p[0], p[1], p[2], p[3]]
                } else {
                    [q[0], q[1], q[2], q[3]]
                }
            } else {
                let m = |k: usize| (u16::from(p[k]) + u16::from(q[k])).div_ceil(2) as u8;
                [m(0), m(1), m(2), p[3]]
            }
        })
        .collect()
}

#[test]
fn an_average_of_two_copies_is_recognised_as_a_mix_and_its_colluders_named() {
    let s = setup("mst_1");
    let (a, b) = (copy_texture(&s, ID), copy_texture(&s, OTHER));
    for pick in [false, true] {
        let mixed = mix(&a, &b, pick);
        let hard = identify(&s, 512, 640, mixed.clone(), Vec::new());
        assert_eq!(
            (hard.found, hard.reason, hard.mixed),
            (None, Some(NotFoundReason::Mixed), true),
            "{hard:?}"
        );
        let read = identify(&s, 512, 640, mixed, issued(&[ID, OTHER]));
        assert_eq!(
            (read.found, read.reason, read.mixed),
            (None, Some(NotFoundReason::Mixed), true),
            "pick {pick}: {read:?}"
        );
        let named: Vec<u64> = read
            .candidates
            .iter()
            .filter(|c| c.named)
            .map(|c| c.license_id)
            .collect();
        assert!(
            !named.is_empty() && named.iter().all(|id| [ID, OTHER].contains(id)),
            "pick {pick}: {read:?}"
        );
        for c in read.candidates.iter().filter(|c| c.named) {
            assert!(c.false_accusation <= iki_watermark::NAME_COLLUDER_MAX);
        }
        let innocents = read
            .candidates
            .iter()
            .filter(|c| ![ID, OTHER].contains(&c.license_id));
        assert!(
            innocents
                .clone()
                .all(|c| !c.named && c.false_accusation > 1e-3),
            "pick {pick}: {read:?}"
        );
    }
}

#[test]
fn an_unmarked_texture_and_another_masters_copy_name_nobody() {
    let s = setup("mst_1");
    let foreign = setup("mst_2");
    let (_, _, original) = synthetic_texture();
    let (w, h, small) = resized(512, 640, &copy_texture(&foreign, ID), 0.8);
    let leaks = [
        (512, 640, original.clone()),
        (512, 640, copy_texture(&foreign, ID)),
        (w, h, jpeg(w, h, &small, 45)),
        (
            512,
            640,
            mix(
                &copy_texture(&foreign, ID),
                &copy_texture(&foreign, OTHER),
                false,
            ),
        ),
    ];
    for (k, (w, h, leak)) in leaks.into_iter().enumerate() {
        let read = identify(&s, w, h, leak, issued(&[ID, OTHER]));
        assert_eq!(
            (read.found, read.mixed),
            (None, false),
            "leak {k}: {read:?}"
        );
        assert_eq!(read.candidates.len(), iki_watermark::LISTED_CANDIDATES);
        assert!(
            read.candidates
                .iter()
                .all(|c| !c.named && c.false_accusation > 1e-3),
            "leak {k}: {read:?}"
        );
    }
}

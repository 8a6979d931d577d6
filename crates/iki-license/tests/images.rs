//! Image codecs on real encoders' output, and identify on a leaked texture that went
//! through a lossless re-encode.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

mod common;

use common::*;
use iki_crypto::hash::sha256;
use iki_license::{decode_image, encode_png, MasterRef};
use image::codecs::jpeg::JpegEncoder;
use image::codecs::webp::WebPEncoder;
use image::{ExtendedColorType, ImageEncoder};

fn gradient(w: u32, h: u32) -> Vec<u8> {
    (0..w * h)
        .flat_map(|i| {
            [
                (i % w * 4) as u8,
                (i / w * 5) as u8,
                120,
                if i % 7 == 0 { 0 } else { 255 },
            ]
        })
        .collect()
}

#[test]
fn jpeg_decodes_to_opaque_rgba() {
    let (w, h) = (64u32, 48u32);
    let rgb: Vec<u8> = gradient(w, h)
        .chunks(4)
        .flat_map(|p| [p[0], p[1], p[2]])
        .collect();
    let mut jpeg = Vec::new();
    JpegEncoder::new_with_quality(&mut jpeg, 95)
        .write_image(&rgb, w, h, ExtendedColorType::Rgb8)
        .unwrap();
    let (dw, dh, rgba) = decode_image(&jpeg).unwrap();
    assert_eq!((dw, dh), (w, h));
    assert_eq!(rgba.len(), (w * h * 4) as usize);
    for (p, q) in rgba.chunks(4).zip(rgb.chunks(3)) {
        assert_eq!(p[3], 255);
        for k in 0..3 {
            assert!(p[k].abs_diff(q[k]) <= 12, "{p:?} vs {q:?}");
        }
    }
    // A JPEG cut inside its headers has no image; one cut in its scan decodes grey-filled
    // (zune-jpeg is lenient there, as browsers are).
    assert_eq!(
        decode_image(&jpeg[..20]).unwrap_err().code(),
        "IMAGE_DECODE_FAILED"
    );
}

#[test]
fn lossless_webp_decodes_exactly() {
    let (w, h) = (40u32, 30u32);
    let rgba = gradient(w, h);
    let mut webp = Vec::new();
    WebPEncoder::new_lossless(&mut webp)
        .write_image(&rgba, w, h, ExtendedColorType::Rgba8)
        .unwrap();
    assert_eq!(decode_image(&webp).unwrap(), (w, h, rgba));
}

#[test]
fn identify_reads_a_copy_texture_after_lossless_re_encoding() {
    let service = service();
    let mut package = package();
    package.files.retain(|(e, _)| e.path != ATLAS_PATH);
    let master = write_master(&package, MasterSpec::good(&service));
    let master_ref = MasterRef {
        id: "mst_1".into(),
        sha256: sha256(&master),
    };
    let id = 0x00C0_FFEE_0000_0042;
    let played = play(
        &service,
        &master_ref,
        id,
        &copy(&service, &master_ref, &master, &license(id)).unwrap(),
    )
    .unwrap();
    let index = played
        .manifest
        .entries
        .iter()
        .position(|e| e.path == SYNTHETIC_PATH)
        .unwrap();
    let texture = &played.entries[index];
    let (w, h, _) = synthetic_texture();

    let png = encode_png(w, h, texture).unwrap();
    let mut webp = Vec::new();
    WebPEncoder::new_lossless(&mut webp)
        .write_image(texture, w, h, ExtendedColorType::Rgba8)
        .unwrap();
    for leaked in [png, webp] {
        let (lw, lh, rgba) = decode_image(&leaked).unwrap();
        assert_eq!(&rgba, texture, "lossless");
        assert_eq!(
            service.identify(&master_ref, lw, lh, &rgba).unwrap().found,
            Some(id)
        );
    }
    // Another master's watermark key reads nothing; a wrong-sized buffer is refused.
    let other = MasterRef {
        id: "mst_2".into(),
        sha256: master_ref.sha256,
    };
    assert_eq!(service.identify(&other, w, h, texture).unwrap().found, None);
    assert_eq!(
        service
            .identify(&master_ref, w, h - 1, texture)
            .unwrap_err()
            .code(),
        "INVALID_ARGUMENT"
    );
}

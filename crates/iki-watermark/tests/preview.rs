//! A screenshot of the player's texture preview (docs/watermark.md section 11.7): a small
//! texture with transparency drawn over the player's checkerboard, at its own pixel size or
//! enlarged twice (a screen of two device pixels per CSS pixel), is registered on the master's
//! texture over a background and names its license; unmarked and foreign copies name nobody.
//! The synthetic texture is the one the server's browser test sells (`tests/fixtures`): a disc
//! of gradients and per-pixel noise with a band of partial alpha beside it, whose partly
//! transparent pixels show mostly the checkerboard.
mod common;

use common::*;
use iki_watermark::{
    embed_image, match_licenses, read_informed, InformedRead, Suspect, WatermarkKey,
};

const ID: u64 = 0x2b7e_1516_28ae_d2a6;

/// mulberry32 bytes, as `pseudoRandomBytes` in tests/fixtures/packages.mjs.
fn mulberry32(seed: u32, length: usize) -> Vec<u8> {
    let mut s = seed;
    (0..length)
        .map(|_| {
            s = s.wrapping_add(0x6d2b_79f5);
            let mut t = s;
            t = (t ^ (t >> 15)).wrapping_mul(t | 1);
            t ^= t.wrapping_add((t ^ (t >> 7)).wrapping_mul(t | 61));
            ((t ^ (t >> 14)) & 0xff) as u8
        })
        .collect()
}

/// `syntheticRgba(width, height, seed)` of tests/fixtures/packages.mjs: R and G gradients, B
/// noise, an opaque disc, a band of partial alpha on the left, transparent elsewhere.
fn synthetic(width: u32, height: u32, seed: u32) -> Texture {
    let noise = mulberry32(seed, (width * height) as usize);
    let (w, h) = (f64::from(width), f64::from(height));
    let mut rgba = Vec::with_capacity(noise.len() * 4);
    for y in 0..height {
        for x in 0..width {
            let (xf, yf) = (f64::from(x), f64::from(y));
            let disc = (xf - w / 2.0).powi(2) + (yf - h / 2.0).powi(2) < (w.min(h) / 2.2).powi(2);
            let alpha = if disc {
                255.0
            } else if xf < w / 8.0 {
                (255.0 * xf / (w / 8.0)).round()
            } else {
                0.0
            };
            let b = (seed.wrapping_mul(37) as u8) ^ noise[(y * width + x) as usize];
            rgba.extend_from_slice(&[
                (xf * 255.0 / w) as u8,
                (yf * 255.0 / h) as u8,
                b,
                alpha as u8,
            ]);
        }
    }
    Texture {
        width,
        height,
        rgba,
    }
}

/// The 256 x 256 drawn-art sprite the browser test sells: the top-left of the players atlas.
fn sprite() -> Texture {
    crop(&load_atlas(ATLASES[1]), 0, 0, 256, 256)
}

/// `t` as the player's preview shows it, `factor` screen pixels per texture pixel (1 or 2),
/// bilinear on premultiplied colour as a browser scales a canvas, over the player's
/// checkerboard (8-pixel squares of #ffffff and #c8cdd2), opaque.
fn preview(t: &Texture, factor: u32) -> Texture {
    let (w, h) = (t.width * factor, t.height * factor);
    let texel = |x: i64, y: i64| -> [f64; 4] {
        let (x, y) = (
            x.clamp(0, i64::from(t.width) - 1) as u32,
            y.clamp(0, i64::from(t.height) - 1) as u32,
        );
        let p = &t.rgba[((y * t.width + x) * 4) as usize..][..4];
        let a = f64::from(p[3]) / 255.0;
        [
            f64::from(p[0]) * a,
            f64::from(p[1]) * a,
            f64::from(p[2]) * a,
            a,
        ]
    };
    let step = 1.0 / f64::from(factor);
    let mut rgba = Vec::with_capacity((w * h * 4) as usize);
    for v in 0..h {
        for u in 0..w {
            let (x, y) = (
                (f64::from(u) + 0.5) * step - 0.5,
                (f64::from(v) + 0.5) * step - 0.5,
            );
            let (x0, y0) = (x.floor(), y.floor());
            let (fx, fy) = (x - x0, y - y0);
            let (xi, yi) = (x0 as i64, y0 as i64);
            let (a, b, c, d) = (
                texel(xi, yi),
                texel(xi + 1, yi),
                texel(xi, yi + 1),
                texel(xi + 1, yi + 1),
            );
            let bg = if (u / 8 + v / 8) % 2 == 1 {
                [200.0, 205.0, 210.0]
            } else {
                [255.0; 3]
            };
            let at = |k: usize| {
                (a[k] * (1.0 - fx) + b[k] * fx) * (1.0 - fy) + (c[k] * (1.0 - fx) + d[k] * fx) * fy
            };
            let alpha = at(3);
            for (k, g) in bg.iter().enumerate() {
                rgba.push((at(k) + (1.0 - alpha) * g).round().clamp(0.0, 255.0) as u8);
            }
            rgba.push(255);
        }
    }
    Texture {
        width: w,
        height: h,
        rgba,
    }
}

fn marked(t: &Texture, key: &WatermarkKey, id: u64) -> Texture {
    let mut m = t.clone();
    embed_image(key, id, m.width, m.height, &mut m.rgba).unwrap();
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

/// 100 issued ids, `ID` among them.
fn issued() -> Vec<u64> {
    let mut rng = TestRng(0x9e37_79b9);
    let mut ids: Vec<u64> = (0..99).map(|_| rng.next_u64()).collect();
    ids.insert(61, ID);
    ids
}

/// The ids the read names: the decoded one, or those its score names among [`issued`].
fn named(name: &str, read: &InformedRead, factor: u32) -> Vec<u64> {
    let r = read
        .registration
        .unwrap_or_else(|| panic!("{name}: no registration"));
    assert!(r.over_background, "{name}: {r:?}");
    let f = f64::from(factor);
    assert!(
        (r.scale_x - f).abs() < 0.01 * f && (r.scale_y - f).abs() < 0.01 * f && r.angle.abs() < 0.1,
        "{name}: {r:?}"
    );
    assert!(
        r.offset_x.abs() < 0.5 && r.offset_y.abs() < 0.5,
        "{name}: {r:?}"
    );
    let d = read.detection.as_ref().unwrap();
    if let Some(found) = d.found {
        return vec![found];
    }
    match_licenses(&d.bit_confidence, d.confidence, &issued(), 2.0)
        .named()
        .collect()
}

#[test]
fn a_small_texture_with_partial_alpha_over_the_checkerboard_names_its_license() {
    // Before the search over a background left partly transparent pixels out, the band of
    // partial alpha (the checkerboard, mostly) dragged every coarse correlation of this
    // texture below its true place's, and nothing registered.
    let original = synthetic(200, 120, 3);
    let copy = marked(&original, &key_a(), ID);
    for factor in [1, 2] {
        let name = format!("synthetic at {factor}x");
        let read = informed(&original, &preview(&copy, factor));
        assert_eq!(named(&name, &read, factor), [ID], "{name}");
        if factor == 1 {
            // At its own size every pixel of the copy is there: the bits decode.
            assert_eq!(read.detection.and_then(|d| d.found), Some(ID), "{name}");
        }
    }
}

#[test]
fn a_drawn_art_sprite_over_the_checkerboard_names_its_license() {
    let original = sprite();
    let copy = marked(&original, &key_a(), ID);
    for factor in [1, 2] {
        let read = informed(&original, &preview(&copy, factor));
        assert_eq!(
            read.detection.as_ref().and_then(|d| d.found),
            Some(ID),
            "sprite at {factor}x"
        );
        assert_eq!(named("sprite", &read, factor), [ID]);
    }
}

#[test]
fn unmarked_and_foreign_previews_name_nobody() {
    for original in [synthetic(200, 120, 3), sprite()] {
        let leaks = [
            ("unmarked", original.clone()),
            ("another master's copy", marked(&original, &key_b(), ID)),
        ];
        for (name, leak) in leaks {
            for factor in [1, 2] {
                let read = informed(&original, &preview(&leak, factor));
                assert!(
                    read.registration.is_some(),
                    "{name} at {factor}x: registers (image content only)"
                );
                let d = read.detection.as_ref().unwrap();
                assert_eq!(d.found, None, "{name} at {factor}x");
                let m = match_licenses(&d.bit_confidence, d.confidence, &issued(), 2.0);
                assert_eq!(
                    m.named().count(),
                    0,
                    "{name} at {factor}x: {:?}",
                    m.candidates.first()
                );
            }
        }
    }
}

//! Streaming invariants and argument checking: bands in any order equal the
//! whole image, invisible pixels are untouched byte for byte, visible channels
//! move by exactly the amplitude (or less where clamped), and bad shapes are
//! refused with `INVALID_ARGUMENT` instead of panicking.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

mod common;

use common::*;
use iki_watermark::{detect, embed_image, embed_rows, Error, AMPLITUDE_LEVELS, VISIBLE_ALPHA_MIN};

/// Marks `t` band by band: random heights (1..=max_band rows), random order.
fn embed_in_random_bands(
    t: &Texture,
    license_id: u64,
    max_band: u64,
    rng: &mut TestRng,
) -> Vec<u8> {
    let row_bytes = t.width as usize * 4;
    let mut bands = Vec::new();
    let mut row = 0u32;
    while row < t.height {
        let height = (1 + rng.below(max_band) as u32).min(t.height - row);
        bands.push((row, height));
        row += height;
    }
    for i in (1..bands.len()).rev() {
        bands.swap(i, rng.below(i as u64 + 1) as usize);
    }
    let mut out = t.rgba.clone();
    for (first, height) in bands {
        let range = first as usize * row_bytes..(first + height) as usize * row_bytes;
        embed_rows(&key_a(), license_id, t.width, first, &mut out[range]).unwrap();
    }
    out
}

#[test]
fn random_bands_in_random_order_equal_whole_image_embedding() {
    let mut rng = TestRng(11);
    let atlas = load_atlas(TILES);
    let mut whole = atlas.clone();
    embed_image(&key_a(), 0xABCD, atlas.width, atlas.height, &mut whole.rgba).unwrap();
    assert_eq!(
        embed_in_random_bands(&atlas, 0xABCD, 200, &mut rng),
        whole.rgba
    );
    for (w, h) in [(1u32, 1u32), (7, 33), (81, 9), (300, 257)] {
        let t = flat_art(w, h, u64::from(w * h));
        let mut whole = t.clone();
        embed_image(&key_a(), 9, w, h, &mut whole.rgba).unwrap();
        for max_band in [1, 3, 64] {
            assert_eq!(
                embed_in_random_bands(&t, 9, max_band, &mut rng),
                whole.rgba,
                "{w}x{h}"
            );
        }
    }
}

#[test]
fn invisible_pixels_are_untouched_and_visible_ones_move_by_the_amplitude() {
    // Every alpha value 0..=255 with random colour, including 0 and 255.
    let (w, h) = (256u32, 64u32);
    let mut rng = TestRng(12);
    let mut rgba = Vec::new();
    for i in 0..w * h {
        rgba.extend_from_slice(&[rng.byte(), rng.byte(), rng.byte(), (i % 256) as u8]);
    }
    for px in rgba.chunks_exact_mut(4).step_by(7) {
        px[..3].copy_from_slice(&[0, 255, 1]);
    }
    let mut marked = rgba.clone();
    embed_image(&key_a(), 0x1234, w, h, &mut marked).unwrap();
    let amp = i16::from(AMPLITUDE_LEVELS);
    let (mut up, mut down) = (0, 0);
    for (before, after) in rgba.chunks_exact(4).zip(marked.chunks_exact(4)) {
        if before[3] < VISIBLE_ALPHA_MIN {
            assert_eq!(before, after);
            continue;
        }
        assert_eq!(before[3], after[3], "alpha never changes");
        // One direction per pixel, the same for R, G and B, clamped to 0..=255.
        let direction = if (0..3).any(|c| after[c] > before[c]) {
            amp
        } else {
            -amp
        };
        if direction > 0 {
            up += 1
        } else {
            down += 1
        }
        for c in 0..3 {
            let expected = (i16::from(before[c]) + direction).clamp(0, 255) as u8;
            assert_eq!(after[c], expected, "{before:?} -> {after:?}");
        }
    }
    // The chip x bit directions are balanced.
    let total = f64::from(up + down);
    assert!(
        (f64::from(up) / total - 0.5).abs() < 0.02,
        "{up} up, {down} down"
    );
}

#[test]
fn bad_shapes_are_refused_with_invalid_argument() {
    let key = key_a();
    let mut buf = vec![0u8; 64];
    let cases: Vec<(Error, Result<(), Error>)> = vec![
        (
            Error::ZeroDimension {
                width: 0,
                height: 0,
            },
            embed_rows(&key, 1, 0, 0, &mut buf),
        ),
        (
            Error::BadLength {
                len: 64,
                row_bytes: 12,
            },
            embed_rows(&key, 1, 3, 0, &mut buf),
        ),
        (
            Error::TooLarge {
                width: 4,
                rows: (1 << 32) + 3,
            },
            embed_rows(&key, 1, 4, u32::MAX, &mut buf),
        ),
        (
            Error::ZeroDimension {
                width: 4,
                height: 0,
            },
            embed_image(&key, 1, 4, 0, &mut buf),
        ),
        (
            Error::BadLength {
                len: 64,
                row_bytes: 16,
            },
            embed_image(&key, 1, 4, 3, &mut buf),
        ),
        (
            Error::BadLength {
                len: 64,
                row_bytes: 16,
            },
            detect(&key, 4, 5, &buf).map(|_| ()),
        ),
        (
            Error::ZeroDimension {
                width: 0,
                height: 4,
            },
            detect(&key, 0, 4, &buf).map(|_| ()),
        ),
    ];
    for (expected, got) in cases {
        assert_eq!(got, Err(expected));
        assert_eq!(expected.code(), "INVALID_ARGUMENT");
    }
    assert!(
        buf.iter().all(|&b| b == 0),
        "a refused call modifies nothing"
    );
    // The last row index itself is fine; an empty band is a no-op.
    embed_rows(&key, 1, 16, u32::MAX, &mut buf).unwrap();
    embed_rows(&key, 1, u32::MAX, 5, &mut []).unwrap();
}

#[test]
fn huge_dimensions_are_refused_before_allocating() {
    let key = key_a();
    assert!(matches!(
        detect(&key, u32::MAX, u32::MAX, &[0; 16]),
        Err(Error::TooLarge { .. } | Error::BadLength { .. })
    ));
    assert!(matches!(
        embed_image(&key, 1, u32::MAX, 2, &mut [0; 16]),
        Err(Error::TooLarge { .. } | Error::BadLength { .. })
    ));
    assert!(matches!(
        embed_rows(&key, 1, u32::MAX, 0, &mut [0; 16]),
        Err(Error::BadLength { .. })
    ));
}

#[test]
fn arbitrary_shapes_never_panic() {
    let key = key_a();
    let mut rng = TestRng(13);
    for _ in 0..2000 {
        let (w, h) = (rng.below(20) as u32, rng.below(20) as u32);
        let len = if rng.below(2) == 0 {
            (w * h * 4) as usize
        } else {
            rng.below(2000) as usize
        };
        let mut buf: Vec<u8> = (0..len).map(|_| rng.byte()).collect();
        let first = if rng.below(4) == 0 {
            u32::MAX - rng.below(3) as u32
        } else {
            rng.below(100) as u32
        };
        let _ = embed_rows(&key, rng.next_u64(), w, first, &mut buf);
        let _ = embed_image(&key, rng.next_u64(), w, h, &mut buf);
        if let Ok(d) = detect(&key, w, h, &buf) {
            assert!(d.confidence.is_finite() && d.bit_confidence.iter().all(|z| z.is_finite()));
        }
    }
}

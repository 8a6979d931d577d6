//! The minimum size and what survives, in the detector's own measures (docs/watermark.md
//! section 8.2): `cargo run --release -p iki-watermark --example capacity`.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

use iki_watermark::{capacity, detect, embed_image, read_informed, Suspect, WatermarkKey};

/// xorshift64 bytes.
fn noise(n: usize, mut x: u64) -> Vec<u8> {
    (0..n)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x >> 24) as u8
        })
        .collect()
}

/// Flat-colour art: a gradient with rectangles (the fixtures' style).
fn art(w: u32, h: u32, seed: u64) -> Vec<u8> {
    let r = noise(64, seed);
    let mut px: Vec<u8> = (0..w * h)
        .flat_map(|i| {
            [
                (40 + (i % w) * 100 / w) as u8,
                (60 + (i / w) * 80 / h) as u8,
                150,
                255,
            ]
        })
        .collect();
    for k in 0..8usize {
        let (x0, y0) = (u32::from(r[k * 4]) % w, u32::from(r[k * 4 + 1]) % h);
        let (rw, rh) = (
            1 + u32::from(r[k * 4 + 2]) % (w / 2 + 1),
            1 + u32::from(r[k * 4 + 3]) % (h / 2 + 1),
        );
        for y in y0..(y0 + rh).min(h) {
            for x in x0..(x0 + rw).min(w) {
                let i = ((y * w + x) * 4) as usize;
                px[i..i + 3].copy_from_slice(&[
                    r[k * 5 % 64],
                    r[(k * 7 + 3) % 64],
                    r[(k * 11 + 5) % 64],
                ]);
            }
        }
    }
    px
}

/// Blocks of two greys under per-channel noise of +-`amp` (issue 14's "noisy" texture).
fn noisy(w: u32, h: u32, amp: i32) -> Vec<u8> {
    let g = noise((w * h * 3) as usize, 11);
    (0..(w * h) as usize)
        .flat_map(|i| {
            let (x, y) = (i as u32 % w, i as u32 / w);
            let base = if (x / 25 + y / 20) % 2 == 0 { 90 } else { 160 };
            let c = |k: usize| {
                (base + i32::from(g[i * 3 + k]) % (2 * amp + 1) - amp).clamp(0, 255) as u8
            };
            [c(0), c(1), c(2), 255]
        })
        .collect()
}

fn main() {
    let key = WatermarkKey::from_bytes([0x33; 32]); // obviously fake
    println!("| Texture | visible pixels | pixels per bit | capacity (marked copy's confidence) | reads blind |");
    println!("|---|---|---|---|---|");
    let mut cases: Vec<(String, u32, u32, Vec<u8>)> = Vec::new();
    for side in [24u32, 32, 48, 64, 96, 128, 256] {
        cases.push((format!("art {side}x{side}"), side, side, art(side, side, 5)));
    }
    for amp in [8, 20, 40, 80, 128] {
        cases.push((
            format!("200x120, noise +-{amp}"),
            200,
            120,
            noisy(200, 120, amp),
        ));
    }
    cases.push(("200x120, white".into(), 200, 120, vec![255; 200 * 120 * 4]));
    for (name, w, h, px) in &cases {
        let suspect = Suspect::new(*w, *h, px.clone()).unwrap();
        let c = capacity(&key, &suspect);
        println!(
            "| {name} | {} | {} | {:.1} | {} |",
            c.visible_pixels,
            c.visible_pixels / 80,
            c.confidence,
            if c.reads { "yes" } else { "no" }
        );
    }
    println!();
    println!(
        "| Texture | blind read of the marked texture | informed read (against the original) |"
    );
    println!("|---|---|---|");
    for (name, w, h, px) in &cases {
        let mut marked = px.clone();
        embed_image(&key, 0x1234_5678_9abc_def0, *w, *h, &mut marked).unwrap();
        let blind = detect(&key, *w, *h, &marked).unwrap();
        let mut suspect = Suspect::new(*w, *h, marked).unwrap();
        let informed = read_informed(&key, *w, *h, px, &mut suspect, &mut || true).unwrap();
        let d = informed.detection;
        println!(
            "| {name} | {} (confidence {:.1}) | {} |",
            if blind.found.is_some() {
                "found"
            } else {
                "not found"
            },
            blind.confidence,
            d.map_or("no registration".to_string(), |d| format!(
                "{} (confidence {:.1})",
                if d.found.is_some() {
                    "found"
                } else {
                    "not found"
                },
                d.confidence
            ))
        );
    }
}

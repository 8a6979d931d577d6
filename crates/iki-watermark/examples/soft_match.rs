//! Soft-decision matching benchmark (docs/watermark.md section 12), on the fixture atlases:
//! `cargo run --release -p iki-watermark --example soft_match -- [--quick] [--ids N]`
//! (`make bench-watermark-soft BENCH_ARGS=--quick`).
//!
//! - Single copies: resized, cropped and compressed leaks read through a registration on the
//!   original, scored against 100 issued licenses (the guilty one among them): exact by the CRC,
//!   exact by the score, wrong, not found.
//! - Mixes: the mean of 2, 3 and 4 copies, and a mix taking each pixel from a random copy, read
//!   blind and scored against 100 and 10,000 issued licenses: recognised as a mix, at least one
//!   colluder named, innocent licenses named.
//! - Nulls: unmarked textures and other masters' copies (resized and JPEG), scored against
//!   10,000 random ids each: innocent licenses named (must be 0) and the highest innocent score.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

use std::time::Instant;

use iki_watermark::{match_licenses, read_informed, Suspect, WatermarkKey};

mod leaks;

use leaks::{crop, jpeg, load, marked, resize, Attack, Image, Rng};

/// Mean of the copies (alpha of the first), or each pixel from a random copy.
fn mix(copies: &[Image], pick: bool, rng: &mut Rng) -> Image {
    let (w, h) = (copies[0].0, copies[0].1);
    let k = copies.len();
    let mut out = copies[0].2.clone();
    for p in 0..(w * h) as usize {
        if pick {
            let c = (rng.next() % k as u64) as usize;
            out[p * 4..p * 4 + 4].copy_from_slice(&copies[c].2[p * 4..p * 4 + 4]);
        } else {
            for ch in 0..3 {
                let sum: u32 = copies.iter().map(|c| u32::from(c.2[p * 4 + ch])).sum();
                out[p * 4 + ch] = ((sum + k as u32 / 2) / k as u32) as u8;
            }
        }
    }
    (w, h, out)
}

#[derive(Default)]
struct Tally {
    decoded: u32,
    scored: u32,
    wrong: u32,
    missing: u32,
    mixed: u32,
    colluder: u32,
    innocents_named: u64,
    innocents_scored: u64,
    reads: u32,
    seconds: f64,
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let quick = args.iter().any(|a| a == "--quick");
    let ids_per_row: usize = args
        .iter()
        .position(|a| a == "--ids")
        .and_then(|i| args.get(i + 1))
        .and_then(|v| v.parse().ok())
        .unwrap_or(if quick { 2 } else { 6 });
    let textures: &[&str] = if quick {
        &["kenney-top-down-shooter_spritesheet_tiles.png"]
    } else {
        &[
            "kenney-top-down-shooter_spritesheet_tiles.png",
            "kenney-platformer-pack-redux_spritesheet_players.png",
        ]
    };
    let mut rng = Rng(0x5eed);
    if args.iter().any(|a| a == "--model") {
        model(&mut rng);
        return;
    }
    println!("| Texture | Row | issued | reads | exact (CRC) | exact (score) | wrong | not found | mix recognised | colluder named | innocents named / scored | s per read |");
    println!("|---|---|---|---|---|---|---|---|---|---|---|---|");
    for name in textures {
        let original = load(name);
        let short = name
            .rsplit('_')
            .next()
            .and_then(|n| n.strip_suffix(".png"))
            .unwrap_or(name);
        let single: Vec<(&str, Attack)> = vec![
            ("JPEG 60", Box::new(|i| jpeg(i, 60))),
            ("JPEG 50", Box::new(|i| jpeg(i, 50))),
            (
                "resize 50 % + JPEG 75",
                Box::new(|i| jpeg(&resize(i, 0.5), 75)),
            ),
            (
                "resize 50 % + JPEG 60",
                Box::new(|i| jpeg(&resize(i, 0.5), 60)),
            ),
            (
                "resize 70 % + JPEG 45",
                Box::new(|i| jpeg(&resize(i, 0.7), 45)),
            ),
            ("crop 30 % + JPEG 60", Box::new(|i| jpeg(&crop(i, 0.3), 60))),
        ];
        for (row, attack) in &single {
            let mut t = Tally::default();
            for _ in 0..ids_per_row {
                let key = WatermarkKey::from_bytes(
                    rng.next().to_le_bytes().repeat(4).try_into().unwrap(),
                );
                let mut issued = rng.ids(100);
                let guilty = issued[17];
                let leak = attack(&marked(&key, guilty, &original));
                let start = Instant::now();
                let mut suspect = Suspect::new(leak.0, leak.1, leak.2).unwrap();
                let blind = suspect.detect(&key);
                let read = read_informed(
                    &key,
                    original.0,
                    original.1,
                    &original.2,
                    &mut suspect,
                    &mut || true,
                )
                .unwrap();
                let d = read.detection.unwrap_or(blind);
                let m = match_licenses(&d.bit_confidence, d.confidence, &issued, 4.0);
                t.seconds += start.elapsed().as_secs_f64();
                t.reads += 1;
                // An honest copy taken for a mix would loosen the naming bound: must stay 0.
                t.mixed += u32::from(m.mixed);
                let named: Vec<u64> = m.named().collect();
                match (d.found, named.first()) {
                    (Some(id), _) if id == guilty => t.decoded += 1,
                    (Some(_), _) => t.wrong += 1,
                    (None, Some(&id)) if id == guilty && !m.mixed => t.scored += 1,
                    (None, Some(_)) => t.wrong += 1,
                    (None, None) => t.missing += 1,
                }
                issued.retain(|&i| i != guilty);
                t.innocents_named += m
                    .candidates
                    .iter()
                    .filter(|c| c.named && c.license_id != guilty)
                    .count() as u64;
                t.innocents_scored += issued.len() as u64;
            }
            print_row(short, row, 100, &t);
        }
        for k in [2usize, 3, 4] {
            for pick in [false, true] {
                for n in [100usize, 10_000] {
                    let mut t = Tally::default();
                    for _ in 0..ids_per_row {
                        let key = WatermarkKey::from_bytes(
                            rng.next().to_le_bytes().repeat(4).try_into().unwrap(),
                        );
                        let issued = rng.ids(n);
                        let guilty = &issued[..k];
                        let copies: Vec<Image> = guilty
                            .iter()
                            .map(|&id| marked(&key, id, &original))
                            .collect();
                        let leak = mix(&copies, pick, &mut rng);
                        let start = Instant::now();
                        let d = Suspect::new(leak.0, leak.1, leak.2).unwrap().detect(&key);
                        let m = match_licenses(&d.bit_confidence, d.confidence, &issued, 2.0);
                        t.seconds += start.elapsed().as_secs_f64();
                        t.reads += 1;
                        t.mixed += u32::from(m.mixed);
                        t.colluder += u32::from(m.named().any(|id| guilty.contains(&id)));
                        t.wrong += u32::from(d.found.is_some());
                        t.innocents_named +=
                            m.named().filter(|id| !guilty.contains(id)).count() as u64;
                        t.innocents_scored += (n - k) as u64;
                    }
                    let row = format!("{} of {k} copies", if pick { "pixel mix" } else { "mean" });
                    print_row(short, &row, n, &t);
                }
            }
        }
        // Nulls: unmarked (as is, and resized + JPEG 75 through a registration) and another
        // master's copy, each scored against 10,000 random ids under random keys.
        let other = WatermarkKey::from_bytes([0x33; 32]); // obviously fake
        let nulls: Vec<(&str, Image)> = vec![
            ("null: unmarked", original.clone()),
            (
                "null: unmarked, resize 80 % + JPEG 75",
                jpeg(&resize(&original, 0.8), 75),
            ),
            ("null: other master's copy", marked(&other, 99, &original)),
            (
                "null: other master's mean of 2",
                mix(
                    &[marked(&other, 5, &original), marked(&other, 6, &original)],
                    false,
                    &mut rng,
                ),
            ),
        ];
        let mut top = 0.0f64;
        for (row, leak) in nulls {
            let mut t = Tally::default();
            let mut suspect = Suspect::new(leak.0, leak.1, leak.2).unwrap();
            let keys = if quick { 3 } else { 10 };
            for _ in 0..keys {
                let key = WatermarkKey::from_bytes(
                    rng.next().to_le_bytes().repeat(4).try_into().unwrap(),
                );
                let start = Instant::now();
                let d = if (leak.0, leak.1) == (original.0, original.1) {
                    suspect.detect(&key)
                } else {
                    read_informed(
                        &key,
                        original.0,
                        original.1,
                        &original.2,
                        &mut suspect,
                        &mut || true,
                    )
                    .unwrap()
                    .detection
                    .unwrap()
                };
                let issued = rng.ids(10_000);
                let m = match_licenses(&d.bit_confidence, d.confidence, &issued, 2.0);
                t.seconds += start.elapsed().as_secs_f64();
                t.reads += 1;
                t.mixed += u32::from(m.mixed);
                t.wrong += u32::from(d.found.is_some());
                t.innocents_named += m.named().count() as u64;
                t.innocents_scored += issued.len() as u64;
                top = top.max(m.candidates.first().map_or(0.0, |c| c.score));
            }
            print_row(short, row, 10_000, &t);
        }
        println!("\n{short}: the highest score of an innocent license over the null reads: {top:.2} standard deviations\n");
    }
}

/// The per-license bound of the best colluder of a k-copy mean, on modelled reads (per-copy
/// strength 30, unit noise), and the time to score 100,000 licenses.
fn model(rng: &mut Rng) {
    println!("| copies | mean | colluder score (median) | per-license bound (median) | (90th percentile) |");
    println!("|---|---|---|---|---|");
    for k in 1..=4usize {
        for rounded in [false, true] {
            if k == 1 && rounded {
                continue;
            }
            let mut rows = Vec::new();
            for _ in 0..40 {
                let ids = rng.ids(k);
                let bits: Vec<[bool; 80]> = ids
                    .iter()
                    .map(|&id| iki_watermark::payload_bits(id))
                    .collect();
                let mut z = [0.0f64; 80];
                for (i, slot) in z.iter_mut().enumerate() {
                    let sum: i32 = bits.iter().map(|b| if b[i] { 2 } else { -2 }).sum();
                    // The mean of k marks of +-2 levels, as a pixel mean rounds it (or not).
                    let level = if rounded {
                        (f64::from(sum) / k as f64).round()
                    } else {
                        f64::from(sum) / k as f64
                    };
                    let noise = ((rng.next() >> 11) as f64 / (1u64 << 53) as f64 - 0.5) * 3.46;
                    *slot = 15.0 * level + noise;
                }
                // One call for the k colluders: its bound is k times the per-license one.
                let best = match_licenses(&z, 100.0, &ids, 1.0).candidates[0];
                rows.push((best.score, best.false_accusation / k as f64));
            }
            rows.sort_by(|a, b| a.1.total_cmp(&b.1));
            let mut scores: Vec<f64> = rows.iter().map(|r| r.0).collect();
            scores.sort_by(f64::total_cmp);
            println!(
                "| {k} | {} | {:.2} | {:.1e} | {:.1e} |",
                if rounded { "rounded" } else { "exact" },
                scores[20],
                rows[20].1,
                rows[36].1
            );
        }
    }
    let ids = rng.ids(100_000);
    let z = [1.5f64; 80];
    let start = Instant::now();
    let m = match_licenses(&z, 5.0, &ids, 2.0);
    println!(
        "\nscoring 100,000 issued licenses: {:.1} ms ({} listed)",
        start.elapsed().as_secs_f64() * 1e3,
        m.candidates.len()
    );
    let strong = {
        let mut z = [0.0f64; 80];
        for (slot, b) in z.iter_mut().zip(iki_watermark::payload_bits(ids[3])) {
            *slot = if b { 30.0 } else { -30.0 };
        }
        z
    };
    let start = Instant::now();
    let m = match_licenses(&strong, 500.0, &ids, 2.0);
    println!(
        "with a named license (the exact bound's dynamic programme runs): {:.1} ms, bound {:.1e}",
        start.elapsed().as_secs_f64() * 1e3,
        m.candidates[0].false_accusation
    );
}

fn print_row(texture: &str, row: &str, issued: usize, t: &Tally) {
    let n = f64::from(t.reads.max(1));
    let pct = |v: u32| format!("{:.0} %", 100.0 * f64::from(v) / n);
    println!(
        "| {texture} | {row} | {issued} | {} | {} | {} | {} | {} | {} | {} | {} / {} | {:.2} |",
        t.reads,
        pct(t.decoded),
        pct(t.scored),
        pct(t.wrong),
        pct(t.missing),
        pct(t.mixed),
        pct(t.colluder),
        t.innocents_named,
        t.innocents_scored,
        t.seconds / n
    );
}

//! Harder geometry and compositing benchmark (docs/watermark.md section 11.5): leaks resized
//! to a quarter or a third, turned 1 to 5 degrees, cropped to 10 or 20 % of the area,
//! compressed to JPEG 60 or 50, and drawn at 25 % over a checkerboard, each then saved as
//! JPEG 75; read through a registration on the original and scored against 100 issued
//! licenses (the guilty one among them): exact (CRC or score), wrong, not found; and unmarked
//! leaks under the same attacks scored against 10,000 random ids (innocents named must be 0).
//! `cargo run --release -p iki-watermark --example geometry -- [--quick] [--ids N]`
//! (`bench/watermark/geometry.sh`).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, clippy::indexing_slicing)]

use std::time::Instant;

use iki_watermark::{match_licenses, read_informed, Suspect, WatermarkKey};

mod leaks;

use leaks::{checkerboard, crop, jpeg, load, marked, part, resize, turn, Attack, Image, Rng};

#[derive(Default)]
struct Tally {
    decoded: u32,
    scored: u32,
    wrong: u32,
    missing: u32,
    innocents_named: u64,
    innocents_scored: u64,
    reads: u32,
    seconds: Vec<f64>,
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let quick = args.iter().any(|a| a == "--quick");
    let verbose = args.iter().any(|a| a == "--verbose");
    let ids_per_row: usize = args.iter().position(|a| a == "--ids").and_then(|i| args.get(i + 1)).and_then(|v| v.parse().ok()).unwrap_or(if quick { 3 } else { 10 });
    let only: Option<&String> = args.iter().position(|a| a == "--row").and_then(|i| args.get(i + 1));
    // The fixture atlases, whole (tiles 1988 x 1470, players 1024 x 2048), and with
    // `--small` a 1024 x 1024 part of the tiles atlas.
    let textures: Vec<(&str, Image)> = {
        let tiles = load("kenney-top-down-shooter_spritesheet_tiles.png");
        let mut v = Vec::new();
        if args.iter().any(|a| a == "--small") {
            v.push(("tiles, 1024² part", part(&tiles, (400, 200, 1024, 1024))));
        }
        v.push(("tiles", tiles));
        if !quick {
            v.push(("players", load("kenney-platformer-pack-redux_spritesheet_players.png")));
        }
        v
    };
    let rows: Vec<(&str, Attack)> = vec![
        ("resize 25 % + JPEG 75", Box::new(|i| jpeg(&resize(i, 0.25), 75))),
        ("resize 33 % + JPEG 75", Box::new(|i| jpeg(&resize(i, 1.0 / 3.0), 75))),
        ("rotation +1° + JPEG 75", Box::new(|i| jpeg(&turn(i, 1.0), 75))),
        ("rotation -1° + JPEG 75", Box::new(|i| jpeg(&turn(i, -1.0), 75))),
        ("rotation +3° + JPEG 75", Box::new(|i| jpeg(&turn(i, 3.0), 75))),
        ("rotation -3° + JPEG 75", Box::new(|i| jpeg(&turn(i, -3.0), 75))),
        ("rotation +5° + JPEG 75", Box::new(|i| jpeg(&turn(i, 5.0), 75))),
        ("rotation -5° + JPEG 75", Box::new(|i| jpeg(&turn(i, -5.0), 75))),
        ("crop 10 % + JPEG 75", Box::new(|i| jpeg(&crop(i, 0.1), 75))),
        ("crop 20 % + JPEG 75", Box::new(|i| jpeg(&crop(i, 0.2), 75))),
        ("JPEG 60 (then JPEG 75)", Box::new(|i| jpeg(&jpeg(i, 60), 75))),
        ("JPEG 50 (then JPEG 75)", Box::new(|i| jpeg(&jpeg(i, 50), 75))),
        ("25 % over a checkerboard + JPEG 75", Box::new(|i| jpeg(&checkerboard(&resize(i, 0.25)), 75))),
        ("rotation +3°, resize 33 % + JPEG 75", Box::new(|i| jpeg(&resize(&turn(i, 3.0), 1.0 / 3.0), 75))),
    ];
    let mut rng = Rng(0x6e0_3e7);
    println!("| Texture | Row | reads | exact (CRC) | exact (score) | wrong | not found | innocents named / scored (unmarked) | s per read (median, max) |");
    println!("|---|---|---|---|---|---|---|---|---|");
    for (short, original) in &textures {
        for (row, attack) in &rows {
            if only.is_some_and(|o| !row.contains(o.as_str())) {
                continue;
            }
            let mut t = Tally::default();
            for n in 0..ids_per_row {
                let key = WatermarkKey::from_bytes(rng.next().to_le_bytes().repeat(4).try_into().unwrap());
                let mut issued = rng.ids(100);
                let guilty = issued[17];
                let leak = attack(&marked(&key, guilty, original));
                let start = Instant::now();
                let mut suspect = Suspect::new(leak.0, leak.1, leak.2).unwrap();
                let blind = suspect.detect(&key);
                let read = read_informed(&key, original.0, original.1, &original.2, &mut suspect, &mut || true).unwrap();
                let d = read.detection.clone().unwrap_or(blind);
                let m = match_licenses(&d.bit_confidence, d.confidence, &issued, 4.0);
                t.seconds.push(start.elapsed().as_secs_f64());
                t.reads += 1;
                if verbose {
                    eprintln!("{row}: {:?} conf {:.1} found {:?} top {:?}", read.registration, d.confidence, d.found.map(|f| f == guilty), m.candidates.first().map(|c| (c.license_id == guilty, c.score, c.false_accusation)));
                }
                let named: Vec<u64> = m.named().collect();
                match (d.found, named.first()) {
                    (Some(id), _) if id == guilty => t.decoded += 1,
                    (Some(_), _) => t.wrong += 1,
                    (None, Some(&id)) if id == guilty => t.scored += 1,
                    (None, Some(_)) => t.wrong += 1,
                    (None, None) => t.missing += 1,
                }
                issued.retain(|&i| i != guilty);
                t.innocents_named += named.iter().filter(|&&c| c != guilty).count() as u64;
                t.innocents_scored += issued.len() as u64;
                // The unmarked original under the same attack, scored against 10,000 ids.
                if n < 2 {
                    let leak = attack(original);
                    let mut suspect = Suspect::new(leak.0, leak.1, leak.2).unwrap();
                    let blind = suspect.detect(&key);
                    let read = read_informed(&key, original.0, original.1, &original.2, &mut suspect, &mut || true).unwrap();
                    let d = read.detection.unwrap_or(blind);
                    let ids = rng.ids(10_000);
                    let m = match_licenses(&d.bit_confidence, d.confidence, &ids, 4.0);
                    t.innocents_named += m.named().count() as u64 + u64::from(d.found.is_some());
                    t.innocents_scored += ids.len() as u64;
                }
            }
            t.seconds.sort_by(f64::total_cmp);
            println!(
                "| {short} | {row} | {} | {} | {} | {} | {} | {} / {} | {:.2}, {:.2} |",
                t.reads, t.decoded, t.scored, t.wrong, t.missing, t.innocents_named, t.innocents_scored,
                t.seconds[t.seconds.len() / 2], t.seconds[t.seconds.len() - 1]
            );
        }
    }
}

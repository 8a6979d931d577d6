//! Times informed identify on a 4096 x 4096 texture built from two CC0 atlases:
//! `cargo run --release -p iki-watermark --example informed_speed [runs] [kinds]`. The leaks
//! alternate: resized to 90 % (Catmull-Rom) then JPEG q85 (`r90`), cropped to half the area
//! (`crop`), and (issue 27) turned 3 degrees (the centred 90 % kept), halved and JPEG q75
//! (`turn`); `kinds` picks some, comma-separated (default `r90,crop,turn`). Prints each read's
//! wall and CPU time (the thread's run time from `/proc/thread-self/schedstat`, which other jobs
//! on a shared machine do not inflate) and, per kind, p50 and p95 of both.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

use std::time::Instant;

use iki_watermark::{embed_image, read_informed, Suspect, WatermarkKey};

fn load(name: &str) -> (u32, u32, Vec<u8>) {
    let path = format!(
        "{}/../../../shared/fixtures/textures/{name}",
        env!("CARGO_MANIFEST_DIR")
    );
    let img = image::load_from_memory(&std::fs::read(path).unwrap())
        .unwrap()
        .into_rgba8();
    (img.width(), img.height(), img.into_raw())
}

fn main() {
    let runs: usize = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(4);
    let kinds: Vec<String> = std::env::args()
        .nth(2)
        .unwrap_or_else(|| "r90,crop,turn".into())
        .split(',')
        .map(str::to_owned)
        .collect();
    let (aw, _, top) = load("kenney-platformer-pack-redux_spritesheet_complete.png");
    let (sw, _, sheet) = load("kenney-top-down-shooter_tilesheet_complete_2X.png");
    let side = 4096usize;
    assert_eq!(aw as usize, side);
    let mut texture = top.clone();
    texture.resize(side * side * 4, 0);
    for y in 0..2048 {
        let from = &sheet[y * sw as usize * 4..(y * sw as usize + sw as usize) * 4];
        let at = (2048 + y) * side * 4;
        texture[at..at + from.len()].copy_from_slice(from);
    }
    let key = WatermarkKey::from_bytes([0x42; 32]); // obviously fake
    let mut marked = texture.clone();
    embed_image(&key, 77, 4096, 4096, &mut marked).unwrap();
    let img = image::RgbaImage::from_raw(4096, 4096, marked).unwrap();
    let mut times: Vec<(String, f64, f64)> = Vec::new();
    for k in 0..runs {
        let kind = kinds[k % kinds.len()].as_str();
        let leak = if kind == "turn" {
            let turned = turn(&img, 3.0);
            let r = image::imageops::resize(
                &turned,
                turned.width() / 2,
                turned.height() / 2,
                image::imageops::FilterType::Triangle,
            );
            let rgb = image::DynamicImage::ImageRgba8(r).into_rgb8();
            let mut buf = Vec::new();
            image::codecs::jpeg::JpegEncoder::new_with_quality(&mut buf, 75)
                .encode_image(&rgb)
                .unwrap();
            image::load_from_memory(&buf).unwrap().into_rgba8()
        } else if kind == "r90" {
            let r =
                image::imageops::resize(&img, 3686, 3686, image::imageops::FilterType::CatmullRom);
            let rgb = image::DynamicImage::ImageRgba8(r).into_rgb8();
            let mut buf = Vec::new();
            image::codecs::jpeg::JpegEncoder::new_with_quality(&mut buf, 85)
                .encode_image(&rgb)
                .unwrap();
            image::load_from_memory(&buf).unwrap().into_rgba8()
        } else {
            image::imageops::crop_imm(&img, 700, 500, 2896, 2896).to_image()
        };
        let (w, h) = leak.dimensions();
        let t = Instant::now();
        let cpu = cpu_seconds();
        let mut suspect = Suspect::new(w, h, leak.into_raw()).unwrap();
        let blind = suspect.detect(&key);
        let read = read_informed(&key, 4096, 4096, &texture, &mut suspect, &mut || true).unwrap();
        let s = t.elapsed().as_secs_f64();
        let c = cpu_seconds() - cpu;
        times.push((kind.to_owned(), s, c));
        let angle = read.registration.map(|r| r.angle);
        println!("run {k} ({kind}): blind {:?}, found {:?}, angle {angle:?}, reads {}, {s:.2} s, CPU {c:.2} s", blind.found, read.detection.and_then(|d| d.found), read.candidates);
    }
    let load = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    for kind in &kinds {
        let mut wall: Vec<f64> = times.iter().filter(|t| &t.0 == kind).map(|t| t.1).collect();
        let mut cpu: Vec<f64> = times.iter().filter(|t| &t.0 == kind).map(|t| t.2).collect();
        if wall.is_empty() {
            continue;
        }
        wall.sort_by(f64::total_cmp);
        cpu.sort_by(f64::total_cmp);
        let at =
            |v: &[f64], q: f64| v[((v.len() as f64 * q).ceil() as usize).clamp(1, v.len()) - 1];
        println!(
            "{kind}: wall p50 {:.2} s, p95 {:.2} s; CPU p50 {:.2} s, p95 {:.2} s, best {:.2} s; {} reads; load average {}",
            at(&wall, 0.5), at(&wall, 0.95), at(&cpu, 0.5), at(&cpu, 0.95), cpu[0], wall.len(), load.split(' ').take(3).collect::<Vec<_>>().join(" ")
        );
    }
}

/// This thread's CPU time so far, in seconds (0 where `/proc` has no schedstat).
fn cpu_seconds() -> f64 {
    std::fs::read_to_string("/proc/thread-self/schedstat")
        .ok()
        .and_then(|s| {
            s.split_whitespace()
                .next()
                .and_then(|n| n.parse::<f64>().ok())
        })
        .map_or(0.0, |ns| ns / 1e9)
}

/// Turned by `degrees` about the centre (bilinear), the centred 90 % of each side kept.
fn turn(img: &image::RgbaImage, degrees: f64) -> image::RgbaImage {
    let (w, h) = (f64::from(img.width()), f64::from(img.height()));
    let (ow, oh) = ((w * 0.9) as u32, (h * 0.9) as u32);
    let (sin, cos) = degrees.to_radians().sin_cos();
    image::RgbaImage::from_fn(ow, oh, |i, j| {
        let (u, v) = (
            f64::from(i) + 0.5 - f64::from(ow) / 2.0,
            f64::from(j) + 0.5 - f64::from(oh) / 2.0,
        );
        let (x, y) = (
            u * cos + v * sin + w / 2.0 - 0.5,
            -u * sin + v * cos + h / 2.0 - 0.5,
        );
        let (x0, y0) = (x.floor(), y.floor());
        let (fx, fy) = (x - x0, y - y0);
        let at = |dx: f64, dy: f64| {
            img.get_pixel(
                (x0 + dx).clamp(0.0, w - 1.0) as u32,
                (y0 + dy).clamp(0.0, h - 1.0) as u32,
            )
            .0
        };
        let (a, b, c, d) = (at(0.0, 0.0), at(1.0, 0.0), at(0.0, 1.0), at(1.0, 1.0));
        image::Rgba(core::array::from_fn(|k| {
            let top = f64::from(a[k]) + (f64::from(b[k]) - f64::from(a[k])) * fx;
            let bottom = f64::from(c[k]) + (f64::from(d[k]) - f64::from(c[k])) * fx;
            (top + (bottom - top) * fy).round() as u8
        }))
    })
}

//! Times informed identify on a 4096 x 4096 texture built from two CC0 atlases:
//! `cargo run --release -p iki-watermark --example informed_speed [runs]`. The leaks alternate:
//! resized to 90 % (Catmull-Rom) then JPEG q85, and cropped to half the area.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, clippy::indexing_slicing)]

use std::time::Instant;

use iki_watermark::{embed_image, read_informed, Suspect, WatermarkKey};

fn load(name: &str) -> (u32, u32, Vec<u8>) {
    let path = format!("{}/../../../shared/fixtures/textures/{name}", env!("CARGO_MANIFEST_DIR"));
    let img = image::load_from_memory(&std::fs::read(path).unwrap()).unwrap().into_rgba8();
    (img.width(), img.height(), img.into_raw())
}

fn main() {
    let runs: usize = std::env::args().nth(1).and_then(|a| a.parse().ok()).unwrap_or(4);
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
    let mut times = Vec::new();
    for k in 0..runs {
        let leak = if k % 2 == 0 {
            let r = image::imageops::resize(&img, 3686, 3686, image::imageops::FilterType::CatmullRom);
            let rgb = image::DynamicImage::ImageRgba8(r).into_rgb8();
            let mut buf = Vec::new();
            image::codecs::jpeg::JpegEncoder::new_with_quality(&mut buf, 85).encode_image(&rgb).unwrap();
            image::load_from_memory(&buf).unwrap().into_rgba8()
        } else {
            image::imageops::crop_imm(&img, 700, 500, 2896, 2896).to_image()
        };
        let (w, h) = leak.dimensions();
        let t = Instant::now();
        let mut suspect = Suspect::new(w, h, leak.into_raw()).unwrap();
        let blind = suspect.detect(&key);
        let read = read_informed(&key, 4096, 4096, &texture, &mut suspect, &mut || true).unwrap();
        let s = t.elapsed().as_secs_f64();
        times.push(s);
        println!("run {k}: blind {:?}, found {:?}, {:.2} s", blind.found, read.detection.and_then(|d| d.found), s);
    }
}

//! What the watermark examples share (`geometry`, `soft_match`): loading a fixture, a
//! seeded id generator and the attacks a leak goes through (turns and composites from the
//! integration tests' `tests/common`).
#![allow(
    dead_code,
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

use iki_watermark::{embed_image, WatermarkKey};
use image::imageops::FilterType;

/// Width, height and RGBA bytes.
pub type Image = (u32, u32, Vec<u8>);
/// One attack on a leak.
pub type Attack = Box<dyn Fn(&Image) -> Image>;

/// A texture of `../shared/fixtures/textures/`.
pub fn load(name: &str) -> Image {
    let path = format!(
        "{}/../../../shared/fixtures/textures/{name}",
        env!("CARGO_MANIFEST_DIR")
    );
    let img = image::load_from_memory(&std::fs::read(path).unwrap())
        .unwrap()
        .into_rgba8();
    (img.width(), img.height(), img.into_raw())
}

/// SplitMix64: the same ids on every run.
pub struct Rng(pub u64);
impl Rng {
    pub fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    pub fn ids(&mut self, n: usize) -> Vec<u64> {
        (0..n).map(|_| self.next()).collect()
    }
}

pub fn part(img: &Image, (x, y, w, h): (u32, u32, u32, u32)) -> Image {
    let buf = image::RgbaImage::from_raw(img.0, img.1, img.2.clone()).unwrap();
    (
        w,
        h,
        image::imageops::crop_imm(&buf, x, y, w, h)
            .to_image()
            .into_raw(),
    )
}

pub fn resize(img: &Image, scale: f64) -> Image {
    let buf = image::RgbaImage::from_raw(img.0, img.1, img.2.clone()).unwrap();
    let (w, h) = (
        (f64::from(img.0) * scale).round() as u32,
        (f64::from(img.1) * scale).round() as u32,
    );
    (
        w,
        h,
        image::imageops::resize(&buf, w, h, FilterType::Triangle).into_raw(),
    )
}

/// The centred part keeping `keep` of the area (a third of the margin left and top).
pub fn crop(img: &Image, keep: f64) -> Image {
    let side = keep.sqrt();
    let (w, h) = (
        (f64::from(img.0) * side) as u32,
        (f64::from(img.1) * side) as u32,
    );
    part(img, ((img.0 - w) / 3, (img.1 - h) / 3, w, h))
}

/// The integration tests' attacks, shared rather than written twice.
#[path = "../../tests/common/mod.rs"]
mod common;

fn texture(img: &Image) -> common::Texture {
    common::Texture {
        width: img.0,
        height: img.1,
        rgba: img.2.clone(),
    }
}

fn image(t: common::Texture) -> Image {
    (t.width, t.height, t.rgba)
}

/// Turned by `degrees` about the centre (bilinear), the centred 90 % of each side kept.
pub fn turn(img: &Image, degrees: f64) -> Image {
    image(common::turned(&texture(img), degrees, 0.9))
}

/// Drawn over a checkerboard of 8-pixel squares, opaque.
pub fn checkerboard(img: &Image) -> Image {
    image(common::over_checkerboard(&texture(img), 8))
}

pub fn jpeg(img: &Image, quality: u8) -> Image {
    let buf = image::RgbaImage::from_raw(img.0, img.1, img.2.clone()).unwrap();
    let rgb = image::DynamicImage::ImageRgba8(buf).into_rgb8();
    let mut out = Vec::new();
    image::codecs::jpeg::JpegEncoder::new_with_quality(&mut out, quality)
        .encode_image(&rgb)
        .unwrap();
    let decoded = image::load_from_memory(&out).unwrap().into_rgba8();
    (decoded.width(), decoded.height(), decoded.into_raw())
}

pub fn marked(key: &WatermarkKey, id: u64, img: &Image) -> Image {
    let mut rgba = img.2.clone();
    embed_image(key, id, img.0, img.1, &mut rgba).unwrap();
    (img.0, img.1, rgba)
}

/// A generated texture: the tests' flat-colour art (a gradient and 12 flat rectangles, the
/// fixtures' style), opaque, or with `sprite` a disc of it on a transparent sheet (radius
/// 0.45 of the side, RGB 0 under alpha 0).
pub fn generated(side: u32, seed: u64, sprite: bool) -> Image {
    let mut t = common::flat_art(side, side, seed);
    if sprite {
        common::cut_disc(&mut t, 0.45 * f64::from(side), 0, Some([0, 0, 0]));
    }
    image(t)
}

//! Shared helpers for the integration tests: fixture loading, synthetic
//! textures and the attacks a leaked texture meets in practice.
#![allow(
    dead_code,
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

use iki_watermark::{payload_bits, Detection, WatermarkKey};

/// Obviously fake keys.
pub fn key_a() -> WatermarkKey {
    WatermarkKey::from_bytes(*b"fake-watermark-key-A-for-testing")
}
pub fn key_b() -> WatermarkKey {
    WatermarkKey::from_bytes(*b"fake-watermark-key-B-for-testing")
}

pub const FIXTURES: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../../../shared/fixtures/textures/"
);
pub const ATLASES: [&str; 4] = [
    "kenney-platformer-pack-redux_spritesheet_complete.png",
    "kenney-platformer-pack-redux_spritesheet_players.png",
    "kenney-top-down-shooter_spritesheet_tiles.png",
    "kenney-top-down-shooter_tilesheet_complete_2X.png",
];
/// The 1988 x 1470 atlas: smallest, and its width is not a power of two.
pub const TILES: &str = "kenney-top-down-shooter_spritesheet_tiles.png";

/// A straight-alpha RGBA8 texture.
#[derive(Clone)]
pub struct Texture {
    pub width: u32,
    pub height: u32,
    pub rgba: Vec<u8>,
}

/// Decodes a fixture PNG in place from `shared/fixtures/textures`.
pub fn load_atlas(name: &str) -> Texture {
    let file = std::fs::File::open(format!("{FIXTURES}{name}")).expect("fixture present");
    let mut reader = png::Decoder::new(file).read_info().unwrap();
    let mut rgba = vec![0; reader.output_buffer_size()];
    let info = reader.next_frame(&mut rgba).unwrap();
    assert_eq!(
        (info.color_type, info.bit_depth),
        (png::ColorType::Rgba, png::BitDepth::Eight)
    );
    rgba.truncate(info.buffer_size());
    Texture {
        width: info.width,
        height: info.height,
        rgba,
    }
}

/// xorshift64*: deterministic test randomness, no dependency.
pub struct TestRng(pub u64);
impl TestRng {
    pub fn next_u64(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    pub fn below(&mut self, n: u64) -> u64 {
        self.next_u64() % n
    }
    pub fn byte(&mut self) -> u8 {
        (self.next_u64() >> 56) as u8
    }
    pub fn gauss(&mut self) -> f64 {
        let u = ((self.next_u64() >> 11) as f64 + 1.0) / (1u64 << 53) as f64;
        let v = (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64;
        (-2.0 * u.ln()).sqrt() * (std::f64::consts::TAU * v).cos()
    }
}

/// Flat-colour "vector art": a background with a gentle gradient and random
/// flat rectangles, fully opaque. Mimics the fixtures' style at any size.
pub fn flat_art(width: u32, height: u32, seed: u64) -> Texture {
    let mut rng = TestRng(seed);
    let mut rgba = Vec::with_capacity((width * height * 4) as usize);
    for y in 0..height {
        for x in 0..width {
            rgba.extend_from_slice(&[
                (40 + x * 100 / width) as u8,
                (60 + y * 80 / height) as u8,
                150,
                255,
            ]);
        }
    }
    for _ in 0..12 {
        let (x0, y0) = (
            rng.below(u64::from(width)) as u32,
            rng.below(u64::from(height)) as u32,
        );
        let (w, h) = (
            1 + rng.below(u64::from(width / 2 + 1)) as u32,
            1 + rng.below(u64::from(height / 2 + 1)) as u32,
        );
        let colour = [rng.byte(), rng.byte(), rng.byte()];
        for y in y0..(y0 + h).min(height) {
            for x in x0..(x0 + w).min(width) {
                let i = ((y * width + x) * 4) as usize;
                rgba[i..i + 3].copy_from_slice(&colour);
            }
        }
    }
    Texture {
        width,
        height,
        rgba,
    }
}

/// Sets alpha to `alpha` (and RGB to `rgb`) outside the disc of radius `r`
/// around the centre, like a sprite on a transparent sheet.
pub fn cut_disc(t: &mut Texture, r: f64, alpha: u8, rgb: Option<[u8; 3]>) {
    let (cx, cy) = (f64::from(t.width) / 2.0, f64::from(t.height) / 2.0);
    for y in 0..t.height {
        for x in 0..t.width {
            if (f64::from(x) - cx).hypot(f64::from(y) - cy) > r {
                let i = ((y * t.width + x) * 4) as usize;
                t.rgba[i + 3] = alpha;
                if let Some(c) = rgb {
                    t.rgba[i..i + 3].copy_from_slice(&c);
                }
            }
        }
    }
}

/// Applies `f` to R, G and B of every pixel (alpha kept), rounding and clamping.
pub fn tone(t: &Texture, mut f: impl FnMut(f64) -> f64) -> Texture {
    let mut out = t.clone();
    for px in out.rgba.chunks_exact_mut(4) {
        for c in &mut px[..3] {
            *c = f(f64::from(*c)).round().clamp(0.0, 255.0) as u8;
        }
    }
    out
}

/// JPEG round trip of R, G, B with a real encoder (4:2:0). JPEG has no alpha:
/// the decoded colour gets `alpha` back (the original's, as a pipeline that
/// ships the alpha separately would, or all 255 when `alpha` is None).
pub fn jpeg_round_trip(t: &Texture, quality: u8, alpha: Option<&[u8]>) -> Texture {
    let rgb: Vec<u8> = t
        .rgba
        .chunks_exact(4)
        .flat_map(|p| [p[0], p[1], p[2]])
        .collect();
    let mut encoded = Vec::new();
    let mut encoder = jpeg_encoder::Encoder::new(&mut encoded, quality);
    encoder.set_sampling_factor(jpeg_encoder::SamplingFactor::R_4_2_0);
    let (w, h) = (
        u16::try_from(t.width).unwrap(),
        u16::try_from(t.height).unwrap(),
    );
    encoder
        .encode(&rgb, w, h, jpeg_encoder::ColorType::Rgb)
        .unwrap();
    let decoded = jpeg_decoder::Decoder::new(&encoded[..]).decode().unwrap();
    assert_eq!(decoded.len(), rgb.len());
    let mut rgba = Vec::with_capacity(t.rgba.len());
    for (i, px) in decoded.chunks_exact(3).enumerate() {
        rgba.extend_from_slice(px);
        rgba.push(alpha.map_or(255, |a| a[i * 4 + 3]));
    }
    Texture {
        width: t.width,
        height: t.height,
        rgba,
    }
}

/// How many of the 80 bits were read wrongly for `license_id`.
pub fn bit_errors(d: &Detection, license_id: u64) -> usize {
    payload_bits(license_id)
        .iter()
        .zip(d.bit_confidence.iter())
        .filter(|(bit, z)| **bit != (**z > 0.0))
        .count()
}

/// `t` resized to `width x height` with the `image` crate (an independent resampler).
pub fn resize(
    t: &Texture,
    width: u32,
    height: u32,
    filter: image::imageops::FilterType,
) -> Texture {
    let img = image::RgbaImage::from_raw(t.width, t.height, t.rgba.clone()).unwrap();
    let out = image::imageops::resize(&img, width, height, filter);
    Texture {
        width,
        height,
        rgba: out.into_raw(),
    }
}

/// `t` resized by `scale` on both axes (sizes rounded), Catmull-Rom (bicubic).
pub fn scaled(t: &Texture, scale: f64) -> Texture {
    let w = (f64::from(t.width) * scale).round() as u32;
    let h = (f64::from(t.height) * scale).round() as u32;
    resize(t, w, h, image::imageops::FilterType::CatmullRom)
}

/// The `width x height` part of `t` from `(x, y)`.
pub fn crop(t: &Texture, x: u32, y: u32, width: u32, height: u32) -> Texture {
    let mut rgba = Vec::with_capacity((width * height * 4) as usize);
    for row in y..y + height {
        let start = ((row * t.width + x) * 4) as usize;
        rgba.extend_from_slice(&t.rgba[start..start + (width * 4) as usize]);
    }
    Texture {
        width,
        height,
        rgba,
    }
}

/// `t` turned by `degrees` about its centre (bilinear, positive turns x towards y), then
/// the centred `keep` share of each side kept, so no corner the turn left empty shows.
pub fn turned(t: &Texture, degrees: f64, keep: f64) -> Texture {
    let (w, h) = (f64::from(t.width), f64::from(t.height));
    let (ow, oh) = ((w * keep) as u32, (h * keep) as u32);
    let (sin, cos) = degrees.to_radians().sin_cos();
    let mut rgba = Vec::with_capacity((ow * oh * 4) as usize);
    let at = |x: i64, y: i64, c: usize| -> f64 {
        let (x, y) = (
            x.clamp(0, i64::from(t.width) - 1),
            y.clamp(0, i64::from(t.height) - 1),
        );
        f64::from(t.rgba[((y as u32 * t.width + x as u32) * 4) as usize + c])
    };
    for j in 0..oh {
        for i in 0..ow {
            // Output pixel centre, relative to the centre, turned back onto the source.
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
            for c in 0..4 {
                let (a, b) = (at(x0 as i64, y0 as i64, c), at(x0 as i64 + 1, y0 as i64, c));
                let (d, e) = (
                    at(x0 as i64, y0 as i64 + 1, c),
                    at(x0 as i64 + 1, y0 as i64 + 1, c),
                );
                let top = a + (b - a) * fx;
                let bottom = d + (e - d) * fx;
                rgba.push((top + (bottom - top) * fy).round().clamp(0.0, 255.0) as u8);
            }
        }
    }
    Texture {
        width: ow,
        height: oh,
        rgba,
    }
}

/// `t` drawn over a checkerboard of `cell`-pixel squares (light and dark grey), opaque.
pub fn over_checkerboard(t: &Texture, cell: u32) -> Texture {
    let mut rgba = Vec::with_capacity(t.rgba.len());
    for (i, p) in t.rgba.chunks_exact(4).enumerate() {
        let (x, y) = (i as u32 % t.width, i as u32 / t.width);
        let bg = if (x / cell + y / cell) % 2 == 0 {
            204.0
        } else {
            153.0
        };
        let a = f64::from(p[3]) / 255.0;
        for &v in &p[..3] {
            rgba.push((a * f64::from(v) + (1.0 - a) * bg).round() as u8);
        }
        rgba.push(255);
    }
    Texture {
        width: t.width,
        height: t.height,
        rgba,
    }
}

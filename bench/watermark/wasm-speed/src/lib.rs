//! Exports for `speed.mjs`: build a synthetic texture once, then embed it in
//! 1 MiB row bands (as the license service streams a copy) or read it. Node
//! times each call; nothing here measures time. No wasm-bindgen: plain
//! `extern "C"` exports with integer arguments, so the module has no imports.
#![deny(missing_docs)]

use std::sync::Mutex;

use iki_watermark::{detect, embed_rows, WatermarkKey};

static TEXTURE: Mutex<(u32, Vec<u8>)> = Mutex::new((0, Vec::new()));

fn key() -> WatermarkKey {
    WatermarkKey::from_bytes([0x5A; 32]) // obviously fake
}

/// Builds a `side x side` texture of flat tiles, 60 % visible. Returns its byte length.
#[no_mangle]
pub extern "C" fn setup(side: u32) -> u32 {
    let mut rgba = Vec::with_capacity(side as usize * side as usize * 4);
    for y in 0..side {
        for x in 0..side {
            let tile = (x / 97) * 31 + (y / 89) * 17;
            let visible = (x / 97 + y / 89) % 5 < 3;
            rgba.extend_from_slice(&[(tile * 7) as u8, (tile * 13 + y / 64) as u8, (x / 32) as u8, if visible { 255 } else { 0 }]);
        }
    }
    let len = rgba.len() as u32;
    if let Ok(mut t) = TEXTURE.lock() {
        *t = (side, rgba);
    }
    len
}

/// Embeds `license_id` into the whole texture in bands of `band_rows` rows.
/// Returns 1 on success.
#[no_mangle]
pub extern "C" fn embed(license_id: u32, band_rows: u32) -> u32 {
    let Ok(mut t) = TEXTURE.lock() else { return 0 };
    let side = t.0;
    let band_bytes = side as usize * 4 * band_rows.max(1) as usize;
    let key = key();
    let mut ok = 1;
    for (i, band) in t.1.chunks_mut(band_bytes).enumerate() {
        let first_row = (i * band_rows.max(1) as usize) as u32;
        if embed_rows(&key, u64::from(license_id), side, first_row, band).is_err() {
            ok = 0;
        }
    }
    ok
}

/// Reads the texture; returns the low 32 bits of the id found, or 0.
#[no_mangle]
pub extern "C" fn read() -> u32 {
    let Ok(t) = TEXTURE.lock() else { return 0 };
    match detect(&key(), t.0, t.0, &t.1) {
        Ok(d) => d.found.map_or(0, |id| id as u32),
        Err(_) => 0,
    }
}

//! Known-answer vector for a second implementation (docs/watermark.md section 10).
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

use iki_watermark::{detect, embed_image, payload_bits, WatermarkKey};

fn key() -> WatermarkKey {
    let mut bytes = [0u8; 32];
    for (i, b) in bytes.iter_mut().enumerate() {
        *b = i as u8;
    }
    WatermarkKey::from_bytes(bytes)
}

/// 12 x 2 pixels: grey ramps, one pixel at alpha 7 (invisible), one at 8,
/// one white and one black pixel (clamping).
fn input() -> Vec<u8> {
    let mut rgba = Vec::new();
    for y in 0..2u8 {
        for x in 0..12u8 {
            let v = 60 + 10 * x + 5 * y;
            rgba.extend_from_slice(&[v, v / 2, 255 - v, 255]);
        }
    }
    rgba[3] = 7;
    rgba[4 + 3] = 8;
    rgba[4 * 2..4 * 2 + 3].copy_from_slice(&[255, 255, 255]);
    rgba[4 * 3..4 * 3 + 3].copy_from_slice(&[0, 0, 0]);
    rgba
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

#[test]
fn known_answer_vector() {
    let license_id = 0x0123_4567_89AB_CDEF;
    let bits: String = payload_bits(license_id)
        .iter()
        .map(|&b| if b { '1' } else { '0' })
        .collect();
    let mut rgba = input();
    embed_image(&key(), license_id, 12, 2, &mut rgba).unwrap();
    // The id big-endian, then CRC-16/CCITT-FALSE(01 23 45 67 89 ab cd ef) = 0x986b.
    assert_eq!(bits, format!("{license_id:064b}{:016b}", 0x986B));
    assert_eq!(
        hex(&input()),
        "3c1ec3074623b908ffffffff000000ff64329bff6e3791ff783c87ff82417dff8c4673ff964b69ffa0505fffaa5555ff\
         4120beff4b25b4ff552aaaff5f2fa0ff693496ff73398cff7d3e82ff874378ff91486eff9b4d64ffa5525affaf5750ff"
    );
    assert_eq!(
        hex(&rgba),
        "3c1ec3074825bb08fdfdfdff000000ff623099ff6c358fff763a85ff84437fff8a4471ff984d6bffa25261ffac5757ff\
         4322c0ff4d27b6ff572cacff5d2d9eff6b3698ff71378aff7f4084ff89457aff934a70ff994b62ffa7545cffb15952ff"
    );
    // 24 pixels cannot carry 80 bits: the read runs and finds nothing.
    assert_eq!(detect(&key(), 12, 2, &rgba).unwrap().found, None);
}

/// A second, larger vector for the WASM build's simd128 path (four pixels per vector, eight
/// per direction byte, the rest of a row scalar): 203 x 3 pixels of `(k * 131 + k / 32) mod
/// 256` (alphas on both sides of 8, channels at 0 and 255), key `00..1f`, the same id. The
/// native build runs the scalar loop; `ts/test/watermark.test.ts` checks that the WASM
/// module's output has this same SHA-256.
#[test]
fn larger_vector_pins_the_output_hash() {
    use sha2::{Digest, Sha256};
    let (width, height) = (203u32, 3u32);
    let mut rgba: Vec<u8> = (0..width * height * 4)
        .map(|k| ((k * 131 + k / 32) % 256) as u8)
        .collect();
    embed_image(&key(), 0x0123_4567_89AB_CDEF, width, height, &mut rgba).unwrap();
    assert_eq!(
        hex(&Sha256::digest(&rgba)),
        "db9ae1bc013c696b21505b8cfd8878a09c5e559d863dcf184fce1c24248db598"
    );
}

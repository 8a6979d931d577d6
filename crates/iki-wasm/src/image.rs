//! Image codecs at the boundary: PNG, JPEG and WebP decoding to straight RGBA8 and PNG
//! encoding, adapting `iki_license::{decode_image, encode_png}` (which check dimensions
//! against their limits before decoding). Used to read textures in place for watermark
//! embedding and detection.

use wasm_bindgen::prelude::*;

use crate::convert::{bytes, license_error, object};

/// Decodes a PNG, JPEG or WebP image: `{ width, height, rgba }` (straight alpha, rows top
/// to bottom).
#[wasm_bindgen(js_name = decodeImage)]
pub fn decode_image(image: &[u8]) -> Result<JsValue, JsValue> {
    let (width, height, rgba) = iki_license::decode_image(image).map_err(license_error)?;
    Ok(object(&[
        ("width", JsValue::from_f64(width.into())),
        ("height", JsValue::from_f64(height.into())),
        ("rgba", bytes(&rgba)),
    ]))
}

/// Encodes `width * height * 4` bytes of straight RGBA8 as a PNG.
#[wasm_bindgen(js_name = encodePng)]
pub fn encode_png(width: u32, height: u32, rgba: &[u8]) -> Result<Vec<u8>, JsValue> {
    iki_license::encode_png(width, height, rgba).map_err(license_error)
}

//! The license watermark at the boundary (SPEC "Watermark", docs/watermark.md): a key
//! handle, embedding into a copy of an RGBA8 texture and blind detection, adapting
//! `iki-watermark`. The key stays in WASM (`iki_watermark::WatermarkKey` zeroizes on drop,
//! and JS `free()` drops it); the key bytes passed in are wiped when the call returns.

use iki_watermark::WatermarkKey;
use wasm_bindgen::prelude::*;
use zeroize::Zeroizing;

use crate::convert::{argument_error, object, watermark_error};

/// A per-master 256-bit watermark key.
#[wasm_bindgen]
pub struct WasmWatermarkKey {
    pub(crate) key: WatermarkKey,
}

#[wasm_bindgen]
impl WasmWatermarkKey {
    /// The key from its 32 bytes.
    #[wasm_bindgen(js_name = fromBytes)]
    pub fn from_bytes(key: Vec<u8>) -> Result<WasmWatermarkKey, JsValue> {
        let key = Zeroizing::new(key);
        let array: Zeroizing<[u8; 32]> = Zeroizing::new(
            key.as_slice()
                .try_into()
                .map_err(|_| argument_error("key", "must be exactly 32 bytes"))?,
        );
        Ok(Self {
            key: WatermarkKey::from_bytes(*array),
        })
    }
}

/// A marked copy of a `width x height` straight-alpha RGBA8 texture carrying `license_id`.
#[wasm_bindgen(js_name = embedWatermark)]
pub fn embed_watermark(
    key: &WasmWatermarkKey,
    license_id: u64,
    width: u32,
    height: u32,
    rgba: &[u8],
) -> Result<Vec<u8>, JsValue> {
    let mut marked = rgba.to_vec();
    iki_watermark::embed_image(&key.key, license_id, width, height, &mut marked)
        .map_err(watermark_error)?;
    Ok(marked)
}

/// Reads the watermark: `{ found, licenseId?, confidence }`, the license id as 16 lowercase
/// hex digits when the CRC matched and the confidences passed.
#[wasm_bindgen(js_name = detectWatermark)]
pub fn detect_watermark(
    key: &WasmWatermarkKey,
    width: u32,
    height: u32,
    rgba: &[u8],
) -> Result<JsValue, JsValue> {
    let detection =
        iki_watermark::detect(&key.key, width, height, rgba).map_err(watermark_error)?;
    let mut fields = vec![
        ("found", JsValue::from_bool(detection.found.is_some())),
        ("confidence", JsValue::from_f64(detection.confidence)),
    ];
    if let Some(id) = detection.found {
        fields.push(("licenseId", JsValue::from_str(&format!("{id:016x}"))));
    }
    Ok(object(&fields))
}

//! A texture decoded once and kept in WASM memory (issue 28 item 2): [`DecodedTexture`] holds
//! a PNG's (or JPEG's, WebP's) straight RGBA8 pixels and, when asked, their SHA-256, so a
//! master export decodes each texture once for both of its passes (the manifest's hash, which
//! precedes the data, and the write) and its pixels never cross into JS: the writer takes the
//! handle whole (`WasmWriter.beginTexture`, writer/texture.rs) and writes it chunk by chunk.
//! `bytes` copies a range out for the callers that need the pixels in JS (a deflate worker, a
//! browser's native hash). Decoding checks dimensions against the image limits first
//! (`iki_license::decode_image`).

use js_sys::Uint8Array;
use wasm_bindgen::prelude::*;

use iki_crypto::hash::Sha256;

use crate::convert::{argument_error, license_error};
use crate::error::js_error;

/// Decoded RGBA8 pixels held in WASM memory, with their SHA-256 when decoded with `hash`.
#[wasm_bindgen]
pub struct DecodedTexture {
    width: u32,
    height: u32,
    rgba: Vec<u8>,
    sha256: Option<[u8; 32]>,
}

#[wasm_bindgen]
impl DecodedTexture {
    /// Decodes an image (`IMAGE_TOO_LARGE`, `IMAGE_DECODE_FAILED` as `decodeImage`); with
    /// `hash`, also the SHA-256 of its pixels (through the host's hasher where one is
    /// installed, which reads them in place).
    pub fn decode(image: &[u8], hash: bool) -> Result<DecodedTexture, JsValue> {
        let (width, height, rgba) = iki_license::decode_image(image).map_err(license_error)?;
        let sha256 = if hash {
            let mut hasher = Sha256::new();
            hasher.update(&rgba);
            Some(hasher.finalize().map_err(js_error)?)
        } else {
            None
        };
        Ok(Self {
            width,
            height,
            rgba,
            sha256,
        })
    }

    /// Width in pixels.
    #[wasm_bindgen(getter)]
    pub fn width(&self) -> u32 {
        self.width
    }

    /// Height in pixels.
    #[wasm_bindgen(getter)]
    pub fn height(&self) -> u32 {
        self.height
    }

    /// Bytes of pixels (`width * height * 4`).
    #[wasm_bindgen(getter, js_name = byteLength)]
    pub fn byte_length(&self) -> f64 {
        self.rgba.len() as f64
    }

    /// The SHA-256 of the pixels (32 bytes), or `undefined` when decoded without `hash`.
    #[wasm_bindgen(getter)]
    pub fn sha256(&self) -> Option<Vec<u8>> {
        self.sha256.map(|d| d.to_vec())
    }

    /// A copy of `length` bytes of the pixels from `offset` as a new `Uint8Array`, made from
    /// WASM memory directly (no second buffer inside WASM, so copying a whole texture out does
    /// not grow its memory); `INVALID_ARGUMENT` past the end.
    pub fn bytes(&self, offset: u32, length: u32) -> Result<Uint8Array, JsValue> {
        let start = offset as usize;
        start
            .checked_add(length as usize)
            .and_then(|end| self.rgba.get(start..end))
            .map(Uint8Array::from)
            .ok_or_else(|| argument_error("offset", "offset + length is past the pixels"))
    }
}

impl DecodedTexture {
    /// The pixels.
    pub(crate) fn pixels(&self) -> &[u8] {
        &self.rgba
    }

    /// The SHA-256 taken at decoding, if any.
    pub(crate) fn digest(&self) -> Option<&[u8; 32]> {
        self.sha256.as_ref()
    }
}

//! Writing a texture entry from a [`DecodedTexture`] (texture.rs) without its pixels crossing
//! into JS: `beginTexture` takes the handle (JS's object is spent), checks the digest taken at
//! decoding against the entry's manifest sha256 (`iki_format::Writer::verify_entry_hash`: a
//! mismatch is `HASH_MISMATCH` before any byte; a match spares the writer a second SHA-256
//! pass, since these are the very bytes hashed and nothing can change them), and
//! `writeTextureChunk` writes one whole chunk per call, so output is drained between chunks
//! and memory stays at the texture plus one chunk. While a texture is being written, `write`,
//! `writeDeflated` and `endEntry` are refused (`INVALID_STATE`); `endEntry` follows the last
//! chunk as for any entry. A texture decoded without its hash is written the same way and
//! hashed by the writer as `write` would.

use wasm_bindgen::prelude::*;

use super::WasmWriter;
use crate::error::{js_error, Error};
use crate::texture::DecodedTexture;

/// The texture a writer is writing and how far it got.
pub(super) struct TextureInProgress {
    texture: DecodedTexture,
    at: usize,
}

#[wasm_bindgen]
impl WasmWriter {
    /// Starts writing the current entry from `texture` (taken: the JS handle is spent); see the
    /// module comment. `HASH_MISMATCH` when its digest is not the entry's manifest sha256.
    #[wasm_bindgen(js_name = beginTexture)]
    pub fn begin_texture(&mut self, texture: DecodedTexture) -> Result<(), JsValue> {
        self.no_texture("beginTexture while a texture is being written")?;
        let writer = self.writer("beginTexture after finish")?;
        if let Some(digest) = texture.digest() {
            writer.verify_entry_hash(digest).map_err(js_error)?;
        }
        self.texture = Some(TextureInProgress { texture, at: 0 });
        Ok(())
    }

    /// Writes the texture's next whole chunk; `true` once all of it is written (then call
    /// `endEntry`). Drain `takeOutput` between calls.
    #[wasm_bindgen(js_name = writeTextureChunk)]
    pub fn write_texture_chunk(&mut self) -> Result<bool, JsValue> {
        let mut progress = self.texture.take().ok_or_else(|| {
            js_error(Error::InvalidState {
                operation: "writeTextureChunk before beginTexture",
            })
        })?;
        let writer = self.writer("writeTextureChunk after finish")?;
        let step = writer.current_chunk_bytes().unwrap_or(0).max(1) as usize;
        let pixels = progress.texture.pixels();
        let end = progress.at.saturating_add(step).min(pixels.len());
        let piece = pixels.get(progress.at..end).unwrap_or_default();
        writer.write(piece).map_err(js_error)?;
        progress.at = end;
        if end >= pixels.len() {
            return Ok(true);
        }
        self.texture = Some(progress);
        Ok(false)
    }
}

impl WasmWriter {
    /// `INVALID_STATE` naming `operation` while a texture is being written.
    pub(super) fn no_texture(&self, operation: &'static str) -> Result<(), JsValue> {
        match self.texture {
            Some(_) => Err(js_error(Error::InvalidState { operation })),
            None => Ok(()),
        }
    }
}

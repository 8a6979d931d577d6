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
//!
//! With chunks deflated on other workers (deflate-chunk.ts), `textureBytes` copies a range of
//! the texture in progress out for a worker, and `writeTextureDeflated` takes the stream the
//! worker made of the next chunk: the writer checks that it decodes to exactly that chunk of
//! the texture's own pixels (`iki_format::Writer::write_deflated`), so the digest taken at
//! decoding still stands for what is written and the pixels are not hashed a second time.

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
        self.next_texture_chunk(
            [
                "writeTextureChunk before beginTexture",
                "writeTextureChunk after finish",
            ],
            |writer, piece| writer.write(piece),
        )
    }

    /// Writes the texture's next whole chunk from `stream`, its raw DEFLATE stream made
    /// elsewhere (`deflateChunk`); `true` once all of it is written (then call `endEntry`).
    /// `BAD_DATA` unless the stream decodes to exactly that chunk of the texture's pixels.
    #[wasm_bindgen(js_name = writeTextureDeflated)]
    pub fn write_texture_deflated(&mut self, stream: &[u8]) -> Result<bool, JsValue> {
        self.next_texture_chunk(
            [
                "writeTextureDeflated before beginTexture",
                "writeTextureDeflated after finish",
            ],
            |writer, piece| writer.write_deflated(piece, stream),
        )
    }

    /// A copy of `length` bytes of the texture being written, from `offset` (for a worker that
    /// deflates its chunks); `INVALID_STATE` when no texture is, `INVALID_ARGUMENT` past its end.
    #[wasm_bindgen(js_name = textureBytes)]
    pub fn texture_bytes(&self, offset: u32, length: u32) -> Result<js_sys::Uint8Array, JsValue> {
        let progress = self.texture.as_ref().ok_or_else(|| {
            js_error(Error::InvalidState {
                operation: "textureBytes while no texture is being written",
            })
        })?;
        progress.texture.bytes(offset, length)
    }
}

impl WasmWriter {
    /// Hands the texture's next whole chunk (the writer's chunk of whole rows) to `write`, then
    /// keeps the texture while pixels are left, else drops it (`true`: the entry can end).
    /// `operations` name the call before `beginTexture` and after `finish`.
    fn next_texture_chunk(
        &mut self,
        operations: [&'static str; 2],
        write: impl FnOnce(&mut iki_format::Writer, &[u8]) -> Result<(), iki_format::Error>,
    ) -> Result<bool, JsValue> {
        let [before, after] = operations;
        let mut progress = self
            .texture
            .take()
            .ok_or_else(|| js_error(Error::InvalidState { operation: before }))?;
        let writer = self.writer(after)?;
        let pixels = progress.texture.pixels();
        let step = writer.current_chunk_bytes().unwrap_or(0).max(1) as usize;
        let end = progress.at.saturating_add(step).min(pixels.len());
        write(writer, pixels.get(progress.at..end).unwrap_or_default()).map_err(js_error)?;
        progress.at = end;
        if end >= pixels.len() {
            return Ok(true);
        }
        self.texture = Some(progress);
        Ok(false)
    }

    /// `INVALID_STATE` naming `operation` while a texture is being written.
    pub(super) fn no_texture(&self, operation: &'static str) -> Result<(), JsValue> {
        match self.texture {
            Some(_) => Err(js_error(Error::InvalidState { operation })),
            None => Ok(()),
        }
    }
}

//! The writer's input copied straight from a caller's buffer outside WASM (issue 28 item 4):
//! `write(&[u8])` copies the bytes into WASM memory first (wasm-bindgen's copy of the argument,
//! a fresh allocation each call), and the writer then copies them again into its output.
//! `writeFrom` makes one copy of a stored entry's whole chunk: from the caller's `Uint8Array`
//! into the chunk's place in the writer's output (`iki_format::Writer::write_stored_chunk`),
//! where an encrypted file's chunk is then sealed in place. Anything else (a deflated entry,
//! part of a chunk) is written as `write` would. Nothing here hands out a view of WASM memory.

use js_sys::Uint8Array;
use wasm_bindgen::prelude::*;

use super::WasmWriter;
use crate::error::js_error;

#[wasm_bindgen]
impl WasmWriter {
    /// Appends bytes of the current entry, as `write` does; a stored entry's whole next chunk
    /// is copied from `bytes` straight into the output (one copy instead of two).
    #[wasm_bindgen(js_name = writeFrom)]
    pub fn write_from(&mut self, bytes: &Uint8Array) -> Result<(), JsValue> {
        self.no_texture("writeFrom while a texture is being written")?;
        let writer = self.writer("writeFrom after finish")?;
        let len = bytes.length() as usize;
        if writer.takes_stored_chunk(len) {
            // `write_stored_chunk` hands `fill` exactly `len` bytes, the length `copy_to` needs.
            return writer
                .write_stored_chunk(len, |dest| bytes.copy_to(dest))
                .map_err(js_error);
        }
        writer.write(&bytes.to_vec()).map_err(js_error)
    }
}

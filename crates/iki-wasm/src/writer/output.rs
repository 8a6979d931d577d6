//! The writer's output copied straight into a caller's buffer outside WASM (issue 28 item 4):
//! `takeOutput` returns a new array per call (a copy out of WASM memory into it), which a saver
//! then copies again into the batch it writes and hashes. `takeOutputInto` makes that one copy:
//! from the writer's buffer into the caller's `Uint8Array` at an offset, the writer keeping its
//! buffer's capacity for the next chunk. Nothing here hands out a view of WASM memory.

use js_sys::Uint8Array;
use wasm_bindgen::prelude::*;

use super::WasmWriter;
use crate::convert::argument_error;

#[wasm_bindgen]
impl WasmWriter {
    /// Bytes produced and not yet taken (what `takeOutputInto` would copy).
    #[wasm_bindgen(js_name = outputLength)]
    pub fn output_length(&mut self) -> Result<u32, JsValue> {
        let len = self.writer("outputLength after finish")?.output_len();
        u32::try_from(len).map_err(|_| argument_error("output", "more than 4 GiB pending"))
    }

    /// Copies the bytes produced so far into `dest` at `at` and drains them; returns how many.
    /// `INVALID_ARGUMENT` (nothing taken) when they do not fit (see `outputLength`).
    #[wasm_bindgen(js_name = takeOutputInto)]
    pub fn take_output_into(&mut self, dest: &Uint8Array, at: u32) -> Result<u32, JsValue> {
        let len = self.output_length()?;
        let end = at
            .checked_add(len)
            .filter(|&end| end <= dest.length())
            .ok_or_else(|| argument_error("dest", "no room for the output at this offset"))?;
        self.writer("takeOutputInto after finish")?
            .drain_output(|bytes| dest.subarray(at, end).copy_from(bytes));
        Ok(len)
    }
}

//! The container writer at the boundary: [`WasmWriter`] over `iki_format::Writer`
//! (docs/format.md sections 1 to 7), signed by a key inside WASM or by an external key
//! (a browser's non-extractable WebCrypto key): `finishExternal` hands out the 52-byte message
//! of section 7 and `attachSignature` checks the signature made for it before the last bytes
//! are released.
//!
//! Bytes go in one piece at a time (`write`, or `writeFrom` a `Uint8Array`: `writer/input.rs`)
//! and output is drained between pieces (`takeOutput`, `takeOutputInto`: `writer/output.rs`),
//! so WASM memory stays around one chunk. The manifest and the signer cross
//! as JSON text that the format crate parses and checks.
//!
//! The file digest may be computed elsewhere (a second Web Worker hashing the output as it
//! streams out): `digestElsewhere`, then `finishElsewhere` and `supplyFileDigest` with the
//! digest and the number of bytes it covers (checked against the bytes written; see
//! `iki_format::writer::DigestRequest`), then the external signature as above.
//!
//! Chunks may be deflated in other workers (`deflateChunk`, which holds no key) and handed to
//! the writer with `writeDeflated` beside the chunk's bytes, which checks that each stream
//! decodes to exactly those bytes before sealing it (`iki_format::Writer::write_deflated`).
//!
//! A texture decoded in WASM (`DecodedTexture`) is written from WASM memory with
//! `beginTexture` and `writeTextureChunk` (`writer/texture.rs`).
//!
//! The options (`WasmWriterOptions`) are in `writer/options.rs`. Secrets: passwords arrive as
//! owned buffers wrapped in `Zeroizing`; the content key and the writer's signing-key copy live
//! in zeroize-on-drop types and are dropped by `free()`.

mod input;
mod options;
mod output;
mod texture;

use iki_format::{DigestRequest, Manifest, PendingSignature, Writer};
use wasm_bindgen::prelude::*;

use crate::convert::{argument_error, array32};
use crate::error::{js_error, Error};

pub use options::WasmWriterOptions;

/// A streaming container writer: `write` the bytes of each entry in manifest order,
/// `endEntry` after each, drain `takeOutput` as you go, and `finish` for SIGN.
#[wasm_bindgen]
pub struct WasmWriter {
    inner: Option<Writer>,
    request: Option<DigestRequest>,
    pending: Option<PendingSignature>,
    texture: Option<texture::TextureInProgress>,
}

#[wasm_bindgen]
impl WasmWriter {
    /// Starts a file: validates the manifest JSON (docs/format.md section 5) against the
    /// options and emits the preamble, HEAD, KEYS and MANI (see `takeOutput`). Takes the
    /// key material out of `options`, which can then only be freed.
    #[wasm_bindgen(constructor)]
    pub fn new(
        options: &mut WasmWriterOptions,
        manifest_json: &str,
    ) -> Result<WasmWriter, JsValue> {
        let manifest =
            Manifest::from_json(options.kind, manifest_json.as_bytes()).map_err(js_error)?;
        let options = options.take()?;
        let inner = Writer::new(options, &manifest).map_err(js_error)?;
        Ok(Self {
            inner: Some(inner),
            request: None,
            pending: None,
            texture: None,
        })
    }

    /// Appends bytes of the current entry.
    pub fn write(&mut self, bytes: &[u8]) -> Result<(), JsValue> {
        self.no_texture("write while a texture is being written")?;
        self.writer("write after finish")?
            .write(bytes)
            .map_err(js_error)
    }

    /// Emits the current entry's next chunk, whose decoded bytes are `raw`, from `data`, its
    /// raw DEFLATE stream made by `deflateChunk` elsewhere. A stream that does not decode to
    /// exactly `raw` is refused (`BAD_DATA`; `INVALID_ARGUMENT` when `raw` is not the next
    /// chunk's length) with nothing written; the writer can go on.
    #[wasm_bindgen(js_name = writeDeflated)]
    pub fn write_deflated(&mut self, raw: &[u8], data: &[u8]) -> Result<(), JsValue> {
        self.no_texture("writeDeflated while a texture is being written")?;
        self.writer("writeDeflated after finish")?
            .write_deflated(raw, data)
            .map_err(js_error)
    }

    /// Decoded bytes per full DATA chunk of entry `entry` (whole rows for rgba8), or 0 past
    /// the last entry: how to cut an entry for `deflateChunk`.
    #[wasm_bindgen(js_name = chunkBytes)]
    pub fn chunk_bytes(&mut self, entry: u32) -> Result<u32, JsValue> {
        Ok(self
            .writer("chunkBytes after finish")?
            .chunk_bytes(entry)
            .unwrap_or(0))
    }

    /// Ends the current entry (checks its size and sha256).
    #[wasm_bindgen(js_name = endEntry)]
    pub fn end_entry(&mut self) -> Result<(), JsValue> {
        self.no_texture("endEntry before the texture's last chunk")?;
        self.writer("endEntry after finish")?
            .end_entry()
            .map_err(js_error)
    }

    /// The bytes produced so far.
    #[wasm_bindgen(js_name = takeOutput)]
    pub fn take_output(&mut self) -> Result<Vec<u8>, JsValue> {
        Ok(self.writer("takeOutput after finish")?.take_output())
    }

    /// Emits SIGN and returns the remaining bytes; the writer is spent afterwards.
    pub fn finish(&mut self) -> Result<Vec<u8>, JsValue> {
        let writer = self.take_writer("finish after finish")?;
        writer.finish().map_err(js_error)
    }

    /// For an external key: emits SIGN up to its signature and returns the remaining bytes;
    /// then sign `signatureMessage` and pass the signature to `attachSignature`.
    #[wasm_bindgen(js_name = finishExternal)]
    pub fn finish_external(&mut self) -> Result<Vec<u8>, JsValue> {
        let writer = self.take_writer("finishExternal after finish")?;
        let (out, pending) = writer.finish_external().map_err(js_error)?;
        self.pending = Some(pending);
        Ok(out)
    }

    /// From now on the caller hashes every byte of `takeOutput` (from the very first) and the
    /// writer does not: finish with `finishElsewhere` and `supplyFileDigest`.
    #[wasm_bindgen(js_name = digestElsewhere)]
    pub fn digest_elsewhere(&mut self) -> Result<(), JsValue> {
        self.writer("digestElsewhere after finish")?
            .digest_elsewhere()
            .map_err(js_error)
    }

    /// After `digestElsewhere`: emits SIGN up to its signature and returns the remaining bytes
    /// (which the digest covers too); then call `supplyFileDigest`.
    #[wasm_bindgen(js_name = finishElsewhere)]
    pub fn finish_elsewhere(&mut self) -> Result<Vec<u8>, JsValue> {
        let writer = self.take_writer("finishElsewhere after finish")?;
        let (out, request) = writer.finish_elsewhere().map_err(js_error)?;
        self.request = Some(request);
        Ok(out)
    }

    /// The file's SHA-256 (32 bytes) computed elsewhere over `hashed` bytes: refused
    /// (`INVALID_ARGUMENT`, no signature made) unless they are exactly the bytes written.
    /// Then sign `signatureMessage` and pass the signature to `attachSignature`.
    #[wasm_bindgen(js_name = supplyFileDigest)]
    pub fn supply_file_digest(&mut self, digest: &[u8], hashed: f64) -> Result<(), JsValue> {
        let digest = array32(digest, "digest").map_err(js_error)?;
        if !(0.0..=9_007_199_254_740_991.0).contains(&hashed) || hashed.fract() != 0.0 {
            return Err(argument_error(
                "hashed",
                "must be an integer from 0 to 2^53 - 1",
            ));
        }
        let request = self.request.take().ok_or_else(|| {
            js_error(Error::InvalidState {
                operation: "supplyFileDigest before finishElsewhere, or twice",
            })
        })?;
        #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)] // checked above
        let pending = request.supply(digest, hashed as u64).map_err(js_error)?;
        self.pending = Some(pending);
        Ok(())
    }

    /// The 52 bytes the external key signs: `"IKIFMT-SIGNATURE-V1" || 0x00 || digest`.
    #[wasm_bindgen(js_name = signatureMessage)]
    pub fn signature_message(&self) -> Result<Vec<u8>, JsValue> {
        Ok(self.pending()?.message().to_vec())
    }

    /// Checks the external key's 64-byte signature strictly and returns it as the file's
    /// last bytes (`BAD_SIGNATURE` when it does not verify: nothing is released then).
    #[wasm_bindgen(js_name = attachSignature)]
    pub fn attach_signature(&mut self, signature: &[u8]) -> Result<Vec<u8>, JsValue> {
        let signature: &[u8; 64] = signature
            .try_into()
            .map_err(|_| argument_error("signature", "must be exactly 64 bytes"))?;
        let last = self.pending()?.attach(signature).map_err(js_error)?;
        self.pending = None;
        Ok(last.to_vec())
    }
}

impl WasmWriter {
    fn pending(&self) -> Result<&PendingSignature, JsValue> {
        self.pending.as_ref().ok_or_else(|| {
            js_error(Error::InvalidState {
                operation: "signature before finishExternal, or after attachSignature",
            })
        })
    }

    fn writer(&mut self, operation: &'static str) -> Result<&mut Writer, JsValue> {
        self.inner
            .as_mut()
            .ok_or_else(|| js_error(Error::InvalidState { operation }))
    }

    /// The writer, taken out to finish the file (`operation` names the call in the error
    /// when it was already taken).
    fn take_writer(&mut self, operation: &'static str) -> Result<Writer, JsValue> {
        self.inner
            .take()
            .ok_or_else(|| js_error(Error::InvalidState { operation }))
    }
}

/// Deflates one chunk's decoded bytes as a writer at `level`, `chunk_size` and `encrypted`
/// would (the same stream), for a writer's `writeDeflated`: returns the raw DEFLATE stream.
/// Holds no key and no state a caller sees, so any worker can run it.
#[wasm_bindgen(js_name = deflateChunk)]
pub fn deflate_chunk(
    raw: &[u8],
    level: u8,
    chunk_size: u32,
    encrypted: bool,
) -> Result<Vec<u8>, JsValue> {
    iki_format::deflate_chunk(raw, level, chunk_size, encrypted).map_err(js_error)
}

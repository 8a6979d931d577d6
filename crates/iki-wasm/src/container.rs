//! The container at the boundary: [`WasmReader`] over `iki_format::Reader` and
//! [`WasmWriter`] over `iki_format::Writer` (docs/format.md sections 1 to 7).
//!
//! Both are push-based and hold no logic of their own: bytes go in one piece at a time
//! (`push`, `write`), events and output come out between pushes (`next`, `takeOutput`), so
//! WASM memory stays around one chunk when the caller feeds modest pieces (the TS wrapper
//! uses 64 KiB). Reader events cross as plain objects (`convert::event_to_js`); the manifest
//! and the signer cross as JSON text that the format crate parses and checks.
//!
//! Secrets: passwords arrive as owned buffers wrapped in `Zeroizing`; the content key, the
//! writer's signing-key copy and the reader's content cipher live in zeroize-on-drop types
//! and are dropped by `free()`.

use iki_crypto::{Argon2Params, SecretKey32};
use iki_format::{
    Event, Kind, Manifest, NewSlot, Protection, Reader, SignerInfo, Writer, WriterOptions,
};
use iki_license::LicenseReader;
use wasm_bindgen::prelude::*;
use zeroize::Zeroizing;

use crate::convert::{argument_error, array32, event_to_js, license_error, parse_kind};
use crate::error::{js_error, Error};
use crate::keys::{WasmContentKey, WasmSigningKey, WasmX25519Identity};

/// What a [`WasmReader`] reads with.
enum Backend {
    /// Any container; unlocked by the caller after the `locked` event.
    Plain(Reader),
    /// A license copy unlocked from inside with a player's license key (`iki-license`).
    License(LicenseReader),
}

/// A streaming container reader. Call `push` with pieces of the file and drain `next`
/// until it returns `undefined` between pushes; `finish` at the end of input.
#[wasm_bindgen]
pub struct WasmReader {
    backend: Backend,
}

#[wasm_bindgen]
impl WasmReader {
    /// A reader expecting a file of `kind` (`"project"` or `"model"`).
    #[wasm_bindgen(constructor)]
    pub fn new(kind: &str) -> Result<WasmReader, JsValue> {
        let kind = parse_kind(kind).map_err(js_error)?;
        Ok(Self {
            backend: Backend::Plain(Reader::new(kind)),
        })
    }

    /// Appends input.
    pub fn push(&mut self, bytes: &[u8]) -> Result<(), JsValue> {
        match &mut self.backend {
            Backend::Plain(r) => r.push(bytes).map_err(js_error),
            Backend::License(r) => r.push(bytes).map_err(license_error),
        }
    }

    /// Declares the end of input.
    pub fn finish(&mut self) -> Result<(), JsValue> {
        match &mut self.backend {
            Backend::Plain(r) => r.finish().map_err(js_error),
            Backend::License(r) => r.finish().map_err(license_error),
        }
    }

    /// The next event as a plain object, or `undefined` when more input is needed.
    #[allow(clippy::should_implement_trait)] // a JS method, not an iterator
    pub fn next(&mut self) -> Result<JsValue, JsValue> {
        let event: Option<Event> = match &mut self.backend {
            Backend::Plain(r) => r.next().map_err(js_error)?,
            Backend::License(r) => r.next().map_err(license_error)?,
        };
        let Some(event) = event else {
            return Ok(JsValue::UNDEFINED);
        };
        let js = event_to_js(&event).map_err(js_error)?;
        // The chunk's bytes were copied out into a Uint8Array: its buffer decodes the next.
        if let Event::Chunk { data, .. } = event {
            match &mut self.backend {
                Backend::Plain(r) => r.recycle(data),
                Backend::License(r) => r.recycle(data),
            }
        }
        Ok(js)
    }

    /// Opens the content key with a password's UTF-8 bytes (after the `locked` event). A
    /// refusal leaves the reader locked, so another password may be tried.
    #[wasm_bindgen(js_name = unlockPassword)]
    pub fn unlock_password(&mut self, password: Vec<u8>) -> Result<(), JsValue> {
        let password = Zeroizing::new(password);
        self.plain()?.unlock_password(&password).map_err(js_error)
    }

    /// One step of a password unlock: derives a key for at most one password slot, so the
    /// caller can check for cancellation between slots. `true` when the file is open,
    /// `false` when more slots remain (call again with the same password); a refusal
    /// (after the last slot) leaves the reader locked, as `unlockPassword`'s does.
    #[wasm_bindgen(js_name = unlockPasswordStep)]
    pub fn unlock_password_step(&mut self, password: Vec<u8>) -> Result<bool, JsValue> {
        let password = Zeroizing::new(password);
        self.plain()?
            .unlock_password_step(&password)
            .map_err(js_error)
    }

    /// Opens the content key with an X25519 identity (recipient slots).
    #[wasm_bindgen(js_name = unlockIdentity)]
    pub fn unlock_identity(&mut self, identity: &WasmX25519Identity) -> Result<(), JsValue> {
        let secret = identity.x25519();
        self.plain()?.unlock_identity(&secret).map_err(js_error)
    }

    /// Uses a content key obtained elsewhere (account slots); a wrong key is
    /// `DECRYPT_FAILED` at the manifest.
    #[wasm_bindgen(js_name = unlockContentKey)]
    pub fn unlock_content_key(&mut self, key: &WasmContentKey) -> Result<(), JsValue> {
        let key = key.key();
        self.plain()?.unlock_content_key(key).map_err(js_error)
    }

    /// Reads on without a key: structure and signature only.
    #[wasm_bindgen(js_name = skipContent)]
    pub fn skip_content(&mut self) -> Result<(), JsValue> {
        self.plain()?.skip_content().map_err(js_error)
    }
}

impl WasmReader {
    /// A reader of a license copy that the player session unlocks from inside (for the
    /// player's export, which owns the session). Its events are the license reader's:
    /// no `header` or `locked`.
    #[must_use]
    pub fn from_license_reader(reader: LicenseReader) -> Self {
        Self {
            backend: Backend::License(reader),
        }
    }

    fn plain(&mut self) -> Result<&mut Reader, JsValue> {
        match &mut self.backend {
            Backend::Plain(r) => Ok(r),
            Backend::License(_) => Err(js_error(Error::InvalidState {
                operation: "a license copy reader unlocks itself",
            })),
        }
    }
}

/// Everything a writer needs besides the manifest; built up in JS, then handed to
/// `new WasmWriter(options, manifestJson)`, which takes its contents.
#[wasm_bindgen]
pub struct WasmWriterOptions {
    kind: Kind,
    signing_key: Option<iki_crypto::SigningKey>,
    signer: SignerInfo,
    chunk_size: u32,
    created_ms: u64,
    deflate_level: u8,
    content_key: Option<SecretKey32>,
    slots: Vec<NewSlot>,
}

#[wasm_bindgen]
impl WasmWriterOptions {
    /// Options for a file of `kind` signed by `signing_key` (copied), with the signer JSON
    /// of docs/format.md section 7.1, `created_ms` since the Unix epoch and the defaults
    /// (1 MiB chunks, deflate level 6, no encryption).
    #[wasm_bindgen(constructor)]
    pub fn new(
        kind: &str,
        signing_key: &WasmSigningKey,
        signer_json: &str,
        created_ms: f64,
    ) -> Result<WasmWriterOptions, JsValue> {
        let kind = parse_kind(kind).map_err(js_error)?;
        let signer = SignerInfo::from_json(signer_json.as_bytes()).map_err(js_error)?;
        if !(0.0..=9_007_199_254_740_991.0).contains(&created_ms) || created_ms.fract() != 0.0 {
            return Err(argument_error(
                "createdMs",
                "must be an integer from 0 to 2^53 - 1",
            ));
        }
        Ok(Self {
            kind,
            signing_key: Some(signing_key.copy()),
            signer,
            chunk_size: iki_format::limits::DEFAULT_CHUNK_SIZE_BYTES,
            #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)] // checked above
            created_ms: created_ms as u64,
            deflate_level: iki_format::encoding::DEFAULT_DEFLATE_LEVEL,
            content_key: None,
            slots: Vec::new(),
        })
    }

    /// Decoded bytes per DATA chunk (checked by the writer: 4096 to 16777216).
    #[wasm_bindgen(js_name = setChunkSize)]
    pub fn set_chunk_size(&mut self, chunk_size: u32) {
        self.chunk_size = chunk_size;
    }

    /// DEFLATE level 0 to 10 (checked by the writer).
    #[wasm_bindgen(js_name = setDeflateLevel)]
    pub fn set_deflate_level(&mut self, level: u8) {
        self.deflate_level = level;
    }

    /// The content key to encrypt with (required with an account slot, whose blob wraps
    /// it); without one, an encrypted file gets a fresh random key.
    #[wasm_bindgen(js_name = setContentKey)]
    pub fn set_content_key(&mut self, key: &WasmContentKey) {
        self.content_key = Some(key.key());
    }

    /// Adds a password slot (password as UTF-8 bytes) with Argon2id cost `m_kib`, `t`, `p`
    /// (writers refuse what readers would refuse).
    #[wasm_bindgen(js_name = addPassword)]
    pub fn add_password(&mut self, password: Vec<u8>, m_kib: u32, t: u32, p: u32) {
        self.slots.push(NewSlot::Password {
            password: Zeroizing::new(password),
            params: Argon2Params { m_kib, t, p },
        });
    }

    /// Adds a recipient slot sealed to a 32-byte X25519 public key.
    #[wasm_bindgen(js_name = addRecipient)]
    pub fn add_recipient(&mut self, public_key: &[u8]) -> Result<(), JsValue> {
        let public_key = array32(public_key, "recipient").map_err(js_error)?;
        self.slots.push(NewSlot::Recipient { public_key });
        Ok(())
    }

    /// Adds an account slot with the key service's blob.
    #[wasm_bindgen(js_name = addAccount)]
    pub fn add_account(&mut self, account_id: String, blob: Vec<u8>) {
        self.slots.push(NewSlot::Account { account_id, blob });
    }
}

impl WasmWriterOptions {
    /// The format crate's options; takes the key material out of `self`.
    fn take(&mut self) -> Result<WriterOptions, JsValue> {
        let signing_key = self.signing_key.take().ok_or_else(|| {
            js_error(Error::InvalidState {
                operation: "writer options used twice",
            })
        })?;
        let protection = if self.slots.is_empty() {
            Protection::None
        } else {
            let has_account = self
                .slots
                .iter()
                .any(|s| matches!(s, NewSlot::Account { .. }));
            let content_key = match self.content_key.take() {
                Some(key) => key,
                None if has_account => {
                    return Err(argument_error(
                        "protection.contentKey",
                        "an account slot needs the content key its blob wraps",
                    ))
                }
                None => SecretKey32::random().map_err(js_error)?,
            };
            Protection::Encrypted {
                content_key,
                slots: std::mem::take(&mut self.slots),
            }
        };
        let file_id = iki_crypto::random_bytes::<16>().map_err(js_error)?;
        let mut options = WriterOptions::new(
            self.kind,
            file_id,
            self.created_ms,
            signing_key,
            self.signer.clone(),
        );
        options.chunk_size = self.chunk_size;
        options.deflate_level = self.deflate_level;
        options.protection = protection;
        Ok(options)
    }
}

/// A streaming container writer: `write` the bytes of each entry in manifest order,
/// `endEntry` after each, drain `takeOutput` as you go, and `finish` for SIGN.
#[wasm_bindgen]
pub struct WasmWriter {
    inner: Option<Writer>,
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
        Ok(Self { inner: Some(inner) })
    }

    /// Appends bytes of the current entry.
    pub fn write(&mut self, bytes: &[u8]) -> Result<(), JsValue> {
        self.writer("write after finish")?
            .write(bytes)
            .map_err(js_error)
    }

    /// Ends the current entry (checks its size and sha256).
    #[wasm_bindgen(js_name = endEntry)]
    pub fn end_entry(&mut self) -> Result<(), JsValue> {
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
        let writer = self.inner.take().ok_or_else(|| {
            js_error(Error::InvalidState {
                operation: "finish after finish",
            })
        })?;
        writer.finish().map_err(js_error)
    }
}

impl WasmWriter {
    fn writer(&mut self, operation: &'static str) -> Result<&mut Writer, JsValue> {
        self.inner
            .as_mut()
            .ok_or_else(|| js_error(Error::InvalidState { operation }))
    }
}

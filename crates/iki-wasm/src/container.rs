//! The container reader at the boundary: [`WasmReader`] over `iki_format::Reader`
//! (docs/format.md sections 1 to 7), and [`WasmEntryReader`], which reads one entry again
//! from its byte span of a file read before (section 6.1). The writer is in `writer.rs`.
//!
//! Both are push-based and hold no logic of their own: bytes go in one piece at a time
//! (`push`), events come out between pushes (`next`), so WASM memory stays around one chunk
//! when the caller feeds modest pieces (the TS wrapper uses 64 KiB). Events cross as plain
//! objects (`convert::event_to_js`); the manifest crosses as JSON text.
//!
//! Secrets: passwords arrive as owned buffers wrapped in `Zeroizing`; the reader's content
//! cipher lives in a zeroize-on-drop type, moves into the entry reader, and is dropped by
//! `free()`.

use iki_format::reader::EntryReader;
use iki_format::{Event, Reader};
use iki_license::LicenseReader;
use wasm_bindgen::prelude::*;
use zeroize::Zeroizing;

use crate::convert::{event_to_js, license_error, object, parse_kind};
use crate::error::{js_error, Error};
use crate::keys::{WasmContentKey, WasmX25519Identity};

/// What a [`WasmReader`] reads with.
enum Backend {
    /// Any container; unlocked by the caller after the `locked` event.
    Plain(Reader),
    /// A license copy unlocked from inside with a player's license key (`iki-license`).
    License(LicenseReader),
    /// Turned into a [`WasmEntryReader`].
    Spent,
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
            Backend::Spent => Err(spent()),
        }
    }

    /// Declares the end of input.
    pub fn finish(&mut self) -> Result<(), JsValue> {
        match &mut self.backend {
            Backend::Plain(r) => r.finish().map_err(js_error),
            Backend::License(r) => r.finish().map_err(license_error),
            Backend::Spent => Err(spent()),
        }
    }

    /// The next event as a plain object, or `undefined` when more input is needed.
    #[allow(clippy::should_implement_trait)] // a JS method, not an iterator
    pub fn next(&mut self) -> Result<JsValue, JsValue> {
        let event: Option<Event> = match &mut self.backend {
            Backend::Plain(r) => r.next().map_err(js_error)?,
            Backend::License(r) => r.next().map_err(license_error)?,
            Backend::Spent => return Err(spent()),
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
                Backend::Spent => {}
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

    /// Stops checking entries against their manifest `sha256` (see
    /// `iki_format::Reader::skip_entry_hashes`): for a reader whose caller relies on the
    /// signature over the whole file and checks entries when it reads them again.
    #[wasm_bindgen(js_name = skipEntryHashes)]
    pub fn skip_entry_hashes(&mut self) -> Result<(), JsValue> {
        self.plain()?.skip_entry_hashes();
        Ok(())
    }

    /// Reads on past damaged content: damaged entries end with an `entryDamaged` event and a
    /// signature that does not verify ends the file with a `modified` event (see
    /// `iki_format::Reader::tolerate_damage`). Before the first `push`.
    #[wasm_bindgen(js_name = tolerateDamage)]
    pub fn tolerate_damage(&mut self) -> Result<(), JsValue> {
        self.plain()?.tolerate_damage();
        Ok(())
    }

    /// After the `end` (or `modified`) event of a file read with its key: a reader of single
    /// entries from their byte spans of the same file. This reader is spent.
    #[wasm_bindgen(js_name = entryReader)]
    pub fn entry_reader(&mut self) -> Result<WasmEntryReader, JsValue> {
        let reader = match std::mem::replace(&mut self.backend, Backend::Spent) {
            Backend::Plain(reader) => reader,
            other => {
                self.backend = other;
                return Err(js_error(Error::InvalidState {
                    operation: "entryReader of a license copy reader",
                }));
            }
        };
        let inner = reader.into_entry_reader().map_err(js_error)?;
        Ok(WasmEntryReader { inner })
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
            Backend::Spent => Err(spent()),
        }
    }
}

fn spent() -> JsValue {
    js_error(Error::InvalidState {
        operation: "reader used after entryReader",
    })
}

/// Reads single entries of a file read before, from their byte spans: `seek(entry)` answers
/// `{ start, end }` (file offsets), then `push` exactly those bytes, `finish`, and drain
/// `next` (`chunk` events, then `entryVerified`). Any error ends that entry; `seek` again to
/// read another.
#[wasm_bindgen]
pub struct WasmEntryReader {
    inner: EntryReader,
}

#[wasm_bindgen]
impl WasmEntryReader {
    /// Number of entries.
    #[wasm_bindgen(getter)]
    pub fn entries(&self) -> u32 {
        self.inner.entries()
    }

    /// Starts reading `entry`: `{ start, end }`, the file offsets of its byte span.
    pub fn seek(&mut self, entry: u32) -> Result<JsValue, JsValue> {
        let span = self.inner.seek(entry).map_err(js_error)?;
        #[allow(clippy::cast_precision_loss)] // file offsets stay far below 2^53
        Ok(object(&[
            ("start", JsValue::from_f64(span.start as f64)),
            ("end", JsValue::from_f64(span.end as f64)),
        ]))
    }

    /// Appends bytes of the span.
    pub fn push(&mut self, bytes: &[u8]) -> Result<(), JsValue> {
        self.inner.push(bytes).map_err(js_error)
    }

    /// Declares the end of the span.
    pub fn finish(&mut self) -> Result<(), JsValue> {
        self.inner.finish().map_err(js_error)
    }

    /// The next event as a plain object, or `undefined`.
    #[allow(clippy::should_implement_trait)] // a JS method, not an iterator
    pub fn next(&mut self) -> Result<JsValue, JsValue> {
        let Some(event) = self.inner.next().map_err(js_error)? else {
            return Ok(JsValue::UNDEFINED);
        };
        let js = event_to_js(&event).map_err(js_error)?;
        if let Event::Chunk { data, .. } = event {
            self.inner.recycle(data);
        }
        Ok(js)
    }
}

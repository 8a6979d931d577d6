//! The options of a [`super::WasmWriter`]: built up in JS, then taken by the writer
//! (`iki_format::WriterOptions`, docs/format.md sections 1 to 7).
//!
//! Secrets: passwords arrive as owned buffers wrapped in `Zeroizing`; the content key and the
//! signing-key copy live in zeroize-on-drop types and move into the writer.

use iki_crypto::{Argon2Params, SecretKey32};
use iki_format::{Kind, NewSlot, Protection, SignWith, SignerInfo, WriterOptions};
use wasm_bindgen::prelude::*;
use zeroize::Zeroizing;

use crate::convert::{argument_error, array32, parse_kind};
use crate::error::{js_error, Error};
use crate::keys::{WasmContentKey, WasmSigningKey};

/// Everything a writer needs besides the manifest; built up in JS, then handed to
/// `new WasmWriter(options, manifestJson)`, which takes its contents.
#[wasm_bindgen]
pub struct WasmWriterOptions {
    pub(super) kind: Kind,
    signing: Option<SignWith>,
    signer: SignerInfo,
    chunk_size: u32,
    created_ms: u64,
    deflate_level: u8,
    content_key: Option<SecretKey32>,
    slots: Vec<NewSlot>,
    entry_hashes_trusted: bool,
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
        Self::with(
            kind,
            SignWith::Key(signing_key.copy()),
            signer_json,
            created_ms,
        )
    }

    /// Options as `new`, for a file signed outside WASM by the Ed25519 key whose public half
    /// is `public_key` (32 bytes): finish the writer with `finishExternal`.
    pub fn external(
        kind: &str,
        public_key: &[u8],
        signer_json: &str,
        created_ms: f64,
    ) -> Result<WasmWriterOptions, JsValue> {
        let public_key = array32(public_key, "signer.publicKey").map_err(js_error)?;
        Self::with(
            kind,
            SignWith::External(public_key),
            signer_json,
            created_ms,
        )
    }

    /// Decoded bytes per DATA chunk (checked by the writer: 4096 to 16777216).
    #[wasm_bindgen(js_name = setChunkSize)]
    pub fn set_chunk_size(&mut self, chunk_size: u32) {
        self.chunk_size = chunk_size;
    }

    /// The caller computed every entry's `sha256` from immutable sources: the writer does
    /// not hash the entries again (`iki_format::WriterOptions::entry_hashes_trusted`).
    #[wasm_bindgen(js_name = setEntryHashesTrusted)]
    pub fn set_entry_hashes_trusted(&mut self, trusted: bool) {
        self.entry_hashes_trusted = trusted;
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
    fn with(
        kind: &str,
        signing: SignWith,
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
            signing: Some(signing),
            signer,
            chunk_size: iki_format::limits::DEFAULT_CHUNK_SIZE_BYTES,
            #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)] // checked above
            created_ms: created_ms as u64,
            deflate_level: iki_format::encoding::DEFAULT_DEFLATE_LEVEL,
            content_key: None,
            slots: Vec::new(),
            entry_hashes_trusted: false,
        })
    }

    /// The format crate's options; takes the key material out of `self`.
    pub(super) fn take(&mut self) -> Result<WriterOptions, JsValue> {
        let signing = self.signing.take().ok_or_else(|| {
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
        let mut options = WriterOptions::signed_by(
            self.kind,
            file_id,
            self.created_ms,
            signing,
            self.signer.clone(),
        );
        options.chunk_size = self.chunk_size;
        options.deflate_level = self.deflate_level;
        options.entry_hashes_trusted = self.entry_hashes_trusted;
        options.protection = protection;
        Ok(options)
    }
}

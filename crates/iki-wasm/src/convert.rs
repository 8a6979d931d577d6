//! Conversions at the boundary for the container, key, watermark and image exports: plain JS
//! objects for reader events (docs/format.md sections 2, 3, 5, 7), argument checks that name
//! the argument, and the error types of `iki-license` and `iki-watermark` as JS errors.
//!
//! Objects are built with `js_sys::Object` and `Reflect::set`; on a fresh plain object
//! `set` cannot fail, so its result is ignored instead of unwrapped (a panic would be an
//! opaque trap). Bytes cross as fresh `Uint8Array` copies, never as views of WASM memory.

use core::fmt;

use iki_format::keys::{PasswordSlot, Slot};
use iki_format::{Cipher, Event, Header, Kind, Verified};
use js_sys::{Array, Object, Reflect, Uint8Array};
use wasm_bindgen::JsValue;

use crate::error::{js_error, BoundaryError, Detail};

/// `INVALID_ARGUMENT` raised by the adapter: a value of the right JS type that the API does
/// not accept (the TS wrapper checks types and lengths first; this is the second line).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ArgumentError {
    /// The argument's name as the TS API spells it.
    pub argument: &'static str,
    /// What is wrong with it.
    pub reason: &'static str,
}

impl fmt::Display for ArgumentError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "invalid argument {}: {}", self.argument, self.reason)
    }
}

impl BoundaryError for ArgumentError {
    fn code(&self) -> &'static str {
        "INVALID_ARGUMENT"
    }

    fn details(&self) -> Vec<(&'static str, Detail)> {
        vec![
            ("argument", Detail::Str(self.argument.into())),
            ("reason", Detail::Str(self.reason.into())),
        ]
    }
}

/// An `INVALID_ARGUMENT` JS error naming `argument`.
pub fn argument_error(argument: &'static str, reason: &'static str) -> JsValue {
    js_error(ArgumentError { argument, reason })
}

/// `iki-license` errors keep their code (format, crypto and license codes) and details.
pub struct LicenseError(pub iki_license::Error);

impl fmt::Display for LicenseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

impl BoundaryError for LicenseError {
    fn code(&self) -> &'static str {
        self.0.code()
    }

    fn details(&self) -> Vec<(&'static str, Detail)> {
        self.0
            .details()
            .into_iter()
            .map(|(key, value)| (key, Detail::Str(value)))
            .collect()
    }
}

/// `iki-watermark` errors: every one is `INVALID_ARGUMENT` (a pixel buffer of the wrong shape).
pub struct WatermarkError(pub iki_watermark::Error);

impl fmt::Display for WatermarkError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

impl BoundaryError for WatermarkError {
    fn code(&self) -> &'static str {
        self.0.code()
    }
}

/// Maps an `iki-license` error to the JS error.
pub fn license_error(error: iki_license::Error) -> JsValue {
    js_error(LicenseError(error))
}

/// Maps an `iki-watermark` error to the JS error.
pub fn watermark_error(error: iki_watermark::Error) -> JsValue {
    js_error(WatermarkError(error))
}

/// `"project"` or `"model"`.
pub fn parse_kind(kind: &str) -> Result<Kind, ArgumentError> {
    match kind {
        "project" => Ok(Kind::Project),
        "model" => Ok(Kind::Model),
        _ => Err(ArgumentError {
            argument: "kind",
            reason: "must be 'project' or 'model'",
        }),
    }
}

/// The TS name of a kind.
#[must_use]
pub fn kind_name(kind: Kind) -> &'static str {
    match kind {
        Kind::Project => "project",
        Kind::Model => "model",
    }
}

/// Exactly 32 bytes, or `INVALID_ARGUMENT` naming `argument`.
pub fn array32(bytes: &[u8], argument: &'static str) -> Result<[u8; 32], ArgumentError> {
    bytes.try_into().map_err(|_| ArgumentError {
        argument,
        reason: "must be exactly 32 bytes",
    })
}

/// A fresh plain object with the given properties.
pub fn object(fields: &[(&str, JsValue)]) -> JsValue {
    let out = Object::new();
    for (key, value) in fields {
        let _ = Reflect::set(&out, &JsValue::from_str(key), value);
    }
    out.into()
}

/// A copy of `bytes` as a new `Uint8Array`.
pub fn bytes(bytes: &[u8]) -> JsValue {
    Uint8Array::from(bytes).into()
}

fn text(value: &str) -> JsValue {
    JsValue::from_str(value)
}

fn num(value: impl Into<f64>) -> JsValue {
    JsValue::from_f64(value.into())
}

/// A `u64` that the format bounds far below 2^53 (sizes, times) as a JS number.
#[allow(clippy::cast_precision_loss)] // created_ms and sizes are below 2^53 in practice
fn num64(value: u64) -> JsValue {
    JsValue::from_f64(value as f64)
}

/// `{ kind, major, minor, encrypted, chunkSize, fileId, createdMs }`.
pub fn header_to_js(header: &Header) -> JsValue {
    object(&[
        ("kind", text(kind_name(header.kind))),
        ("major", num(iki_format::header::VERSION_MAJOR)),
        ("minor", num(header.minor)),
        (
            "encrypted",
            JsValue::from_bool(header.cipher == Cipher::XChaCha20Poly1305),
        ),
        ("chunkSize", num(header.chunk_size)),
        ("fileId", bytes(&header.file_id)),
        ("createdMs", num64(header.created_ms)),
    ])
}

fn password_slot_to_js(slot: &PasswordSlot) -> JsValue {
    object(&[
        ("type", text("password")),
        ("kdf", num(slot.kdf)),
        ("mKib", num(slot.params.m_kib)),
        ("t", num(slot.params.t)),
        ("p", num(slot.params.p)),
    ])
}

/// One key slot as the TS `SlotInfo` union; no field of a slot is secret.
pub fn slot_to_js(slot: &Slot) -> JsValue {
    match slot {
        Slot::Password(s) => password_slot_to_js(s),
        Slot::Recipient(s) => object(&[
            ("type", text("recipient")),
            ("recipient", bytes(&s.recipient)),
        ]),
        Slot::Account { account_id, blob } => object(&[
            ("type", text("account")),
            ("accountId", text(account_id)),
            ("blob", bytes(blob)),
        ]),
        Slot::License {
            service,
            license_id,
            master_id,
        } => object(&[
            ("type", text("license")),
            ("service", text(service)),
            ("licenseId", text(license_id)),
            ("masterId", text(master_id)),
        ]),
        Slot::Unknown { slot_type, body } => object(&[
            ("type", text("unknown")),
            ("typeId", num(*slot_type)),
            ("length", num64(body.len() as u64)),
        ]),
    }
}

/// `{ publicKey, signerJson }`: the TS wrapper parses the signer JSON (checked by the reader).
pub fn verified_to_js(verified: &Verified) -> JsValue {
    object(&[
        ("publicKey", bytes(&verified.public_key)),
        ("signerJson", text(&String::from_utf8_lossy(&verified.info))),
    ])
}

/// One reader event as the raw object the TS wrapper turns into a `ReadEvent`. The manifest
/// crosses as its JSON text (`manifestJson`), which keeps unknown meta fields.
///
/// # Errors
/// `BAD_MANIFEST` when the manifest cannot be serialised (it always can once validated).
pub fn event_to_js(event: &Event) -> Result<JsValue, iki_format::Error> {
    Ok(match event {
        Event::Header(header) => {
            object(&[("type", text("header")), ("header", header_to_js(header))])
        }
        Event::Locked(slots) => {
            let list: Array = slots.iter().map(slot_to_js).collect();
            object(&[("type", text("locked")), ("slots", list.into())])
        }
        Event::Manifest(manifest) => {
            let json = manifest.to_json()?;
            object(&[
                ("type", text("manifest")),
                ("manifestJson", text(&String::from_utf8_lossy(&json))),
            ])
        }
        Event::Chunk {
            entry,
            index,
            last,
            data,
        } => object(&[
            ("type", text("chunk")),
            ("entry", num(*entry)),
            ("index", num(*index)),
            ("last", JsValue::from_bool(*last)),
            ("data", bytes(data)),
        ]),
        Event::EntryVerified { entry } => {
            object(&[("type", text("entryVerified")), ("entry", num(*entry))])
        }
        Event::End(verified) => object(&[
            ("type", text("end")),
            ("verified", verified_to_js(verified)),
        ]),
        Event::EntryDamaged { entry } => {
            object(&[("type", text("entryDamaged")), ("entry", num(*entry))])
        }
        Event::Modified { public_key, info } => object(&[
            ("type", text("modified")),
            ("publicKey", bytes(public_key)),
            ("signerJson", text(&String::from_utf8_lossy(info))),
        ]),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::ErrorParts;

    #[test]
    fn kinds_parse_and_name() {
        for kind in [Kind::Project, Kind::Model] {
            assert_eq!(parse_kind(kind_name(kind)), Ok(kind));
        }
        let err = parse_kind("Project").unwrap_err();
        assert_eq!(err.argument, "kind");
    }

    #[test]
    fn array32_names_the_argument() {
        assert_eq!(array32(&[7; 32], "seed"), Ok([7; 32]));
        for len in [0, 31, 33] {
            let parts = ErrorParts::from_error(&array32(&vec![0; len], "seed").unwrap_err());
            assert_eq!(parts.code, "INVALID_ARGUMENT");
            assert_eq!(parts.details[0], ("argument", Detail::Str("seed".into())));
        }
    }

    #[test]
    fn license_and_watermark_errors_keep_their_codes() {
        let parts = ErrorParts::from_error(&LicenseError(iki_license::Error::ImageTooLarge {
            width: 20000,
            height: 1,
            max_side_px: 16384,
            max_pixels: 1 << 28,
        }));
        assert_eq!(parts.code, "IMAGE_TOO_LARGE");
        assert!(parts
            .details
            .contains(&("width", Detail::Str("20000".into()))));
        let parts = ErrorParts::from_error(&WatermarkError(iki_watermark::Error::ZeroDimension {
            width: 0,
            height: 3,
        }));
        assert_eq!(parts.code, "INVALID_ARGUMENT");
    }
}

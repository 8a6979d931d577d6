//! Identify of a resized or cropped leak at the boundary (docs/watermark.md section 11),
//! adapting `iki_license::Identifier` (the service: the leak against a stored master's
//! textures) and `iki_watermark::read_informed` (the CLI: the leak against texture files).
//!
//! The time budget is the only clock: each object takes a budget in milliseconds when it is
//! made and asks `Date.now()` between steps of the search, so the pure crates stay free of
//! clocks. Nothing here is secret except the watermark keys, which stay in their handles.

use iki_license::{Capacity, Identification, Identifier, Registration};
use iki_watermark::{Candidate, InformedRead, Suspect, PAYLOAD_BITS};
use wasm_bindgen::prelude::*;

use crate::convert::{argument_error, license_error, object, watermark_error};
use crate::error::{js_error, Error};
use crate::service::{master_ref, WasmServiceKeys};
use crate::watermark::WasmWatermarkKey;

/// A deadline `budget_ms` from now; `INVALID_ARGUMENT` for a negative or non-finite budget.
fn deadline(budget_ms: f64) -> Result<f64, JsValue> {
    if !budget_ms.is_finite() || budget_ms < 0.0 {
        return Err(argument_error(
            "budgetMs",
            "must be a non-negative number of milliseconds",
        ));
    }
    Ok(js_sys::Date::now() + budget_ms)
}

/// `{ x, y }`.
fn pair(x: f64, y: f64) -> JsValue {
    object(&[("x", JsValue::from_f64(x)), ("y", JsValue::from_f64(y))])
}

/// A registration: `{ scale: {x, y}, offset: {x, y}, region: {x, y, width, height},
/// similarity }` (scale in leak pixels per texture pixel; offset in texture pixels).
pub(crate) fn registration_object(r: &Registration) -> JsValue {
    let region = object(&[
        ("x", JsValue::from_f64(r.region.x.into())),
        ("y", JsValue::from_f64(r.region.y.into())),
        ("width", JsValue::from_f64(r.region.width.into())),
        ("height", JsValue::from_f64(r.region.height.into())),
    ]);
    object(&[
        ("scale", pair(r.scale_x, r.scale_y)),
        ("offset", pair(r.offset_x, r.offset_y)),
        ("region", region),
        ("similarity", JsValue::from_f64(r.similarity)),
    ])
}

fn capacity_object(c: &Capacity) -> JsValue {
    object(&[
        ("confidence", JsValue::from_f64(c.confidence)),
        ("reads", JsValue::from_bool(c.reads)),
        ("visiblePixels", JsValue::from_f64(c.visible_pixels as f64)),
    ])
}

fn license_field(fields: &mut Vec<(&str, JsValue)>, found: Option<u64>) {
    if let Some(id) = found {
        fields.push((
            "licenseId",
            JsValue::from_str(&iki_license::license_id_hex(id)),
        ));
    }
}

/// `[{ licenseId, score, falseAccusation, named }]`, best first.
fn candidates_array(candidates: &[Candidate]) -> JsValue {
    let list = js_sys::Array::new();
    for c in candidates {
        list.push(&object(&[
            (
                "licenseId",
                JsValue::from_str(&iki_license::license_id_hex(c.license_id)),
            ),
            ("score", JsValue::from_f64(c.score)),
            ("falseAccusation", JsValue::from_f64(c.false_accusation)),
            ("named", JsValue::from_bool(c.named)),
        ]));
    }
    list.into()
}

/// `{ found, licenseId?, confidence, method: 'blind' | 'registered', match: 'decoded' |
/// 'scored', mixed, candidates, texture?: { path, width, height, ...registration }, reason?,
/// capacity?: { confidence, reads, visiblePixels }, texturesTried }`.
fn identification_object(i: &Identification) -> JsValue {
    let mut fields = vec![
        ("found", JsValue::from_bool(i.found.is_some())),
        ("confidence", JsValue::from_f64(i.confidence)),
        (
            "method",
            JsValue::from_str(if i.registered { "registered" } else { "blind" }),
        ),
        (
            "match",
            JsValue::from_str(if i.soft { "scored" } else { "decoded" }),
        ),
        ("mixed", JsValue::from_bool(i.mixed)),
        ("candidates", candidates_array(&i.candidates)),
        ("texturesTried", JsValue::from_f64(i.textures_tried.into())),
    ];
    license_field(&mut fields, i.found);
    if let Some(t) = &i.texture {
        let texture = registration_object(&t.registration);
        for (k, v) in [
            ("path", JsValue::from_str(&t.path)),
            ("width", JsValue::from_f64(t.width.into())),
            ("height", JsValue::from_f64(t.height.into())),
        ] {
            let _ = js_sys::Reflect::set(&texture, &JsValue::from_str(k), &v);
        }
        fields.push(("texture", texture));
    }
    if let Some(reason) = i.reason {
        fields.push(("reason", JsValue::from_str(reason.name())));
    }
    if let Some(c) = &i.capacity {
        fields.push(("capacity", capacity_object(c)));
    }
    object(&fields)
}

#[wasm_bindgen]
impl WasmServiceKeys {
    /// Starts identifying a leaked texture (PNG, JPEG or WebP bytes) of `master`: decodes it
    /// and reads it blind. If that finds nothing, push the stored master's bytes until
    /// `done`, then `finish`. `budget_ms` bounds the whole search. The image is decoded only
    /// when its header is within `max_side_px` a side and `max_pixels` in all (capped at
    /// `iki_license::ImageBound::CEILING`), else it is `IMAGE_TOO_LARGE` before any pixel is
    /// decoded. `issued` holds the ids of the licenses issued for the master (at most
    /// `iki_watermark::MAX_ISSUED`): a read whose bits do not decode can still name one by its
    /// score (docs/watermark.md section 12).
    #[allow(clippy::too_many_arguments)]
    pub fn identifier(
        &self,
        master_id: String,
        master_sha256: &[u8],
        image: &[u8],
        max_side_px: u32,
        max_pixels: u32,
        budget_ms: f64,
        issued: Vec<u64>,
    ) -> Result<WasmIdentifier, JsValue> {
        if issued.len() > iki_watermark::MAX_ISSUED {
            return Err(argument_error(
                "issued",
                "holds more license ids than identify scores",
            ));
        }
        let deadline = deadline(budget_ms)?;
        let master = master_ref(master_id, master_sha256)?;
        let bound = iki_license::ImageBound::new(max_side_px, max_pixels.into());
        let (width, height, rgba) =
            iki_license::decode_image_within(image, bound).map_err(license_error)?;
        let mut inner = self
            .inner
            .identifier(&master, width, height, rgba)
            .map_err(license_error)?;
        inner.set_issued(issued);
        Ok(WasmIdentifier {
            inner: Some(inner),
            deadline,
        })
    }
}

/// One identify request in progress.
#[wasm_bindgen]
pub struct WasmIdentifier {
    inner: Option<Identifier>,
    deadline: f64,
}

#[wasm_bindgen]
impl WasmIdentifier {
    /// True once the master is no longer needed (found, or out of time).
    #[wasm_bindgen(getter)]
    pub fn done(&self) -> bool {
        self.inner.as_ref().is_none_or(Identifier::done)
    }

    /// Reads the next bytes of the stored master.
    pub fn push(&mut self, master_bytes: &[u8]) -> Result<(), JsValue> {
        let deadline = self.deadline;
        let inner = self
            .inner
            .as_mut()
            .ok_or_else(|| finished("push after finish"))?;
        inner
            .push(master_bytes, &mut || js_sys::Date::now() < deadline)
            .map_err(license_error)
    }

    /// The answer (see `identification_object`).
    pub fn finish(&mut self) -> Result<JsValue, JsValue> {
        let inner = self
            .inner
            .take()
            .ok_or_else(|| finished("finish after finish"))?;
        Ok(identification_object(&inner.finish()))
    }
}

fn finished(operation: &'static str) -> JsValue {
    js_error(Error::InvalidState { operation })
}

/// A leaked image prepared for informed reads against texture files (the operator's CLI).
#[wasm_bindgen]
pub struct WasmSuspect {
    inner: Suspect,
}

#[wasm_bindgen]
impl WasmSuspect {
    /// A `width x height` straight-alpha RGBA8 image.
    #[wasm_bindgen(constructor)]
    pub fn new(width: u32, height: u32, rgba: Vec<u8>) -> Result<WasmSuspect, JsValue> {
        Ok(Self {
            inner: Suspect::new(width, height, rgba).map_err(watermark_error)?,
        })
    }

    /// The blind read: `{ found, licenseId?, confidence, bits }` (`bits`: the 80 per-bit
    /// scores, a `Float64Array`, for [`match_licenses`]).
    pub fn detect(&self, key: &WasmWatermarkKey) -> JsValue {
        let d = self.inner.detect(&key.key);
        let mut fields = vec![
            ("found", JsValue::from_bool(d.found.is_some())),
            ("confidence", JsValue::from_f64(d.confidence)),
            (
                "bits",
                js_sys::Float64Array::from(&d.bit_confidence[..]).into(),
            ),
        ];
        license_field(&mut fields, d.found);
        object(&fields)
    }

    /// Registers the image on one unmarked original texture and reads through it:
    /// `{ found, licenseId?, confidence, bits?, registration?, candidates, complete }`.
    #[wasm_bindgen(js_name = readInformed)]
    pub fn read_informed(
        &mut self,
        key: &WasmWatermarkKey,
        width: u32,
        height: u32,
        original: &[u8],
        budget_ms: f64,
    ) -> Result<JsValue, JsValue> {
        let deadline = deadline(budget_ms)?;
        let read: InformedRead = iki_watermark::read_informed(
            &key.key,
            width,
            height,
            original,
            &mut self.inner,
            &mut || js_sys::Date::now() < deadline,
        )
        .map_err(watermark_error)?;
        let found = read.detection.as_ref().and_then(|d| d.found);
        let mut fields = vec![
            ("found", JsValue::from_bool(found.is_some())),
            (
                "confidence",
                JsValue::from_f64(read.detection.as_ref().map_or(0.0, |d| d.confidence)),
            ),
            ("candidates", JsValue::from_f64(read.candidates.into())),
            ("complete", JsValue::from_bool(read.complete)),
        ];
        license_field(&mut fields, found);
        if let Some(d) = &read.detection {
            fields.push((
                "bits",
                js_sys::Float64Array::from(&d.bit_confidence[..]).into(),
            ));
        }
        if let Some(r) = &read.registration {
            fields.push(("registration", registration_object(r)));
        }
        Ok(object(&fields))
    }

    /// How well the image could carry the mark: `{ confidence, reads, visiblePixels }`.
    pub fn capacity(&self, key: &WasmWatermarkKey) -> JsValue {
        capacity_object(&iki_watermark::capacity(&key.key, &self.inner))
    }
}

/// Scores issued licenses against a read's 80 per-bit scores (`bits`, from `detect` or
/// `readInformed`) and names the guilty (docs/watermark.md section 12): `{ mixed, candidates:
/// [{ licenseId, score, falseAccusation, named }] }`. `tests` is the number of reads of the
/// search whose scores are looked at (the union bound's factor, at least 1).
#[wasm_bindgen(js_name = matchLicenses)]
pub fn match_licenses(
    bits: &[f64],
    confidence: f64,
    issued: Vec<u64>,
    tests: f64,
) -> Result<JsValue, JsValue> {
    let bits: &[f64; PAYLOAD_BITS] = bits
        .try_into()
        .map_err(|_| argument_error("bits", "must hold the 80 per-bit scores of a read"))?;
    if issued.len() > iki_watermark::MAX_ISSUED {
        return Err(argument_error(
            "issued",
            "holds more license ids than identify scores",
        ));
    }
    if !tests.is_finite() || tests < 1.0 {
        return Err(argument_error(
            "tests",
            "must be a number of reads, at least 1",
        ));
    }
    let m = iki_watermark::match_licenses(bits, confidence, &issued, tests);
    Ok(object(&[
        ("mixed", JsValue::from_bool(m.mixed)),
        ("candidates", candidates_array(&m.candidates)),
    ]))
}

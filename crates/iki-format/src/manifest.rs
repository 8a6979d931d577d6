//! The MANI chunk's JSON manifest: entries, paths, encodings (docs/format.md section 5).
//!
//! The JSON is parsed with serde, then every rule of section 5 is checked by
//! [`Manifest::validate`]. Unknown fields are ignored on read; the meta objects keep them
//! (`extra`) so that a manifest read and written again loses nothing a newer writer added.
//! Every rule of section 5, its numeric ranges included, is refused as `BAD_MANIFEST` with a
//! reason and, where one entry is at fault, its id.

use std::collections::HashSet;

use serde::{Deserialize, Serialize};

use crate::error::Error;
use crate::header::{Cipher, Kind};
use crate::limits::{
    MAX_ENTRIES, MAX_ENTRY_SIZE_BYTES, MAX_IMAGE_DIMENSION_PX, MAX_MEDIA_TYPE_BYTES,
    MAX_PATH_BYTES, MIN_IMAGE_DIMENSION_PX,
};
pub use crate::meta::{Canvas, LicenseInfo, Meta, ModelMeta, ProjectMeta, Role};

/// How an entry's bytes are stored in its DATA chunks (section 6).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Encoding {
    /// The bytes as they are.
    Stored,
    /// Each chunk raw-deflated on its own (RFC 1951).
    Deflate,
    /// Straight-alpha RGBA pixels, whole rows per chunk, deflated.
    Rgba8,
}

/// Optional per-entry metadata (section 5 `meta`).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct EntryMeta {
    /// What the entry is (for example `texture`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
    /// Image width in pixels, 1 to 65535.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub width: Option<u32>,
    /// Image height in pixels, 1 to 65535.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub height: Option<u32>,
    /// Media type the entry came from (for model textures `image/png`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<String>,
}

/// One entry of the manifest; its id is its position.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Entry {
    /// Relative `/`-separated path, 1 to 1024 bytes, unique.
    pub path: String,
    /// Media type of the decoded bytes, 1 to 255 bytes.
    #[serde(rename = "type")]
    pub media_type: String,
    /// Decoded size in bytes, at most 2^53 - 1.
    pub size: u64,
    /// How the bytes are stored.
    pub encoding: Encoding,
    /// SHA-256 of the decoded bytes; required when the file is not encrypted.
    #[serde(default, skip_serializing_if = "Option::is_none", with = "hex32")]
    pub sha256: Option<[u8; 32]>,
    /// Optional metadata; rgba8 entries need `width` and `height`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<EntryMeta>,
}

/// The manifest of section 5.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Manifest {
    /// The entries; entry id = position.
    pub entries: Vec<Entry>,
    /// Project or model metadata (sections 5.1, 5.2).
    pub meta: Meta,
}

#[derive(Deserialize)]
struct RawManifest {
    entries: Vec<Entry>,
    meta: serde_json::Value,
}

impl Manifest {
    /// Parses manifest JSON for a file of `kind`. Does not run [`Manifest::validate`].
    ///
    /// # Errors
    /// `BAD_MANIFEST` when the bytes are not UTF-8 JSON of the right shape.
    pub fn from_json(kind: Kind, json: &[u8]) -> Result<Self, Error> {
        let value: serde_json::Value = serde_json::from_slice(json)
            .map_err(|e| Error::manifest(format!("invalid json: {e}"), None))?;
        require_objects(&value)?;
        let raw: RawManifest = serde_json::from_value(value)
            .map_err(|e| Error::manifest(format!("wrong shape: {e}"), None))?;
        let meta = Meta::from_value(kind, raw.meta)?;
        Ok(Self {
            entries: raw.entries,
            meta,
        })
    }

    /// The manifest as compact JSON.
    ///
    /// # Errors
    /// `BAD_MANIFEST` if serialisation fails (it cannot for these types).
    pub fn to_json(&self) -> Result<Vec<u8>, Error> {
        serde_json::to_vec(self)
            .map_err(|e| Error::manifest(format!("cannot serialise: {e}"), None))
    }

    /// Checks every rule of section 5 for a file of `kind`, `cipher` and `chunk_size`.
    ///
    /// # Errors
    /// `BAD_MANIFEST` naming the rule and entry.
    pub fn validate(&self, kind: Kind, cipher: Cipher, chunk_size: u32) -> Result<(), Error> {
        if self.entries.len() > MAX_ENTRIES as usize {
            let n = self.entries.len();
            return Err(Error::manifest(
                format!("{n} entries, more than {MAX_ENTRIES}"),
                None,
            ));
        }
        self.meta.validate(kind)?;
        let mut paths = HashSet::with_capacity(self.entries.len());
        for (id, entry) in (0u32..).zip(&self.entries) {
            validate_entry(entry, cipher, chunk_size)
                .map_err(|reason| Error::manifest(reason, Some(id)))?;
            if !paths.insert(entry.path.as_str()) {
                return Err(Error::manifest("duplicate path", Some(id)));
            }
        }
        Ok(())
    }
}

/// The objects of section 5 must be JSON objects: serde would also accept arrays for structs.
fn require_objects(root: &serde_json::Value) -> Result<(), Error> {
    let not_object = |what: &str| Error::manifest(format!("{what} is not an object"), None);
    let root = root.as_object().ok_or_else(|| not_object("manifest"))?;
    if let Some(entries) = root.get("entries").and_then(serde_json::Value::as_array) {
        for (id, entry) in (0u32..).zip(entries) {
            let entry = entry
                .as_object()
                .ok_or_else(|| Error::manifest("entry is not an object", Some(id)))?;
            if entry
                .get("meta")
                .is_some_and(|m| !m.is_object() && !m.is_null())
            {
                return Err(Error::manifest("entry meta is not an object", Some(id)));
            }
        }
    }
    Ok(())
}

fn validate_entry(entry: &Entry, cipher: Cipher, chunk_size: u32) -> Result<(), String> {
    validate_path(&entry.path)?;
    let type_len = entry.media_type.len();
    if type_len == 0 || type_len > MAX_MEDIA_TYPE_BYTES as usize {
        return Err(format!(
            "type of {type_len} bytes, not 1 to {MAX_MEDIA_TYPE_BYTES}"
        ));
    }
    if entry.size > MAX_ENTRY_SIZE_BYTES {
        return Err(format!("size {} above 2^53 - 1", entry.size));
    }
    if entry.sha256.is_none() && cipher == Cipher::None {
        return Err("sha256 is required in an unencrypted file".to_owned());
    }
    if let Some(meta) = &entry.meta {
        for (name, value) in [("width", meta.width), ("height", meta.height)] {
            if let Some(v) =
                value.filter(|v| !(MIN_IMAGE_DIMENSION_PX..=MAX_IMAGE_DIMENSION_PX).contains(v))
            {
                return Err(format!(
                    "meta.{name} {v} outside 1 to {MAX_IMAGE_DIMENSION_PX}"
                ));
            }
        }
    }
    if entry.encoding == Encoding::Rgba8 {
        validate_rgba8(entry, chunk_size)?;
    }
    crate::encoding::ChunkPlan::new(entry, chunk_size)
        .map(|_| ())
        .map_err(|e| e.to_string())
}

fn validate_rgba8(entry: &Entry, chunk_size: u32) -> Result<(), String> {
    let (Some(width), Some(height)) = (
        entry.meta.as_ref().and_then(|m| m.width),
        entry.meta.as_ref().and_then(|m| m.height),
    ) else {
        return Err("rgba8 entry without meta.width and meta.height".to_owned());
    };
    let expected = u64::from(width) * u64::from(height) * 4;
    if entry.size != expected {
        return Err(format!(
            "rgba8 size {} is not width * height * 4 = {expected}",
            entry.size
        ));
    }
    if u64::from(width) * 4 > u64::from(chunk_size) {
        return Err(format!(
            "rgba8 row of {} bytes does not fit chunk_size {chunk_size}",
            u64::from(width) * 4
        ));
    }
    Ok(())
}

/// Checks an entry path: 1 to 1024 bytes, relative, `/`-separated, no empty, `.` or `..`
/// segment, no `\`, NUL or other control character.
///
/// # Errors
/// The reason, as text.
pub fn validate_path(path: &str) -> Result<(), String> {
    if path.is_empty() || path.len() > MAX_PATH_BYTES as usize {
        return Err(format!(
            "path of {} bytes, not 1 to {MAX_PATH_BYTES}",
            path.len()
        ));
    }
    if path.chars().any(|c| c == '\\' || c.is_control()) {
        return Err("path contains a backslash or a control character".to_owned());
    }
    if path
        .split('/')
        .any(|segment| segment.is_empty() || segment == "." || segment == "..")
    {
        return Err("path is absolute or has an empty, . or .. segment".to_owned());
    }
    Ok(())
}

/// Serde adapter: `Option<[u8; 32]>` as 64 lowercase hex digits.
mod hex32 {
    use serde::{Deserialize, Deserializer, Serializer};

    #[allow(clippy::ref_option)] // serde's `with` passes `&Option<T>`.
    pub(super) fn serialize<S: Serializer>(
        value: &Option<[u8; 32]>,
        s: S,
    ) -> Result<S::Ok, S::Error> {
        match value {
            Some(bytes) => s.serialize_str(&hex::encode(bytes)),
            None => s.serialize_none(),
        }
    }

    pub(super) fn deserialize<'de, D: Deserializer<'de>>(
        d: D,
    ) -> Result<Option<[u8; 32]>, D::Error> {
        let Some(text) = Option::<String>::deserialize(d)? else {
            return Ok(None);
        };
        super::parse_hex32(&text)
            .map(Some)
            .ok_or_else(|| serde::de::Error::custom("sha256 is not 64 lowercase hex digits"))
    }
}

/// Parses exactly 64 lowercase hex digits.
#[must_use]
pub fn parse_hex32(text: &str) -> Option<[u8; 32]> {
    if text.len() != 64
        || !text
            .bytes()
            .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
    {
        return None;
    }
    let mut out = [0u8; 32];
    hex::decode_to_slice(text, &mut out).ok()?;
    Some(out)
}

/// Whether `text` is exactly `len` lowercase hex digits.
#[must_use]
pub fn is_lower_hex(text: &str, len: usize) -> bool {
    text.len() == len
        && text
            .bytes()
            .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
}

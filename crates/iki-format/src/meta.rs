//! Manifest `meta` of project files and model files (docs/format.md sections 5.1, 5.2).

use serde::{Deserialize, Serialize};

use crate::error::Error;
use crate::header::Kind;
use crate::limits::MAX_ENTRY_SIZE_BYTES;
use crate::manifest::is_lower_hex;

/// `meta.format` of a project file.
pub const PROJECT_FORMAT: &str = "iki-project";
/// `meta.format` of a model file.
pub const MODEL_FORMAT: &str = "iki-model";
/// `meta.version` of both kinds.
pub const META_VERSION: u32 = 1;

/// Extra fields a newer writer added, kept so they survive a read and write.
pub type Extra = serde_json::Map<String, serde_json::Value>;

/// The manifest's `meta`: one shape per kind of file.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(untagged)]
pub enum Meta {
    /// Meta of a project file (`.iki`).
    Project(ProjectMeta),
    /// Meta of a model file (`.ikm`).
    Model(ModelMeta),
}

/// Canvas size of a project, in pixels.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Canvas {
    /// Width, at least 1.
    pub width: u32,
    /// Height, at least 1.
    pub height: u32,
}

/// Project meta (section 5.1).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ProjectMeta {
    /// `iki-project`.
    pub format: String,
    /// 1.
    pub version: u32,
    /// Project name.
    pub name: String,
    /// ISO 8601 UTC, `YYYY-MM-DDTHH:MM:SS(.sss)Z`.
    pub saved_at: String,
    /// Canvas size.
    pub canvas: Canvas,
    /// Application name and version.
    pub app: String,
    /// Unknown fields, kept.
    #[serde(flatten)]
    pub extra: Extra,
}

/// Role of a model file.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    /// The seller's master.
    Master,
    /// A per-buyer license copy.
    License,
}

/// The license object of a license copy (section 5.2).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct LicenseInfo {
    /// 16 lowercase hex digits, the 64-bit license id.
    pub id: String,
    /// Master id.
    pub master_id: String,
    /// Licensee account id.
    pub licensee: String,
    /// Licensee display name.
    pub licensee_name: String,
    /// Seller account id.
    pub seller: String,
    /// Issue time, ms since the Unix epoch.
    pub issued_at: u64,
}

/// Model meta (section 5.2).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ModelMeta {
    /// `iki-model`.
    pub format: String,
    /// 1.
    pub version: u32,
    /// Model name.
    pub name: String,
    /// `master` or `license`.
    pub role: Role,
    /// Present exactly when the role is `license`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub license: Option<LicenseInfo>,
    /// Unknown fields, kept.
    #[serde(flatten)]
    pub extra: Extra,
}

impl Meta {
    /// Reads `meta` for a file of `kind`.
    ///
    /// # Errors
    /// `BAD_MANIFEST` when the object does not have the kind's shape.
    pub(crate) fn from_value(kind: Kind, value: serde_json::Value) -> Result<Self, Error> {
        let object = value
            .as_object()
            .ok_or_else(|| Error::manifest("meta is not an object", None))?;
        let nested = ["canvas", "license"];
        if nested.iter().any(|k| {
            object
                .get(*k)
                .is_some_and(|v| !v.is_object() && !v.is_null())
        }) {
            return Err(Error::manifest(
                "meta.canvas or meta.license is not an object",
                None,
            ));
        }
        let shape = |e: serde_json::Error| Error::manifest(format!("meta: {e}"), None);
        match kind {
            Kind::Project => serde_json::from_value(value)
                .map(Meta::Project)
                .map_err(shape),
            Kind::Model => serde_json::from_value(value)
                .map(Meta::Model)
                .map_err(shape),
        }
    }

    /// Checks the rules of section 5.1 or 5.2.
    ///
    /// # Errors
    /// `BAD_MANIFEST` naming the rule.
    pub fn validate(&self, kind: Kind) -> Result<(), Error> {
        let bad = |reason: &str| Err(Error::manifest(format!("meta: {reason}"), None));
        match (kind, self) {
            (Kind::Project, Meta::Project(p)) => {
                if p.format != PROJECT_FORMAT || p.version != META_VERSION {
                    return bad("format must be iki-project, version 1");
                }
                if !is_iso_utc(&p.saved_at) {
                    return bad("savedAt is not YYYY-MM-DDTHH:MM:SS(.sss)Z");
                }
                if p.canvas.width == 0 || p.canvas.height == 0 {
                    return bad("canvas width and height must be positive");
                }
                Ok(())
            }
            (Kind::Model, Meta::Model(m)) => {
                if m.format != MODEL_FORMAT || m.version != META_VERSION {
                    return bad("format must be iki-model, version 1");
                }
                match (m.role, &m.license) {
                    (Role::Master, None) => Ok(()),
                    (Role::Master, Some(_)) => bad("a master carries no license"),
                    (Role::License, None) => bad("a license copy needs license"),
                    (Role::License, Some(l)) if !is_lower_hex(&l.id, 16) => {
                        bad("license.id is not 16 lowercase hex digits")
                    }
                    (Role::License, Some(l)) if l.issued_at > MAX_ENTRY_SIZE_BYTES => {
                        bad("license.issuedAt above 2^53 - 1")
                    }
                    (Role::License, Some(_)) => Ok(()),
                }
            }
            _ => bad("meta of the other kind of file"),
        }
    }
}

/// `YYYY-MM-DDTHH:MM:SSZ` or `YYYY-MM-DDTHH:MM:SS.sssZ` with fields in range.
fn is_iso_utc(text: &str) -> bool {
    let b = text.as_bytes();
    let shape_ok = match b.len() {
        20 => true,
        24 => {
            b.get(19) == Some(&b'.')
                && b.get(20..23)
                    .is_some_and(|f| f.iter().all(u8::is_ascii_digit))
        }
        _ => false,
    };
    let seps = [(4, b'-'), (7, b'-'), (10, b'T'), (13, b':'), (16, b':')];
    if !shape_ok || b.last() != Some(&b'Z') || seps.iter().any(|(i, c)| b.get(*i) != Some(c)) {
        return false;
    }
    let num = |from: usize, to: usize| -> Option<u32> {
        let digits = b.get(from..to)?;
        digits.iter().try_fold(0u32, |acc, d| {
            d.is_ascii_digit().then(|| acc * 10 + u32::from(d - b'0'))
        })
    };
    let fields = [
        num(0, 4),
        num(5, 7),
        num(8, 10),
        num(11, 13),
        num(14, 16),
        num(17, 19),
    ];
    let [Some(_), Some(month), Some(day), Some(hour), Some(minute), Some(second)] = fields else {
        return false;
    };
    (1..=12).contains(&month) && (1..=31).contains(&day) && hour < 24 && minute < 60 && second < 61
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn iso_timestamps() {
        for ok in [
            "2024-05-01T12:30:00Z",
            "2024-05-01T12:30:00.123Z",
            "1999-12-31T23:59:60Z",
        ] {
            assert!(is_iso_utc(ok), "{ok}");
        }
        for bad in [
            "2024-05-01 12:30:00Z",
            "2024-05-01T12:30:00",
            "2024-13-01T12:30:00Z",
            "2024-05-00T12:30:00Z",
            "2024-05-01T24:00:00Z",
            "2024-05-01T12:30:00.12Z",
            "2024-05-01T12:30:00+00:00",
            "2024-05-01T12:3a:00Z",
        ] {
            assert!(!is_iso_utc(bad), "{bad}");
        }
    }
}

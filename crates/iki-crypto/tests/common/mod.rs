//! Shared helpers for the vector suites: paths into `../shared/vectors/` (read in place,
//! never copied) and hex decoding.
#![allow(
    dead_code,
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

use std::path::PathBuf;

/// `shared/vectors/<rel>`, resolved from this crate's manifest directory.
pub fn vector_path(rel: &str) -> PathBuf {
    PathBuf::from(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../../shared/vectors"
    ))
    .join(rel)
}

/// Reads and parses a JSON vector file.
pub fn load<T: serde::de::DeserializeOwned>(rel: &str) -> T {
    let path = vector_path(rel);
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("reading {}: {e}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("parsing {}: {e}", path.display()))
}

/// A Wycheproof file whose groups hold cases of one shape `C` (only the fields a test reads).
#[derive(serde::Deserialize)]
struct Wycheproof<C> {
    #[serde(rename = "testGroups")]
    groups: Vec<WycheproofGroup<C>>,
}

#[derive(serde::Deserialize)]
struct WycheproofGroup<C> {
    tests: Vec<C>,
}

/// Every case of a Wycheproof file, across its groups.
pub fn wycheproof_cases<C: serde::de::DeserializeOwned>(rel: &str) -> Vec<C> {
    let file: Wycheproof<C> = load(rel);
    file.groups.into_iter().flat_map(|g| g.tests).collect()
}

/// Decodes lowercase or uppercase hex.
pub fn unhex(s: &str) -> Vec<u8> {
    hex::decode(s).unwrap_or_else(|e| panic!("bad hex {s:?}: {e}"))
}

/// Decodes hex into a fixed-size array, or `None` when the length differs.
pub fn unhex_array<const N: usize>(s: &str) -> Option<[u8; N]> {
    unhex(s).try_into().ok()
}

/// Lowercase hex.
pub fn tohex(b: &[u8]) -> String {
    hex::encode(b)
}

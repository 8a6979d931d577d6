//! Test only: Wycheproof's XChaCha20-Poly1305 cases, read in place from `shared/vectors`, for
//! the unit tests of [`crate::xchacha`] and [`crate::poly1305`], whose wasm32 kernels sit behind
//! private APIs the integration tests (`tests/common`) cannot reach.

use serde::Deserialize;

#[derive(Deserialize)]
struct File {
    #[serde(rename = "testGroups")]
    groups: Vec<Group>,
}

#[derive(Deserialize)]
struct Group {
    tests: Vec<RawCase>,
}

#[derive(Deserialize)]
struct RawCase {
    #[serde(rename = "tcId")]
    id: u32,
    key: String,
    iv: String,
    aad: String,
    msg: String,
    ct: String,
    tag: String,
    result: String,
}

/// One case, its byte strings decoded from hex.
pub(crate) struct Case {
    pub(crate) id: u32,
    pub(crate) key: Vec<u8>,
    pub(crate) iv: Vec<u8>,
    pub(crate) aad: Vec<u8>,
    pub(crate) msg: Vec<u8>,
    pub(crate) ct: Vec<u8>,
    pub(crate) tag: Vec<u8>,
    /// Whether the case must authenticate ("valid"; "invalid" must be refused).
    pub(crate) valid: bool,
}

/// Every case of `xchacha20_poly1305_test.json`.
pub(crate) fn xchacha20_poly1305_cases() -> Vec<Case> {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../../shared/vectors/wycheproof/xchacha20_poly1305_test.json"
    );
    let file: File = serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap();
    let unhex = |s: &str| hex::decode(s).unwrap();
    file.groups
        .into_iter()
        .flat_map(|g| g.tests)
        .map(|c| Case {
            id: c.id,
            key: unhex(&c.key),
            iv: unhex(&c.iv),
            aad: unhex(&c.aad),
            msg: unhex(&c.msg),
            ct: unhex(&c.ct),
            tag: unhex(&c.tag),
            valid: c.result == "valid",
        })
        .collect()
}

//! Wycheproof HKDF-SHA-256 through `hkdf_sha256_into` (every case) and `hkdf_sha256`
//! (cases with a 32-byte output, and a 32-byte prefix of longer outputs: HKDF's first block
//! does not depend on the requested length). The three "invalid" cases ask for more than
//! 255 · 32 bytes and must be refused with INVALID_LENGTH.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

mod common;

use common::{tohex, unhex, wycheproof_cases};
use iki_crypto::{hkdf_sha256, hkdf_sha256_into, Error, HKDF_SHA256_MAX_OUTPUT_BYTES};
use serde::Deserialize;

#[derive(Deserialize)]
struct Case {
    #[serde(rename = "tcId")]
    id: u32,
    ikm: String,
    salt: String,
    info: String,
    size: usize,
    okm: String,
    result: String,
}

#[test]
fn wycheproof_hkdf_sha256() {
    let (mut valid, mut invalid) = (0, 0);
    for case in &wycheproof_cases::<Case>("wycheproof/hkdf_sha256_test.json") {
        let (ikm, salt, info) = (unhex(&case.ikm), unhex(&case.salt), unhex(&case.info));
        let mut out = vec![0u8; case.size];
        let result = hkdf_sha256_into(&ikm, &salt, &[&info], &mut out);
        if case.result == "valid" {
            assert_eq!(result, Ok(()), "tcId {}", case.id);
            assert_eq!(tohex(&out), case.okm, "tcId {}", case.id);
            if case.size >= 32 {
                // Split the info in two to check that parts are concatenated.
                let (a, b) = info.split_at(info.len() / 2);
                let key = hkdf_sha256(&ikm, &salt, &[a, b]);
                assert_eq!(
                    tohex(key.expose_secret()),
                    case.okm[..64],
                    "tcId {}",
                    case.id
                );
            }
            valid += 1;
        } else {
            assert!(case.size > HKDF_SHA256_MAX_OUTPUT_BYTES, "tcId {}", case.id);
            assert_eq!(
                result,
                Err(Error::InvalidLength {
                    what: "hkdf output",
                    len: case.size
                }),
                "tcId {}",
                case.id
            );
            invalid += 1;
        }
    }
    assert_eq!((valid, invalid), (83, 3));
}

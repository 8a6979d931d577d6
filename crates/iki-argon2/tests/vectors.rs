//! Known answers: the RFC 9106 §5.3 Argon2id vector (with secret and associated data) and
//! the eight P-H-C `src/test.c` Argon2id v0x13 cases, read in place from
//! `shared/vectors/argon2/argon2id_vectors.json`; both through [`iki_argon2::hash`] and
//! through [`iki_argon2::hash_into`] over a caller buffer with spare blocks.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

use iki_argon2::{block_count, hash, hash_into, Block, Error, Inputs, Params};
use serde::Deserialize;

#[derive(Deserialize)]
struct File {
    rfc9106: Vector,
    phc_reference_tests: Vec<Vector>,
}

#[derive(Deserialize)]
struct Vector {
    #[serde(rename = "type", default)]
    kind: Option<String>,
    version: u32,
    iterations: u32,
    memory_kib: u32,
    parallelism: u32,
    tag_length: usize,
    password_hex: Option<String>,
    password_utf8: Option<String>,
    salt_hex: Option<String>,
    salt_utf8: Option<String>,
    secret_hex: String,
    associated_data_hex: String,
    tag_hex: String,
}

fn bytes(h: &Option<String>, utf8: &Option<String>) -> Vec<u8> {
    match (h, utf8) {
        (Some(h), None) => hex::decode(h).unwrap(),
        (None, Some(s)) => s.as_bytes().to_vec(),
        _ => panic!("vector needs exactly one of hex or utf8"),
    }
}

fn load() -> File {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../../shared/vectors/argon2/argon2id_vectors.json"
    );
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

fn check(v: &Vector) {
    assert_eq!(v.version, 0x13);
    assert!(v.kind.as_deref().is_none_or(|k| k == "argon2id"));
    let params = Params {
        m_kib: v.memory_kib,
        t: v.iterations,
        p: v.parallelism,
    };
    let (password, salt) = (
        bytes(&v.password_hex, &v.password_utf8),
        bytes(&v.salt_hex, &v.salt_utf8),
    );
    let (secret, ad) = (
        hex::decode(&v.secret_hex).unwrap(),
        hex::decode(&v.associated_data_hex).unwrap(),
    );
    let inputs = Inputs {
        password: &password,
        salt: &salt,
        secret: &secret,
        ad: &ad,
    };
    let mut tag = vec![0u8; v.tag_length];
    hash(&params, &inputs, &mut tag).unwrap();
    assert_eq!(hex::encode(&tag), v.tag_hex, "{params:?}");

    let mut memory = vec![Block::default(); block_count(&params).unwrap() + 3];
    let mut again = vec![0u8; v.tag_length];
    hash_into(&params, &inputs, &mut memory, &mut again).unwrap();
    assert_eq!(tag, again);
}

#[test]
fn rfc9106_section_5_3() {
    let file = load();
    assert_eq!(file.rfc9106.tag_hex.len(), 64);
    assert!(!file.rfc9106.secret_hex.is_empty());
    check(&file.rfc9106);
}

#[test]
fn phc_reference_cases() {
    let file = load();
    assert_eq!(file.phc_reference_tests.len(), 8);
    for v in &file.phc_reference_tests {
        check(v);
    }
}

#[test]
fn refuses_what_rfc9106_refuses() {
    let inputs = Inputs {
        password: b"pw",
        salt: &[1u8; 8],
        secret: b"",
        ad: b"",
    };
    let ok = Params {
        m_kib: 8,
        t: 1,
        p: 1,
    };
    let mut tag = [0u8; 32];
    for bad in [
        Params {
            m_kib: 8,
            t: 1,
            p: 0,
        },
        Params {
            m_kib: 8,
            t: 0,
            p: 1,
        },
        Params {
            m_kib: 7,
            t: 1,
            p: 1,
        },
        Params {
            m_kib: 31,
            t: 1,
            p: 4,
        },
        Params {
            m_kib: u32::MAX,
            t: 1,
            p: 1 << 24,
        },
    ] {
        assert_eq!(hash(&bad, &inputs, &mut tag), Err(Error::Params), "{bad:?}");
    }
    let short_salt = Inputs {
        salt: &[1u8; 7],
        ..inputs
    };
    assert_eq!(
        hash(&ok, &short_salt, &mut tag),
        Err(Error::Length {
            what: "salt",
            len: 7
        })
    );
    assert_eq!(
        hash(&ok, &inputs, &mut [0u8; 3]),
        Err(Error::Length {
            what: "tag",
            len: 3
        })
    );
    let mut small = vec![Block::default(); 7];
    assert_eq!(
        hash_into(&ok, &inputs, &mut small, &mut tag),
        Err(Error::Memory)
    );
    // A tag of 4 bytes (the minimum) and one longer than 64 (H' chaining) both run.
    assert!(hash(&ok, &inputs, &mut [0u8; 4]).is_ok());
    assert!(hash(&ok, &inputs, &mut [0u8; 200]).is_ok());
}

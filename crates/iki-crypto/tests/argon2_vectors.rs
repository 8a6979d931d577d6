//! Argon2id v0x13 known answers: the 8 P-H-C `src/test.c` cases through
//! `iki_crypto::argon2id` (no secret, no associated data, as format §3.1 uses it), and the
//! RFC 9106 §5.3 vector, which needs a secret and associated data that iki never uses, through
//! the pinned `argon2` crate's `Argon2::new_with_secret`. The RFC tag is read both from
//! `argon2id_vectors.json` and from the last line of the P-H-C `kats/argon2id` trace, whose
//! SHA-256 is checked against its `.shasum` first.
//!
//! Also one run at the writer defaults (64 MiB, 3 passes, 1 lane); its time is printed so
//! `cargo test -- --nocapture` shows what a password slot costs on this machine.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

mod common;

use std::time::Instant;

use argon2::{Algorithm, Argon2, AssociatedData, ParamsBuilder, Version};
use common::{load, tohex, unhex, vector_path};
use iki_crypto::{argon2id, hash::sha256, Argon2Params};
use serde::Deserialize;

#[derive(Deserialize)]
struct File {
    rfc9106: Vector,
    phc_reference_tests: Vec<Vector>,
}

#[derive(Deserialize)]
struct Vector {
    version: u32,
    iterations: u32,
    memory_kib: u32,
    parallelism: u32,
    tag_length: usize,
    #[serde(default)]
    password_hex: Option<String>,
    #[serde(default)]
    password_utf8: Option<String>,
    #[serde(default)]
    salt_hex: Option<String>,
    #[serde(default)]
    salt_utf8: Option<String>,
    secret_hex: String,
    associated_data_hex: String,
    tag_hex: String,
}

impl Vector {
    fn bytes(hex: &Option<String>, utf8: &Option<String>) -> Vec<u8> {
        match (hex, utf8) {
            (Some(h), None) => unhex(h),
            (None, Some(s)) => s.as_bytes().to_vec(),
            _ => panic!("vector needs exactly one of hex or utf8"),
        }
    }
    fn password(&self) -> Vec<u8> {
        Self::bytes(&self.password_hex, &self.password_utf8)
    }
    fn salt(&self) -> Vec<u8> {
        Self::bytes(&self.salt_hex, &self.salt_utf8)
    }
}

#[test]
fn phc_reference_cases_through_iki() {
    let file: File = load("argon2/argon2id_vectors.json");
    assert_eq!(file.phc_reference_tests.len(), 8);
    for v in &file.phc_reference_tests {
        assert_eq!((v.version, v.tag_length), (0x13, 32));
        assert!(v.secret_hex.is_empty() && v.associated_data_hex.is_empty());
        let params = Argon2Params {
            m_kib: v.memory_kib,
            t: v.iterations,
            p: v.parallelism,
        };
        let tag = argon2id(&v.password(), &v.salt(), &params).unwrap();
        assert_eq!(tohex(tag.expose_secret()), v.tag_hex, "{params:?}");
    }
}

fn rfc9106_tag(v: &Vector) -> String {
    let params = ParamsBuilder::new()
        .m_cost(v.memory_kib)
        .t_cost(v.iterations)
        .p_cost(v.parallelism)
        .output_len(v.tag_length)
        .data(AssociatedData::new(&unhex(&v.associated_data_hex)).unwrap())
        .build()
        .unwrap();
    let secret = unhex(&v.secret_hex);
    let argon =
        Argon2::new_with_secret(&secret, Algorithm::Argon2id, Version::V0x13, params).unwrap();
    let mut out = vec![0u8; v.tag_length];
    argon
        .hash_password_into(&v.password(), &v.salt(), &mut out)
        .unwrap();
    tohex(&out)
}

#[test]
fn rfc9106_section_5_3_and_phc_kat_trace() {
    let file: File = load("argon2/argon2id_vectors.json");
    let rfc = &file.rfc9106;
    assert_eq!(rfc.version, 0x13);
    assert_eq!(rfc9106_tag(rfc), rfc.tag_hex);

    let trace = std::fs::read(vector_path("argon2/phc-kats/argon2id")).unwrap();
    let shasum = std::fs::read_to_string(vector_path("argon2/phc-kats/argon2id.shasum")).unwrap();
    assert_eq!(
        shasum.split_whitespace().next(),
        Some(tohex(&sha256(&trace)).as_str())
    );
    let text = String::from_utf8(trace).unwrap();
    let tag_line = text.lines().rev().find(|l| l.starts_with("Tag:")).unwrap();
    let trace_tag: String = tag_line
        .trim_start_matches("Tag:")
        .split_whitespace()
        .collect();
    assert_eq!(trace_tag, rfc.tag_hex);
    assert!(
        text.contains("Memory: 32 KiB, Iterations: 3, Parallelism: 4 lanes, Tag length: 32 bytes")
    );
}

#[test]
fn writer_defaults_run() {
    let params = Argon2Params {
        m_kib: 65536,
        t: 3,
        p: 1,
    };
    let start = Instant::now();
    let a = argon2id(b"correct horse battery staple", &[7u8; 16], &params).unwrap();
    eprintln!("argon2id 64 MiB / 3 passes / 1 lane: {:?}", start.elapsed());
    let again = argon2id(b"correct horse battery staple", &[7u8; 16], &params).unwrap();
    assert_eq!(a.expose_secret(), again.expose_secret());
    let b = argon2id(
        b"correct horse battery staple",
        &[8u8; 16],
        &Argon2Params {
            m_kib: 8,
            t: 1,
            p: 1,
        },
    )
    .unwrap();
    assert_ne!(a.expose_secret(), b.expose_secret());
    assert_ne!(a.expose_secret(), &[0u8; 32]);
}

/// `iki-argon2` (what `argon2id` runs on wasm32) against `argon2id` natively (RustCrypto's
/// `argon2`): the same tags, and refused where `argon2id` refuses after its own checks.
#[test]
fn iki_argon2_agrees_with_argon2id() {
    let salt = [9u8; 16];
    for (m_kib, t, p) in [(8, 1, 1), (37, 2, 1), (64, 3, 2), (129, 1, 3), (1024, 2, 4)] {
        let params = Argon2Params { m_kib, t, p };
        let ours = argon2id(b"pw", &salt, &params).unwrap();
        let mut tag = [0u8; 32];
        let inputs = iki_argon2::Inputs {
            password: b"pw",
            salt: &salt,
            secret: &[],
            ad: &[],
        };
        iki_argon2::hash(&iki_argon2::Params { m_kib, t, p }, &inputs, &mut tag).unwrap();
        assert_eq!(&tag, ours.expose_secret(), "{params:?}");
    }
    for (m_kib, t, p) in [
        (8, 0, 1),
        (8, 1, 0),
        (7, 1, 1),
        (31, 1, 4),
        (64, 1, 1 << 24),
    ] {
        assert!(argon2id(b"pw", &salt, &Argon2Params { m_kib, t, p }).is_err());
        let inputs = iki_argon2::Inputs {
            password: b"pw",
            salt: &salt,
            secret: &[],
            ad: &[],
        };
        let refused = iki_argon2::hash(&iki_argon2::Params { m_kib, t, p }, &inputs, &mut [0; 32]);
        assert_eq!(refused, Err(iki_argon2::Error::Params));
    }
}

//! Runs every container vector of `testdata/container/` and checks that the checked-in
//! files are exactly what the generator writes today.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

mod common;

use std::collections::BTreeMap;

use common::vectors::{all, Key, Vector};
use iki_crypto::hash::sha256;
use iki_crypto::{SecretKey32, X25519Secret};
use iki_format::{read_all, Error, Event, Reader, Unlock};

const DIR: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../testdata/container");

fn checked_in() -> BTreeMap<String, Vec<u8>> {
    std::fs::read_dir(DIR)
        .expect("testdata/container exists (run scripts/gen-container-vectors.sh)")
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "ikv"))
        .map(|p| {
            (
                p.file_stem().unwrap().to_string_lossy().into_owned(),
                std::fs::read(&p).unwrap(),
            )
        })
        .collect()
}

/// Opens with `read_all`.
fn run_whole(v: &Vector) -> Result<[u8; 32], Error> {
    let identity;
    let unlock = match &v.key {
        Key::None => Unlock::None,
        Key::Password(p) => Unlock::Password(p.as_bytes()),
        Key::Identity(k) => {
            identity = X25519Secret::from_key(SecretKey32::from_bytes(*k));
            Unlock::Identity(&identity)
        }
        Key::ContentKey(k) => Unlock::ContentKey(SecretKey32::from_bytes(*k)),
    };
    read_all(v.kind, &v.bytes, unlock).map(|o| sha256(&o.entries.concat()))
}

/// Opens with the streaming reader, 7 bytes per push.
fn run_streamed(v: &Vector) -> Result<[u8; 32], Error> {
    let mut reader = Reader::new(v.kind);
    let mut pieces = v.bytes.chunks(7);
    let mut payload = Vec::new();
    loop {
        match reader.next()? {
            None => match pieces.next() {
                Some(p) => reader.push(p)?,
                None => reader.finish()?,
            },
            Some(Event::Locked(_)) => match &v.key {
                Key::None => reader.skip_content()?,
                Key::Password(p) => reader.unlock_password(p.as_bytes())?,
                Key::Identity(k) => {
                    reader.unlock_identity(&X25519Secret::from_key(SecretKey32::from_bytes(*k)))?
                }
                Key::ContentKey(k) => reader.unlock_content_key(SecretKey32::from_bytes(*k))?,
            },
            Some(Event::Chunk { data, .. }) => {
                // The whole file's digest exists only once the file ended.
                assert_eq!(reader.file_sha256().unwrap_err().code(), "INVALID_STATE");
                payload.extend_from_slice(&data);
            }
            Some(Event::End(_)) => {
                // The signature's hash continued over the signature: every byte, ancillary
                // chunks included, exactly once.
                assert_eq!(
                    reader.file_sha256()?,
                    sha256(&v.bytes),
                    "{}: file SHA-256",
                    v.name
                );
                return Ok(sha256(&payload));
            }
            Some(_) => {}
        }
    }
}

#[test]
fn every_vector_meets_its_expectation() {
    let files = checked_in();
    assert!(files.len() >= 30, "only {} vectors", files.len());
    for (name, file) in &files {
        let v = Vector::parse(name, file);
        for (how, result) in [("whole", run_whole(&v)), ("streamed", run_streamed(&v))] {
            match (&v.expect, result) {
                (None, Ok(hash)) => {
                    assert_eq!(Some(hash), v.payload_sha256, "{name} ({how}): payload")
                }
                (Some(code), Err(e)) => assert_eq!(e.code(), code, "{name} ({how}): {e}"),
                (expect, got) => panic!("{name} ({how}): expected {expect:?}, got {got:?}"),
            }
        }
    }
}

#[test]
fn vectors_are_not_stale() {
    let files = checked_in();
    let generated: BTreeMap<String, Vec<u8>> = all()
        .into_iter()
        .map(|v| (v.name.clone(), v.render()))
        .collect();
    assert_eq!(
        files.keys().collect::<Vec<_>>(),
        generated.keys().collect::<Vec<_>>(),
        "vector names differ: run scripts/gen-container-vectors.sh"
    );
    for (name, bytes) in &generated {
        assert!(
            files[name] == *bytes,
            "{name} is stale: run scripts/gen-container-vectors.sh"
        );
    }
}

#[test]
fn names_say_what_is_wrong() {
    for v in all() {
        let ok_name = v.name.starts_with("ok_")
            || v.name.ends_with("_ignored")
            || v.name.ends_with("_skipped")
            || v.name == "chunk_ancillary_in_encrypted_file"
            || v.name == "sign_resigned_by_another_key";
        assert_eq!(v.expect.is_none(), ok_name, "{}", v.name);
    }
}

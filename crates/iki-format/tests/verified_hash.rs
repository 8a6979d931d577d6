//! `Writer::verify_entry_hash`: a digest the caller computed over the bytes it will write is
//! checked against the manifest before the first byte; a wrong one is HASH_MISMATCH, a right
//! one gives the very file `write` alone makes, and the entry is not hashed a second time.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

mod common;

use common::*;
use iki_crypto::hash::sha256;
use iki_format::{manifest_entry_for, Encoding, Kind, Manifest, Protection, Writer};

const CHUNK: u32 = 64 * 1024;

fn texture() -> (Manifest, Vec<u8>, Vec<u8>) {
    let (w, h) = (130u32, 300u32);
    let pixels: Vec<u8> = (0..w * h * 4)
        .map(|i| (i % 251) as u8 ^ (i / 4096) as u8)
        .collect();
    let text = sample(70_000, 5, false);
    let m = manifest(
        Kind::Model,
        vec![
            rgba8_entry("t.png", w, h, &pixels),
            manifest_entry_for("a.txt", "text/plain", Encoding::Deflate, &text),
        ],
    );
    (m, pixels, text)
}

fn write(m: &Manifest, data: &[&[u8]], verify: Option<[u8; 32]>) -> Result<Vec<u8>, &'static str> {
    let mut writer = Writer::new(options(Kind::Model, CHUNK, Protection::None), m).unwrap();
    if let Some(digest) = verify {
        writer.verify_entry_hash(&digest).map_err(|e| e.code())?;
    }
    for bytes in data {
        writer.write(bytes).map_err(|e| e.code())?;
        writer.end_entry().map_err(|e| e.code())?;
    }
    let mut out = writer.take_output();
    out.extend(writer.finish().map_err(|e| e.code())?);
    Ok(out)
}

#[test]
fn a_verified_entry_gives_the_same_file() {
    let (m, pixels, text) = texture();
    let plain = write(&m, &[&pixels, &text], None).unwrap();
    assert_eq!(
        write(&m, &[&pixels, &text], Some(sha256(&pixels))).unwrap(),
        plain
    );
    let opened = open(Kind::Model, &plain, iki_format::Unlock::None).unwrap();
    assert_eq!(opened.entries, vec![pixels, text]);
}

#[test]
fn a_wrong_digest_is_refused_before_any_byte() {
    let (m, pixels, _) = texture();
    let mut wrong = sha256(&pixels);
    wrong[31] ^= 1;
    let mut writer = Writer::new(options(Kind::Model, CHUNK, Protection::None), &m).unwrap();
    assert_eq!(
        writer.verify_entry_hash(&wrong).unwrap_err().code(),
        "HASH_MISMATCH"
    );
    // Final, as a mismatch at end_entry is.
    assert_eq!(writer.write(&pixels).unwrap_err().code(), "HASH_MISMATCH");
}

#[test]
fn only_at_the_start_of_an_entry() {
    let (m, pixels, text) = texture();
    let mut writer = Writer::new(options(Kind::Model, CHUNK, Protection::None), &m).unwrap();
    writer.write(&pixels[..100]).unwrap();
    assert_eq!(
        writer
            .verify_entry_hash(&sha256(&pixels))
            .unwrap_err()
            .code(),
        "INVALID_STATE"
    );
    // Not final: the entry goes on and is hashed as usual.
    writer.write(&pixels[100..]).unwrap();
    writer.end_entry().unwrap();
    writer.write(&text).unwrap();
    writer.end_entry().unwrap();
    assert_eq!(
        writer.verify_entry_hash(&sha256(&text)).unwrap_err().code(),
        "INVALID_STATE"
    );
}

/// What the caller takes on: after a verified digest the writer does not hash the entry again,
/// so other bytes of the same length are not caught here (the WASM adapter writes a verified
/// entry only from the buffer its digest was taken of). Without the verification they are.
#[test]
fn a_verified_entry_is_not_hashed_again() {
    let (m, pixels, text) = texture();
    let mut other = pixels.clone();
    other[7] ^= 1;
    assert_eq!(write(&m, &[&other, &text], None), Err("HASH_MISMATCH"));
    assert!(write(&m, &[&other, &text], Some(sha256(&pixels))).is_ok());
}

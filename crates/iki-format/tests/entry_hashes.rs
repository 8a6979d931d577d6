//! `Reader::skip_entry_hashes`: a manifest sha256 that does not match its entry is
//! HASH_MISMATCH, unless the caller opted out because it checks the whole file against a
//! record (the license copier); sizes and the signature are checked either way.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

mod common;

use common::craft::Parts;
use common::*;
use iki_format::{manifest_entry_for, write_all, Encoding, Event, Kind, Protection, Reader};

/// A plain file whose second entry's manifest sha256 is wrong, re-signed so only the hash
/// disagrees with the content.
fn file_with_a_wrong_hash() -> (Vec<u8>, Vec<u8>) {
    let (a, b) = (sample(9000, 1, true), sample(300, 2, false));
    let m = manifest(
        Kind::Model,
        vec![
            manifest_entry_for("a", "x/y", Encoding::Deflate, &a),
            manifest_entry_for("b", "x/y", Encoding::Stored, &b),
        ],
    );
    let good = write_all(options(Kind::Model, 4096, Protection::None), &m, &[&a, &b]).unwrap();
    let mut parts = Parts::split(&good);
    let mani = parts.find(b"MANI")[0];
    let json = String::from_utf8(parts.chunks[mani].1.clone()).unwrap();
    let real = m.entries[1].sha256.map(hex::encode).unwrap();
    let wrong = format!(
        "{}{}",
        if real.starts_with('0') { "1" } else { "0" },
        &real[1..]
    );
    parts.chunks[mani].1 = json.replace(&real, &wrong).into_bytes();
    (parts.resign(&signing_key()), good)
}

/// Reads to the end; the codes of the events' kinds or the error.
fn read(bytes: &[u8], skip: bool) -> Result<usize, &'static str> {
    let mut reader = Reader::new(Kind::Model);
    if skip {
        reader.skip_entry_hashes();
    }
    reader.push(bytes).map_err(|e| e.code())?;
    reader.finish().map_err(|e| e.code())?;
    let mut verified = 0;
    loop {
        match reader.next().map_err(|e| e.code())? {
            Some(Event::EntryVerified { .. }) => verified += 1,
            Some(Event::End(_)) => return Ok(verified),
            Some(_) => {}
            None => panic!("reader wants more input after finish"),
        }
    }
}

#[test]
fn a_wrong_manifest_hash_is_refused_unless_entry_hashes_are_skipped() {
    let (bad, good) = file_with_a_wrong_hash();
    assert_eq!(read(&good, false), Ok(2));
    assert_eq!(read(&bad, false), Err("HASH_MISMATCH"));
    assert_eq!(read(&bad, true), Ok(2));
}

#[test]
fn skipping_hashes_still_checks_the_signature_and_the_data() {
    let (bad, _) = file_with_a_wrong_hash();
    let mut flipped = bad.clone();
    let last = flipped.len() - 1;
    flipped[last] ^= 1;
    assert_eq!(read(&flipped, true), Err("BAD_SIGNATURE"));
    let mut parts = Parts::split(&bad);
    let data = parts.find(b"DATA");
    let (_, payload) = &mut parts.chunks[data[data.len() - 1]];
    payload.pop();
    assert_eq!(read(&parts.resign(&signing_key()), true), Err("BAD_DATA"));
}

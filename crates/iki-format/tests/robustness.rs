//! Every truncation and every single-bit flip of small signed files ends in a typed error:
//! never a panic, never a hang, never `Ok` for a modified file.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

mod common;

use common::*;
use iki_format::{Error, Event, Kind, Protection, Reader, Unlock};

fn unlock_for(which: &str) -> Unlock<'static> {
    match which {
        "password" => Unlock::Password(PASSWORD),
        "recipient" => Unlock::Identity(Box::leak(Box::new(identity()))),
        _ => Unlock::None,
    }
}

fn protection_for(which: &str) -> Protection {
    match which {
        "password" => encrypted(vec![password_slot()]),
        "recipient" => encrypted(vec![recipient_slot()]),
        _ => Protection::None,
    }
}

fn check_every_truncation_and_flip(which: &str) {
    let (file, entries) = small_file(Kind::Model, protection_for(which));
    assert_eq!(
        open(Kind::Model, &file, unlock_for(which)).unwrap().entries,
        entries
    );
    for len in 0..file.len() {
        let err = open(Kind::Model, &file[..len], unlock_for(which)).unwrap_err();
        assert_eq!(err, Error::Truncated, "{which}: truncated to {len}");
    }
    let mut codes = std::collections::BTreeMap::new();
    let mut flipped = file.clone();
    for bit in 0..file.len() * 8 {
        flipped[bit / 8] ^= 1 << (bit % 8);
        match open(Kind::Model, &flipped, unlock_for(which)) {
            Ok(_) => panic!(
                "{which}: flip of bit {bit} (byte {}) was not detected",
                bit / 8
            ),
            Err(e) => *codes.entry(e.code()).or_insert(0) += 1,
        }
        flipped[bit / 8] ^= 1 << (bit % 8);
    }
    // The coarse codes dominate; structural codes show up for flips in framing fields.
    assert!(
        codes.contains_key("BAD_SIGNATURE") || codes.contains_key("DECRYPT_FAILED"),
        "{codes:?}"
    );
}

#[test]
fn unencrypted_file() {
    check_every_truncation_and_flip("plain");
}

#[test]
fn password_file() {
    check_every_truncation_and_flip("password");
}

#[test]
fn recipient_file() {
    check_every_truncation_and_flip("recipient");
}

#[test]
fn truncations_streamed_byte_by_byte() {
    let (file, _) = small_file(Kind::Project, Protection::None);
    for len in (0..file.len()).step_by(7) {
        let mut reader = Reader::new(Kind::Project);
        let mut result = Ok(());
        for b in &file[..len] {
            result = reader
                .push(std::slice::from_ref(b))
                .and_then(|()| while_events(&mut reader));
            if result.is_err() {
                break;
            }
        }
        let result = result
            .and_then(|()| reader.finish())
            .and_then(|()| while_events(&mut reader));
        assert_eq!(result, Err(Error::Truncated), "{len}");
        assert_eq!(reader.next(), Err(Error::Truncated), "errors are final");
        assert_eq!(reader.push(b"x"), Err(Error::Truncated), "errors are final");
    }
}

fn while_events(reader: &mut Reader) -> Result<(), Error> {
    while let Some(event) = reader.next()? {
        assert!(!matches!(event, Event::End(_)));
    }
    Ok(())
}

#[test]
fn random_inputs_are_refused() {
    let mut x = 0x1234_5678_9ABC_DEF1u64;
    let mut next = || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    for _ in 0..2000 {
        let len = (next() % 200) as usize;
        let mut bytes: Vec<u8> = (0..len).map(|_| next() as u8).collect();
        if next() % 2 == 0 && bytes.len() >= 8 {
            bytes[..8].copy_from_slice(&iki_format::header::MAGIC_MODEL);
        }
        assert!(open(Kind::Model, &bytes, Unlock::None).is_err());
    }
}

//! A failed unlock leaves the reader at `Event::Locked` so the caller can try again; every
//! other error stays final (reader module documentation, docs/format.md section 3).
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

mod common;

use common::*;
use iki_crypto::{SecretKey32, X25519Secret};
use iki_format::{Event, Kind, Reader};

/// Reads to `End` and returns each entry's bytes.
fn drain(reader: &mut Reader) -> Vec<Vec<u8>> {
    let mut entries: Vec<Vec<u8>> = Vec::new();
    loop {
        match reader.next().unwrap() {
            Some(Event::Manifest(m)) => entries = vec![Vec::new(); m.entries.len()],
            Some(Event::Chunk { entry, data, .. }) => {
                entries[entry as usize].extend_from_slice(&data);
            }
            Some(Event::End(_)) => return entries,
            Some(_) => {}
            None => panic!("reader wants more input after finish"),
        }
    }
}

#[test]
fn wrong_password_then_right_password_opens() {
    let (file, expected) = small_file(Kind::Project, encrypted(vec![password_slot()]));
    let mut reader = locked(&file);
    for wrong in [&b"wrong"[..], b"", b"correct horse battery stapl"] {
        assert_eq!(
            reader.unlock_password(wrong).unwrap_err().code(),
            "DECRYPT_FAILED"
        );
    }
    // Another kind of key is refused without ending the reader either.
    assert_eq!(
        reader.unlock_identity(&identity()).unwrap_err().code(),
        "KEY_REQUIRED"
    );
    reader.unlock_password(PASSWORD).unwrap();
    assert_eq!(drain(&mut reader), expected);
}

#[test]
fn wrong_identity_then_right_identity_opens() {
    let (file, expected) = small_file(Kind::Project, encrypted(vec![recipient_slot()]));
    let mut reader = locked(&file);
    let other = X25519Secret::from_key(SecretKey32::from_bytes([0x77; 32]));
    assert_eq!(
        reader.unlock_identity(&other).unwrap_err().code(),
        "DECRYPT_FAILED"
    );
    assert_eq!(
        reader.unlock_password(PASSWORD).unwrap_err().code(),
        "KEY_REQUIRED"
    );
    reader.unlock_identity(&identity()).unwrap();
    assert_eq!(drain(&mut reader), expected);
}

#[test]
fn a_locked_reader_can_still_go_on_without_a_key() {
    let (file, _) = small_file(Kind::Project, encrypted(vec![password_slot()]));
    let mut reader = locked(&file);
    assert!(reader.unlock_password(b"wrong").is_err());
    reader.skip_content().unwrap();
    assert!(matches!(reader.next().unwrap(), Some(Event::End(_))));
}

#[test]
fn other_errors_stay_final() {
    let (file, _) = small_file(Kind::Project, encrypted(vec![password_slot()]));
    // next() while locked is a caller error, and final.
    let mut reader = locked(&file);
    assert_eq!(reader.next().unwrap_err().code(), "INVALID_STATE");
    assert_eq!(
        reader.unlock_password(PASSWORD).unwrap_err().code(),
        "INVALID_STATE"
    );
    // Unlocking twice: the second call is out of order, and final.
    let mut reader = locked(&file);
    reader.unlock_password(PASSWORD).unwrap();
    assert_eq!(
        reader.unlock_password(PASSWORD).unwrap_err().code(),
        "INVALID_STATE"
    );
    assert_eq!(reader.next().unwrap_err().code(), "INVALID_STATE");
    // A wrong content key fails at MANI, after MANI was consumed: final.
    let mut reader = locked(&file);
    reader
        .unlock_content_key(SecretKey32::from_bytes([9; 32]))
        .unwrap();
    assert_eq!(reader.next().unwrap_err().code(), "DECRYPT_FAILED");
    assert_eq!(reader.next().unwrap_err().code(), "DECRYPT_FAILED");
}

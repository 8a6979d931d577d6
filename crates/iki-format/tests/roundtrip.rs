//! Round trips of both kinds, every encoding, unencrypted and with every kind of slot.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

mod common;

use common::*;
use iki_format::keys::Slot;
use iki_format::{
    manifest_entry_for, write_all, Encoding, Event, Kind, NewSlot, Protection, Reader, Unlock,
};

fn entries_for(chunk_size: u32) -> (Vec<iki_format::Entry>, Vec<Vec<u8>>) {
    let cs = chunk_size as usize;
    let bytes = [
        Vec::new(),
        vec![0x42],
        sample(cs, 2, false),
        sample(cs + 1, 3, true),
        sample(3 * cs - 5, 4, false),
        sample(cs * 2, 5, true),
    ];
    let mut entries = Vec::new();
    for (i, b) in bytes.iter().enumerate() {
        let encoding = [Encoding::Stored, Encoding::Deflate][i % 2];
        entries.push(manifest_entry_for(
            &format!("e/{i}"),
            "application/octet-stream",
            encoding,
            b,
        ));
        entries.push(manifest_entry_for(
            &format!("s/{i}"),
            "application/octet-stream",
            Encoding::Stored,
            b,
        ));
    }
    (
        entries,
        bytes.iter().flat_map(|b| [b.clone(), b.clone()]).collect(),
    )
}

fn rgba_cases(chunk_size: u32) -> (Vec<iki_format::Entry>, Vec<Vec<u8>>) {
    // Widths that divide chunk_size / 4, that do not, a single-row-per-chunk width and 1.
    let widths = [256u32, 300, chunk_size / 4, 1, chunk_size / 4 - 1];
    let mut entries = Vec::new();
    let mut bytes = Vec::new();
    for (i, w) in widths.into_iter().enumerate() {
        let h = 7 + i as u32;
        let pixels = sample((w * h * 4) as usize, 10 + i as u64, i % 2 == 0);
        entries.push(rgba8_entry(&format!("t/{i}.png"), w, h, &pixels));
        bytes.push(pixels);
    }
    (entries, bytes)
}

fn round_trip(kind: Kind, chunk_size: u32, slots: Option<Vec<NewSlot>>, unlock: Unlock<'_>) {
    let (mut entries, mut bytes) = entries_for(chunk_size);
    let (rgba, rgba_bytes) = rgba_cases(chunk_size);
    entries.extend(rgba);
    bytes.extend(rgba_bytes);
    let protection = slots.map_or(Protection::None, encrypted);
    let m = manifest(kind, entries);
    let refs: Vec<&[u8]> = bytes.iter().map(Vec::as_slice).collect();
    let file = write_all(options(kind, chunk_size, protection), &m, &refs).unwrap();
    let opened = open(kind, &file, unlock).unwrap();
    assert_eq!(opened.manifest.as_ref(), Some(&m));
    assert_eq!(opened.entries, bytes);
    assert_eq!(opened.verified.public_key, signing_key().public_key());
    assert_eq!(opened.header.chunk_size, chunk_size);
}

#[test]
fn plain_project_and_model_at_4096() {
    round_trip(Kind::Project, 4096, None, Unlock::None);
    round_trip(Kind::Model, 4096, None, Unlock::None);
}

#[test]
fn password_file() {
    round_trip(
        Kind::Project,
        4096,
        Some(vec![password_slot()]),
        Unlock::Password(PASSWORD),
    );
}

#[test]
fn recipient_file() {
    let id = identity();
    round_trip(
        Kind::Model,
        4096,
        Some(vec![recipient_slot()]),
        Unlock::Identity(&id),
    );
}

#[test]
fn account_and_license_slots_open_with_the_content_key() {
    let account = NewSlot::Account {
        account_id: "acct_fake".into(),
        blob: vec![1, 2, 3],
    };
    round_trip(
        Kind::Project,
        4096,
        Some(vec![account]),
        Unlock::ContentKey(content_key()),
    );
    let license = NewSlot::License {
        service: "https://licenses.example".into(),
        license_id: "00112233aabbccdd".into(),
        master_id: "master_fake".into(),
    };
    round_trip(
        Kind::Model,
        5000,
        Some(vec![license]),
        Unlock::ContentKey(content_key()),
    );
}

#[test]
fn several_slots_and_an_unknown_slot_type() {
    let id = identity();
    let slots = || {
        vec![
            NewSlot::Unknown {
                slot_type: 200,
                body: b"from the future".to_vec(),
            },
            password_slot(),
            recipient_slot(),
            NewSlot::Account {
                account_id: "acct_fake".into(),
                blob: Vec::new(),
            },
        ]
    };
    round_trip(
        Kind::Project,
        4096,
        Some(slots()),
        Unlock::Password(PASSWORD),
    );
    round_trip(Kind::Project, 4096, Some(slots()), Unlock::Identity(&id));
    let (file, _) = small_file(Kind::Project, encrypted(slots()));
    let opened = open(Kind::Project, &file, Unlock::Identity(&id)).unwrap();
    assert_eq!(opened.slots.len(), 4);
    assert_eq!(
        opened.slots[0],
        Slot::Unknown {
            slot_type: 200,
            body: b"from the future".to_vec()
        }
    );
}

#[test]
fn chunk_size_16_mib() {
    let cs = 16 << 20;
    let big = sample(cs + 3, 7, true);
    let small = sample(1000, 8, false);
    let m = manifest(
        Kind::Model,
        vec![
            manifest_entry_for("big", "application/octet-stream", Encoding::Deflate, &big),
            manifest_entry_for("small", "text/plain", Encoding::Stored, &small),
        ],
    );
    let file = write_all(
        options(Kind::Model, cs as u32, encrypted(vec![recipient_slot()])),
        &m,
        &[&big, &small],
    )
    .unwrap();
    let id = identity();
    let opened = open(Kind::Model, &file, Unlock::Identity(&id)).unwrap();
    assert_eq!(opened.entries, vec![big, small]);
}

#[test]
fn encrypted_file_without_a_key_checks_structure_and_signature() {
    let (file, _) = small_file(Kind::Model, encrypted(vec![password_slot()]));
    let opened = open(Kind::Model, &file, Unlock::None).unwrap();
    assert!(opened.manifest.is_none());
    assert!(opened.entries.is_empty());
    assert_eq!(opened.slots.len(), 1);
}

#[test]
fn events_in_order_byte_by_byte() {
    let (file, bytes) = small_file(Kind::Project, Protection::None);
    let mut reader = Reader::new(Kind::Project);
    let mut events = Vec::new();
    for b in &file {
        reader.push(std::slice::from_ref(b)).unwrap();
        while let Some(event) = reader.next().unwrap() {
            events.push(event);
        }
    }
    assert!(
        !events.iter().any(|e| matches!(e, Event::End(_))),
        "no verdict before finish"
    );
    reader.finish().unwrap();
    while let Some(event) = reader.next().unwrap() {
        events.push(event);
    }
    let kinds: Vec<&str> = events
        .iter()
        .map(|e| match e {
            Event::Header(_) => "header",
            Event::Locked(_) => "locked",
            Event::Manifest(_) => "manifest",
            Event::Chunk { .. } => "chunk",
            Event::EntryVerified { .. } => "verified",
            Event::End(_) => "end",
            Event::EntryDamaged { .. } => "damaged",
            Event::Modified { .. } => "modified",
        })
        .collect();
    assert_eq!(
        kinds,
        ["header", "manifest", "chunk", "verified", "chunk", "verified", "end"]
    );
    assert!(
        matches!(&events[2], Event::Chunk { entry: 0, index: 0, last: true, data } if *data == bytes[0])
    );
    assert_eq!(reader.next().unwrap(), None);
}

#[test]
fn locked_reader_refuses_next_before_unlock() {
    let (file, _) = small_file(Kind::Project, encrypted(vec![password_slot()]));
    let mut reader = Reader::new(Kind::Project);
    reader.push(&file).unwrap();
    assert!(matches!(reader.next().unwrap(), Some(Event::Header(_))));
    assert!(matches!(reader.next().unwrap(), Some(Event::Locked(_))));
    assert_eq!(reader.next().unwrap_err().code(), "INVALID_STATE");
    assert_eq!(
        reader.unlock_password(PASSWORD).unwrap_err().code(),
        "INVALID_STATE",
        "errors are final"
    );
}

#[test]
fn wrong_keys_are_decrypt_failed_and_missing_slots_key_required() {
    let (file, _) = small_file(Kind::Project, encrypted(vec![password_slot()]));
    assert_eq!(
        open(Kind::Project, &file, Unlock::Password(b"wrong"))
            .unwrap_err()
            .code(),
        "DECRYPT_FAILED"
    );
    let id = identity();
    assert_eq!(
        open(Kind::Project, &file, Unlock::Identity(&id))
            .unwrap_err()
            .code(),
        "KEY_REQUIRED"
    );
    let wrong = iki_crypto::SecretKey32::from_bytes([9; 32]);
    assert_eq!(
        open(Kind::Project, &file, Unlock::ContentKey(wrong))
            .unwrap_err()
            .code(),
        "DECRYPT_FAILED"
    );
    let (file, _) = small_file(Kind::Project, encrypted(vec![recipient_slot()]));
    let other = iki_crypto::X25519Secret::from_key(iki_crypto::SecretKey32::from_bytes([0x77; 32]));
    assert_eq!(
        open(Kind::Project, &file, Unlock::Identity(&other))
            .unwrap_err()
            .code(),
        "DECRYPT_FAILED"
    );
    assert_eq!(
        open(Kind::Project, &file, Unlock::Password(PASSWORD))
            .unwrap_err()
            .code(),
        "KEY_REQUIRED"
    );
}

#[test]
fn writer_checks_sizes_and_hashes() {
    let data = sample(5000, 1, false);
    let m = manifest(
        Kind::Project,
        vec![manifest_entry_for(
            "a",
            "text/plain",
            Encoding::Deflate,
            &data,
        )],
    );
    let mut w =
        iki_format::Writer::new(options(Kind::Project, 4096, Protection::None), &m).unwrap();
    w.write(&data[..4999]).unwrap();
    assert_eq!(w.end_entry().unwrap_err().code(), "INVALID_ARGUMENT");
    let mut w =
        iki_format::Writer::new(options(Kind::Project, 4096, Protection::None), &m).unwrap();
    assert_eq!(
        w.write(&[data.clone(), vec![0]].concat())
            .unwrap_err()
            .code(),
        "INVALID_ARGUMENT"
    );
    let mut other = data.clone();
    other[10] ^= 1;
    let mut w =
        iki_format::Writer::new(options(Kind::Project, 4096, Protection::None), &m).unwrap();
    w.write(&other).unwrap();
    assert_eq!(w.end_entry().unwrap_err().code(), "HASH_MISMATCH");
    let w = iki_format::Writer::new(options(Kind::Project, 4096, Protection::None), &m).unwrap();
    assert_eq!(w.finish().unwrap_err().code(), "INVALID_STATE");
    assert_eq!(
        write_all(options(Kind::Project, 4096, Protection::None), &m, &[&data]).map(|_| ()),
        Ok(())
    );
}

#[test]
fn writer_streams_output_incrementally() {
    let data = sample(4096 * 3, 1, true);
    let m = manifest(
        Kind::Model,
        vec![manifest_entry_for("a", "x/y", Encoding::Stored, &data)],
    );
    let mut w = iki_format::Writer::new(options(Kind::Model, 4096, Protection::None), &m).unwrap();
    let mut file = w.take_output();
    assert!(!file.is_empty(), "header, manifest written by new");
    w.write(&data[..5000]).unwrap();
    let first = w.take_output();
    assert!(
        first.len() > 4096 && first.len() < 4096 + 100,
        "exactly one chunk emitted"
    );
    file.extend(first);
    w.write(&data[5000..]).unwrap();
    w.end_entry().unwrap();
    file.extend(w.take_output());
    file.extend(w.finish().unwrap());
    assert_eq!(
        open(Kind::Model, &file, Unlock::None).unwrap().entries,
        vec![data]
    );
}

/// Entries without a manifest sha256 are not hashed by the writer; the entries after them
/// are still checked against their own hash, from a fresh hasher.
#[test]
fn writer_checks_only_entries_with_a_hash() {
    let (a, b) = (sample(9000, 2, true), sample(5000, 3, false));
    let mut unhashed = manifest_entry_for("a", "x/y", Encoding::Deflate, &a);
    unhashed.sha256 = None;
    let hashed = manifest_entry_for("b", "x/y", Encoding::Deflate, &b);
    let m = manifest(Kind::Model, vec![unhashed, hashed]);
    let protection = || encrypted(vec![recipient_slot()]);
    let bytes = write_all(options(Kind::Model, 4096, protection()), &m, &[&a, &b]).unwrap();
    let opened = open(Kind::Model, &bytes, Unlock::Identity(&identity())).unwrap();
    assert_eq!(opened.entries, vec![a.clone(), b.clone()]);
    let mut wrong = b.clone();
    wrong[0] ^= 1;
    let mut w = iki_format::Writer::new(options(Kind::Model, 4096, protection()), &m).unwrap();
    w.write(&a).unwrap();
    w.end_entry().unwrap();
    w.write(&wrong).unwrap();
    let err = w.end_entry().unwrap_err();
    assert_eq!(
        (err.code(), err),
        (
            "HASH_MISMATCH",
            iki_format::Error::HashMismatch { entry: 1 }
        )
    );
}

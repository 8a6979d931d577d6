//! Moving, reordering and editing authenticated parts: each refused with the right code.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

mod common;

use common::craft::Parts;
use common::*;
use iki_format::{manifest_entry_for, write_all, Encoding, Kind, Protection, Unlock};

/// One entry of three chunks and one of one.
fn file_with(protection: Protection, file_id: [u8; 16]) -> Vec<u8> {
    let a = sample(4096 * 2 + 100, 1, true);
    let b = sample(10, 2, false);
    let m = manifest(
        Kind::Model,
        vec![
            manifest_entry_for("a", "x/y", Encoding::Stored, &a),
            manifest_entry_for("b", "x/y", Encoding::Deflate, &b),
        ],
    );
    let mut o = options(Kind::Model, 4096, protection);
    o.file_id = file_id;
    write_all(o, &m, &[&a, &b]).unwrap()
}

fn code(kind_bytes: &[u8], unlock: Unlock<'_>) -> &'static str {
    open(Kind::Model, kind_bytes, unlock).unwrap_err().code()
}

#[test]
fn chunk_reorder() {
    let mut plain = Parts::split(&file_with(Protection::None, FILE_ID));
    let data = plain.find(b"DATA");
    plain.chunks.swap(data[0], data[1]);
    assert_eq!(
        code(&plain.resign(&signing_key()), Unlock::None),
        "DATA_SEQUENCE"
    );

    // Encrypted, with the plaintext headers rewritten so the sequence looks right: the
    // nonce (chunk number) and AAD still bind the position.
    let mut enc = Parts::split(&file_with(encrypted(vec![password_slot()]), FILE_ID));
    let data = enc.find(b"DATA");
    enc.chunks.swap(data[0], data[1]);
    let (h0, h1) = (
        enc.chunks[data[1]].1[..9].to_vec(),
        enc.chunks[data[0]].1[..9].to_vec(),
    );
    enc.chunks[data[0]].1[..9].copy_from_slice(&h0);
    enc.chunks[data[1]].1[..9].copy_from_slice(&h1);
    assert_eq!(
        code(&enc.join(), Unlock::Password(PASSWORD)),
        "DECRYPT_FAILED"
    );
    let mut enc = Parts::split(&file_with(encrypted(vec![password_slot()]), FILE_ID));
    let data = enc.find(b"DATA");
    enc.chunks.swap(data[0], data[1]);
    assert_eq!(
        code(&enc.join(), Unlock::Password(PASSWORD)),
        "DATA_SEQUENCE"
    );
}

#[test]
fn chunk_moved_between_files_with_the_same_key() {
    let a = Parts::split(&file_with(encrypted(vec![password_slot()]), FILE_ID));
    let b = Parts::split(&file_with(encrypted(vec![password_slot()]), [0xF2; 16]));
    let mut mixed = a.clone();
    let i = a.find(b"DATA")[1];
    mixed.chunks[i] = b.chunks[i].clone();
    assert_eq!(
        code(&mixed.join(), Unlock::Password(PASSWORD)),
        "DECRYPT_FAILED"
    );
    // Same file id too, but other key slots: the AAD's keys_digest differs.
    let mut o = options(Kind::Model, 4096, encrypted(vec![password_slot()]));
    o.slot_entropy = iki_format::SlotEntropy::FixedForTestVectors([0x99; 32]);
    let data = sample(4096 * 2 + 100, 1, true);
    let small = sample(10, 2, false);
    let m = manifest(
        Kind::Model,
        vec![
            manifest_entry_for("a", "x/y", Encoding::Stored, &data),
            manifest_entry_for("b", "x/y", Encoding::Deflate, &small),
        ],
    );
    let c = Parts::split(&write_all(o, &m, &[&data, &small]).unwrap());
    let mut mixed = a.clone();
    mixed.chunks[i] = c.chunks[i].clone();
    assert_eq!(
        code(&mixed.join(), Unlock::Password(PASSWORD)),
        "DECRYPT_FAILED"
    );
}

#[test]
fn last_flag_flipped() {
    for (protection, unlock) in [
        (Protection::None, Unlock::None),
        (encrypted(vec![password_slot()]), Unlock::Password(PASSWORD)),
    ] {
        let mut parts = Parts::split(&file_with(protection, FILE_ID));
        let i = parts.find(b"DATA")[0];
        parts.chunks[i].1[8] ^= 1;
        assert_eq!(code(&parts.resign(&signing_key()), unlock), "DATA_SEQUENCE");
    }
}

#[test]
fn slot_swapped_between_files() {
    let a = Parts::split(&file_with(encrypted(vec![password_slot()]), FILE_ID));
    let b = Parts::split(&file_with(encrypted(vec![password_slot()]), [0xF2; 16]));
    let mut mixed = a.clone();
    let k = a.find(b"KEYS")[0];
    mixed.chunks[k] = b.chunks[k].clone();
    assert_eq!(
        code(&mixed.join(), Unlock::Password(PASSWORD)),
        "DECRYPT_FAILED"
    );
    let a = Parts::split(&file_with(encrypted(vec![recipient_slot()]), FILE_ID));
    let b = Parts::split(&file_with(encrypted(vec![recipient_slot()]), [0xF2; 16]));
    let mut mixed = a.clone();
    mixed.chunks[k] = b.chunks[k].clone();
    let id = identity();
    assert_eq!(code(&mixed.join(), Unlock::Identity(&id)), "DECRYPT_FAILED");
}

#[test]
fn head_chunk_size_edited() {
    let mut enc = Parts::split(&file_with(encrypted(vec![password_slot()]), FILE_ID));
    enc.chunks[0].1[4..8].copy_from_slice(&8192u32.to_le_bytes());
    assert_eq!(
        code(&enc.join(), Unlock::Password(PASSWORD)),
        "DECRYPT_FAILED"
    );
    let mut plain = Parts::split(&file_with(Protection::None, FILE_ID));
    plain.chunks[0].1[4..8].copy_from_slice(&8192u32.to_le_bytes());
    assert_eq!(
        code(&plain.join(), Unlock::None),
        "BAD_DATA",
        "first chunk is 4096 bytes, not 8192"
    );
    // Even where the chunk counts happen to agree, the signature catches the edit.
    let (file, _) = small_file(Kind::Model, Protection::None);
    let mut plain = Parts::split(&file);
    plain.chunks[0].1[4..8].copy_from_slice(&8192u32.to_le_bytes());
    assert_eq!(code(&plain.join(), Unlock::None), "BAD_SIGNATURE");
}

#[test]
fn weak_or_non_canonical_signing_keys_are_refused() {
    let (file, _) = small_file(Kind::Model, Protection::None);
    let mut identity_point = [0u8; 32];
    identity_point[0] = 1;
    // A "signature" that satisfies the cofactored equation under the identity point:
    // R = identity, S = 0. Only strict verification refuses it.
    let mut forged_sig = [0u8; 64];
    forged_sig[0] = 1;
    let mut non_canonical = [0xFFu8; 32];
    non_canonical[0] = 0xED;
    non_canonical[31] = 0x7F; // y = p, the non-canonical encoding of y = 0.
    for key in [identity_point, non_canonical] {
        let mut parts = Parts::split(&file);
        let last = parts.chunks.len() - 1;
        let sign = &mut parts.chunks[last].1;
        sign[1..33].copy_from_slice(&key);
        let n = sign.len();
        sign[n - 64..].copy_from_slice(&forged_sig);
        assert_eq!(code(&parts.join(), Unlock::None), "BAD_SIGNATURE");
    }
}

#[test]
fn wrong_kind_and_magic() {
    let (file, _) = small_file(Kind::Model, Protection::None);
    assert_eq!(
        open(Kind::Project, &file, Unlock::None).unwrap_err().code(),
        "WRONG_KIND"
    );
    assert_eq!(
        open(Kind::Project, b"\x89PNG\r\n\x1a\n", Unlock::None)
            .unwrap_err()
            .code(),
        "BAD_MAGIC"
    );
}

#[test]
fn chunk_order_names_the_missing_chunk() {
    let missing = |file: &[u8], drop: &[u8; 4]| {
        let mut parts = Parts::split(file);
        let at = parts.find(drop)[0];
        parts.chunks.remove(at);
        open(Kind::Model, &parts.join(), Unlock::None).unwrap_err()
    };
    let encrypted = file_with(encrypted(vec![password_slot()]), FILE_ID);
    let plain = file_with(Protection::None, FILE_ID);
    for (file, dropped, found) in [
        (&encrypted, b"KEYS", "MANI"),
        (&plain, b"MANI", "DATA"),
        (&plain, b"HEAD", "MANI"),
    ] {
        let error = missing(file, dropped);
        let expected = format!(
            "chunk {} missing: found {found} in its place",
            std::str::from_utf8(dropped).unwrap()
        );
        assert_eq!((error.code(), error.to_string()), ("CHUNK_ORDER", expected));
    }
    // A chunk that comes again is the one named.
    let mut parts = Parts::split(&plain);
    let mani = parts.chunks[1].clone();
    parts.chunks.insert(2, mani);
    let error = open(Kind::Model, &parts.join(), Unlock::None).unwrap_err();
    assert_eq!(error.to_string(), "chunk MANI repeated or out of place");
}

//! Every limit of docs/format.md section 10 at the limit and one past it.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

mod common;

use common::craft::{data_payload, stored_deflate, Parts};
use common::*;
use iki_crypto::Argon2Params;
use iki_format::keys::check_kdf_params;
use iki_format::{
    manifest_entry_for, write_all, Cipher, Encoding, Error, Kind, NewSlot, Protection, Unlock,
    Writer,
};

fn code_of(bytes: &[u8], unlock: Unlock<'_>) -> &'static str {
    open(Kind::Project, bytes, unlock).unwrap_err().code()
}

fn limit_name(bytes: &[u8]) -> &'static str {
    match open(Kind::Project, bytes, Unlock::None).unwrap_err() {
        Error::LimitExceeded { limit, .. } => limit,
        other => panic!("{other:?}"),
    }
}

fn plain_parts() -> Parts {
    Parts::split(&small_file(Kind::Project, Protection::None).0)
}

#[test]
fn head_payload_4096_and_4097() {
    let mut parts = plain_parts();
    parts.chunks[0].1.resize(4096, 0xAB);
    assert!(open(Kind::Project, &parts.resign(&signing_key()), Unlock::None).is_ok());
    parts.chunks[0].1.push(0);
    assert_eq!(
        limit_name(&parts.resign(&signing_key())),
        "MAX_HEAD_PAYLOAD_BYTES"
    );
    parts.chunks[0].1.truncate(31);
    assert_eq!(
        code_of(&parts.resign(&signing_key()), Unlock::None),
        "MALFORMED_CHUNK"
    );
}

#[test]
fn chunk_size_bounds() {
    for (size, ok) in [
        (4096u32, true),
        (4095, false),
        (16 << 20, true),
        ((16 << 20) + 1, false),
    ] {
        let m = manifest(Kind::Project, Vec::new());
        let written = write_all(options(Kind::Project, size, Protection::None), &m, &[]);
        assert_eq!(written.is_ok(), ok, "writer {size}");
        let mut parts = plain_parts();
        parts.chunks[0].1[4..8].copy_from_slice(&size.to_le_bytes());
        let read = open(Kind::Project, &parts.resign(&signing_key()), Unlock::None);
        assert_eq!(read.is_ok(), ok, "reader {size}: {read:?}");
        if !ok {
            assert_eq!(read.unwrap_err().code(), "LIMIT_EXCEEDED");
        }
    }
}

/// Unknown slots padding KEYS to exactly `total` payload bytes next to one password slot.
fn padded_slots(total: usize, count: usize) -> Vec<NewSlot> {
    let mut slots = vec![password_slot()];
    let fixed = 2 + (3 + 101) + 3 * (count - 1);
    let mut left = total - fixed;
    for i in 0..count - 1 {
        let len = if i == count - 2 {
            left
        } else {
            left.min(65535).min(left / (count - 1 - i))
        };
        left -= len;
        slots.push(NewSlot::Unknown {
            slot_type: 9,
            body: vec![0x5A; len],
        });
    }
    slots
}

#[test]
fn keys_payload_65536_and_65537() {
    let m = manifest(Kind::Project, Vec::new());
    let file = write_all(
        options(Kind::Project, 4096, encrypted(padded_slots(65536, 3))),
        &m,
        &[],
    )
    .unwrap();
    let parts = Parts::split(&file);
    assert_eq!(parts.chunks[1].1.len(), 65536);
    assert!(open(Kind::Project, &file, Unlock::Password(PASSWORD)).is_ok());
    let err = write_all(
        options(Kind::Project, 4096, encrypted(padded_slots(65537, 3))),
        &m,
        &[],
    )
    .unwrap_err();
    assert_eq!(err.code(), "LIMIT_EXCEEDED");
    let mut parts = parts;
    parts.chunks[1].1.push(0);
    let bytes = parts.join();
    assert!(matches!(
        open(Kind::Project, &bytes, Unlock::None).unwrap_err(),
        Error::LimitExceeded {
            limit: "MAX_KEYS_PAYLOAD_BYTES",
            value: 65537,
            max: 65536
        }
    ));
}

#[test]
fn slot_count_64_65_and_0() {
    let m = manifest(Kind::Project, Vec::new());
    let file = write_all(
        options(
            Kind::Project,
            4096,
            encrypted(padded_slots(2 + 104 + 63 * 4, 64)),
        ),
        &m,
        &[],
    )
    .unwrap();
    assert!(open(Kind::Project, &file, Unlock::Password(PASSWORD)).is_ok());
    let err = write_all(
        options(
            Kind::Project,
            4096,
            encrypted(padded_slots(2 + 104 + 64 * 4, 65)),
        ),
        &m,
        &[],
    )
    .unwrap_err();
    assert_eq!(err.code(), "LIMIT_EXCEEDED");
    assert_eq!(
        write_all(options(Kind::Project, 4096, encrypted(Vec::new())), &m, &[])
            .unwrap_err()
            .code(),
        "LIMIT_EXCEEDED"
    );
    let mut parts = Parts::split(&file);
    parts.chunks[1].1[..2].copy_from_slice(&65u16.to_le_bytes());
    assert_eq!(limit_name(&parts.join()), "MAX_KEY_SLOTS");
    parts.chunks[1].1[..2].copy_from_slice(&0u16.to_le_bytes());
    assert_eq!(limit_name(&parts.join()), "MIN_KEY_SLOTS");
}

#[test]
fn mani_payload_8_mib() {
    let mut m = manifest(Kind::Project, Vec::new());
    let base = m.to_json().unwrap().len();
    let pad = |m: &mut iki_format::Manifest, n: usize| {
        let iki_format::Meta::Project(p) = &mut m.meta else {
            unreachable!()
        };
        p.extra
            .insert("pad".into(), serde_json::Value::String("p".repeat(n)));
    };
    pad(&mut m, 0);
    let overhead = m.to_json().unwrap().len() - base;
    pad(&mut m, (8 << 20) - base - overhead);
    let file = write_all(options(Kind::Project, 4096, Protection::None), &m, &[]).unwrap();
    assert_eq!(Parts::split(&file).chunks[1].1.len(), 8 << 20);
    assert_eq!(
        open(Kind::Project, &file, Unlock::None)
            .unwrap()
            .manifest
            .unwrap(),
        m
    );
    pad(&mut m, (8 << 20) - base - overhead + 1);
    let err = write_all(options(Kind::Project, 4096, Protection::None), &m, &[]).unwrap_err();
    assert_eq!(err.code(), "LIMIT_EXCEEDED");
    let mut parts = Parts::split(&file);
    parts.chunks[1].1.push(b' ');
    assert_eq!(
        limit_name(&parts.resign(&signing_key())),
        "MAX_MANI_PAYLOAD_BYTES"
    );
}

#[test]
fn data_payload_at_and_past_the_limit() {
    // One deflate entry of 4096 + 4095 bytes; its chunks are hand-made stored-block streams
    // padded with empty blocks: the second exactly at the 4189-byte limit.
    let bytes = sample(4096 + 4095, 3, true);
    let m = manifest(
        Kind::Project,
        vec![manifest_entry_for("a", "x/y", Encoding::Deflate, &bytes)],
    );
    let file = write_all(
        options(Kind::Project, 4096, Protection::None),
        &m,
        &[&bytes],
    )
    .unwrap();
    let mut parts = Parts::split(&file);
    let d = parts.find(b"DATA");
    parts.chunks[d[0]].1 = data_payload(0, 0, 0, &stored_deflate(&bytes[..4096], 0));
    parts.chunks[d[1]].1 = data_payload(0, 1, 1, &stored_deflate(&bytes[4096..], 16));
    assert_eq!(parts.chunks[d[1]].1.len(), 4189);
    assert_eq!(
        open(Kind::Project, &parts.resign(&signing_key()), Unlock::None)
            .unwrap()
            .entries,
        vec![bytes.clone()]
    );
    parts.chunks[d[0]].1 = data_payload(0, 0, 0, &stored_deflate(&bytes[..4096], 16));
    assert_eq!(parts.chunks[d[0]].1.len(), 4190);
    assert!(matches!(
        open(Kind::Project, &parts.resign(&signing_key()), Unlock::None).unwrap_err(),
        Error::LimitExceeded {
            limit: "max_data_payload_bytes",
            value: 4190,
            max: 4189
        }
    ));
}

#[test]
fn sign_payload_65536_and_65537() {
    let mut parts = plain_parts();
    let frame = r#"{"kind":"device","pad":""}"#.len();
    let info_at = format!(
        r#"{{"kind":"device","pad":"{}"}}"#,
        "s".repeat(65536 - 101 - frame)
    );
    assert_eq!(info_at.len(), 65536 - 101);
    assert!(open(
        Kind::Project,
        &parts.resign_with(&signing_key(), info_at.as_bytes()),
        Unlock::None
    )
    .is_ok());
    let last = parts.chunks.len() - 1;
    parts.chunks[last].1.push(0);
    assert_eq!(limit_name(&parts.join()), "MAX_SIGN_PAYLOAD_BYTES");
}

#[test]
fn argon2_ceilings_at_and_one_past() {
    let ok = [
        (262_144, 1, 1),
        (8, 10, 1),
        (32, 1, 4),
        (32, 1, 4),
        (8, 1, 1),
    ];
    for (m_kib, t, p) in ok {
        assert!(
            check_kdf_params(&Argon2Params { m_kib, t, p }).is_ok(),
            "{m_kib} {t} {p}"
        );
    }
    let refused = [
        (262_145, 1, 1),
        (8, 11, 1),
        (40, 1, 5),
        (31, 1, 4),
        (8, 0, 1),
        (8, 1, 0),
        (7, 1, 1),
    ];
    for (m_kib, t, p) in refused {
        assert_eq!(
            check_kdf_params(&Argon2Params { m_kib, t, p }),
            Err(Error::KdfParamsRefused { m_kib, t, p })
        );
    }
    // The writer refuses what readers would refuse.
    let slot = NewSlot::Password {
        password: zeroize::Zeroizing::new(b"pw".to_vec()),
        params: Argon2Params {
            m_kib: 8,
            t: 11,
            p: 1,
        },
    };
    let m = manifest(Kind::Project, Vec::new());
    assert_eq!(
        write_all(options(Kind::Project, 4096, encrypted(vec![slot])), &m, &[])
            .unwrap_err()
            .code(),
        "KDF_PARAMS_REFUSED"
    );
}

#[test]
fn argon2_at_the_memory_ceiling_runs_and_past_it_is_refused_before_allocating() {
    let slot = NewSlot::Password {
        password: zeroize::Zeroizing::new(PASSWORD.to_vec()),
        params: Argon2Params {
            m_kib: 262_144,
            t: 1,
            p: 1,
        },
    };
    let m = manifest(Kind::Project, Vec::new());
    let file = write_all(options(Kind::Project, 4096, encrypted(vec![slot])), &m, &[]).unwrap();
    assert!(open(Kind::Project, &file, Unlock::Password(PASSWORD)).is_ok());
    // m_kib = 2^32 - 1 would ask for 4 TiB: refused by the ceiling check, not by the allocator.
    let mut parts = Parts::split(&file);
    parts.chunks[1].1[6..10].copy_from_slice(&u32::MAX.to_le_bytes());
    let err = open(Kind::Project, &parts.join(), Unlock::Password(PASSWORD)).unwrap_err();
    assert_eq!(
        err,
        Error::KdfParamsRefused {
            m_kib: u32::MAX,
            t: 1,
            p: 1
        }
    );
    assert_eq!(err.details()[0], ("mKib", u32::MAX.to_string()));
    parts.chunks[1].1[5] = 2; // kdf id 2: the only slot is unusable.
    assert_eq!(
        code_of(&parts.join(), Unlock::Password(PASSWORD)),
        "UNSUPPORTED_ALGORITHM"
    );
}

fn rule_of(m: &iki_format::Manifest, cipher: Cipher, chunk_size: u32) -> Result<(), String> {
    m.validate(Kind::Project, cipher, chunk_size)
        .map_err(|e| e.code().to_owned())
}

#[test]
fn manifest_entries_65536_and_65537() {
    let entry = |i: usize| {
        let mut e = manifest_entry_for(&format!("e/{i}"), "x/y", Encoding::Stored, &[]);
        e.sha256 = None;
        e
    };
    let mut m = manifest(Kind::Project, (0..65536).map(entry).collect());
    assert_eq!(rule_of(&m, Cipher::XChaCha20Poly1305, 4096), Ok(()));
    m.entries.push(entry(65536));
    assert_eq!(
        rule_of(&m, Cipher::XChaCha20Poly1305, 4096),
        Err("BAD_MANIFEST".into())
    );
}

#[test]
fn path_length_and_image_dimensions() {
    let with_path = |p: &str| {
        manifest(
            Kind::Project,
            vec![manifest_entry_for(p, "x/y", Encoding::Stored, b"")],
        )
    };
    assert_eq!(
        rule_of(&with_path(&"p".repeat(1024)), Cipher::None, 4096),
        Ok(())
    );
    assert_eq!(
        rule_of(&with_path(&"p".repeat(1025)), Cipher::None, 4096),
        Err("BAD_MANIFEST".into())
    );
    assert_eq!(
        rule_of(&with_path(""), Cipher::None, 4096),
        Err("BAD_MANIFEST".into())
    );
    let image = |w: u32, h: u32| {
        let pixels = vec![0u8; (w as usize) * (h as usize) * 4];
        manifest(Kind::Project, vec![rgba8_entry("t.png", w, h, &pixels)])
    };
    let big = 16 << 20;
    assert_eq!(rule_of(&image(65535, 1), Cipher::None, big), Ok(()));
    assert_eq!(rule_of(&image(1, 65535), Cipher::None, 4096), Ok(()));
    for (w, h) in [(65536, 1), (1, 65536), (0, 1), (1, 0)] {
        assert_eq!(
            rule_of(&image(w, h), Cipher::None, big),
            Err("BAD_MANIFEST".into()),
            "{w}x{h}"
        );
    }
    assert_eq!(
        rule_of(&image(1024, 1), Cipher::None, 4096),
        Ok(()),
        "row of exactly chunk_size"
    );
    assert_eq!(
        rule_of(&image(1025, 1), Cipher::None, 4096),
        Err("BAD_MANIFEST".into())
    );
}

#[test]
fn writer_rows_per_chunk() {
    let pixels = vec![7u8; 300 * 20 * 4];
    let m = manifest(
        Kind::Model,
        vec![
            rgba8_entry("t.png", 300, 20, &pixels),
            manifest_entry_for("a", "x/y", Encoding::Stored, b""),
        ],
    );
    let w = Writer::new(options(Kind::Model, 4096, Protection::None), &m).unwrap();
    assert_eq!(w.rows_per_chunk(0), Some(3));
    assert_eq!(w.rows_per_chunk(1), None);
    assert_eq!(w.rows_per_chunk(2), None);
}

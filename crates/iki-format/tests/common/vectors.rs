//! The container vectors of `testdata/container/`: how each is built, how the `.ikv` text
//! header is written and parsed. Shared by `examples/gen_vectors.rs` (which writes them)
//! and `tests/vectors.rs` (which runs them and checks they are not stale).
#![allow(
    dead_code,
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

use iki_crypto::hash::sha256;
use iki_crypto::SigningKey;
use iki_format::manifest::{LicenseInfo, ModelMeta, Role};
use iki_format::{manifest_entry_for, write_all, Encoding, Kind, Meta, NewSlot, Protection};

use super::craft::{data_payload, stored_deflate, Parts};
use super::*;

/// The key a vector is opened with.
#[allow(clippy::enum_variant_names)]
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Key {
    None,
    Password(String),
    Identity([u8; 32]),
    ContentKey([u8; 32]),
}

/// One vector.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Vector {
    pub name: String,
    /// `None` for `ok`, else the expected code.
    pub expect: Option<String>,
    pub kind: Kind,
    pub key: Key,
    pub payload_sha256: Option<[u8; 32]>,
    pub bytes: Vec<u8>,
}

impl Vector {
    /// The `.ikv` file: text header lines, `---`, raw bytes.
    pub fn render(&self) -> Vec<u8> {
        let mut head = format!("expect: {}\n", self.expect.as_deref().unwrap_or("ok"));
        head += &format!(
            "kind: {}\n",
            if self.kind == Kind::Project {
                "project"
            } else {
                "model"
            }
        );
        match &self.key {
            Key::None => {}
            Key::Password(p) => head += &format!("password: {p}\n"),
            Key::Identity(k) => head += &format!("identity: {}\n", hex::encode(k)),
            Key::ContentKey(k) => head += &format!("content-key: {}\n", hex::encode(k)),
        }
        if let Some(h) = self.payload_sha256 {
            head += &format!("payload-sha256: {}\n", hex::encode(h));
        }
        head += "---\n";
        let mut out = head.into_bytes();
        out.extend_from_slice(&self.bytes);
        out
    }

    /// Parses an `.ikv` file.
    pub fn parse(name: &str, file: &[u8]) -> Self {
        let split = file
            .windows(5)
            .position(|w| w == b"\n---\n")
            .expect("--- line")
            + 1;
        let head = std::str::from_utf8(&file[..split]).unwrap();
        let mut v = Vector {
            name: name.into(),
            expect: None,
            kind: Kind::Project,
            key: Key::None,
            payload_sha256: None,
            bytes: file[split + 4..].to_vec(),
        };
        for line in head.lines() {
            let (k, value) = line.split_once(": ").expect("key: value");
            let hex32 = |s: &str| <[u8; 32]>::try_from(hex::decode(s).unwrap()).unwrap();
            match k {
                "expect" => v.expect = (value != "ok").then(|| value.to_owned()),
                "kind" => {
                    v.kind = if value == "project" {
                        Kind::Project
                    } else {
                        Kind::Model
                    }
                }
                "password" => v.key = Key::Password(value.into()),
                "identity" => v.key = Key::Identity(hex32(value)),
                "content-key" => v.key = Key::ContentKey(hex32(value)),
                "payload-sha256" => v.payload_sha256 = Some(hex32(value)),
                other => panic!("unknown header line {other}"),
            }
        }
        v
    }
}

fn ok(name: &str, kind: Kind, key: Key, (bytes, entries): (Vec<u8>, Vec<Vec<u8>>)) -> Vector {
    Vector {
        name: name.into(),
        expect: None,
        kind,
        key,
        payload_sha256: Some(sha256(&entries.concat())),
        bytes,
    }
}

fn bad(name: &str, code: &str, kind: Kind, key: Key, bytes: Vec<u8>) -> Vector {
    Vector {
        name: name.into(),
        expect: Some(code.into()),
        kind,
        key,
        payload_sha256: None,
        bytes,
    }
}

const P: Kind = Kind::Project;
const M: Kind = Kind::Model;

fn pw() -> Key {
    Key::Password(String::from_utf8(PASSWORD.to_vec()).unwrap())
}

fn id() -> Key {
    Key::Identity(FAKE_IDENTITY)
}

fn ck() -> Key {
    Key::ContentKey(FAKE_CONTENT_KEY)
}

/// Entry 0: three stored chunks; entry 1: one deflate chunk.
pub fn multi_chunk_file(
    kind: Kind,
    protection: Protection,
    file_id: [u8; 16],
) -> (Vec<u8>, Vec<Vec<u8>>) {
    let a = sample(4096 * 2 + 100, 1, true);
    let b = sample(10, 2, false);
    let m = manifest(
        kind,
        vec![
            manifest_entry_for("a", "x/y", Encoding::Stored, &a),
            manifest_entry_for("b", "x/y", Encoding::Deflate, &b),
        ],
    );
    let mut o = options(kind, 4096, protection);
    o.file_id = file_id;
    (write_all(o, &m, &[&a, &b]).unwrap(), vec![a, b])
}

fn license_copy() -> (Vec<u8>, Vec<Vec<u8>>) {
    let pixels = sample(64 * 40 * 4, 5, true);
    let json = br#"{"Version":3}"#.to_vec();
    let mut m = manifest(
        Kind::Model,
        vec![
            manifest_entry_for("model.json", "application/json", Encoding::Deflate, &json),
            rgba8_entry("tex.png", 64, 40, &pixels),
        ],
    );
    m.entries[1].sha256 = None;
    m.meta = Meta::Model(ModelMeta {
        format: "iki-model".into(),
        version: 1,
        name: "Fake model".into(),
        role: Role::License,
        license: Some(LicenseInfo {
            id: "0123456789abcdef".into(),
            master_id: "master_fake".into(),
            licensee: "acct_buyer_fake".into(),
            licensee_name: "Buyer".into(),
            seller: "acct_seller_fake".into(),
            issued_at: CREATED_MS,
        }),
        extra: serde_json::Map::new(),
    });
    let slot = NewSlot::License {
        service: "https://licenses.example".into(),
        license_id: "0123456789abcdef".into(),
        master_id: "master_fake".into(),
    };
    let mut o = options(Kind::Model, 4096, encrypted(vec![slot]));
    o.signer = iki_format::SignerInfo {
        kind: iki_format::SignerKind::Service,
        name: None,
        account: None,
        certificate: None,
        service: Some("https://licenses.example".into()),
    };
    (
        write_all(o, &m, &[&json, &pixels]).unwrap(),
        vec![json, pixels],
    )
}

fn texture_file() -> (Vec<u8>, Vec<Vec<u8>>) {
    let pixels = sample(300 * 20 * 4, 6, false);
    let text = sample(5000, 7, false);
    let m = manifest(
        Kind::Model,
        vec![
            rgba8_entry("t/a.png", 300, 20, &pixels),
            manifest_entry_for("m.json", "application/json", Encoding::Deflate, &text),
        ],
    );
    (
        write_all(
            options(Kind::Model, 4096, Protection::None),
            &m,
            &[&pixels, &text],
        )
        .unwrap(),
        vec![pixels, text],
    )
}

fn key() -> SigningKey {
    signing_key()
}

/// Applies `edit` to the parts of `bytes` and re-signs.
fn edit(bytes: &[u8], f: impl FnOnce(&mut Parts)) -> Vec<u8> {
    let mut parts = Parts::split(bytes);
    f(&mut parts);
    parts.resign(&key())
}

/// Applies `edit` without re-signing.
fn raw(bytes: &[u8], f: impl FnOnce(&mut Parts)) -> Vec<u8> {
    let mut parts = Parts::split(bytes);
    f(&mut parts);
    parts.join()
}

fn edit_mani_json(bytes: &[u8], f: impl FnOnce(&mut serde_json::Value)) -> Vec<u8> {
    edit(bytes, |p| {
        let mut v: serde_json::Value = serde_json::from_slice(&p.chunks[1].1).unwrap();
        f(&mut v);
        p.chunks[1].1 = serde_json::to_vec(&v).unwrap();
    })
}

/// Every vector, in a fixed order.
pub fn all() -> Vec<Vector> {
    let mut v = ok_vectors();
    v.extend(framing_vectors());
    v.extend(keys_vectors());
    v.extend(content_vectors());
    v.extend(sign_vectors());
    v
}

fn ok_vectors() -> Vec<Vector> {
    let plain = small_file(P, Protection::None);
    let slots = || {
        vec![
            NewSlot::Unknown {
                slot_type: 200,
                body: b"future".to_vec(),
            },
            password_slot(),
            recipient_slot(),
            NewSlot::Account {
                account_id: "acct_fake".into(),
                blob: vec![1; 73],
            },
        ]
    };
    let empty = manifest(P, Vec::new());
    vec![
        ok("ok_plain_project", P, Key::None, plain.clone()),
        ok(
            "ok_plain_model",
            M,
            Key::None,
            small_file(M, Protection::None),
        ),
        ok(
            "ok_password_project",
            P,
            pw(),
            small_file(P, encrypted(vec![password_slot()])),
        ),
        ok(
            "ok_password_model",
            M,
            pw(),
            small_file(M, encrypted(vec![password_slot()])),
        ),
        ok(
            "ok_recipient_model",
            M,
            id(),
            small_file(M, encrypted(vec![recipient_slot()])),
        ),
        ok(
            "ok_account_content_key",
            P,
            ck(),
            small_file(
                P,
                encrypted(vec![NewSlot::Account {
                    account_id: "acct_fake".into(),
                    blob: vec![1; 73],
                }]),
            ),
        ),
        ok("ok_license_copy_content_key", M, ck(), license_copy()),
        ok(
            "ok_multi_slot_password",
            P,
            pw(),
            small_file(P, encrypted(slots())),
        ),
        ok(
            "ok_multi_slot_identity",
            P,
            id(),
            small_file(P, encrypted(slots())),
        ),
        ok(
            "ok_unknown_slot_skipped",
            M,
            id(),
            small_file(
                M,
                encrypted(vec![
                    NewSlot::Unknown {
                        slot_type: 77,
                        body: Vec::new(),
                    },
                    recipient_slot(),
                ]),
            ),
        ),
        ok(
            "ok_empty_manifest",
            P,
            Key::None,
            (
                write_all(options(P, 4096, Protection::None), &empty, &[]).unwrap(),
                Vec::new(),
            ),
        ),
        ok("ok_rgba8_texture", M, Key::None, texture_file()),
        ok(
            "ok_multi_chunk_entries",
            M,
            Key::None,
            multi_chunk_file(M, Protection::None, FILE_ID),
        ),
        ok(
            "ok_multi_chunk_encrypted",
            M,
            pw(),
            multi_chunk_file(M, encrypted(vec![password_slot()]), FILE_ID),
        ),
        ok(
            "ok_head_extended_minor_version",
            P,
            Key::None,
            (
                edit(&plain.0, |p| {
                    p.preamble[10] = 1;
                    p.chunks[0].1.extend_from_slice(&[0xEE; 16]);
                }),
                plain.1.clone(),
            ),
        ),
        ok(
            "mani_unknown_field_ignored",
            P,
            Key::None,
            (
                edit_mani_json(&plain.0, |v| {
                    v["future"] = 1.into();
                    v["entries"][0]["future"] = "x".into();
                    v["meta"]["future"] = serde_json::json!({"a": [1]});
                }),
                plain.1.clone(),
            ),
        ),
        ok(
            "chunk_unknown_ancillary_skipped",
            P,
            Key::None,
            (
                edit(&plain.0, |p| {
                    p.chunks.insert(1, (*b"tEXt", b"hello".to_vec()));
                    let n = p.chunks.len();
                    p.chunks.insert(n - 1, (*b"zz00", vec![0; 300]));
                }),
                plain.1.clone(),
            ),
        ),
        ok("chunk_ancillary_in_encrypted_file", M, pw(), {
            let f = multi_chunk_file(M, encrypted(vec![password_slot()]), FILE_ID);
            (
                edit(&f.0, |p| p.chunks.insert(4, (*b"aNCL", vec![1, 2, 3]))),
                f.1,
            )
        }),
        ok(
            "sign_resigned_by_another_key",
            P,
            Key::None,
            (
                Parts::split(&plain.0).resign(&SigningKey::from_seed(
                    &iki_crypto::SecretKey32::from_bytes([0x0B; 32]),
                )),
                plain.1,
            ),
        ),
    ]
}

fn framing_vectors() -> Vec<Vector> {
    let plain = small_file(P, Protection::None).0;
    let enc = small_file(P, encrypted(vec![password_slot()])).0;
    let sign_at = plain.len() - Parts::split(&plain).chunks.last().unwrap().1.len() - 8;
    let data_at = 12
        + Parts::split(&plain).chunks[..2]
            .iter()
            .map(|(_, p)| p.len() + 8)
            .sum::<usize>();
    let mut magic = plain.clone();
    magic[1] = b'X';
    let mut version = plain.clone();
    version[8] = 2;
    let head = |f: fn(&mut Vec<u8>)| raw(&plain, |p| f(&mut p.chunks[0].1));
    vec![
        bad("bad_magic", "BAD_MAGIC", P, Key::None, magic),
        bad(
            "bad_magic_text",
            "BAD_MAGIC",
            P,
            Key::None,
            b"{\"not\": \"an iki file\"}".to_vec(),
        ),
        bad("wrong_kind", "WRONG_KIND", M, Key::None, plain.clone()),
        bad(
            "unsupported_version",
            "UNSUPPORTED_VERSION",
            P,
            Key::None,
            version,
        ),
        bad("truncated_empty", "TRUNCATED", P, Key::None, Vec::new()),
        bad(
            "truncated_in_preamble",
            "TRUNCATED",
            P,
            Key::None,
            plain[..10].to_vec(),
        ),
        bad(
            "truncated_in_data",
            "TRUNCATED",
            P,
            Key::None,
            plain[..data_at + 20].to_vec(),
        ),
        bad(
            "truncated_before_sign",
            "TRUNCATED",
            P,
            Key::None,
            plain[..sign_at].to_vec(),
        ),
        bad(
            "truncated_in_sign",
            "TRUNCATED",
            P,
            Key::None,
            plain[..plain.len() - 10].to_vec(),
        ),
        bad(
            "sign_trailing_bytes",
            "TRAILING_BYTES",
            P,
            Key::None,
            [&plain[..], &[0]].concat(),
        ),
        bad(
            "sign_repeated",
            "TRAILING_BYTES",
            P,
            Key::None,
            [&plain[..], &plain[sign_at..]].concat(),
        ),
        bad(
            "head_chunk_size_too_small",
            "LIMIT_EXCEEDED",
            P,
            Key::None,
            head(|h| h[4..8].copy_from_slice(&4095u32.to_le_bytes())),
        ),
        bad(
            "head_chunk_size_too_large",
            "LIMIT_EXCEEDED",
            P,
            Key::None,
            head(|h| h[4..8].copy_from_slice(&(16_777_217u32).to_le_bytes())),
        ),
        bad(
            "head_too_long",
            "LIMIT_EXCEEDED",
            P,
            Key::None,
            head(|h| h.resize(4097, 0)),
        ),
        bad(
            "head_too_short",
            "MALFORMED_CHUNK",
            P,
            Key::None,
            head(|h| h.truncate(31)),
        ),
        bad(
            "head_unknown_cipher",
            "UNSUPPORTED_ALGORITHM",
            P,
            Key::None,
            head(|h| h[0] = 2),
        ),
        bad(
            "head_unknown_hash",
            "UNSUPPORTED_ALGORITHM",
            P,
            Key::None,
            head(|h| h[1] = 2),
        ),
        bad(
            "head_unknown_signature",
            "UNSUPPORTED_ALGORITHM",
            P,
            Key::None,
            head(|h| h[2] = 0),
        ),
        bad(
            "head_missing",
            "CHUNK_ORDER",
            P,
            Key::None,
            edit(&plain, |p| {
                p.chunks.remove(0);
            }),
        ),
        bad(
            "chunk_head_repeated",
            "CHUNK_ORDER",
            P,
            Key::None,
            edit(&plain, |p| {
                let h = p.chunks[0].clone();
                p.chunks.insert(1, h);
            }),
        ),
        bad(
            "chunk_unknown_critical",
            "UNKNOWN_CRITICAL_CHUNK",
            P,
            Key::None,
            edit(&plain, |p| p.chunks.insert(2, (*b"XTRA", vec![1]))),
        ),
        bad(
            "chunk_type_invalid_byte",
            "MALFORMED_CHUNK",
            P,
            Key::None,
            edit(&plain, |p| p.chunks.insert(2, (*b"tE-t", vec![1]))),
        ),
        bad(
            "chunk_type_digit_first",
            "MALFORMED_CHUNK",
            P,
            Key::None,
            edit(&plain, |p| p.chunks.insert(2, (*b"1abc", vec![1]))),
        ),
        bad(
            "chunk_ancillary_before_head",
            "CHUNK_ORDER",
            P,
            Key::None,
            edit(&plain, |p| p.chunks.insert(0, (*b"tEXt", vec![1]))),
        ),
        bad(
            "chunk_ancillary_too_long",
            "LIMIT_EXCEEDED",
            P,
            Key::None,
            [&plain[..data_at], b"tEXt", &(16_777_217u32).to_le_bytes()].concat(),
        ),
        bad(
            "mani_missing",
            "CHUNK_ORDER",
            P,
            Key::None,
            edit(&plain, |p| {
                p.chunks.remove(1);
            }),
        ),
        bad(
            "mani_repeated",
            "CHUNK_ORDER",
            P,
            Key::None,
            edit(&plain, |p| {
                let m = p.chunks[1].clone();
                p.chunks.insert(2, m);
            }),
        ),
        bad(
            "mani_too_long",
            "LIMIT_EXCEEDED",
            P,
            Key::None,
            [
                &plain[..data_at - Parts::split(&plain).chunks[1].1.len() - 8],
                b"MANI",
                &(8_388_609u32).to_le_bytes(),
            ]
            .concat(),
        ),
        bad(
            "keys_missing",
            "CHUNK_ORDER",
            P,
            pw(),
            raw(&enc, |p| {
                p.chunks.remove(1);
            }),
        ),
        bad(
            "keys_in_plain_file",
            "CHUNK_ORDER",
            P,
            Key::None,
            edit(&plain, |p| {
                p.chunks.insert(1, Parts::split(&enc).chunks[1].clone())
            }),
        ),
        bad(
            "data_before_mani",
            "CHUNK_ORDER",
            P,
            Key::None,
            edit(&plain, |p| p.chunks.swap(1, 2)),
        ),
    ]
}

fn keys_vectors() -> Vec<Vector> {
    let enc = small_file(P, encrypted(vec![password_slot()])).0;
    let other = {
        let mut o = options(P, 4096, encrypted(vec![password_slot()]));
        o.file_id = [0xF2; 16];
        let (_, e) = small_file(P, Protection::None);
        let m = manifest(
            P,
            vec![
                manifest_entry_for("a.txt", "text/plain", Encoding::Deflate, &e[0]),
                manifest_entry_for("b.bin", "application/octet-stream", Encoding::Stored, &e[1]),
            ],
        );
        write_all(o, &m, &[&e[0], &e[1]]).unwrap()
    };
    let rec = small_file(P, encrypted(vec![recipient_slot()])).0;
    let keys = |bytes: &[u8], f: fn(&mut Vec<u8>)| raw(bytes, |p| f(&mut p.chunks[1].1));
    vec![
        bad(
            "keys_slot_count_zero",
            "LIMIT_EXCEEDED",
            P,
            pw(),
            keys(&enc, |k| k[..2].copy_from_slice(&[0, 0])),
        ),
        bad(
            "keys_slot_count_65",
            "LIMIT_EXCEEDED",
            P,
            pw(),
            keys(&enc, |k| k[..2].copy_from_slice(&[65, 0])),
        ),
        bad(
            "keys_too_long",
            "LIMIT_EXCEEDED",
            P,
            pw(),
            keys(&enc, |k| k.resize(65537, 0)),
        ),
        bad(
            "keys_count_larger_than_slots",
            "MALFORMED_CHUNK",
            P,
            pw(),
            keys(&enc, |k| k[..2].copy_from_slice(&[2, 0])),
        ),
        bad(
            "keys_bytes_left_over",
            "MALFORMED_CHUNK",
            P,
            pw(),
            keys(&enc, |k| k.push(0)),
        ),
        bad(
            "keys_password_slot_short",
            "MALFORMED_CHUNK",
            P,
            pw(),
            keys(&enc, |k| {
                k[3..5].copy_from_slice(&100u16.to_le_bytes());
                k.pop();
            }),
        ),
        bad(
            "keys_kdf_params_refused",
            "KDF_PARAMS_REFUSED",
            P,
            pw(),
            keys(&enc, |k| {
                k[6..10].copy_from_slice(&262_145u32.to_le_bytes())
            }),
        ),
        bad(
            "keys_kdf_passes_refused",
            "KDF_PARAMS_REFUSED",
            P,
            pw(),
            keys(&enc, |k| k[10..14].copy_from_slice(&11u32.to_le_bytes())),
        ),
        bad(
            "keys_kdf_lanes_refused",
            "KDF_PARAMS_REFUSED",
            P,
            pw(),
            keys(&enc, |k| k[14..18].copy_from_slice(&5u32.to_le_bytes())),
        ),
        bad(
            "keys_kdf_unknown",
            "UNSUPPORTED_ALGORITHM",
            P,
            pw(),
            keys(&enc, |k| k[5] = 2),
        ),
        bad(
            "keys_slot_from_other_file",
            "DECRYPT_FAILED",
            P,
            pw(),
            raw(&enc, |p| {
                p.chunks[1] = Parts::split(&other).chunks[1].clone()
            }),
        ),
        bad(
            "keys_wrong_password",
            "DECRYPT_FAILED",
            P,
            Key::Password("not the password".into()),
            enc.clone(),
        ),
        bad("keys_no_slot_for_key", "KEY_REQUIRED", P, id(), enc.clone()),
        bad(
            "keys_recipient_low_order_ephemeral",
            "WEAK_KEY",
            P,
            id(),
            keys(&rec, |k| k[37..69].fill(0)),
        ),
        bad(
            "keys_recipient_other_identity",
            "DECRYPT_FAILED",
            P,
            Key::Identity([0x77; 32]),
            rec.clone(),
        ),
        bad(
            "keys_license_id_uppercase",
            "MALFORMED_CHUNK",
            Kind::Model,
            ck(),
            raw(&license_copy().0, |p| {
                let k = &mut p.chunks[1].1;
                let at = k
                    .windows(16)
                    .position(|w| w == b"0123456789abcdef")
                    .unwrap();
                k[at + 10] = b'A';
            }),
        ),
    ]
}

fn content_vectors() -> Vec<Vector> {
    let plain = small_file(P, Protection::None).0;
    let multi = multi_chunk_file(M, Protection::None, FILE_ID).0;
    let enc = multi_chunk_file(M, encrypted(vec![password_slot()]), FILE_ID).0;
    let enc2 = multi_chunk_file(M, encrypted(vec![password_slot()]), [0xF2; 16]).0;
    let first_data = |b: &[u8]| Parts::split(b).find(b"DATA")[0];
    let (d, e) = (first_data(&multi), first_data(&enc));
    vec![
        bad(
            "mani_invalid_json",
            "BAD_MANIFEST",
            P,
            Key::None,
            edit(&plain, |p| p.chunks[1].1 = b"{".to_vec()),
        ),
        bad(
            "mani_missing_sha256_plain",
            "BAD_MANIFEST",
            P,
            Key::None,
            edit_mani_json(&plain, |v| {
                v["entries"][0].as_object_mut().unwrap().remove("sha256");
            }),
        ),
        bad(
            "mani_path_dot_segment",
            "BAD_MANIFEST",
            P,
            Key::None,
            edit_mani_json(&plain, |v| v["entries"][0]["path"] = "a/../b".into()),
        ),
        bad(
            "mani_duplicate_path",
            "BAD_MANIFEST",
            P,
            Key::None,
            edit_mani_json(&plain, |v| v["entries"][1]["path"] = "a.txt".into()),
        ),
        bad(
            "mani_unknown_encoding",
            "BAD_MANIFEST",
            P,
            Key::None,
            edit_mani_json(&plain, |v| v["entries"][0]["encoding"] = "zstd".into()),
        ),
        bad(
            "mani_rgba8_row_too_wide",
            "BAD_MANIFEST",
            M,
            Key::None,
            edit_mani_json(&texture_file().0, |v| {
                v["entries"][0]["meta"]["width"] = 1025.into();
                v["entries"][0]["meta"]["height"] = 1.into();
                v["entries"][0]["size"] = 4100.into();
            }),
        ),
        bad(
            "mani_wrong_meta_format",
            "BAD_MANIFEST",
            P,
            Key::None,
            edit_mani_json(&plain, |v| v["meta"]["format"] = "iki-model".into()),
        ),
        bad(
            "mani_bit_flip_encrypted",
            "DECRYPT_FAILED",
            M,
            pw(),
            raw(&enc, |p| p.chunks[2].1[5] ^= 0x10),
        ),
        bad(
            "data_bit_flip",
            "HASH_MISMATCH",
            M,
            Key::None,
            raw(&multi, |p| p.chunks[d].1[100] ^= 0x01),
        ),
        bad(
            "data_bit_flip_deflate",
            "BAD_DATA",
            P,
            Key::None,
            raw(&plain, |p| p.chunks[2].1[9] ^= 0x06),
        ),
        bad(
            "data_bit_flip_encrypted",
            "DECRYPT_FAILED",
            M,
            pw(),
            raw(&enc, |p| p.chunks[e].1[100] ^= 0x01),
        ),
        bad(
            "data_last_flag_flipped",
            "DATA_SEQUENCE",
            M,
            Key::None,
            edit(&multi, |p| p.chunks[d].1[8] ^= 1),
        ),
        bad(
            "data_last_flag_flipped_encrypted",
            "DATA_SEQUENCE",
            M,
            pw(),
            raw(&enc, |p| p.chunks[e].1[8] ^= 1),
        ),
        bad(
            "data_reserved_flag",
            "DATA_SEQUENCE",
            M,
            Key::None,
            edit(&multi, |p| p.chunks[d].1[8] |= 2),
        ),
        bad(
            "data_reordered",
            "DATA_SEQUENCE",
            M,
            Key::None,
            edit(&multi, |p| p.chunks.swap(d, d + 1)),
        ),
        bad(
            "data_reordered_headers_rewritten",
            "DECRYPT_FAILED",
            M,
            pw(),
            raw(&enc, |p| {
                p.chunks.swap(e, e + 1);
                let (a, b) = (p.chunks[e + 1].1[..9].to_vec(), p.chunks[e].1[..9].to_vec());
                p.chunks[e].1[..9].copy_from_slice(&a);
                p.chunks[e + 1].1[..9].copy_from_slice(&b);
            }),
        ),
        bad(
            "data_missing_chunk",
            "DATA_SEQUENCE",
            M,
            Key::None,
            edit(&multi, |p| {
                p.chunks.remove(d + 1);
            }),
        ),
        bad(
            "data_missing_last_entry",
            "DATA_SEQUENCE",
            M,
            Key::None,
            edit(&multi, |p| {
                p.chunks.remove(d + 3);
            }),
        ),
        bad(
            "data_extra_chunk",
            "DATA_SEQUENCE",
            M,
            Key::None,
            edit(&multi, |p| {
                let c = p.chunks[d + 3].clone();
                p.chunks.insert(d + 4, c);
            }),
        ),
        bad(
            "data_bad_deflate_length",
            "BAD_DATA",
            P,
            Key::None,
            edit(&plain, |p| {
                p.chunks[2].1 = data_payload(0, 0, 1, &stored_deflate(&[0; 299], 0))
            }),
        ),
        bad(
            "data_deflate_trailing_input",
            "BAD_DATA",
            P,
            Key::None,
            edit(&plain, |p| p.chunks[2].1.push(0)),
        ),
        bad(
            "data_stored_wrong_length",
            "BAD_DATA",
            P,
            Key::None,
            edit(&plain, |p| p.chunks[3].1.push(0)),
        ),
        bad(
            "data_too_short",
            "MALFORMED_CHUNK",
            P,
            Key::None,
            edit(&plain, |p| p.chunks[3].1.truncate(8)),
        ),
        bad(
            "data_too_long",
            "LIMIT_EXCEEDED",
            M,
            Key::None,
            edit(&multi, |p| p.chunks[d].1.resize(4190, 0)),
        ),
        bad(
            "data_moved_between_files",
            "DECRYPT_FAILED",
            M,
            pw(),
            raw(&enc, |p| {
                p.chunks[e + 1] = Parts::split(&enc2).chunks[e + 1].clone()
            }),
        ),
        bad(
            "head_chunk_size_edited_encrypted",
            "DECRYPT_FAILED",
            M,
            pw(),
            raw(&enc, |p| {
                p.chunks[0].1[4..8].copy_from_slice(&8192u32.to_le_bytes())
            }),
        ),
        bad(
            "head_file_id_edited_encrypted",
            "DECRYPT_FAILED",
            M,
            pw(),
            raw(&enc, |p| p.chunks[0].1[8] ^= 1),
        ),
    ]
}

fn sign_vectors() -> Vec<Vector> {
    let plain = small_file(P, Protection::None).0;
    let n = plain.len();
    let last = |b: &[u8], f: fn(&mut Vec<u8>)| {
        raw(b, |p| {
            let i = p.chunks.len() - 1;
            f(&mut p.chunks[i].1);
        })
    };
    let mut flipped = plain.clone();
    flipped[n - 1] ^= 0x01;
    let mut flipped_r = plain.clone();
    flipped_r[n - 64] ^= 0x01;
    let forged = |key: [u8; 32]| {
        raw(&plain, |p| {
            let i = p.chunks.len() - 1;
            let s = &mut p.chunks[i].1;
            s[1..33].copy_from_slice(&key);
            let m = s.len();
            s[m - 64..].fill(0);
            s[m - 64] = 1;
        })
    };
    let mut identity_point = [0u8; 32];
    identity_point[0] = 1;
    let mut non_canonical = [0xFF; 32];
    non_canonical[0] = 0xED;
    non_canonical[31] = 0x7F;
    vec![
        bad("sign_bad_signature", "BAD_SIGNATURE", P, Key::None, flipped),
        bad(
            "sign_bad_signature_r",
            "BAD_SIGNATURE",
            P,
            Key::None,
            flipped_r,
        ),
        bad(
            "sign_created_ms_modified",
            "BAD_SIGNATURE",
            P,
            Key::None,
            raw(&plain, |p| p.chunks[0].1[24] ^= 1),
        ),
        bad(
            "sign_small_order_key",
            "BAD_SIGNATURE",
            P,
            Key::None,
            forged(identity_point),
        ),
        bad(
            "sign_non_canonical_key",
            "BAD_SIGNATURE",
            P,
            Key::None,
            forged(non_canonical),
        ),
        bad(
            "sign_malformed_length",
            "MALFORMED_CHUNK",
            P,
            Key::None,
            last(&plain, |s| s[33] = s[33].wrapping_add(1)),
        ),
        bad(
            "sign_unknown_algorithm",
            "UNSUPPORTED_ALGORITHM",
            P,
            Key::None,
            last(&plain, |s| s[0] = 2),
        ),
        bad(
            "sign_signer_json_invalid",
            "MALFORMED_CHUNK",
            P,
            Key::None,
            Parts::split(&plain).resign_with(&key(), b"{"),
        ),
        bad(
            "sign_signer_account_without_certificate",
            "MALFORMED_CHUNK",
            P,
            Key::None,
            Parts::split(&plain)
                .resign_with(&key(), br#"{"kind":"account","account":"acct_fake"}"#),
        ),
        bad(
            "sign_too_long",
            "LIMIT_EXCEEDED",
            P,
            Key::None,
            last(&plain, |s| s.resize(65537, 0)),
        ),
    ]
}

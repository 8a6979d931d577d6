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

mod content;
mod framing;
mod keys;
mod ok;
mod sign;

use content::content_vectors;
use framing::framing_vectors;
use keys::keys_vectors;
use ok::ok_vectors;
use sign::sign_vectors;

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

/// Three password slots for other passwords, then `last`: as many as readers try.
fn wrong_passwords_then(last: NewSlot) -> Vec<NewSlot> {
    let mut slots: Vec<NewSlot> = ["one", "two", "three"]
        .iter()
        .map(|p| NewSlot::Password {
            password: zeroize::Zeroizing::new(p.as_bytes().to_vec()),
            params: TEST_ARGON2,
        })
        .collect();
    slots.push(last);
    slots
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

//! Shared fixtures for the integration tests. Every key here is an obviously fake constant.
#![allow(
    dead_code,
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

pub mod craft;
pub mod vectors;

use iki_crypto::{Argon2Params, SecretKey32, SigningKey, X25519Secret};
use iki_format::manifest::{Canvas, ModelMeta, ProjectMeta, Role};
use iki_format::{
    manifest_entry_for, read_all, write_all, Encoding, Entry, EntryMeta, Event, Kind, Manifest,
    Meta, NewSlot, Opened, Protection, Reader, SignerInfo, SlotEntropy, Unlock, WriterOptions,
};
use zeroize::Zeroizing;

pub const FAKE_SIGNING_SEED: [u8; 32] = [0x51; 32];
pub const FAKE_CONTENT_KEY: [u8; 32] = [0xC0; 32];
pub const FAKE_IDENTITY: [u8; 32] = [0x1D; 32];
pub const FILE_ID: [u8; 16] = [0xF1; 16];
pub const CREATED_MS: u64 = 1_700_000_000_000;
pub const PASSWORD: &[u8] = b"correct horse battery staple";
/// Cheapest cost the readers accept: keeps tests fast while going through Argon2id.
pub const TEST_ARGON2: Argon2Params = Argon2Params {
    m_kib: 8,
    t: 1,
    p: 1,
};

pub fn signing_key() -> SigningKey {
    SigningKey::from_seed(&SecretKey32::from_bytes(FAKE_SIGNING_SEED))
}

pub fn identity() -> X25519Secret {
    X25519Secret::from_key(SecretKey32::from_bytes(FAKE_IDENTITY))
}

pub fn content_key() -> SecretKey32 {
    SecretKey32::from_bytes(FAKE_CONTENT_KEY)
}

pub fn project_meta() -> Meta {
    Meta::Project(ProjectMeta {
        format: "iki-project".into(),
        version: 1,
        name: "Test".into(),
        saved_at: "2024-05-01T12:30:00.000Z".into(),
        canvas: Canvas {
            width: 800,
            height: 600,
        },
        app: "iki-tests 0".into(),
        extra: serde_json::Map::new(),
    })
}

pub fn model_meta() -> Meta {
    Meta::Model(ModelMeta {
        format: "iki-model".into(),
        version: 1,
        name: "Test model".into(),
        role: Role::Master,
        license: None,
        extra: serde_json::Map::new(),
    })
}

pub fn meta_for(kind: Kind) -> Meta {
    match kind {
        Kind::Project => project_meta(),
        Kind::Model => model_meta(),
    }
}

pub fn options(kind: Kind, chunk_size: u32, protection: Protection) -> WriterOptions {
    let mut options = WriterOptions::new(
        kind,
        FILE_ID,
        CREATED_MS,
        signing_key(),
        SignerInfo::device(Some("tests".into())),
    );
    options.chunk_size = chunk_size;
    options.protection = protection;
    options.slot_entropy = SlotEntropy::FixedForTestVectors([0xE7; 32]);
    options
}

pub fn password_slot() -> NewSlot {
    NewSlot::Password {
        password: Zeroizing::new(PASSWORD.to_vec()),
        params: TEST_ARGON2,
    }
}

pub fn recipient_slot() -> NewSlot {
    NewSlot::Recipient {
        public_key: identity().public_key(),
    }
}

pub fn encrypted(slots: Vec<NewSlot>) -> Protection {
    Protection::Encrypted {
        content_key: content_key(),
        slots,
    }
}

/// Deterministic bytes that compress a little (text-like) or not at all (noise).
pub fn sample(len: usize, seed: u64, noisy: bool) -> Vec<u8> {
    let mut x = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    (0..len)
        .map(|i| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            if noisy {
                (x >> 24) as u8
            } else {
                b"iki container "[(i + (x as usize % 3)) % 14]
            }
        })
        .collect()
}

pub fn rgba8_entry(path: &str, width: u32, height: u32, bytes: &[u8]) -> Entry {
    let mut entry = manifest_entry_for(path, "image/x-rgba8", Encoding::Rgba8, bytes);
    entry.meta = Some(EntryMeta {
        kind: Some("texture".into()),
        width: Some(width),
        height: Some(height),
        source: Some("image/png".into()),
    });
    entry
}

pub fn manifest(kind: Kind, entries: Vec<Entry>) -> Manifest {
    Manifest {
        entries,
        meta: meta_for(kind),
    }
}

/// A small signed file with two entries, for robustness tests.
pub fn small_file(kind: Kind, protection: Protection) -> (Vec<u8>, Vec<Vec<u8>>) {
    let a = sample(300, 1, false);
    let b = b"x".to_vec();
    let m = manifest(
        kind,
        vec![
            manifest_entry_for("a.txt", "text/plain", Encoding::Deflate, &a),
            manifest_entry_for("b.bin", "application/octet-stream", Encoding::Stored, &b),
        ],
    );
    let bytes = write_all(options(kind, 4096, protection), &m, &[&a, &b]).unwrap();
    (bytes, vec![a, b])
}

/// A project reader that has pushed the whole `file` and stands at `Event::Locked`.
pub fn locked(file: &[u8]) -> Reader {
    let mut reader = Reader::new(Kind::Project);
    reader.push(file).unwrap();
    reader.finish().unwrap();
    assert!(matches!(reader.next().unwrap(), Some(Event::Header(_))));
    assert!(matches!(reader.next().unwrap(), Some(Event::Locked(_))));
    reader
}

pub fn open(kind: Kind, bytes: &[u8], key: Unlock<'_>) -> Result<Opened, iki_format::Error> {
    read_all(kind, bytes, key)
}

/// Offsets and types of the chunks of a well-formed file: (type, start of header, payload range).
pub fn chunks(bytes: &[u8]) -> Vec<([u8; 4], usize, std::ops::Range<usize>)> {
    let mut out = Vec::new();
    let mut at = 12;
    while at + 8 <= bytes.len() {
        let t: [u8; 4] = bytes[at..at + 4].try_into().unwrap();
        let len = u32::from_le_bytes(bytes[at + 4..at + 8].try_into().unwrap()) as usize;
        out.push((t, at, at + 8..at + 8 + len));
        at += 8 + len;
    }
    out
}

//! A file digest computed elsewhere (`Writer::digest_elsewhere`, `writer/finish.rs`): the
//! same bytes as a writer hashing its own output when the digest is right; refused when it
//! does not cover exactly the bytes written; a file every reader refuses when it is wrong.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

mod common;

use common::{encrypted, manifest, open, password_slot, sample, CREATED_MS, FILE_ID, PASSWORD};
use iki_crypto::hash::sha256;
use iki_crypto::{SecretKey32, SigningKey};
use iki_format::{
    manifest_entry_for, DigestRequest, Encoding, Kind, Manifest, Protection, SignerInfo,
    SlotEntropy, Unlock, Writer, WriterOptions,
};

fn key() -> SigningKey {
    SigningKey::from_seed(&SecretKey32::from_bytes([0xB3; 32]))
}

fn data() -> Vec<Vec<u8>> {
    vec![sample(9_000, 5, false), sample(6_000, 6, true)]
}

fn project_manifest(data: &[Vec<u8>]) -> Manifest {
    manifest(
        Kind::Project,
        vec![
            manifest_entry_for(
                "snapshot.json",
                "application/x-iki-snapshot",
                Encoding::Deflate,
                &data[0],
            ),
            manifest_entry_for("assets/noise", "image/png", Encoding::Stored, &data[1]),
        ],
    )
}

fn options(protection: Protection) -> WriterOptions {
    let mut o = WriterOptions::new_external(
        Kind::Project,
        FILE_ID,
        CREATED_MS,
        key().public_key(),
        SignerInfo::device(None),
    );
    o.chunk_size = 4096;
    o.protection = protection;
    o.slot_entropy = SlotEntropy::FixedForTestVectors([0xE7; 32]);
    o
}

/// Writes `data` with the digest computed elsewhere: every output byte up to the signature,
/// and the request for the digest.
fn written(protection: Protection) -> (Vec<u8>, DigestRequest) {
    let data = data();
    let mut writer = Writer::new(options(protection), &project_manifest(&data)).unwrap();
    writer.digest_elsewhere().unwrap();
    let mut out = writer.take_output();
    for bytes in &data {
        writer.write(bytes).unwrap();
        writer.end_entry().unwrap();
        out.extend(writer.take_output());
    }
    let (rest, request) = writer.finish_elsewhere().unwrap();
    out.extend(rest);
    (out, request)
}

/// The same file written by a writer hashing its own output.
fn written_here(protection: Protection) -> Vec<u8> {
    let data = data();
    let mut writer = Writer::new(options(protection), &project_manifest(&data)).unwrap();
    let mut out = Vec::new();
    for bytes in &data {
        writer.write(bytes).unwrap();
        writer.end_entry().unwrap();
        out.extend(writer.take_output());
    }
    let (rest, pending) = writer.finish_external().unwrap();
    out.extend(rest);
    out.extend(pending.attach(&key().sign(pending.message())).unwrap());
    out
}

#[test]
fn a_right_digest_gives_the_same_file_as_the_writers_own() {
    for protection in [|| Protection::None, || encrypted(vec![password_slot()])] {
        let (mut out, request) = written(protection());
        assert_eq!(request.length(), out.len() as u64);
        let pending = request.supply(sha256(&out), out.len() as u64).unwrap();
        out.extend(pending.attach(&key().sign(pending.message())).unwrap());
        assert!(
            out == written_here(protection()),
            "not the bytes of a writer hashing its own output"
        );
        let unlock = if matches!(protection(), Protection::None) {
            Unlock::None
        } else {
            Unlock::Password(PASSWORD)
        };
        let opened = open(Kind::Project, &out, unlock).unwrap();
        assert_eq!(opened.entries, data());
    }
}

#[test]
fn a_digest_over_other_than_the_bytes_written_is_refused() {
    let (out, request) = written(Protection::None);
    let length = out.len() as u64;
    // A batch left out, or one hashed twice: no signature is made.
    for hashed in [length - 1, length + 1, length - 4096, 0] {
        let (_, request) = written(Protection::None);
        assert_eq!(
            request.supply(sha256(&out), hashed).unwrap_err().code(),
            "INVALID_ARGUMENT"
        );
    }
    assert!(request.supply(sha256(&out), length).is_ok());
}

#[test]
fn a_wrong_digest_of_the_right_length_yields_a_file_readers_refuse() {
    let (mut out, request) = written(Protection::None);
    let mut wrong = sha256(&out);
    wrong[0] ^= 1;
    let pending = request.supply(wrong, out.len() as u64).unwrap();
    out.extend(pending.attach(&key().sign(pending.message())).unwrap());
    assert_eq!(
        open(Kind::Project, &out, Unlock::None).unwrap_err().code(),
        "BAD_SIGNATURE"
    );
}

#[test]
fn the_finishing_call_must_match_the_mode() {
    let data = data();
    let manifest = project_manifest(&data);
    let finished = |elsewhere: bool| {
        let mut writer = Writer::new(options(Protection::None), &manifest).unwrap();
        if elsewhere {
            writer.digest_elsewhere().unwrap();
        }
        for bytes in &data {
            writer.write(bytes).unwrap();
            writer.end_entry().unwrap();
        }
        writer
    };
    assert_eq!(
        finished(true).finish_external().unwrap_err().code(),
        "INVALID_STATE"
    );
    assert_eq!(
        finished(false).finish_elsewhere().unwrap_err().code(),
        "INVALID_STATE"
    );
}

/// `drain_output` (how WASM copies the output straight into a batch outside it) hands out the
/// same bytes as `take_output`, in order, and leaves nothing behind.
#[test]
fn draining_the_output_gives_the_same_bytes_as_taking_it() {
    for protection in [|| Protection::None, || encrypted(vec![password_slot()])] {
        let (taken, _) = written(protection());
        let data = data();
        let mut writer = Writer::new(options(protection()), &project_manifest(&data)).unwrap();
        writer.digest_elsewhere().unwrap();
        let mut out = Vec::new();
        let drain = |writer: &mut Writer, out: &mut Vec<u8>| {
            let len = writer.output_len();
            writer.drain_output(|bytes| {
                assert_eq!(bytes.len(), len);
                out.extend_from_slice(bytes);
            });
            assert_eq!(writer.output_len(), 0);
        };
        drain(&mut writer, &mut out);
        for bytes in &data {
            writer.write(bytes).unwrap();
            writer.end_entry().unwrap();
            drain(&mut writer, &mut out);
        }
        let (rest, _) = writer.finish_elsewhere().unwrap();
        out.extend(rest);
        assert_eq!(out, taken);
    }
}

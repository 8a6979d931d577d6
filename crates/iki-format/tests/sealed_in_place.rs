//! DATA chunks built and sealed in the writer's output buffer (`writer/data.rs`, issue 28
//! item 4): the files are byte for byte those written before (pinned digests of files made
//! by the writer that sealed each chunk in a buffer of its own and copied it), and
//! `Writer::write_stored_chunk`, which has the caller copy a stored chunk straight into the
//! output, gives the same file as `write` of the same bytes, refuses (not finally, `fill` never
//! called) what is not a stored entry's whole next chunk, and hashes the bytes it was given.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

mod common;

use common::*;
use iki_crypto::hash::sha256;
use iki_format::{
    manifest_entry_for, write_all, Encoding, Entry, Kind, Manifest, Protection, Unlock, Writer,
};

const CHUNK: u32 = 64 * 1024;

/// Every path a chunk takes to the output: a stored entry over several chunks with a short
/// last one, text deflated over several chunks, noise in a deflate entry (stored blocks), a
/// texture (rgba8), an empty stored entry and a one-byte one.
fn entries() -> Vec<(Entry, Vec<u8>)> {
    let (w, h) = (200u32, 100u32);
    let noise = sample((w * h) as usize, 7, true);
    let mut pixels = Vec::new();
    for y in 0..h {
        for x in 0..w {
            let n = noise[(y * w + x) as usize];
            pixels.extend_from_slice(&[x as u8, y as u8, if x > 150 { n } else { 0 }, 255]);
        }
    }
    let stored = sample(CHUNK as usize * 2 + 1234, 1, true);
    let text = sample(150_000, 2, false);
    let noisy = sample(100_000, 3, true);
    vec![
        (
            manifest_entry_for("s.png", "image/png", Encoding::Stored, &stored),
            stored,
        ),
        (
            manifest_entry_for("a.txt", "text/plain", Encoding::Deflate, &text),
            text,
        ),
        (
            manifest_entry_for("n.bin", "x/y", Encoding::Deflate, &noisy),
            noisy,
        ),
        (rgba8_entry("t.png", w, h, &pixels), pixels),
        (
            manifest_entry_for("e.bin", "x/y", Encoding::Stored, &[]),
            Vec::new(),
        ),
        (
            manifest_entry_for("o.bin", "x/y", Encoding::Stored, b"!"),
            b"!".to_vec(),
        ),
    ]
}

fn fixture() -> (Manifest, Vec<Vec<u8>>) {
    let list = entries();
    let m = manifest(Kind::Project, list.iter().map(|(e, _)| e.clone()).collect());
    (m, list.into_iter().map(|(_, d)| d).collect())
}

fn protection(sealed: bool) -> Protection {
    if sealed {
        encrypted(vec![recipient_slot()])
    } else {
        Protection::None
    }
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// Writes every entry in pieces of `piece` bytes (a whole chunk in one piece, or pieces
/// that leave a chunk's bytes waiting in `pending`), draining the output between pieces.
fn written_in_pieces(encrypted: bool, piece: usize) -> Vec<u8> {
    let (m, data) = fixture();
    let mut writer = Writer::new(options(Kind::Project, CHUNK, protection(encrypted)), &m).unwrap();
    let mut out = writer.take_output();
    for bytes in &data {
        for p in bytes.chunks(piece) {
            writer.write(p).unwrap();
            out.extend(writer.take_output());
        }
        writer.end_entry().unwrap();
    }
    out.extend(writer.finish().unwrap());
    out
}

/// Every stored entry's whole chunks through `write_stored_chunk`, the rest through `write`.
fn written_with_fill(encrypted: bool) -> Vec<u8> {
    let (m, data) = fixture();
    let mut writer = Writer::new(options(Kind::Project, CHUNK, protection(encrypted)), &m).unwrap();
    let mut out = writer.take_output();
    let mut filled = 0;
    for (i, bytes) in data.iter().enumerate() {
        let step = writer.chunk_bytes(i as u32).unwrap() as usize;
        for p in bytes.chunks(step) {
            if writer.takes_stored_chunk(p.len()) {
                writer
                    .write_stored_chunk(p.len(), |dest| {
                        assert_eq!(dest.len(), p.len());
                        dest.copy_from_slice(p);
                    })
                    .unwrap();
                filled += 1;
            } else {
                writer.write(p).unwrap();
            }
            out.extend(writer.take_output());
        }
        writer.end_entry().unwrap();
    }
    // The stored entry's three chunks and the one-byte entry's; not the empty one's.
    assert_eq!(filled, 4);
    out.extend(writer.finish().unwrap());
    out
}

/// SHA-256 of the fixture's files as the writer made them before chunks were sealed in the
/// output buffer (main at 2935b16): plain, then encrypted to a recipient.
const PINNED: [&str; 2] = [
    "9587e907cbe61148ca145d8c153081e92c2e822b8d4a14b94b013af5748dc30f",
    "ced78983f169eaf9521ba38a44a6b7e8de7b48c5bea17be9f8b727b657401ebe",
];

#[test]
fn files_are_the_bytes_they_were() {
    for (encrypted, pinned) in [(false, PINNED[0]), (true, PINNED[1])] {
        let (m, data) = fixture();
        let refs: Vec<&[u8]> = data.iter().map(Vec::as_slice).collect();
        let whole = write_all(
            options(Kind::Project, CHUNK, protection(encrypted)),
            &m,
            &refs,
        )
        .unwrap();
        assert_eq!(hex(&sha256(&whole)), pinned, "encrypted: {encrypted}");
        for piece in [CHUNK as usize, 10_000, 7] {
            assert_eq!(
                written_in_pieces(encrypted, piece),
                whole,
                "encrypted: {encrypted}, pieces of {piece}"
            );
        }
        let key = identity();
        let unlock = if encrypted {
            Unlock::Identity(&key)
        } else {
            Unlock::None
        };
        assert_eq!(open(Kind::Project, &whole, unlock).unwrap().entries, data);
    }
}

#[test]
fn stored_chunks_filled_by_the_caller_give_the_same_file() {
    for encrypted in [false, true] {
        let (m, data) = fixture();
        let refs: Vec<&[u8]> = data.iter().map(Vec::as_slice).collect();
        let whole = write_all(
            options(Kind::Project, CHUNK, protection(encrypted)),
            &m,
            &refs,
        )
        .unwrap();
        assert_eq!(
            written_with_fill(encrypted),
            whole,
            "encrypted: {encrypted}"
        );
    }
}

#[test]
fn what_is_not_a_stored_entrys_whole_next_chunk_is_refused_and_the_writer_goes_on() {
    let (m, data) = fixture();
    let refs: Vec<&[u8]> = data.iter().map(Vec::as_slice).collect();
    let whole = write_all(options(Kind::Project, CHUNK, protection(true)), &m, &refs).unwrap();
    let mut writer = Writer::new(options(Kind::Project, CHUNK, protection(true)), &m).unwrap();
    let mut out = writer.take_output();
    let refused = |writer: &mut Writer, len: usize| {
        assert!(!writer.takes_stored_chunk(len), "{len}");
        let error = writer
            .write_stored_chunk(len, |_| panic!("fill called for a refused chunk"))
            .unwrap_err();
        assert_eq!(error.code(), "INVALID_ARGUMENT");
        assert_eq!(writer.output_len(), 0, "nothing written");
    };
    let stored = &data[0];
    let step = CHUNK as usize;
    // Not the chunk's length, nothing, and (after part of it went to `write`) the rest.
    refused(&mut writer, step - 1);
    refused(&mut writer, step + 1);
    refused(&mut writer, 0);
    writer.write(&stored[..100]).unwrap();
    refused(&mut writer, step - 100);
    refused(&mut writer, step);
    writer.write(&stored[100..step]).unwrap();
    out.extend(writer.take_output());
    writer
        .write_stored_chunk(step, |d| d.copy_from_slice(&stored[step..2 * step]))
        .unwrap();
    out.extend(writer.take_output());
    // The short last chunk is taken at its own length only.
    let last = &stored[2 * step..];
    refused(&mut writer, step);
    writer
        .write_stored_chunk(last.len(), |d| d.copy_from_slice(last))
        .unwrap();
    out.extend(writer.take_output());
    // Past the entry's last chunk.
    refused(&mut writer, 1);
    writer.end_entry().unwrap();
    // A deflate entry.
    refused(&mut writer, step);
    for bytes in &data[1..] {
        writer.write(bytes).unwrap();
        out.extend(writer.take_output());
        writer.end_entry().unwrap();
    }
    // After the last entry.
    refused(&mut writer, 1);
    out.extend(writer.finish().unwrap());
    assert_eq!(out, whole);
}

#[test]
fn the_bytes_filled_in_are_checked_against_the_manifest() {
    let (m, data) = fixture();
    let mut writer = Writer::new(options(Kind::Project, CHUNK, Protection::None), &m).unwrap();
    let stored = &data[0];
    let step = CHUNK as usize;
    writer
        .write_stored_chunk(step, |d| d.copy_from_slice(&stored[..step]))
        .unwrap();
    writer
        .write_stored_chunk(step, |d| {
            d.copy_from_slice(&stored[step..2 * step]);
            d[5] ^= 1;
        })
        .unwrap();
    writer.write(&stored[2 * step..]).unwrap();
    assert_eq!(writer.end_entry().unwrap_err().code(), "HASH_MISMATCH");
    // Final, like every failure of `write`.
    assert!(!writer.takes_stored_chunk(step));
    assert_eq!(
        writer
            .write_stored_chunk(step, |_| panic!("fill after a failure"))
            .unwrap_err()
            .code(),
        "HASH_MISMATCH"
    );
}

#[test]
fn a_digest_computed_elsewhere_covers_the_chunks_filled_in() {
    for encrypted in [false, true] {
        let (m, data) = fixture();
        let mut writer =
            Writer::new(options(Kind::Project, CHUNK, protection(encrypted)), &m).unwrap();
        writer.digest_elsewhere().unwrap();
        let mut out = writer.take_output();
        for (i, bytes) in data.iter().enumerate() {
            let step = writer.chunk_bytes(i as u32).unwrap() as usize;
            for p in bytes.chunks(step) {
                if writer.takes_stored_chunk(p.len()) {
                    writer
                        .write_stored_chunk(p.len(), |d| d.copy_from_slice(p))
                        .unwrap();
                } else {
                    writer.write(p).unwrap();
                }
                out.extend(writer.take_output());
            }
            writer.end_entry().unwrap();
        }
        let (last, request) = writer.finish_elsewhere().unwrap();
        out.extend(last);
        assert_eq!(request.length(), out.len() as u64);
        let pending = request.supply(sha256(&out), out.len() as u64).unwrap();
        out.extend(pending.own_signature().unwrap());
        let key = identity();
        let unlock = if encrypted {
            Unlock::Identity(&key)
        } else {
            Unlock::None
        };
        assert_eq!(open(Kind::Project, &out, unlock).unwrap().entries, data);
    }
}

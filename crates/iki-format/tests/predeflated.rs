//! `Writer::write_deflated` with chunks from `deflate_chunk` (deflated on other threads, in
//! any order): the file is byte for byte the one `write` makes, it reads back, and a stream
//! that does not decode to exactly the chunk's bytes is refused with nothing written.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

mod common;

use common::*;
use iki_format::{
    deflate_chunk, manifest_entry_for, write_all, Encoding, Entry, Kind, Protection, Unlock, Writer,
};

const CHUNK: u32 = 64 * 1024;
const LEVEL: u8 = 6;

/// Entries of every kind `write_deflated` takes: a texture over several chunks (gradient rows
/// with a noise column, so sampling picks level 6, level 1 or stored per chunk), pure noise
/// (stored blocks), text over several chunks, and an empty entry.
fn entries() -> Vec<(Entry, Vec<u8>)> {
    let (w, h) = (300u32, 190u32);
    let mut pixels = Vec::new();
    let noise = sample((w * h) as usize, 7, true);
    for y in 0..h {
        for x in 0..w {
            let n = noise[(y * w + x) as usize];
            pixels.extend_from_slice(&[x as u8, y as u8, if x > 200 { n } else { 0 }, 255]);
        }
    }
    let noisy = sample(200_000, 3, true);
    let text = sample(150_000, 4, false);
    vec![
        (rgba8_entry("t.png", w, h, &pixels), pixels),
        (
            manifest_entry_for("n.bin", "x/y", Encoding::Deflate, &noisy),
            noisy,
        ),
        (
            manifest_entry_for("a.txt", "text/plain", Encoding::Deflate, &text),
            text,
        ),
        (
            manifest_entry_for("e.txt", "text/plain", Encoding::Deflate, &[]),
            Vec::new(),
        ),
    ]
}

/// One chunk deflated elsewhere: its bytes (which the caller keeps) and its stream.
#[derive(Clone)]
struct Deflated {
    raw: Vec<u8>,
    stream: Vec<u8>,
}

/// Every entry's chunks, deflated on their own threads (all at once, finishing in any order).
fn deflated_elsewhere(writer: &Writer, data: &[Vec<u8>], encrypted: bool) -> Vec<Vec<Deflated>> {
    std::thread::scope(|scope| {
        let handles: Vec<Vec<_>> = data
            .iter()
            .enumerate()
            .map(|(i, bytes)| {
                let step = writer.chunk_bytes(i as u32).unwrap() as usize;
                let pieces: Vec<&[u8]> = if bytes.is_empty() {
                    vec![&[]]
                } else {
                    bytes.chunks(step).collect()
                };
                pieces
                    .into_iter()
                    .map(|raw| {
                        (
                            raw,
                            scope.spawn(move || deflate_chunk(raw, LEVEL, CHUNK, encrypted)),
                        )
                    })
                    .collect()
            })
            .collect();
        handles
            .into_iter()
            .map(|h| {
                h.into_iter()
                    .map(|(raw, t)| Deflated {
                        raw: raw.to_vec(),
                        stream: t.join().unwrap().unwrap(),
                    })
                    .collect()
            })
            .collect()
    })
}

/// Writes every chunk with `write_deflated`, ends each entry and finishes, into `out`.
fn write_rest(mut writer: Writer, chunks: &[Vec<Deflated>], out: &mut Vec<u8>) {
    for entry in chunks {
        for chunk in entry {
            writer.write_deflated(&chunk.raw, &chunk.stream).unwrap();
            out.extend(writer.take_output());
        }
        writer.end_entry().unwrap();
    }
    out.extend(writer.finish().unwrap());
}

fn protection(encrypted: bool) -> Protection {
    if encrypted {
        encrypted_for_recipient()
    } else {
        Protection::None
    }
}

fn encrypted_for_recipient() -> Protection {
    encrypted(vec![recipient_slot()])
}

#[test]
fn chunks_deflated_elsewhere_give_the_same_bytes() {
    let list = entries();
    let m = manifest(Kind::Model, list.iter().map(|(e, _)| e.clone()).collect());
    let data: Vec<Vec<u8>> = list.into_iter().map(|(_, d)| d).collect();
    let refs: Vec<&[u8]> = data.iter().map(Vec::as_slice).collect();
    for encrypted in [false, true] {
        let sequential = write_all(
            options(Kind::Model, CHUNK, protection(encrypted)),
            &m,
            &refs,
        )
        .unwrap();
        let mut writer =
            Writer::new(options(Kind::Model, CHUNK, protection(encrypted)), &m).unwrap();
        let mut out = writer.take_output();
        let chunks = deflated_elsewhere(&writer, &data, encrypted);
        assert!(chunks[0].len() > 2, "the texture spans several chunks");
        write_rest(writer, &chunks, &mut out);
        assert_eq!(out, sequential, "encrypted: {encrypted}");
        let key = identity();
        let opened = open(
            Kind::Model,
            &out,
            if encrypted {
                Unlock::Identity(&key)
            } else {
                Unlock::None
            },
        )
        .unwrap();
        assert_eq!(opened.entries, data);
    }
}

#[test]
fn a_stream_that_is_not_the_chunks_is_refused_and_nothing_is_written() {
    let list = entries();
    let m = manifest(Kind::Model, list.iter().map(|(e, _)| e.clone()).collect());
    let data: Vec<Vec<u8>> = list.into_iter().map(|(_, d)| d).collect();
    let refs: Vec<&[u8]> = data.iter().map(Vec::as_slice).collect();
    let sequential = write_all(
        options(Kind::Model, CHUNK, encrypted_for_recipient()),
        &m,
        &refs,
    )
    .unwrap();
    let mut writer =
        Writer::new(options(Kind::Model, CHUNK, encrypted_for_recipient()), &m).unwrap();
    let mut out = writer.take_output();
    let chunks = deflated_elsewhere(&writer, &data, true);
    let good = &chunks[0][0];

    let mut refuse = |raw: &[u8], stream: &[u8], codes: &[&str]| {
        let err = writer.write_deflated(raw, stream).unwrap_err();
        assert!(
            codes.contains(&err.code()),
            "{err:?}, expected one of {codes:?}"
        );
        assert!(
            writer.take_output().is_empty(),
            "{codes:?}: nothing written"
        );
    };
    // Bytes shorter than the chunk's.
    refuse(&good.raw[4..], &good.stream, &["INVALID_ARGUMENT"]);
    // A cut stream.
    refuse(
        &good.raw,
        &good.stream[..good.stream.len() - 2],
        &["BAD_DATA"],
    );
    // A stream with a byte flipped: it decodes to other bytes (or none).
    let mut flipped = good.stream.clone();
    flipped[40] ^= 0x55;
    refuse(&good.raw, &flipped, &["BAD_DATA"]);
    // The next chunk's stream (same length) for this chunk's bytes (handed in out of order).
    assert_eq!(chunks[0][1].raw.len(), good.raw.len());
    refuse(&good.raw, &chunks[0][1].stream, &["BAD_DATA"]);
    // Longer than a DATA chunk holds.
    refuse(
        &good.raw,
        &vec![0; CHUNK as usize + 1024],
        &["LIMIT_EXCEEDED"],
    );

    // The writer is where it was: the rest of the file is the sequential one.
    write_rest(writer, &chunks, &mut out);
    assert_eq!(out, sequential);
}

/// A stream that decodes to exactly as many bytes as the chunk, but other ones (one byte
/// changed, the length and the DEFLATE framing intact), is refused with nothing written: only
/// a byte-for-byte comparison with the chunk's bytes tells.
#[test]
fn a_stream_of_other_bytes_of_the_same_length_is_refused() {
    let text = sample(10_000, 5, false);
    let m = manifest(
        Kind::Model,
        vec![manifest_entry_for(
            "d.txt",
            "text/plain",
            Encoding::Deflate,
            &text,
        )],
    );
    let sequential =
        write_all(options(Kind::Model, CHUNK, Protection::None), &m, &[&text]).unwrap();
    let mut other = text.clone();
    other[5_000] ^= 1;
    for level in [0, LEVEL] {
        // Level 0 writes stored blocks: the same framing around other bytes.
        let stream = deflate_chunk(&other, level, CHUNK, false).unwrap();
        let mut writer = Writer::new(options(Kind::Model, CHUNK, Protection::None), &m).unwrap();
        let mut out = writer.take_output();
        let err = writer.write_deflated(&text, &stream).unwrap_err();
        assert_eq!(err.code(), "BAD_DATA", "level {level}");
        assert!(
            writer.take_output().is_empty(),
            "level {level}: nothing written"
        );
        // The true stream still goes in, and the file is the one `write` makes.
        writer
            .write_deflated(&text, &deflate_chunk(&text, LEVEL, CHUNK, false).unwrap())
            .unwrap();
        writer.end_entry().unwrap();
        out.extend(writer.take_output());
        out.extend(writer.finish().unwrap());
        assert_eq!(out, sequential, "level {level}");
    }
}

/// A true chunk handed in at another place of the same length, with its own bytes, decodes to
/// those bytes, so only the entry's manifest sha256 can tell: `end_entry` refuses the entry
/// (callers such as container-write.ts keep chunks in order by construction).
#[test]
fn a_true_chunk_out_of_place_fails_the_entry_hash() {
    let list = entries();
    let m = manifest(Kind::Model, list.iter().map(|(e, _)| e.clone()).collect());
    let data: Vec<Vec<u8>> = list.into_iter().map(|(_, d)| d).collect();
    let mut writer = Writer::new(options(Kind::Model, CHUNK, Protection::None), &m).unwrap();
    let chunks = deflated_elsewhere(&writer, &data, false);
    let texture = &chunks[0];
    writer
        .write_deflated(&texture[1].raw, &texture[1].stream)
        .unwrap();
    writer
        .write_deflated(&texture[0].raw, &texture[0].stream)
        .unwrap();
    for chunk in &texture[2..] {
        writer.write_deflated(&chunk.raw, &chunk.stream).unwrap();
    }
    assert_eq!(writer.end_entry().unwrap_err().code(), "HASH_MISMATCH");
}

#[test]
fn stored_entries_and_partial_chunks_are_refused() {
    let text = sample(10_000, 5, false);
    let m = manifest(
        Kind::Model,
        vec![
            manifest_entry_for("s.bin", "x/y", Encoding::Stored, &text),
            manifest_entry_for("d.txt", "text/plain", Encoding::Deflate, &text),
        ],
    );
    let mut writer = Writer::new(options(Kind::Model, CHUNK, Protection::None), &m).unwrap();
    let chunk = deflate_chunk(&text, LEVEL, CHUNK, false).unwrap();
    assert_eq!(
        writer.write_deflated(&text, &chunk).unwrap_err().code(),
        "INVALID_ARGUMENT"
    );
    writer.write(&text).unwrap();
    writer.end_entry().unwrap();
    writer.write(&text[..10]).unwrap();
    assert_eq!(
        writer.write_deflated(&text, &chunk).unwrap_err().code(),
        "INVALID_STATE"
    );
    writer.write(&text[10..]).unwrap();
    // Past the entry's one chunk.
    assert_eq!(
        writer.write_deflated(&text, &chunk).unwrap_err().code(),
        "INVALID_ARGUMENT"
    );
    writer.end_entry().unwrap();
    writer.finish().unwrap();
}

#[test]
fn deflate_chunk_checks_its_arguments() {
    assert_eq!(
        deflate_chunk(&[0; 10], 11, CHUNK, false)
            .unwrap_err()
            .code(),
        "INVALID_ARGUMENT"
    );
    assert_eq!(
        deflate_chunk(&[0; 10], 6, 100, false).unwrap_err().code(),
        "LIMIT_EXCEEDED"
    );
    assert_eq!(
        deflate_chunk(&vec![0; CHUNK as usize + 1], 6, CHUNK, false)
            .unwrap_err()
            .code(),
        "INVALID_ARGUMENT"
    );
    let stream = deflate_chunk(b"abc", 6, CHUNK, false).unwrap();
    let mut decoded = Vec::new();
    iki_format::encoding::Inflater::new()
        .inflate_into(&stream, 3, &mut decoded)
        .unwrap();
    assert_eq!(decoded, b"abc");
}

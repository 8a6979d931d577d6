//! `Reader::last_chunk_encoded_len` and `Writer::write_hinted`: a reader tells how each chunk
//! was encoded, and a writer given that as a `DeflateHint` (as the license copier does)
//! writes the chunks its sample would have judged the same way into the same bytes, without
//! sampling them.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

mod common;

use common::*;
use iki_format::{
    manifest_entry_for, write_all, DeflateHint, Encoding, Event, Kind, Manifest, Protection,
    Reader, Writer,
};

const CHUNK: usize = 64 * 1024;

/// (entry, decoded length, encoded length, decoded bytes) of every chunk of `file`.
fn chunks_of(file: &[u8]) -> Vec<(u32, usize, usize, Vec<u8>)> {
    let mut reader = Reader::new(Kind::Project);
    reader.push(file).unwrap();
    reader.finish().unwrap();
    assert_eq!(reader.last_chunk_encoded_len(), 0);
    let mut out = Vec::new();
    while let Some(event) = reader.next().unwrap() {
        match event {
            Event::Chunk { entry, data, .. } => {
                out.push((entry, data.len(), reader.last_chunk_encoded_len(), data));
            }
            Event::End(_) => break,
            _ => {}
        }
    }
    out
}

/// The file of `manifest` written chunk by chunk, each with the hint `hint` gives it.
fn write_hinted(
    manifest: &Manifest,
    chunks: &[(u32, usize, usize, Vec<u8>)],
    hint: impl Fn(u32, usize, usize) -> DeflateHint,
) -> Vec<u8> {
    let options = options(Kind::Project, CHUNK as u32, Protection::None);
    let mut writer = Writer::new(options, manifest).unwrap();
    let mut file = writer.take_output();
    let mut current = 0;
    for (entry, decoded, encoded, data) in chunks {
        if *entry != current {
            writer.end_entry().unwrap();
            current = *entry;
        }
        writer
            .write_hinted(data, hint(*entry, *decoded, *encoded))
            .unwrap();
        file.extend(writer.take_output());
    }
    writer.end_entry().unwrap();
    file.extend(writer.finish().unwrap());
    file
}

#[test]
fn hints_from_the_reader_give_the_same_file_without_a_sample() {
    let noise = sample(3 * CHUNK, 1, true);
    let text = sample(3 * CHUNK - 11, 2, false);
    let entries = vec![
        manifest_entry_for(
            "a.bin",
            "application/octet-stream",
            Encoding::Deflate,
            &noise,
        ),
        manifest_entry_for("b.txt", "text/plain", Encoding::Deflate, &text),
    ];
    let manifest = manifest(Kind::Project, entries);
    let options = options(Kind::Project, CHUNK as u32, Protection::None);
    let file = write_all(options, &manifest, &[&noise, &text]).unwrap();

    let chunks = chunks_of(&file);
    assert_eq!(chunks.len(), 6);
    for (entry, decoded, encoded, _) in &chunks {
        match entry {
            // Noise was stored: 65535-byte blocks, 5 bytes of framing each.
            0 => assert_eq!(*encoded, decoded + 10, "noise chunk"),
            _ => assert!(encoded < decoded, "text chunk: {encoded} of {decoded}"),
        }
    }

    // The reader's verdicts passed back as hints: the same bytes.
    let hinted = write_hinted(&manifest, &chunks, |_, decoded, encoded| {
        if encoded > decoded {
            DeflateHint::Incompressible
        } else {
            DeflateHint::Compressible
        }
    });
    assert_eq!(hinted, file);

    // The hint reaches the deflater: text said to be incompressible is stored.
    let stored = write_hinted(&manifest, &chunks, |_, _, _| DeflateHint::Incompressible);
    let again = chunks_of(&stored);
    for ((entry, decoded, encoded, data), (_, _, _, original)) in again.iter().zip(&chunks) {
        assert!(encoded > decoded, "entry {entry}: stored");
        assert_eq!(data, original);
    }
}

//! What the app side of project files needs from the container (docs/format.md 6.1, 7):
//! signing with a key held outside (`finish_external`), reading on past damage to show a
//! modified file (`tolerate_damage`), and reading one entry again from its byte span
//! (`EntryReader`).
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

mod common;

use common::{
    chunks, encrypted, manifest, open, password_slot, sample, signing_key, CREATED_MS, FILE_ID,
    PASSWORD,
};
use iki_crypto::{SecretKey32, SigningKey};
use iki_format::reader::EntryReader;
use iki_format::{
    manifest_entry_for, Encoding, Event, Kind, Manifest, Protection, Reader, SignerInfo, Unlock,
    Writer, WriterOptions,
};

/// Three entries: text (deflate, 3 chunks of 4 KiB), noise (stored, 2 chunks), one byte.
fn entries() -> Vec<Vec<u8>> {
    vec![
        sample(10_000, 3, false),
        sample(5_000, 4, true),
        b"z".to_vec(),
    ]
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
            manifest_entry_for(
                "assets/noise",
                "application/octet-stream",
                Encoding::Stored,
                &data[1],
            ),
            manifest_entry_for("assets/one", "text/plain", Encoding::Stored, &data[2]),
        ],
    )
}

/// Writes `data` with `options`, ending with `finish_external` and `sign`.
fn write_external(
    options: WriterOptions,
    data: &[Vec<u8>],
    sign: impl FnOnce(&[u8]) -> [u8; 64],
) -> Result<Vec<u8>, iki_format::Error> {
    let mut writer = Writer::new(options, &project_manifest(data))?;
    let mut out = Vec::new();
    for bytes in data {
        writer.write(bytes)?;
        writer.end_entry()?;
        out.extend(writer.take_output());
    }
    let (rest, pending) = writer.finish_external()?;
    out.extend(rest);
    let last = pending.attach(&sign(pending.message()))?;
    out.extend(last);
    Ok(out)
}

fn external_options(key: &SigningKey, protection: Protection) -> WriterOptions {
    let mut o = WriterOptions::new_external(
        Kind::Project,
        FILE_ID,
        CREATED_MS,
        key.public_key(),
        SignerInfo::device(Some("browser".into())),
    );
    o.chunk_size = 4096;
    o.protection = protection;
    o
}

fn browser_key() -> SigningKey {
    SigningKey::from_seed(&SecretKey32::from_bytes([0xB2; 32]))
}

#[test]
fn an_external_key_signs_the_52_byte_message() {
    let key = browser_key();
    let data = entries();
    let mut seen = Vec::new();
    let bytes = write_external(external_options(&key, Protection::None), &data, |message| {
        seen = message.to_vec();
        key.sign(message)
    })
    .unwrap();
    assert_eq!(seen.len(), 52);
    assert_eq!(&seen[..20], b"IKIFMT-SIGNATURE-V1\0");
    let opened = open(Kind::Project, &bytes, Unlock::None).unwrap();
    assert_eq!(opened.verified.public_key, key.public_key());
    assert_eq!(opened.entries, data);
    // Same bytes as a writer holding the key itself (Ed25519 is deterministic).
    let mut own = external_options(&key, Protection::None);
    own.signing = iki_format::SignWith::Key(browser_key());
    let mut writer = Writer::new(own, &project_manifest(&data)).unwrap();
    let mut same = Vec::new();
    for bytes in &data {
        writer.write(bytes).unwrap();
        writer.end_entry().unwrap();
        same.extend(writer.take_output());
    }
    same.extend(writer.finish().unwrap());
    assert_eq!(same, bytes);
}

#[test]
fn trusted_entry_hashes_are_not_checked_again() {
    let key = browser_key();
    let mut data = entries();
    let mut options = external_options(&key, Protection::None);
    options.entry_hashes_trusted = true;
    // The same bytes as a checking writer when the hashes are right...
    let trusted = write_external(options, &data, |m| key.sign(m)).unwrap();
    assert_eq!(trusted, signed(Protection::None));
    // ...and no check when a source changed after it was hashed: readers refuse that file.
    let manifest = project_manifest(&data);
    data[1][0] ^= 1;
    let mut options = external_options(&key, Protection::None);
    options.entry_hashes_trusted = true;
    let mut writer = Writer::new(options, &manifest).unwrap();
    let mut out = Vec::new();
    for bytes in &data {
        writer.write(bytes).unwrap();
        writer.end_entry().unwrap();
        out.extend(writer.take_output());
    }
    let (rest, pending) = writer.finish_external().unwrap();
    out.extend(rest);
    out.extend(pending.attach(&key.sign(pending.message())).unwrap());
    assert_eq!(
        open(Kind::Project, &out, Unlock::None).unwrap_err().code(),
        "HASH_MISMATCH"
    );
    let mut checking = Writer::new(external_options(&key, Protection::None), &manifest).unwrap();
    checking.write(&data[0]).unwrap();
    checking.end_entry().unwrap();
    checking.write(&data[1]).unwrap();
    assert_eq!(checking.end_entry().unwrap_err().code(), "HASH_MISMATCH");
}

#[test]
fn a_wrong_external_signature_yields_no_file() {
    let key = browser_key();
    let data = entries();
    let other = signing_key();
    for sign in [
        Box::new(|m: &[u8]| other.sign(m)) as Box<dyn Fn(&[u8]) -> [u8; 64]>,
        Box::new(|m: &[u8]| key.sign(&m[20..])),
        Box::new(|_: &[u8]| [0u8; 64]),
    ] {
        let err =
            write_external(external_options(&key, Protection::None), &data, sign).unwrap_err();
        assert_eq!(err.code(), "BAD_SIGNATURE");
    }
    // An external writer cannot be finished as if it held the key.
    let mut writer = Writer::new(
        external_options(&key, Protection::None),
        &project_manifest(&data),
    )
    .unwrap();
    for bytes in &data {
        writer.write(bytes).unwrap();
        writer.end_entry().unwrap();
    }
    assert_eq!(writer.finish().unwrap_err().code(), "INVALID_STATE");
}

fn read(
    bytes: &[u8],
    tolerant: bool,
    password: Option<&[u8]>,
) -> Result<Vec<Event>, iki_format::Error> {
    let mut reader = Reader::new(Kind::Project);
    if tolerant {
        reader.tolerate_damage();
    }
    reader.push(bytes)?;
    reader.finish()?;
    let mut events = Vec::new();
    while let Some(event) = reader.next()? {
        if matches!(event, Event::Locked(_)) {
            reader.unlock_password(password.unwrap_or_default())?;
        }
        events.push(event);
    }
    Ok(events)
}

fn outcome(events: &[Event]) -> (Vec<String>, &'static str) {
    let ends = events
        .iter()
        .filter_map(|e| match e {
            Event::EntryVerified { entry } => Some(format!("ok {entry}")),
            Event::EntryDamaged { entry } => Some(format!("damaged {entry}")),
            _ => None,
        })
        .collect();
    let last = match events.last() {
        Some(Event::End(_)) => "end",
        Some(Event::Modified { .. }) => "modified",
        _ => "none",
    };
    (ends, last)
}

fn signed(protection: Protection) -> Vec<u8> {
    let key = browser_key();
    write_external(external_options(&key, protection), &entries(), |m| {
        key.sign(m)
    })
    .unwrap()
}

/// Payload range of the n-th DATA chunk.
fn data_payload(bytes: &[u8], n: usize) -> std::ops::Range<usize> {
    chunks(bytes)
        .into_iter()
        .filter(|c| &c.0 == b"DATA")
        .nth(n)
        .unwrap()
        .2
}

#[test]
fn tolerant_reading_marks_the_damaged_entry_and_the_signature() {
    for protection in [false, true] {
        let make = || {
            if protection {
                encrypted(vec![password_slot()])
            } else {
                Protection::None
            }
        };
        let password = protection.then_some(PASSWORD);
        let mut bytes = signed(make());
        // DATA chunk 3 is the noise entry's first chunk: flip a byte of its data.
        let range = data_payload(&bytes, 3);
        bytes[range.start + 20] ^= 0x40;
        let strict = read(&bytes, false, password).unwrap_err().code();
        assert_eq!(
            strict,
            if protection {
                "DECRYPT_FAILED"
            } else {
                "HASH_MISMATCH"
            }
        );
        let events = read(&bytes, true, password).unwrap();
        assert_eq!(
            outcome(&events),
            (
                vec!["ok 0".into(), "damaged 1".into(), "ok 2".into()],
                "modified"
            )
        );
        // The damaged chunk's bytes were not released (encrypted: they cannot be).
        let released: Vec<_> = events
            .iter()
            .filter(|e| matches!(e, Event::Chunk { entry: 1, .. }))
            .collect();
        assert_eq!(released.len(), if protection { 1 } else { 2 });
        let Some(Event::Modified { public_key, info }) = events.last() else {
            panic!()
        };
        assert_eq!(
            (*public_key, info.as_slice()),
            (
                browser_key().public_key(),
                &br#"{"kind":"device","name":"browser"}"#[..]
            )
        );
    }
}

#[test]
fn tolerant_reading_of_a_changed_signature_keeps_every_entry() {
    let mut bytes = signed(Protection::None);
    let end = bytes.len();
    bytes[end - 1] ^= 1;
    assert_eq!(
        read(&bytes, false, None).unwrap_err().code(),
        "BAD_SIGNATURE"
    );
    let events = read(&bytes, true, None).unwrap();
    assert_eq!(
        outcome(&events),
        (
            vec!["ok 0".into(), "ok 1".into(), "ok 2".into()],
            "modified"
        )
    );
    // An intact file reads the same either way.
    assert_eq!(
        outcome(&read(&signed(Protection::None), true, None).unwrap()).1,
        "end"
    );
}

#[test]
fn tolerance_does_not_cover_structure() {
    let good = signed(Protection::None);
    // A DATA length field, the DATA sequence, truncation and trailing bytes stay errors.
    let range = data_payload(&good, 1);
    let mut length = good.clone();
    length[range.start - 1] ^= 0x10;
    let mut sequence = good.clone();
    sequence[range.start + 4] ^= 1;
    let mut trailing = good.clone();
    trailing.push(0);
    for (bytes, code) in [
        (length, "LIMIT_EXCEEDED"),
        (sequence, "DATA_SEQUENCE"),
        (good[..good.len() - 1].to_vec(), "TRUNCATED"),
        (trailing, "TRAILING_BYTES"),
    ] {
        assert_eq!(read(&bytes, true, None).unwrap_err().code(), code);
    }
    // A wrong content key is not damage either: the manifest does not open.
    let mut reader = Reader::new(Kind::Project);
    reader.tolerate_damage();
    reader
        .push(&signed(encrypted(vec![password_slot()])))
        .unwrap();
    reader.finish().unwrap();
    assert!(matches!(reader.next().unwrap(), Some(Event::Header(_))));
    assert!(matches!(reader.next().unwrap(), Some(Event::Locked(_))));
    reader
        .unlock_content_key(SecretKey32::from_bytes([9; 32]))
        .unwrap();
    assert_eq!(reader.next().unwrap_err().code(), "DECRYPT_FAILED");
}

/// Reads `bytes` to the end and returns the entry reader.
fn entry_reader(bytes: &[u8], password: Option<&[u8]>) -> EntryReader {
    let mut reader = Reader::new(Kind::Project);
    reader.push(bytes).unwrap();
    reader.finish().unwrap();
    while let Some(event) = reader.next().unwrap() {
        if matches!(event, Event::Locked(_)) {
            reader.unlock_password(password.unwrap()).unwrap();
        }
    }
    reader.into_entry_reader().unwrap()
}

/// Reads one entry from `span_bytes` in pieces of 1000 bytes.
fn read_entry(
    reader: &mut EntryReader,
    entry: u32,
    span_bytes: &[u8],
) -> Result<Vec<u8>, iki_format::Error> {
    reader.seek(entry)?;
    let mut out = Vec::new();
    let mut verified = false;
    let mut pieces = span_bytes.chunks(1000);
    loop {
        match reader.next()? {
            Some(Event::Chunk { data, .. }) => out.extend(data),
            Some(Event::EntryVerified { entry: e }) => {
                assert_eq!(e, entry);
                verified = true;
            }
            Some(other) => panic!("unexpected {other:?}"),
            None => match pieces.next() {
                Some(piece) => reader.push(piece)?,
                None if verified => return Ok(out),
                None => reader.finish()?,
            },
        }
    }
}

#[test]
fn entries_read_again_from_their_spans() {
    for encrypt in [false, true] {
        let bytes = signed(if encrypt {
            encrypted(vec![password_slot()])
        } else {
            Protection::None
        });
        let mut reader = entry_reader(&bytes, encrypt.then_some(PASSWORD));
        assert_eq!(reader.entries(), 3);
        for (i, expected) in entries().iter().enumerate().rev() {
            let span = reader.span(i as u32).unwrap();
            let got = read_entry(
                &mut reader,
                i as u32,
                &bytes[span.start as usize..span.end as usize],
            )
            .unwrap();
            assert_eq!(&got, expected, "entry {i}");
        }
        // Spans tile the DATA chunks: entry 0 starts at the first DATA chunk, entry 2 ends at SIGN.
        let all = chunks(&bytes);
        let first = all.iter().find(|c| &c.0 == b"DATA").unwrap().1;
        let sign = all.iter().find(|c| &c.0 == b"SIGN").unwrap().1;
        assert_eq!(
            (reader.span(0).unwrap().start, reader.span(2).unwrap().end),
            (first as u64, sign as u64)
        );
    }
}

#[test]
fn spans_refuse_other_or_changed_bytes() {
    for encrypt in [false, true] {
        let bytes = signed(if encrypt {
            encrypted(vec![password_slot()])
        } else {
            Protection::None
        });
        let mut reader = entry_reader(&bytes, encrypt.then_some(PASSWORD));
        let span = |r: &EntryReader, e: u32| {
            let s = r.span(e).unwrap();
            bytes[s.start as usize..s.end as usize].to_vec()
        };
        let noise = span(&reader, 1);
        let first = span(&reader, 0);
        // Entry 0's bytes offered as entry 1: the sequence check refuses them.
        assert_eq!(
            read_entry(&mut reader, 1, &first).unwrap_err().code(),
            "DATA_SEQUENCE"
        );
        let mut changed = noise.clone();
        changed[100] ^= 1;
        let code = read_entry(&mut reader, 1, &changed).unwrap_err().code();
        assert_eq!(
            code,
            if encrypt {
                "DECRYPT_FAILED"
            } else {
                "HASH_MISMATCH"
            }
        );
        assert_eq!(
            read_entry(&mut reader, 1, &noise[..noise.len() - 1])
                .unwrap_err()
                .code(),
            "TRUNCATED"
        );
        let mut longer = noise.clone();
        longer.extend_from_slice(b"SIGN");
        assert_eq!(
            read_entry(&mut reader, 1, &longer).unwrap_err().code(),
            "TRAILING_BYTES"
        );
        // After a failure, a seek reads the entry again.
        assert_eq!(read_entry(&mut reader, 1, &noise).unwrap(), entries()[1]);
        assert_eq!(reader.seek(3).unwrap_err().code(), "INVALID_ARGUMENT");
    }
}

#[test]
fn an_entry_reader_needs_a_file_read_to_its_end_with_its_key() {
    let bytes = signed(encrypted(vec![password_slot()]));
    let mut reader = Reader::new(Kind::Project);
    reader.push(&bytes[..bytes.len() / 2]).unwrap();
    while let Some(event) = reader.next().unwrap() {
        if matches!(event, Event::Locked(_)) {
            reader.unlock_password(PASSWORD).unwrap();
        }
    }
    assert_eq!(
        reader.into_entry_reader().unwrap_err().code(),
        "INVALID_STATE"
    );
    let mut locked = Reader::new(Kind::Project);
    locked.push(&bytes).unwrap();
    locked.finish().unwrap();
    while let Some(event) = locked.next().unwrap() {
        if matches!(event, Event::Locked(_)) {
            locked.skip_content().unwrap();
        }
    }
    assert_eq!(
        locked.into_entry_reader().unwrap_err().code(),
        "INVALID_STATE"
    );
}

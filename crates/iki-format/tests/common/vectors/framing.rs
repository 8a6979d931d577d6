//! Vectors of the chunk framing: magic, version, lengths, CRCs, order and truncation.

use super::*;

pub(super) fn framing_vectors() -> Vec<Vector> {
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

//! Vectors of the content: manifest, DATA chunks, inflation bounds and entry hashes.

use super::*;

pub(super) fn content_vectors() -> Vec<Vector> {
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

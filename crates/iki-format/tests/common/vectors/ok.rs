//! The well-formed vectors: every kind, protection and encoding a reader must open.

use super::*;

pub(super) fn ok_vectors() -> Vec<Vector> {
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
            "ok_password_fourth_slot",
            P,
            pw(),
            small_file(P, encrypted(wrong_passwords_then(password_slot()))),
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

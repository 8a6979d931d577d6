//! Vectors of the KEYS chunk: slot counts, slot types, Argon2 ceilings and wrong keys.

use super::*;

pub(super) fn keys_vectors() -> Vec<Vector> {
    let enc = small_file(P, encrypted(vec![password_slot()])).0;
    let other = {
        let mut o = options(P, 4096, encrypted(vec![password_slot()]));
        o.file_id = [0xF2; 16];
        let (_, e) = small_file(P, Protection::None);
        let m = manifest(
            P,
            vec![
                manifest_entry_for("a.txt", "text/plain", Encoding::Deflate, &e[0]),
                manifest_entry_for("b.bin", "application/octet-stream", Encoding::Stored, &e[1]),
            ],
        );
        write_all(o, &m, &[&e[0], &e[1]]).unwrap()
    };
    let rec = small_file(P, encrypted(vec![recipient_slot()])).0;
    let keys = |bytes: &[u8], f: fn(&mut Vec<u8>)| raw(bytes, |p| f(&mut p.chunks[1].1));
    vec![
        bad(
            "keys_slot_count_zero",
            "LIMIT_EXCEEDED",
            P,
            pw(),
            keys(&enc, |k| k[..2].copy_from_slice(&[0, 0])),
        ),
        bad(
            "keys_slot_count_65",
            "LIMIT_EXCEEDED",
            P,
            pw(),
            keys(&enc, |k| k[..2].copy_from_slice(&[65, 0])),
        ),
        bad(
            "keys_too_long",
            "LIMIT_EXCEEDED",
            P,
            pw(),
            keys(&enc, |k| k.resize(65537, 0)),
        ),
        bad(
            "keys_count_larger_than_slots",
            "MALFORMED_CHUNK",
            P,
            pw(),
            keys(&enc, |k| k[..2].copy_from_slice(&[2, 0])),
        ),
        bad(
            "keys_bytes_left_over",
            "MALFORMED_CHUNK",
            P,
            pw(),
            keys(&enc, |k| k.push(0)),
        ),
        bad(
            "keys_password_slot_short",
            "MALFORMED_CHUNK",
            P,
            pw(),
            keys(&enc, |k| {
                k[3..5].copy_from_slice(&100u16.to_le_bytes());
                k.pop();
            }),
        ),
        bad(
            "keys_kdf_params_refused",
            "KDF_PARAMS_REFUSED",
            P,
            pw(),
            keys(&enc, |k| {
                k[6..10].copy_from_slice(&262_145u32.to_le_bytes())
            }),
        ),
        bad(
            "keys_kdf_passes_refused",
            "KDF_PARAMS_REFUSED",
            P,
            pw(),
            keys(&enc, |k| k[10..14].copy_from_slice(&11u32.to_le_bytes())),
        ),
        bad(
            "keys_kdf_lanes_refused",
            "KDF_PARAMS_REFUSED",
            P,
            pw(),
            keys(&enc, |k| k[14..18].copy_from_slice(&5u32.to_le_bytes())),
        ),
        bad(
            "keys_kdf_unknown",
            "UNSUPPORTED_ALGORITHM",
            P,
            pw(),
            keys(&enc, |k| k[5] = 2),
        ),
        bad(
            "keys_slot_from_other_file",
            "DECRYPT_FAILED",
            P,
            pw(),
            raw(&enc, |p| {
                p.chunks[1] = Parts::split(&other).chunks[1].clone()
            }),
        ),
        bad(
            "keys_wrong_password",
            "DECRYPT_FAILED",
            P,
            Key::Password("not the password".into()),
            enc.clone(),
        ),
        bad(
            // Readers derive at most four password slots: the fifth, the only one this
            // password opens, is never tried (docs/format.md section 3).
            "keys_password_slot_beyond_four",
            "LIMIT_EXCEEDED",
            P,
            pw(),
            raw(
                &small_file(P, encrypted(wrong_passwords_then(password_slot()))).0,
                |p| {
                    let four = &mut p.chunks[1].1;
                    let wrong = four[2..2 + 3 + 101].to_vec();
                    four[0] = 5;
                    four.splice(2..2, wrong);
                },
            ),
        ),
        bad("keys_no_slot_for_key", "KEY_REQUIRED", P, id(), enc.clone()),
        bad(
            "keys_recipient_low_order_ephemeral",
            "WEAK_KEY",
            P,
            id(),
            keys(&rec, |k| k[37..69].fill(0)),
        ),
        bad(
            "keys_recipient_other_identity",
            "DECRYPT_FAILED",
            P,
            Key::Identity([0x77; 32]),
            rec.clone(),
        ),
        bad(
            "keys_license_id_uppercase",
            "MALFORMED_CHUNK",
            Kind::Model,
            ck(),
            raw(&license_copy().0, |p| {
                let k = &mut p.chunks[1].1;
                let at = k
                    .windows(16)
                    .position(|w| w == b"0123456789abcdef")
                    .unwrap();
                k[at + 10] = b'A';
            }),
        ),
    ]
}

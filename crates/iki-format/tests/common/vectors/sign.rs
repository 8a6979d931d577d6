//! Vectors of the SIGN chunk: signature, signer and trailing bytes.

use super::*;

pub(super) fn sign_vectors() -> Vec<Vector> {
    let plain = small_file(P, Protection::None).0;
    let n = plain.len();
    let last = |b: &[u8], f: fn(&mut Vec<u8>)| {
        raw(b, |p| {
            let i = p.chunks.len() - 1;
            f(&mut p.chunks[i].1);
        })
    };
    let mut flipped = plain.clone();
    flipped[n - 1] ^= 0x01;
    let mut flipped_r = plain.clone();
    flipped_r[n - 64] ^= 0x01;
    let forged = |key: [u8; 32]| {
        raw(&plain, |p| {
            let i = p.chunks.len() - 1;
            let s = &mut p.chunks[i].1;
            s[1..33].copy_from_slice(&key);
            let m = s.len();
            s[m - 64..].fill(0);
            s[m - 64] = 1;
        })
    };
    let mut identity_point = [0u8; 32];
    identity_point[0] = 1;
    let mut non_canonical = [0xFF; 32];
    non_canonical[0] = 0xED;
    non_canonical[31] = 0x7F;
    vec![
        bad("sign_bad_signature", "BAD_SIGNATURE", P, Key::None, flipped),
        bad(
            "sign_bad_signature_r",
            "BAD_SIGNATURE",
            P,
            Key::None,
            flipped_r,
        ),
        bad(
            "sign_created_ms_modified",
            "BAD_SIGNATURE",
            P,
            Key::None,
            raw(&plain, |p| p.chunks[0].1[24] ^= 1),
        ),
        bad(
            "sign_small_order_key",
            "BAD_SIGNATURE",
            P,
            Key::None,
            forged(identity_point),
        ),
        bad(
            "sign_non_canonical_key",
            "BAD_SIGNATURE",
            P,
            Key::None,
            forged(non_canonical),
        ),
        bad(
            "sign_malformed_length",
            "MALFORMED_CHUNK",
            P,
            Key::None,
            last(&plain, |s| s[33] = s[33].wrapping_add(1)),
        ),
        bad(
            "sign_unknown_algorithm",
            "UNSUPPORTED_ALGORITHM",
            P,
            Key::None,
            last(&plain, |s| s[0] = 2),
        ),
        bad(
            "sign_signer_json_invalid",
            "MALFORMED_CHUNK",
            P,
            Key::None,
            Parts::split(&plain).resign_with(&key(), b"{"),
        ),
        bad(
            "sign_signer_account_without_certificate",
            "MALFORMED_CHUNK",
            P,
            Key::None,
            Parts::split(&plain)
                .resign_with(&key(), br#"{"kind":"account","account":"acct_fake"}"#),
        ),
        bad(
            "sign_too_long",
            "LIMIT_EXCEEDED",
            P,
            Key::None,
            last(&plain, |s| s.resize(65537, 0)),
        ),
    ]
}

//! Wycheproof XChaCha20-Poly1305 through `iki_crypto::Aead`, and Wycheproof
//! ChaCha20-Poly1305 through the pinned `chacha20poly1305` crate directly (iki only exposes
//! the X variant; both share that crate's ChaCha20 and Poly1305 core).
//!
//! Every valid case seals to exactly `ct || tag` and opens back to `msg`, through both the
//! allocating and the in-place forms. Every invalid case fails: a wrong-size nonce cannot
//! even be typed as `&[u8; 24]` (or `[u8; 12]`), and a modified tag or ciphertext opens to
//! `DECRYPT_FAILED` and leaves the in-place buffer untouched.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

mod common;

use chacha20poly1305::aead::{Aead as _, KeyInit, Payload};
use chacha20poly1305::ChaCha20Poly1305;
use common::{unhex, wycheproof_cases};
use iki_crypto::{Aead, Error, SecretKey32};
use serde::Deserialize;

#[derive(Deserialize)]
struct Case {
    #[serde(rename = "tcId")]
    id: u32,
    key: String,
    iv: String,
    aad: String,
    msg: String,
    ct: String,
    tag: String,
    result: String,
}

struct Decoded {
    key: Vec<u8>,
    iv: Vec<u8>,
    aad: Vec<u8>,
    msg: Vec<u8>,
    sealed: Vec<u8>,
    valid: bool,
}

fn cases(rel: &str) -> Vec<(u32, Decoded)> {
    let mut out = Vec::new();
    for case in &wycheproof_cases::<Case>(rel) {
        let mut sealed = unhex(&case.ct);
        sealed.extend(unhex(&case.tag));
        let valid = match case.result.as_str() {
            "valid" => true,
            "invalid" => false,
            other => panic!("tcId {}: unexpected result {other}", case.id),
        };
        let decoded = Decoded {
            key: unhex(&case.key),
            iv: unhex(&case.iv),
            aad: unhex(&case.aad),
            msg: unhex(&case.msg),
            sealed,
            valid,
        };
        out.push((case.id, decoded));
    }
    out
}

fn check_xchacha(id: u32, c: &Decoded) {
    let Ok(nonce) = <[u8; 24]>::try_from(c.iv.as_slice()) else {
        assert!(
            !c.valid,
            "tcId {id}: valid case with a {}-byte nonce",
            c.iv.len()
        );
        return;
    };
    let aead = Aead::new(&SecretKey32::try_from_slice(&c.key).unwrap());
    let mut buf = c.sealed.clone();
    let opened = aead.open_in_place(&nonce, &c.aad, &mut buf);
    if c.valid {
        assert_eq!(
            aead.seal(&nonce, &c.aad, &c.msg).unwrap(),
            c.sealed,
            "tcId {id} seal"
        );
        let mut in_place = c.msg.clone();
        aead.seal_in_place(&nonce, &c.aad, &mut in_place).unwrap();
        assert_eq!(in_place, c.sealed, "tcId {id} seal_in_place");
        assert_eq!(opened, Ok(()), "tcId {id} open_in_place");
        assert_eq!(buf, c.msg, "tcId {id}");
        assert_eq!(
            aead.open(&nonce, &c.aad, &c.sealed).unwrap(),
            c.msg,
            "tcId {id} open"
        );
    } else {
        assert_eq!(opened, Err(Error::DecryptFailed), "tcId {id}");
        assert_eq!(buf, c.sealed, "tcId {id}: buffer changed on failure");
        assert_eq!(
            aead.open(&nonce, &c.aad, &c.sealed),
            Err(Error::DecryptFailed),
            "tcId {id}"
        );
    }
}

#[test]
fn wycheproof_xchacha20_poly1305() {
    let all = cases("wycheproof/xchacha20_poly1305_test.json");
    assert_eq!(all.len(), 315);
    for (id, c) in &all {
        check_xchacha(*id, c);
    }
    assert_eq!(all.iter().filter(|(_, c)| c.valid).count(), 246);
}

#[test]
fn wycheproof_chacha20_poly1305_upstream() {
    let all = cases("wycheproof/chacha20_poly1305_test.json");
    assert_eq!(all.len(), 325);
    for (id, c) in &all {
        let Ok(nonce) = <[u8; 12]>::try_from(c.iv.as_slice()) else {
            assert!(
                !c.valid,
                "tcId {id}: valid case with a {}-byte nonce",
                c.iv.len()
            );
            continue;
        };
        let cipher = ChaCha20Poly1305::new_from_slice(&c.key).unwrap();
        let opened = cipher.decrypt(
            &nonce.into(),
            Payload {
                msg: &c.sealed,
                aad: &c.aad,
            },
        );
        if c.valid {
            let sealed = cipher
                .encrypt(
                    &nonce.into(),
                    Payload {
                        msg: &c.msg,
                        aad: &c.aad,
                    },
                )
                .unwrap();
            assert_eq!(sealed, c.sealed, "tcId {id}");
            assert_eq!(opened.ok().as_ref(), Some(&c.msg), "tcId {id}");
        } else {
            assert!(opened.is_err(), "tcId {id} opened");
        }
    }
    assert_eq!(all.iter().filter(|(_, c)| c.valid).count(), 256);
}

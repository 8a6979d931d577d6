//! Behaviour of the public API beyond the vectors: round trips and tampering for
//! `seal_to`/`open_sealed` and `wrap_key`/`unwrap_key`, `Debug` never showing a secret, and
//! the service derivations (distinct per label, `license_key` equal to a hand computation
//! with the `hkdf` crate).
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

mod common;

use common::tohex;
use hkdf::Hkdf;
use iki_crypto::{
    derive, labels, open_sealed, seal_to, unwrap_key, wrap_key, x25519_kek, Aead, Error, Sealed,
    SecretKey32, SigningKey, VerifyingKey, X25519Secret, TAG_BYTES,
};
use sha2::Sha256;

fn key(b: u8) -> SecretKey32 {
    SecretKey32::from_bytes([b; 32])
}

/// Flips each bit of `bytes` in turn and checks that `check` rejects every variant.
fn every_bit_flip(bytes: &[u8], mut check: impl FnMut(&[u8]) -> bool) {
    for i in 0..bytes.len() * 8 {
        let mut copy = bytes.to_vec();
        copy[i / 8] ^= 1 << (i % 8);
        assert!(check(&copy), "bit {i} flip accepted");
    }
}

#[test]
fn seal_to_round_trip_and_tampering() {
    let recipient = X25519Secret::generate().unwrap();
    let context = labels::context(labels::LICENSE_KEY_RELEASE_V1, b"0011223344556677");
    let sealed = seal_to(&recipient.public_key(), &context, &context, &[0x11; 32]).unwrap();
    assert_eq!(sealed.ciphertext.len(), 32 + TAG_BYTES);
    let open = |s: &Sealed, info: &[u8], aad: &[u8]| {
        open_sealed(&recipient, &s.ephemeral, &s.nonce, info, aad, &s.ciphertext)
    };
    assert_eq!(
        open(&sealed, &context, &context).unwrap().as_slice(),
        &[0x11; 32]
    );

    // Fresh ephemeral key and nonce every time.
    let again = seal_to(&recipient.public_key(), &context, &context, &[0x11; 32]).unwrap();
    assert_ne!(again.ephemeral, sealed.ephemeral);
    assert_ne!(again.nonce, sealed.nonce);

    let other = labels::context(labels::ACCOUNT_UNWRAP_V1, b"0011223344556677");
    assert_eq!(
        open(&sealed, &other, &context).err(),
        Some(Error::DecryptFailed)
    );
    assert_eq!(
        open(&sealed, &context, &other).err(),
        Some(Error::DecryptFailed)
    );
    let wrong = X25519Secret::generate().unwrap();
    let wrong_open = open_sealed(
        &wrong,
        &sealed.ephemeral,
        &sealed.nonce,
        &context,
        &context,
        &sealed.ciphertext,
    );
    assert_eq!(wrong_open.err(), Some(Error::DecryptFailed));
    every_bit_flip(&sealed.ciphertext, |ct| {
        open_sealed(
            &recipient,
            &sealed.ephemeral,
            &sealed.nonce,
            &context,
            &context,
            ct,
        )
        .err()
            == Some(Error::DecryptFailed)
    });
    every_bit_flip(&sealed.nonce, |n| {
        let n: [u8; 24] = n.try_into().unwrap();
        open_sealed(
            &recipient,
            &sealed.ephemeral,
            &n,
            &context,
            &context,
            &sealed.ciphertext,
        )
        .is_err()
    });
    every_bit_flip(&sealed.ephemeral, |e| {
        let e: [u8; 32] = e.try_into().unwrap();
        open_sealed(
            &recipient,
            &e,
            &sealed.nonce,
            &context,
            &context,
            &sealed.ciphertext,
        )
        .is_err()
    });
    assert_eq!(
        open(
            &Sealed {
                ciphertext: sealed.ciphertext[..TAG_BYTES - 1].to_vec(),
                ..sealed.clone()
            },
            &context,
            &context
        )
        .err(),
        Some(Error::DecryptFailed)
    );
}

#[test]
fn seal_to_matches_recipient_slot_construction() {
    // open_sealed must equal the recipient-slot reader of format §3.3 built by hand.
    let recipient = X25519Secret::generate().unwrap();
    let r = recipient.public_key();
    let sealed = seal_to(&r, labels::RECIPIENT_V1, b"slot aad", &[0x22; 32]).unwrap();
    let kek = x25519_kek(
        &recipient,
        &sealed.ephemeral,
        &sealed.ephemeral,
        &r,
        labels::RECIPIENT_V1,
    )
    .unwrap();
    let shared = recipient.diffie_hellman(&sealed.ephemeral).unwrap();
    let mut salt = sealed.ephemeral.to_vec();
    salt.extend_from_slice(&r);
    let mut expected = [0u8; 32];
    Hkdf::<Sha256>::new(Some(&salt), shared.expose_secret())
        .expand(labels::RECIPIENT_V1, &mut expected)
        .unwrap();
    assert_eq!(kek.expose_secret(), &expected);
    let plain = Aead::new(&kek)
        .open(&sealed.nonce, b"slot aad", &sealed.ciphertext)
        .unwrap();
    assert_eq!(plain, vec![0x22; 32]);
}

#[test]
fn wrap_unwrap_round_trip_and_tampering() {
    let (kek, content) = (key(1), key(2));
    let nonce = [5u8; 24];
    let aad = b"file id and slot";
    let wrapped = wrap_key(&kek, &nonce, aad, &content).unwrap();
    assert_eq!(
        unwrap_key(&kek, &nonce, aad, &wrapped)
            .unwrap()
            .expose_secret(),
        content.expose_secret()
    );
    assert_ne!(&wrapped[..32], content.expose_secret());
    every_bit_flip(&wrapped, |w| {
        let w: [u8; 48] = w.try_into().unwrap();
        unwrap_key(&kek, &nonce, aad, &w).err() == Some(Error::DecryptFailed)
    });
    every_bit_flip(aad, |a| {
        unwrap_key(&kek, &nonce, a, &wrapped).err() == Some(Error::DecryptFailed)
    });
    assert_eq!(
        unwrap_key(&key(3), &nonce, aad, &wrapped).err(),
        Some(Error::DecryptFailed)
    );
    assert_eq!(
        unwrap_key(&kek, &[6u8; 24], aad, &wrapped).err(),
        Some(Error::DecryptFailed)
    );
}

#[test]
fn signatures_round_trip_and_tampering() {
    let signer = SigningKey::generate().unwrap();
    let message = b"IKIFMT-SIGNATURE-V1\x00digest";
    let sig = signer.sign(message);
    let verifier = VerifyingKey::from_bytes(&signer.public_key()).unwrap();
    assert_eq!(verifier, signer.verifying_key());
    assert_eq!(verifier.verify_strict(message, &sig), Ok(()));
    every_bit_flip(&sig, |s| {
        verifier.verify_strict(message, &s.try_into().unwrap()) == Err(Error::BadSignature)
    });
    every_bit_flip(message, |m| {
        verifier.verify_strict(m, &sig) == Err(Error::BadSignature)
    });
    let restored = SigningKey::from_seed(&signer.seed());
    assert_eq!(restored.public_key(), signer.public_key());
}

#[test]
fn debug_never_shows_secret_bytes() {
    let seed = [0xA7u8; 32];
    let needle = tohex(&seed[..4]);
    let shown = [
        format!("{:?}", SecretKey32::from_bytes(seed)),
        format!(
            "{:?}",
            SigningKey::from_seed(&SecretKey32::from_bytes(seed))
        ),
        format!(
            "{:?}",
            X25519Secret::from_key(SecretKey32::from_bytes(seed))
        ),
        format!("{:?}", Aead::new(&SecretKey32::from_bytes(seed))),
        format!(
            "{:?}",
            derive::service_signing(&SecretKey32::from_bytes(seed)).seed()
        ),
    ];
    for s in &shown {
        assert!(!s.to_lowercase().contains(&needle), "{s}");
        assert!(!s.contains("167, 167"), "{s}");
    }
    assert_eq!(shown[0], "SecretKey32(..)");
    assert_eq!(shown[2], "X25519Secret(..)");
    assert_eq!(shown[3], "Aead(..)");
}

#[test]
fn license_key_matches_hand_computed_hkdf() {
    let root = key(0x5e);
    let master_sha = [0x33u8; 32];
    let got = derive::license_key(&root, &master_sha, "master-1", "00112233aabbccdd");
    let mut expected = [0u8; 32];
    Hkdf::<Sha256>::new(Some(&master_sha), root.expose_secret())
        .expand(b"license-key-v1master-100112233aabbccdd", &mut expected)
        .unwrap();
    assert_eq!(got.expose_secret(), &expected);

    let mut file_id = [0u8; 16];
    Hkdf::<Sha256>::new(Some(b""), &expected)
        .expand(b"iki-license-file-id-v1", &mut file_id)
        .unwrap();
    assert_eq!(derive::license_file_id(&got), file_id);
    let mut kek = [0u8; 32];
    Hkdf::<Sha256>::new(None, root.expose_secret())
        .expand(b"account-kek-v1acct_1", &mut kek)
        .unwrap();
    assert_eq!(derive::account_kek(&root, "acct_1").expose_secret(), &kek);
}

#[test]
fn derivations_are_distinct_and_deterministic() {
    let root = key(0x5e);
    let sha = [0x33u8; 32];
    let outputs: Vec<(&str, [u8; 32])> = vec![
        (
            "license",
            *derive::license_key(&root, &sha, "m", "00112233aabbccdd").expose_secret(),
        ),
        (
            "license other id",
            *derive::license_key(&root, &sha, "m", "00112233aabbccde").expose_secret(),
        ),
        (
            "license other master sha",
            *derive::license_key(&root, &[0x34; 32], "m", "00112233aabbccdd").expose_secret(),
        ),
        (
            "watermark",
            *derive::watermark_key(&root, &sha, "m").expose_secret(),
        ),
        ("account", *derive::account_kek(&root, "m").expose_secret()),
        ("service x25519", derive::service_x25519(&root).public_key()),
        (
            "service signing",
            *derive::service_signing(&root).seed().expose_secret(),
        ),
        (
            "certificate signing",
            *derive::certificate_signing(&root).seed().expose_secret(),
        ),
        (
            "access token",
            *derive::access_token_key(&root).seed().expose_secret(),
        ),
        (
            "other root",
            *derive::service_signing(&key(0x5f)).seed().expose_secret(),
        ),
    ];
    for (i, (name_a, a)) in outputs.iter().enumerate() {
        for (name_b, b) in outputs.iter().skip(i + 1) {
            assert_ne!(a, b, "{name_a} == {name_b}");
        }
    }
    assert_eq!(derive::service_x25519(&root).public_key(), outputs[5].1);
    assert_eq!(
        derive::service_signing(&root).public_key(),
        derive::service_signing(&root).public_key()
    );
    // The service seed is the HKDF output itself (format §8.4).
    let mut seed = [0u8; 32];
    Hkdf::<Sha256>::new(None, root.expose_secret())
        .expand(b"service-signing-v1", &mut seed)
        .unwrap();
    assert_eq!(derive::service_signing(&root).seed().expose_secret(), &seed);
}

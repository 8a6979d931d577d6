//! X25519 against Wycheproof and the libsodium low-order blocklist.
//!
//! Policy (shared/vectors/README.md): every case whose shared secret is all-zero is refused
//! with WEAK_KEY, and every other case, "valid" or "acceptable" (twist points, non-canonical
//! u ≥ p, edge-case multiplications), must produce exactly the expected shared secret, since
//! that is the HKDF input of a recipient slot.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

mod common;

use common::{load, tohex, unhex_array, wycheproof_cases};
use iki_crypto::{is_low_order_x25519, open_sealed, seal_to, Error, SecretKey32, X25519Secret};
use serde::Deserialize;

#[derive(Deserialize)]
struct Case {
    #[serde(rename = "tcId")]
    id: u32,
    public: String,
    private: String,
    shared: String,
    result: String,
    flags: Vec<String>,
}

#[test]
fn wycheproof_x25519() {
    let (mut matched, mut refused) = (0, 0);
    for case in &wycheproof_cases::<Case>("wycheproof/x25519_test.json") {
        assert!(
            case.result == "valid" || case.result == "acceptable",
            "tcId {}",
            case.id
        );
        let secret =
            X25519Secret::from_key(SecretKey32::from_bytes(unhex_array(&case.private).unwrap()));
        let public: [u8; 32] = unhex_array(&case.public).unwrap();
        let result = secret.diffie_hellman(&public);
        if case.shared == "00".repeat(32) {
            assert!(
                case.flags.iter().any(|f| f == "ZeroSharedSecret"),
                "tcId {}",
                case.id
            );
            assert_eq!(result.err(), Some(Error::WeakKey), "tcId {}", case.id);
            refused += 1;
        } else {
            let shared = result.unwrap_or_else(|e| panic!("tcId {} refused: {e}", case.id));
            assert_eq!(
                tohex(shared.expose_secret()),
                case.shared,
                "tcId {}",
                case.id
            );
            matched += 1;
        }
    }
    assert_eq!((matched, refused), (487, 31));
}

#[derive(Deserialize)]
struct LowOrderFile {
    points: Vec<LowOrderPoint>,
}

#[derive(Deserialize)]
struct LowOrderPoint {
    u_le_hex: String,
}

/// All 14 encodings are on the blocklist itself (not only caught by the all-zero check),
/// and refused by `diffie_hellman`, `seal_to` and, as an ephemeral key, `open_sealed`.
#[test]
fn low_order_points_refused_everywhere() {
    let file: LowOrderFile = load("x25519-low-order/x25519_low_order_points.json");
    assert_eq!(file.points.len(), 14);
    let secret = X25519Secret::generate().unwrap();
    for point in &file.points {
        let u: [u8; 32] = unhex_array(&point.u_le_hex).unwrap();
        assert!(is_low_order_x25519(&u), "{}", point.u_le_hex);
        assert_eq!(
            secret.diffie_hellman(&u).err(),
            Some(Error::WeakKey),
            "{}",
            point.u_le_hex
        );
        assert_eq!(
            seal_to(&u, b"info", b"aad", b"key").err(),
            Some(Error::WeakKey),
            "{}",
            point.u_le_hex
        );
        let opened = open_sealed(&secret, &u, &[0u8; 24], b"info", b"aad", &[0u8; 48]);
        assert_eq!(opened.err(), Some(Error::WeakKey), "{}", point.u_le_hex);
    }
}

//! Ed25519 strict verification against Wycheproof, ed25519-speccheck and C2SP CCTV.
//!
//! The verifier under test is the whole public path a reader takes:
//! `VerifyingKey::from_bytes` (refuses undecodable, non-canonical and small-order A) then
//! `verify_strict` (refuses S ≥ L, non-canonical or small-order R, and uses the cofactorless
//! equation SB = R + kA). "Accepted" means both succeeded.
//!
//! Edge-case flags strict verification must reject (C2SP CCTV `ed25519/README.md` flag
//! names; ed25519-speccheck conditions in brackets):
//! - `low_order_A` [small-order A, speccheck 0, 1]: refused when the key is parsed (WEAK_KEY);
//! - `non_canonical_A` [speccheck 10, 11]: refused when the key is parsed (WEAK_KEY);
//! - `low_order_R` [small-order R, speccheck 0, 2]: refused by `verify_strict`;
//! - `non_canonical_R` [speccheck 8, 9]: refused by `verify_strict` (byte comparison of R);
//! - `low_order_residue` [cofactored-only equation, speccheck 4, 5]: refused, the equation
//!   is cofactorless;
//! - S ≥ L [speccheck 6, 7]: refused.
//!
//! Accepted: mixed-order A and R whose low-order parts cancel (`low_order_component_A/R`
//! alone, speccheck 3), which no blocklist can detect.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

mod common;

use common::{load, unhex, unhex_array};
use iki_crypto::{Error, VerifyingKey};
use serde::Deserialize;

/// Runs the full strict path. `Err` carries the error of whichever step refused.
fn strict(key: &[u8], msg: &[u8], sig: &[u8]) -> Result<(), Error> {
    let key: [u8; 32] = key.try_into().map_err(|_| Error::InvalidLength {
        what: "key",
        len: key.len(),
    })?;
    let sig: [u8; 64] = sig.try_into().map_err(|_| Error::InvalidLength {
        what: "sig",
        len: sig.len(),
    })?;
    VerifyingKey::from_bytes(&key)?.verify_strict(msg, &sig)
}

#[derive(Deserialize)]
struct WycheproofFile {
    #[serde(rename = "testGroups")]
    groups: Vec<WycheproofGroup>,
}

#[derive(Deserialize)]
struct WycheproofGroup {
    #[serde(rename = "publicKey")]
    public_key: WycheproofKey,
    tests: Vec<WycheproofCase>,
}

#[derive(Deserialize)]
struct WycheproofKey {
    pk: String,
}

#[derive(Deserialize)]
struct WycheproofCase {
    #[serde(rename = "tcId")]
    id: u32,
    msg: String,
    sig: String,
    result: String,
}

/// Every Wycheproof case: "valid" verifies, "invalid" (truncated, garbage-padded and
/// malleable signatures, S ≥ L, modified R) is refused. The file has no "acceptable" cases.
#[test]
fn wycheproof_ed25519_strict() {
    let file: WycheproofFile = load("wycheproof/ed25519_test.json");
    let (mut valid, mut invalid) = (0, 0);
    for group in &file.groups {
        let key = unhex(&group.public_key.pk);
        for case in &group.tests {
            let outcome = strict(&key, &unhex(&case.msg), &unhex(&case.sig));
            match case.result.as_str() {
                "valid" => {
                    assert_eq!(outcome, Ok(()), "tcId {}", case.id);
                    valid += 1;
                }
                "invalid" => {
                    assert!(outcome.is_err(), "tcId {} accepted", case.id);
                    invalid += 1;
                }
                other => panic!("tcId {}: unexpected result {other}", case.id),
            }
        }
    }
    assert_eq!((valid, invalid), (88, 63));
}

#[derive(Deserialize)]
struct SpeccheckCase {
    message: String,
    pub_key: String,
    signature: String,
}

/// ed25519-speccheck: strict verification accepts case 3 (mixed-order A and R whose
/// small-order parts cancel) and nothing else. Cases 0, 1 (small A) and 10, 11
/// (non-canonical A) already fail at key parsing with WEAK_KEY; the rest are BAD_SIGNATURE.
#[test]
fn speccheck_only_case_3_is_accepted() {
    let cases: Vec<SpeccheckCase> = load("ed25519-speccheck/cases.json");
    assert_eq!(cases.len(), 12);
    let outcomes: Vec<Result<(), &str>> = cases
        .iter()
        .map(|c| {
            strict(&unhex(&c.pub_key), &unhex(&c.message), &unhex(&c.signature))
                .map_err(|e| e.code())
        })
        .collect();
    let weak = Err("WEAK_KEY");
    let bad = Err("BAD_SIGNATURE");
    assert_eq!(
        outcomes,
        [
            weak,
            weak,
            bad,
            Ok(()),
            bad,
            bad,
            bad,
            bad,
            bad,
            bad,
            weak,
            weak
        ]
    );
}

#[derive(Deserialize)]
struct CctvVector {
    number: u32,
    key: String,
    sig: String,
    msg: String,
    flags: Option<Vec<String>>,
}

/// The flags that make a CCTV vector fail strict verification, and the code expected.
/// `reencoded_k` only ever appears together with a `non_canonical_*` flag, and
/// `low_order_component_*` alone does not make a vector fail (see the module comment).
fn expected_cctv(flags: &[String]) -> Result<(), &'static str> {
    let has = |f: &str| flags.iter().any(|g| g == f);
    if has("low_order_A") || has("non_canonical_A") {
        Err("WEAK_KEY")
    } else if has("low_order_R") || has("non_canonical_R") || has("low_order_residue") {
        Err("BAD_SIGNATURE")
    } else {
        Ok(())
    }
}

/// Every CCTV vector, asserted per flag. Note: CCTV's README says dalek's `verify_strict`
/// rejects all vectors, but dalek 2.2 only refuses purely small-order points: the 42 vectors
/// whose A or R has a low-order component that cancels, plus the one vector with no flags,
/// are accepted, as speccheck case 3 implies. The count pins that down.
#[test]
fn cctv_flags_decide_strict_outcome() {
    let vectors: Vec<CctvVector> = load("cctv-ed25519/ed25519vectors.json");
    assert_eq!(vectors.len(), 914);
    let mut accepted = 0;
    for v in &vectors {
        let flags = v.flags.clone().unwrap_or_default();
        let outcome =
            strict(&unhex(&v.key), v.msg.as_bytes(), &unhex(&v.sig)).map_err(|e| e.code());
        assert_eq!(
            outcome,
            expected_cctv(&flags),
            "vector {} flags {flags:?}",
            v.number
        );
        if outcome.is_ok() {
            accepted += 1;
            assert!(
                flags.iter().all(|f| f.starts_with("low_order_component_")),
                "vector {}",
                v.number
            );
        }
    }
    assert_eq!(accepted, 43);
}

/// The CCTV README's list of low-order edwards25519 encodings: all 14 refused as keys.
#[test]
fn low_order_encodings_are_weak_keys() {
    let encodings = [
        "0000000000000000000000000000000000000000000000000000000000000000",
        "edffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f",
        "0000000000000000000000000000000000000000000000000000000000000080",
        "edffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff",
        "0100000000000000000000000000000000000000000000000000000000000000",
        "0100000000000000000000000000000000000000000000000000000000000080",
        "eeffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f",
        "eeffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff",
        "26e8958fc2b227b045c3f489f2ef98f0d5dfac05d3c63339b13802886d53fc05",
        "26e8958fc2b227b045c3f489f2ef98f0d5dfac05d3c63339b13802886d53fc85",
        "c7176a703d4dd84fba3c0b760d10670f2a2053fa2c39ccc64ec7fd7792ac037a",
        "c7176a703d4dd84fba3c0b760d10670f2a2053fa2c39ccc64ec7fd7792ac03fa",
        "ecffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f",
        "ecffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff",
    ];
    for enc in encodings {
        let key: [u8; 32] = unhex_array(enc).unwrap();
        assert_eq!(VerifyingKey::from_bytes(&key), Err(Error::WeakKey), "{enc}");
    }
}

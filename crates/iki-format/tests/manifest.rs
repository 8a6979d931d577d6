//! Manifest JSON and the rules of docs/format.md section 5.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

mod common;

use common::*;
use iki_format::manifest::{validate_path, LicenseInfo, Role};
use iki_format::{Cipher, Kind, Manifest, Meta};

const SHA: &str = "0000000000000000000000000000000000000000000000000000000000000000";

fn project_json(entries: &str, meta_extra: &str) -> String {
    format!(
        r#"{{"entries":[{entries}],"meta":{{"format":"iki-project","version":1,"name":"n","savedAt":"2024-01-01T00:00:00Z","canvas":{{"width":1,"height":1}},"app":"a"{meta_extra}}}}}"#
    )
}

fn check(json: &str) -> Result<Manifest, String> {
    let m = Manifest::from_json(Kind::Project, json.as_bytes()).map_err(|e| e.to_string())?;
    m.validate(Kind::Project, Cipher::None, 4096)
        .map_err(|e| e.to_string())?;
    Ok(m)
}

#[test]
fn unknown_fields_are_ignored_and_meta_extras_kept() {
    let entry = format!(
        r#"{{"path":"a","type":"t","size":0,"encoding":"stored","sha256":"{SHA}","zz":[1]}}"#
    );
    let m = check(&project_json(&entry, r#","thumbnail":"x""#)).unwrap();
    let Meta::Project(p) = &m.meta else { panic!() };
    assert_eq!(p.extra["thumbnail"], "x");
    let again = Manifest::from_json(Kind::Project, &m.to_json().unwrap()).unwrap();
    assert_eq!(again, m);
}

#[test]
fn shape_errors_are_bad_manifest() {
    let good =
        format!(r#"{{"path":"a","type":"t","size":0,"encoding":"stored","sha256":"{SHA}"}}"#);
    let cases = [
        project_json(&good.replace("stored", "zstd"), ""),
        project_json(
            &good.replace(SHA, &SHA.to_uppercase().replace('0', "A")),
            "",
        ),
        project_json(&good.replace("\"size\":0", "\"size\":-1"), ""),
        project_json(&good.replace("\"size\":0", "\"size\":1.5"), ""),
        project_json(&good.replace("\"size\":0", "\"size\":9007199254740992"), ""),
        project_json(&good.replace(&format!(",\"sha256\":\"{SHA}\""), ""), ""),
        project_json(&format!("{good},{good}"), ""),
        project_json(&good, "").replace("iki-project", "iki-model"),
        project_json(&good, "").replace("\"version\":1", "\"version\":2"),
        project_json(&good, "").replace("2024-01-01T00:00:00Z", "yesterday"),
        project_json(&good, "").replace("\"width\":1", "\"width\":0"),
        project_json(&good.replace('{', "[").replace('}', "]"), ""),
        r#"["entries"]"#.to_owned(),
        "{".to_owned(),
        "\u{feff}{}".to_owned(),
    ];
    for json in cases {
        let err = check(&json).unwrap_err();
        assert!(err.starts_with("bad manifest"), "{json}: {err}");
    }
}

#[test]
fn path_rules() {
    for ok in ["a", "assets/0f", "a/b/c.png", "é/ü", "a..b", ".hidden"] {
        assert_eq!(validate_path(ok), Ok(()), "{ok}");
    }
    for bad in [
        "", "/a", "a/", "a//b", "./a", "a/../b", "..", ".", "a\\b", "a\0b", "a\nb", "a\u{7f}",
        "a\u{85}",
    ] {
        assert!(validate_path(bad).is_err(), "{bad:?}");
    }
}

#[test]
fn model_meta_roles() {
    let mut m = manifest(Kind::Model, Vec::new());
    assert!(m.validate(Kind::Model, Cipher::None, 4096).is_ok());
    assert!(
        m.validate(Kind::Project, Cipher::None, 4096).is_err(),
        "meta of the other kind"
    );
    let Meta::Model(meta) = &mut m.meta else {
        panic!()
    };
    let license = LicenseInfo {
        id: "00112233aabbccdd".into(),
        master_id: "m".into(),
        licensee: "acct_b".into(),
        licensee_name: "B".into(),
        seller: "acct_s".into(),
        issued_at: 1,
    };
    meta.license = Some(license.clone());
    assert!(
        m.validate(Kind::Model, Cipher::None, 4096).is_err(),
        "a master carries no license"
    );
    let Meta::Model(meta) = &mut m.meta else {
        panic!()
    };
    meta.role = Role::License;
    assert!(m.validate(Kind::Model, Cipher::None, 4096).is_ok());
    let Meta::Model(meta) = &mut m.meta else {
        panic!()
    };
    meta.license = Some(LicenseInfo {
        id: "00112233AABBCCDD".into(),
        ..license
    });
    assert!(
        m.validate(Kind::Model, Cipher::None, 4096).is_err(),
        "license id is lowercase hex"
    );
    let Meta::Model(meta) = &mut m.meta else {
        panic!()
    };
    meta.license = None;
    assert!(
        m.validate(Kind::Model, Cipher::None, 4096).is_err(),
        "a license copy needs license"
    );
    let json = serde_json::to_string(&manifest(Kind::Model, Vec::new())).unwrap();
    assert!(
        json.contains(r#""role":"master""#) && !json.contains("license"),
        "{json}"
    );
}

#[test]
fn sha256_optional_only_when_encrypted() {
    let mut m = manifest(
        Kind::Project,
        vec![iki_format::manifest_entry_for(
            "a",
            "t",
            iki_format::Encoding::Stored,
            b"",
        )],
    );
    m.entries[0].sha256 = None;
    assert!(m
        .validate(Kind::Project, Cipher::XChaCha20Poly1305, 4096)
        .is_ok());
    assert!(m.validate(Kind::Project, Cipher::None, 4096).is_err());
}

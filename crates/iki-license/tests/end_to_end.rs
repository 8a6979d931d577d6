//! End to end: a synthetic model package becomes a master, passes the upload check, and
//! yields license copies that players open after key release; the textures carry the
//! license watermark and nothing else changes.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

mod common;

use common::*;
use iki_crypto::hash::sha256;
use iki_format::manifest::Role;
use iki_format::{Encoding, Kind, Meta, SignerKind, Slot, Unlock};
use iki_license::{license_id_hex, MasterRef};

const LICENSE_A: u64 = 0x0123_4567_89AB_CDEF;
const LICENSE_B: u64 = 0xFEDC_BA98_7654_3210;

#[test]
fn master_to_copies_to_players() {
    let service = service();
    let package = package();
    let master = write_master(&package, MasterSpec::good(&service));

    // Upload check, pushed in uneven pieces.
    let mut verifier = service.master_verifier();
    for piece in master.chunks(77_777) {
        verifier.push(piece).unwrap();
    }
    let summary = verifier.finish().unwrap();
    assert_eq!(summary.sha256, sha256(&master));
    assert_eq!(summary.size, master.len() as u64);
    assert_eq!(summary.name, "Synthetic model");
    assert_eq!(summary.created_ms, CREATED_MS);
    assert_eq!(summary.entries.len(), package.files.len());
    let textures: Vec<_> = summary
        .textures
        .iter()
        .map(|t| (t.path.as_str(), t.width, t.height))
        .collect();
    assert_eq!(
        textures,
        [(ATLAS_PATH, 1988, 1470), (SYNTHETIC_PATH, 512, 640)]
    );
    assert_eq!(summary.signer_public, seller_key().public_key());
    assert_eq!(summary.signer.kind, SignerKind::Account);
    assert!(summary.certificate.is_some());
    assert_eq!(summary.certified_account.as_deref(), Some(SELLER));

    let master_ref = MasterRef {
        id: "mst_synthetic".into(),
        sha256: summary.sha256,
    };
    let copy_a = copy(&service, &master_ref, &master, &license(LICENSE_A)).unwrap();
    let copy_a_again = copy(&service, &master_ref, &master, &license(LICENSE_A)).unwrap();
    let copy_b = copy(&service, &master_ref, &master, &license(LICENSE_B)).unwrap();
    assert!(
        copy_a == copy_a_again,
        "two downloads of one license are byte-identical"
    );
    assert!(copy_a != copy_b, "copies of two licenses differ");

    for (id, copy) in [(LICENSE_A, &copy_a), (LICENSE_B, &copy_b)] {
        check_copy(&service, &master_ref, &package, id, copy);
    }
}

fn check_copy(
    service: &iki_license::ServiceKeys,
    master_ref: &MasterRef,
    package: &Package,
    id: u64,
    copy: &[u8],
) {
    // Structure, as any reader sees it: one license slot, HEAD fixed by the license.
    let opened = iki_format::read_all(Kind::Model, copy, Unlock::None).unwrap();
    assert_eq!(
        opened.slots,
        [Slot::License {
            service: SERVICE_ID.into(),
            license_id: license_id_hex(id),
            master_id: master_ref.id.clone()
        }]
    );
    assert_eq!(opened.header.created_ms, license(id).issued_at_ms);
    assert_eq!(opened.header.chunk_size, CHUNK_SIZE);

    let played = play(service, master_ref, id, copy).unwrap();
    assert_eq!(played.verified.public_key, service.signing_public());
    assert_eq!(played.verified.signer.kind, SignerKind::Service);
    assert_eq!(played.verified.signer.service.as_deref(), Some(SERVICE_ID));
    let Meta::Model(meta) = &played.manifest.meta else {
        panic!("model meta")
    };
    assert_eq!(meta.role, Role::License);
    let license_object = meta.license.as_ref().unwrap();
    assert_eq!(license_object.id, license_id_hex(id));
    assert_eq!(license_object.master_id, master_ref.id);
    assert_eq!(license_object.licensee, license(id).licensee);
    assert_eq!(license_object.issued_at, license(id).issued_at_ms);

    for ((master_entry, master_bytes), (copy_entry, copy_bytes)) in package
        .files
        .iter()
        .zip(played.manifest.entries.iter().zip(&played.entries))
    {
        assert_eq!(copy_entry.path, master_entry.path);
        assert_eq!(copy_entry.size, master_entry.size);
        if master_entry.encoding != Encoding::Rgba8 {
            assert_eq!(copy_entry, master_entry);
            assert!(
                copy_bytes == master_bytes,
                "{} is byte-identical",
                master_entry.path
            );
            continue;
        }
        assert_eq!(
            copy_entry.sha256, None,
            "watermarked entries carry no sha256"
        );
        let meta = copy_entry.meta.as_ref().unwrap();
        let (w, h) = (meta.width.unwrap(), meta.height.unwrap());
        check_only_watermark(master_bytes, copy_bytes);
        let detection = service.identify(master_ref, w, h, copy_bytes).unwrap();
        assert_eq!(
            detection.found,
            Some(id),
            "{} names license {id:x}: {detection:?}",
            copy_entry.path
        );
        let untouched = service.identify(master_ref, w, h, master_bytes).unwrap();
        assert_eq!(untouched.found, None);
    }
}

/// The copy differs from the master only by the watermark: alpha unchanged, pixels with
/// alpha < 8 unchanged, |delta| <= 2 on R, G, B, and some pixels actually moved.
fn check_only_watermark(master: &[u8], copy: &[u8]) {
    assert_eq!(master.len(), copy.len());
    let mut moved = 0usize;
    for (m, c) in master.chunks_exact(4).zip(copy.chunks_exact(4)) {
        assert_eq!(m[3], c[3], "alpha unchanged");
        if m[3] < 8 {
            assert_eq!(m, c, "invisible pixels unchanged");
            continue;
        }
        for k in 0..3 {
            assert!(m[k].abs_diff(c[k]) <= 2);
        }
        moved += usize::from(m != c);
    }
    assert!(
        moved > master.len() / 4 / 10,
        "the mark is present ({moved} pixels moved)"
    );
}

#[test]
fn certificate_verifies_with_the_format_parser() {
    let service = service();
    let subject = seller_key().public_key();
    let bytes = service
        .certify_signing_key(&subject, SELLER, 1000, 2000)
        .unwrap();
    let cert = iki_format::certificate::KeyCertificate::parse(&bytes).unwrap();
    assert_eq!(cert.account_id, SELLER);
    assert_eq!(cert.issuer_key, service.certificate_public());
    cert.verify_for(&subject, 1500, &service.certificate_public())
        .unwrap();
    assert_eq!(
        cert.verify_for(&subject, 2000, &service.certificate_public())
            .unwrap_err()
            .code(),
        "BAD_CERTIFICATE"
    );
    assert!(
        cert.verify_for(&subject, 1500, &service.signing_public())
            .is_err(),
        "only the certificate key issues"
    );
}

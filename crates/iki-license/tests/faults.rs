//! Faults: every master that is not a sound master for this service is refused by the
//! upload check with a typed error, a copier notices a master that is not the recorded one,
//! and sealed keys open only for their license and player.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

mod common;

use std::sync::OnceLock;

use common::*;
use iki_crypto::hash::sha256;
use iki_crypto::{SecretKey32, X25519Secret};
use iki_format::manifest::Role;
use iki_format::{Kind, SignerInfo};
use iki_license::{Error, MasterRef, ServiceKeys};

/// The textures make a master ~12 MB; build the package once.
fn small_package() -> &'static Package {
    static PACKAGE: OnceLock<Package> = OnceLock::new();
    PACKAGE.get_or_init(|| {
        let mut p = package();
        p.files.retain(|(e, _)| e.path != ATLAS_PATH);
        p
    })
}

fn verify(service: &ServiceKeys, bytes: &[u8]) -> Result<iki_license::MasterSummary, Error> {
    let mut verifier = service.master_verifier();
    for piece in bytes.chunks(50_000) {
        verifier.push(piece)?;
    }
    verifier.finish()
}

fn good_master() -> (ServiceKeys, Vec<u8>) {
    let service = service();
    let master = write_master(small_package(), MasterSpec::good(&service));
    (service, master)
}

#[test]
fn sound_small_master_passes() {
    let (service, master) = good_master();
    let summary = verify(&service, &master).unwrap();
    assert_eq!(summary.sha256, sha256(&master));
    assert_eq!(summary.textures.len(), 1);
}

#[test]
fn flipped_bytes_are_refused() {
    let (service, master) = good_master();
    // Positions in HEAD, KEYS, MANI, several DATA chunks and SIGN.
    let step = master.len() / 23;
    for position in (20..master.len())
        .step_by(step)
        .chain([master.len() - 1, master.len() - 70])
    {
        let mut bad = master.clone();
        bad[position] ^= 0x04;
        let err = verify(&service, &bad).unwrap_err();
        assert!(
            iki_format::error::ALL_CODES.contains(&err.code()) || err.code() == "NOT_A_MASTER",
            "byte {position}: {err:?}"
        );
    }
    let mut data_flip = master.clone();
    let middle = master.len() / 2;
    data_flip[middle] ^= 0x80;
    assert_eq!(
        verify(&service, &data_flip).unwrap_err().code(),
        "DECRYPT_FAILED"
    );
    let mut sig_flip = master.clone();
    let last = master.len() - 1;
    sig_flip[last] ^= 1;
    assert_eq!(
        verify(&service, &sig_flip).unwrap_err().code(),
        "BAD_SIGNATURE"
    );
}

/// Every truncation and every single-bit flip of a small master is refused, never accepted
/// and never a panic (STYLE.md "Robustness").
#[test]
fn every_truncation_and_bit_flip_of_a_tiny_master_is_refused() {
    let service = service();
    let master = write_master_with_chunk_size(&tiny_package(), MasterSpec::good(&service), 4096);
    assert!(master.len() < 4000, "{} bytes", master.len());
    assert_eq!(verify(&service, &master).unwrap().textures.len(), 1);
    for len in 0..master.len() {
        assert!(
            verify(&service, &master[..len]).is_err(),
            "truncated to {len}"
        );
    }
    let mut flipped = master.clone();
    for bit in 0..master.len() * 8 {
        flipped[bit / 8] ^= 1 << (bit % 8);
        assert!(verify(&service, &flipped).is_err(), "bit {bit} flipped");
        flipped[bit / 8] ^= 1 << (bit % 8);
    }
}

#[test]
fn truncated_masters_are_refused() {
    let (service, master) = good_master();
    for len in [0, 11, 100, master.len() / 2, master.len() - 1] {
        let err = verify(&service, &master[..len]).unwrap_err();
        assert_eq!(err.code(), "TRUNCATED", "length {len}");
    }
    let mut longer = master.clone();
    longer.push(0);
    assert_eq!(
        verify(&service, &longer).unwrap_err().code(),
        "TRAILING_BYTES"
    );
}

#[test]
fn files_that_are_not_masters_are_refused() {
    let service = service();
    let spec = || MasterSpec::good(&service);

    let project = write_master(
        small_package(),
        MasterSpec {
            kind: Kind::Project,
            ..spec()
        },
    );
    assert_eq!(verify(&service, &project).unwrap_err().code(), "WRONG_KIND");

    let license_role = write_master(
        small_package(),
        MasterSpec {
            role: Role::License,
            ..spec()
        },
    );
    assert_eq!(
        verify(&service, &license_role).unwrap_err(),
        Error::NotAMaster {
            reason: "role is not master"
        }
    );

    let other = X25519Secret::from_key(SecretKey32::from_bytes([0x0E; 32])).public_key();
    let elsewhere = write_master(
        small_package(),
        MasterSpec {
            recipient: Some(other),
            ..spec()
        },
    );
    let err = verify(&service, &elsewhere).unwrap_err();
    assert_eq!(
        err,
        Error::NotAMaster {
            reason: "no recipient slot for this service"
        }
    );

    let plain = write_master(
        small_package(),
        MasterSpec {
            recipient: None,
            ..spec()
        },
    );
    assert_eq!(
        verify(&service, &plain).unwrap_err(),
        Error::NotAMaster {
            reason: "the file is not encrypted; a master must be"
        }
    );
}

#[test]
fn a_license_copy_is_not_a_master() {
    let (service, master) = good_master();
    let master_ref = MasterRef {
        id: "m1".into(),
        sha256: sha256(&master),
    };
    let copy = copy(&service, &master_ref, &master, &license(7)).unwrap();
    let err = verify(&service, &copy).unwrap_err();
    assert_eq!(
        err,
        Error::NotAMaster {
            reason: "no recipient slot for this service"
        }
    );
}

#[test]
fn a_device_signed_master_is_not_attributed() {
    let service = service();
    let master = write_master(
        small_package(),
        MasterSpec {
            signer: SignerInfo::device(None),
            ..MasterSpec::good(&service)
        },
    );
    let summary = verify(&service, &master).unwrap();
    assert_eq!(summary.certified_account, None);
    // An account claim whose certificate another service issued is not attributed either.
    let other = ServiceKeys::from_root(SecretKey32::from_bytes([0x01; 32]), SERVICE_ID).unwrap();
    let foreign = MasterSpec {
        recipient: Some(service.x25519_public()),
        ..MasterSpec::good(&other)
    };
    let summary = verify(&service, &write_master(small_package(), foreign)).unwrap();
    assert_eq!(summary.certified_account, None);
}

#[test]
fn copier_refuses_a_master_that_is_not_the_recorded_one() {
    let (service, master) = good_master();
    let mut recorded = sha256(&master);
    recorded[0] ^= 1;
    let master_ref = MasterRef {
        id: "m1".into(),
        sha256: recorded,
    };
    let err = copy(&service, &master_ref, &master, &license(7)).unwrap_err();
    assert_eq!(
        err,
        Error::MasterMismatch {
            reason: "sha256 differs from the recorded master"
        }
    );

    // A tampered master fails while copying or at finish, never yields a whole copy.
    let right = MasterRef {
        id: "m1".into(),
        sha256: sha256(&master),
    };
    let mut bad = master.clone();
    let last = bad.len() - 1;
    bad[last] ^= 1;
    assert_eq!(
        copy(&service, &right, &bad, &license(7))
            .unwrap_err()
            .code(),
        "BAD_SIGNATURE"
    );
    assert_eq!(
        copy(&service, &right, &master[..master.len() - 10], &license(7))
            .unwrap_err()
            .code(),
        "TRUNCATED"
    );
}

#[test]
fn sealed_keys_open_only_for_their_license_and_player() {
    let (service, master) = good_master();
    let master_ref = MasterRef {
        id: "m1".into(),
        sha256: sha256(&master),
    };
    let copy_7 = copy(&service, &master_ref, &master, &license(7)).unwrap();
    assert!(play(&service, &master_ref, 7, &copy_7).is_ok());

    // A key released for license 8 does not open license 7's copy.
    let mut player = iki_license::PlayerSession::new().unwrap();
    let sealed = service
        .seal_license_key(&master_ref, 8, &player.public_key())
        .unwrap();
    player.accept_license_key(8, &sealed).unwrap();
    let mut reader = player.open_reader(None).unwrap();
    reader.push(&copy_7).unwrap();
    reader.finish().unwrap();
    let err = loop {
        match reader.next() {
            Ok(Some(_)) => {}
            Ok(None) => panic!("copy opened with another license's key"),
            Err(e) => break e,
        }
    };
    assert_eq!(err.code(), "KEY_REQUIRED");

    // Sealed to one player, offered to another; for one license id, accepted as another.
    let (first, mut second) = (
        iki_license::PlayerSession::new().unwrap(),
        iki_license::PlayerSession::new().unwrap(),
    );
    let sealed = service
        .seal_license_key(&master_ref, 7, &first.public_key())
        .unwrap();
    assert_eq!(
        second.accept_license_key(7, &sealed).unwrap_err().code(),
        "DECRYPT_FAILED"
    );
    let mut first = first;
    assert_eq!(
        first.accept_license_key(9, &sealed).unwrap_err().code(),
        "DECRYPT_FAILED"
    );

    // A reader that expects this service's signing key refuses a copy signed by another
    // service, even though its key release opens it.
    let other = ServiceKeys::from_root(SecretKey32::from_bytes([0x02; 32]), SERVICE_ID).unwrap();
    let other_master = write_master(small_package(), MasterSpec::good(&other));
    let other_ref = MasterRef {
        id: "m1".into(),
        sha256: sha256(&other_master),
    };
    let other_copy = copy(&other, &other_ref, &other_master, &license(7)).unwrap();
    assert!(play(&other, &other_ref, 7, &other_copy).is_ok());
    let mut player = iki_license::PlayerSession::new().unwrap();
    let sealed = other
        .seal_license_key(&other_ref, 7, &player.public_key())
        .unwrap();
    player.accept_license_key(7, &sealed).unwrap();
    let mut reader = player.open_reader(Some(service.signing_public())).unwrap();
    reader.push(&other_copy).unwrap();
    reader.finish().unwrap();
    let err = loop {
        match reader.next() {
            Ok(Some(iki_format::Event::End(_))) => {
                panic!("accepted a copy signed by another service")
            }
            Ok(Some(_)) => {}
            Ok(None) => panic!("reader stopped without an end"),
            Err(e) => break e,
        }
    };
    assert_eq!(err.code(), "BAD_SIGNATURE");
}

#[test]
fn low_order_player_keys_are_weak() {
    let service = service();
    let master_ref = MasterRef {
        id: "m1".into(),
        sha256: [1; 32],
    };
    let mut order_8 = [0u8; 32];
    order_8.copy_from_slice(&[
        0xe0, 0xeb, 0x7a, 0x7c, 0x3b, 0x41, 0xb8, 0xae, 0x16, 0x56, 0xe3, 0xfa, 0xf1, 0x9f, 0xc4,
        0x6a, 0xda, 0x09, 0x8d, 0xeb, 0x9c, 0x32, 0xb1, 0xfd, 0x86, 0x62, 0x05, 0x16, 0x5f, 0x49,
        0xb8, 0x00,
    ]);
    for key in [[0u8; 32], order_8] {
        assert_eq!(
            service
                .seal_license_key(&master_ref, 1, &key)
                .unwrap_err()
                .code(),
            "WEAK_KEY"
        );
    }
}

/// A file under the license key whose manifest is not this license's copy: written by hand
/// with the license key as content key and a license slot, so only the manifest is wrong.
fn hand_made_copy(master_ref: &MasterRef, license_hex: &str, meta: iki_format::Meta) -> Vec<u8> {
    let root = SecretKey32::from_bytes(FAKE_ROOT);
    let key =
        iki_crypto::derive::license_key(&root, &master_ref.sha256, &master_ref.id, license_hex);
    let package = small_package();
    let manifest = iki_format::Manifest {
        entries: package.files.iter().map(|(e, _)| e.clone()).collect(),
        meta,
    };
    let mut options = iki_format::WriterOptions::new(
        Kind::Model,
        [0x2A; 16],
        CREATED_MS,
        seller_key(),
        SignerInfo::device(None),
    );
    options.chunk_size = CHUNK_SIZE;
    let slot = iki_format::NewSlot::License {
        service: SERVICE_ID.into(),
        license_id: license_hex.into(),
        master_id: master_ref.id.clone(),
    };
    options.protection = iki_format::Protection::Encrypted {
        content_key: key,
        slots: vec![slot],
    };
    let bytes: Vec<&[u8]> = package.files.iter().map(|(_, b)| b.as_slice()).collect();
    iki_format::write_all(options, &manifest, &bytes).unwrap()
}

#[test]
fn the_player_opens_only_encrypted_copies_of_its_own_license() {
    let (service, master) = good_master();
    let master_ref = MasterRef {
        id: "m1".into(),
        sha256: sha256(&master),
    };

    // A plain model file, even one claiming the license role, is never shown as a license copy.
    let plain = write_master(
        small_package(),
        MasterSpec {
            recipient: None,
            role: Role::License,
            ..MasterSpec::good(&service)
        },
    );
    assert_eq!(
        play(&service, &master_ref, 0xaa, &plain)
            .unwrap_err()
            .code(),
        "KEY_REQUIRED"
    );

    // Under the right license key, but the manifest says master, or names another license.
    let hex = iki_license::license_id_hex(7);
    let as_master = hand_made_copy(&master_ref, &hex, model_meta(Role::Master, None));
    assert_eq!(
        play(&service, &master_ref, 7, &as_master)
            .unwrap_err()
            .code(),
        "BAD_MANIFEST"
    );
    let other_license = hand_made_copy(&master_ref, &hex, write_license_meta("0000000000000008"));
    assert_eq!(
        play(&service, &master_ref, 7, &other_license)
            .unwrap_err()
            .code(),
        "BAD_MANIFEST"
    );
    // The same file naming its own license gets past the manifest (and fails only on the
    // signer, which is not the service).
    let own = hand_made_copy(&master_ref, &hex, write_license_meta(&hex));
    assert_eq!(
        play(&service, &master_ref, 7, &own).unwrap_err().code(),
        "BAD_SIGNATURE"
    );
}

fn write_license_meta(id: &str) -> iki_format::Meta {
    let license = iki_format::manifest::LicenseInfo {
        id: id.into(),
        master_id: "m1".into(),
        licensee: "b".into(),
        licensee_name: "B".into(),
        seller: SELLER.into(),
        issued_at: 1,
    };
    model_meta(Role::License, Some(license))
}

//! One password unlock is bounded: at most `MAX_PASSWORD_SLOTS_TRIED` derivations and
//! `MAX_UNLOCK_ARGON2_KIB_PASSES` of Argon2id work, one derivation per step (docs/format.md
//! section 3). Writers refuse more password slots than readers try.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

mod common;

use common::craft::Parts;
use common::*;
use iki_crypto::Argon2Params;
use iki_format::limits::{MAX_PASSWORD_SLOTS_TRIED, MAX_UNLOCK_ARGON2_KIB_PASSES};
use iki_format::{Error, Event, Kind, NewSlot};
use zeroize::Zeroizing;

fn password(text: &str) -> NewSlot {
    NewSlot::Password {
        password: Zeroizing::new(text.as_bytes().to_vec()),
        params: TEST_ARGON2,
    }
}

/// The slots of the KEYS chunk of `file`, as (type, body) pairs.
fn slot_bytes(file: &[u8]) -> Vec<Vec<u8>> {
    let keys = &Parts::split(file).chunks[1].1;
    let (mut at, mut out) = (2, Vec::new());
    while at < keys.len() {
        let len = u16::from_le_bytes([keys[at + 1], keys[at + 2]]) as usize;
        out.push(keys[at..at + 3 + len].to_vec());
        at += 3 + len;
    }
    out
}

/// `file` with its KEYS replaced by `slots` (not re-signed: only the unlock is tested).
fn with_slots(file: &[u8], slots: &[Vec<u8>]) -> Vec<u8> {
    let mut parts = Parts::split(file);
    let mut keys = (slots.len() as u16).to_le_bytes().to_vec();
    slots.iter().for_each(|s| keys.extend_from_slice(s));
    parts.chunks[1].1 = keys;
    parts.join()
}

#[test]
fn the_fourth_password_slot_opens_and_each_step_derives_one() {
    let slots = vec![
        password("one"),
        password("two"),
        password("three"),
        password_slot(),
    ];
    let (file, expected) = small_file(Kind::Project, encrypted(slots));
    let mut reader = locked(&file);
    let mut steps = 0;
    while !reader.unlock_password_step(PASSWORD).unwrap() {
        steps += 1;
    }
    assert_eq!(
        steps, 3,
        "three wrong slots, one step each, then the fourth opens"
    );
    let mut entries = Vec::new();
    while let Some(event) = reader.next().unwrap() {
        if let Event::Chunk { data, .. } = event {
            entries.extend_from_slice(&data);
        }
    }
    assert_eq!(entries, expected.concat());
}

#[test]
fn a_fifth_password_slot_is_never_tried() {
    let four = [
        password("one"),
        password("two"),
        password("three"),
        password("four"),
    ];
    let (file, _) = small_file(Kind::Project, encrypted(four.into()));
    let (right, _) = small_file(Kind::Project, encrypted(vec![password_slot()]));
    let mut slots = slot_bytes(&file);
    slots.extend(slot_bytes(&right));
    let file = with_slots(&file, &slots);
    let mut reader = locked(&file);
    let refused = reader.unlock_password(PASSWORD).unwrap_err();
    assert_eq!(
        refused,
        Error::LimitExceeded {
            limit: "MAX_PASSWORD_SLOTS_TRIED",
            value: 5,
            max: MAX_PASSWORD_SLOTS_TRIED.into()
        }
    );
    assert!(
        refused.to_string().contains("5 password slots"),
        "{refused}"
    );
    // The refusal is not final, and a password of the first four still opens its slot.
    reader.unlock_password(b"two").unwrap();
    // 64 slots: still four derivations, the same refusal.
    let mut reader = locked(&with_slots(&file, &vec![slots[0].clone(); 64]));
    let mut steps = 0;
    let refused = loop {
        match reader.unlock_password_step(PASSWORD) {
            Ok(opened) => assert!(!opened),
            Err(e) => break e,
        }
        steps += 1;
    };
    assert_eq!((steps, refused.code()), (4, "LIMIT_EXCEEDED"));
}

#[test]
fn the_budget_leaves_out_a_slot_that_would_pass_it() {
    let (file, _) = small_file(Kind::Project, encrypted(vec![password("cheap")]));
    let cheap = slot_bytes(&file).remove(0);
    // A slot at the ceiling (262144 KiB, 10 passes) after a derived one passes the budget
    // by that one's 8 KiB x 1 pass: refused before any memory is allocated.
    let mut ceiling = cheap.clone();
    ceiling[4..8].copy_from_slice(&262_144u32.to_le_bytes());
    ceiling[8..12].copy_from_slice(&10u32.to_le_bytes());
    let mut reader = locked(&with_slots(&file, &[cheap.clone(), ceiling.clone()]));
    assert_eq!(
        reader.unlock_password(PASSWORD).unwrap_err(),
        Error::LimitExceeded {
            limit: "MAX_UNLOCK_ARGON2_KIB_PASSES",
            value: MAX_UNLOCK_ARGON2_KIB_PASSES + 8,
            max: MAX_UNLOCK_ARGON2_KIB_PASSES
        }
    );
    // 64 such slots: the first cheap one is derived, every ceiling slot is refused unread.
    let mut slots = vec![cheap];
    slots.extend(std::iter::repeat_n(ceiling, 63));
    let started = std::time::Instant::now();
    let mut reader = locked(&with_slots(&file, &slots));
    assert_eq!(
        reader.unlock_password(PASSWORD).unwrap_err().code(),
        "LIMIT_EXCEEDED"
    );
    assert!(started.elapsed().as_secs() < 5);
}

#[test]
fn writers_refuse_what_one_unlock_would_not_try() {
    let five = (0..5).map(|i| password(&format!("p{i}"))).collect();
    let five_slots = options(Kind::Project, 4096, encrypted(five));
    let manifest = iki_format::Manifest {
        entries: Vec::new(),
        meta: meta_for(Kind::Project),
    };
    let err = iki_format::write_all(five_slots, &manifest, &[]).unwrap_err();
    assert_eq!(
        err,
        Error::LimitExceeded {
            limit: "MAX_PASSWORD_SLOTS_TRIED",
            value: 5,
            max: 4
        }
    );
    let heavy = |m_kib, t| NewSlot::Password {
        password: Zeroizing::new(b"x".to_vec()),
        params: Argon2Params { m_kib, t, p: 1 },
    };
    // Two slots whose work passes the budget by one pass of 8 KiB.
    let options = options(
        Kind::Project,
        4096,
        encrypted(vec![heavy(262_144, 10), heavy(8, 1)]),
    );
    let manifest = iki_format::Manifest {
        entries: Vec::new(),
        meta: meta_for(Kind::Project),
    };
    assert_eq!(
        iki_format::write_all(options, &manifest, &[]).unwrap_err(),
        Error::LimitExceeded {
            limit: "MAX_UNLOCK_ARGON2_KIB_PASSES",
            value: MAX_UNLOCK_ARGON2_KIB_PASSES + 8,
            max: MAX_UNLOCK_ARGON2_KIB_PASSES
        }
    );
}

//! The host SHA-256 backend (`iki_crypto::hash::install_host_sha256`): digests are
//! bit-identical to software SHA-256 (FIPS 180-2 appendix B vectors and random lengths
//! across every threshold), short messages and small updates are handled as documented,
//! and a failing host gives `HostHashFailed`, never a wrong digest. The fake host below is
//! `sha2` behind integer handles, with a switch to make any one call fail.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

use std::cell::{Cell, RefCell};
use std::collections::HashMap;

use iki_crypto::hash::{
    host_sha256_installed, install_host_sha256, sha256, HostSha256, Sha256, HOST_COALESCE_BYTES,
};
use iki_crypto::Error;
use sha2::Digest;

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Fail {
    Never,
    Start,
    /// The n-th update call (0-based) fails.
    Update(usize),
    Fork,
    Finish,
    /// finish returns the digest of something else: must not happen; used to prove the
    /// comparison below can fail.
    WrongDigest,
}

thread_local! {
    static STATES: RefCell<HashMap<u32, sha2::Sha256>> = RefCell::new(HashMap::new());
    static NEXT: Cell<u32> = const { Cell::new(1) };
    static FAIL: Cell<Fail> = const { Cell::new(Fail::Never) };
    static UPDATES: RefCell<Vec<usize>> = const { RefCell::new(Vec::new()) };
    static STARTS: Cell<usize> = const { Cell::new(0) };
}

fn new_handle(state: sha2::Sha256) -> u32 {
    let handle = NEXT.with(|n| {
        let h = n.get();
        n.set(h + 1);
        h
    });
    STATES.with(|s| s.borrow_mut().insert(handle, state));
    handle
}

fn start() -> Result<u32, Error> {
    STARTS.with(|s| s.set(s.get() + 1));
    if FAIL.with(Cell::get) == Fail::Start {
        return Err(Error::HostHashFailed);
    }
    Ok(new_handle(sha2::Sha256::new()))
}

fn update(handle: u32, bytes: &[u8]) -> Result<(), Error> {
    let n = UPDATES.with(|u| {
        u.borrow_mut().push(bytes.len());
        u.borrow().len() - 1
    });
    if FAIL.with(Cell::get) == Fail::Update(n) {
        return Err(Error::HostHashFailed);
    }
    STATES
        .with(|s| s.borrow_mut().get_mut(&handle).map(|h| h.update(bytes)))
        .ok_or(Error::HostHashFailed)
}

fn fork(handle: u32) -> Result<u32, Error> {
    if FAIL.with(Cell::get) == Fail::Fork {
        return Err(Error::HostHashFailed);
    }
    let copy = STATES
        .with(|s| s.borrow().get(&handle).cloned())
        .ok_or(Error::HostHashFailed)?;
    Ok(new_handle(copy))
}

fn finish(handle: u32) -> Result<[u8; 32], Error> {
    let state = STATES
        .with(|s| s.borrow_mut().remove(&handle))
        .ok_or(Error::HostHashFailed)?;
    match FAIL.with(Cell::get) {
        Fail::Finish => Err(Error::HostHashFailed),
        Fail::WrongDigest => Ok(sha2::Sha256::digest(b"something else").into()),
        _ => Ok(state.finalize().into()),
    }
}

fn release(handle: u32) {
    STATES.with(|s| s.borrow_mut().remove(&handle));
}

fn install(min_bytes: usize, fail: Fail) {
    FAIL.with(|f| f.set(fail));
    UPDATES.with(|u| u.borrow_mut().clear());
    STARTS.with(|s| s.set(0));
    install_host_sha256(Some(HostSha256 {
        start,
        update,
        fork,
        finish,
        release,
        min_bytes,
    }));
}

fn live_handles() -> usize {
    STATES.with(|s| s.borrow().len())
}

fn hex(d: &[u8]) -> String {
    d.iter().map(|b| format!("{b:02x}")).collect()
}

/// FIPS 180-2 appendix B (B.1, B.2, B.3) and the empty message.
fn fips_vectors() -> Vec<(Vec<u8>, &'static str)> {
    vec![
        (
            Vec::new(),
            "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
        ),
        (
            b"abc".to_vec(),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad",
        ),
        (
            b"abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq".to_vec(),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1",
        ),
        (
            vec![b'a'; 1_000_000],
            "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0",
        ),
    ]
}

/// A small deterministic generator (xorshift64), so a failure can be replayed.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

fn hash_in_pieces(data: &[u8], rng: &mut Rng, max_piece: usize) -> Result<[u8; 32], Error> {
    let mut h = Sha256::new();
    let mut at = 0;
    while at < data.len() {
        let n = (1 + rng.below(max_piece)).min(data.len() - at);
        h.update(&data[at..at + n]);
        at += n;
    }
    h.finalize()
}

#[test]
fn fips_vectors_with_and_without_host() {
    for min_bytes in [None, Some(0), Some(64), Some(4096)] {
        match min_bytes {
            Some(m) => install(m, Fail::Never),
            None => install_host_sha256(None),
        }
        for (message, expected) in fips_vectors() {
            let mut h = Sha256::new();
            h.update(&message);
            assert_eq!(
                hex(&h.finalize().unwrap()),
                expected,
                "min_bytes {min_bytes:?}"
            );
            assert_eq!(hex(&sha256(&message)), expected);
        }
    }
    install_host_sha256(None);
    assert_eq!(live_handles(), 0);
}

#[test]
fn random_lengths_and_pieces_match_software() {
    let mut rng = Rng(0x1234_5678_9abc_def1);
    let data: Vec<u8> = (0..300_000).map(|_| rng.next() as u8).collect();
    let mut checked_host = 0;
    for round in 0..200 {
        let min_bytes = [0, 1, 63, 64, 65, 4096, 100_000][round % 7];
        install(min_bytes, Fail::Never);
        // Lengths around the SHA-256 block, the thresholds and beyond.
        let len = match round % 4 {
            0 => rng.below(130),
            1 => min_bytes.saturating_sub(2) + rng.below(5),
            2 => HOST_COALESCE_BYTES - 3 + rng.below(7),
            _ => rng.below(data.len()),
        };
        let message = &data[..len];
        let max_piece = [1, 7, 64, 5000, 70_000][round % 5];
        let digest = hash_in_pieces(message, &mut rng, max_piece).unwrap();
        assert_eq!(
            digest,
            sha256(message),
            "round {round} len {len} min {min_bytes}"
        );
        if STARTS.with(Cell::get) > 0 {
            checked_host += 1;
        }
        assert_eq!(live_handles(), 0);
    }
    assert!(
        checked_host > 100,
        "only {checked_host} rounds went through the host"
    );
    install_host_sha256(None);
}

#[test]
fn digest_so_far_is_the_prefix_digest_and_hashing_goes_on() {
    for min_bytes in [0, 10, 1 << 20] {
        install(min_bytes, Fail::Never);
        let mut h = Sha256::new();
        h.update(b"abc");
        assert_eq!(h.digest_so_far().unwrap(), sha256(b"abc"));
        h.update(vec![7u8; 100_000]);
        let mut whole = b"abc".to_vec();
        whole.extend(vec![7u8; 100_000]);
        assert_eq!(h.digest_so_far().unwrap(), sha256(&whole));
        assert_eq!(h.finalize().unwrap(), sha256(&whole));
        assert_eq!(live_handles(), 0);
    }
    install_host_sha256(None);
}

#[test]
fn short_messages_stay_in_software_and_small_updates_are_gathered() {
    install(1024, Fail::Never);
    let mut h = Sha256::new();
    h.update([1u8; 1023]);
    assert_eq!(h.finalize().unwrap(), sha256(&[1u8; 1023]));
    assert_eq!(
        STARTS.with(Cell::get),
        0,
        "a short message must not reach the host"
    );

    install(0, Fail::Never);
    let mut h = Sha256::new();
    let mut whole = Vec::new();
    for i in 0..1000u32 {
        h.update(i.to_le_bytes());
        whole.extend(i.to_le_bytes());
    }
    h.update(vec![9u8; 65_536]);
    whole.extend(vec![9u8; 65_536]);
    assert_eq!(h.finalize().unwrap(), sha256(&whole));
    let calls = UPDATES.with(|u| u.borrow().clone());
    assert!(
        calls.len() <= 3,
        "4000 bytes in 1000 updates took {} host calls",
        calls.len()
    );
    assert_eq!(calls.iter().sum::<usize>(), whole.len());
    install_host_sha256(None);
}

#[test]
fn a_failing_host_gives_a_typed_error_never_a_digest() {
    let data = vec![5u8; 50_000];
    for fail in [Fail::Start, Fail::Update(0), Fail::Update(3), Fail::Finish] {
        install(0, fail);
        let result = hash_in_pieces(&data, &mut Rng(7), 5000);
        assert_eq!(result, Err(Error::HostHashFailed), "{fail:?}");
        assert_eq!(live_handles(), 0, "{fail:?} leaked a host handle");
    }
    install(0, Fail::Fork);
    let mut h = Sha256::new();
    h.update(&data);
    assert_eq!(h.digest_so_far(), Err(Error::HostHashFailed));
    h.update(b"more");
    assert_eq!(
        h.finalize(),
        Err(Error::HostHashFailed),
        "a failed hasher stays failed"
    );
    assert_eq!(live_handles(), 0);
    install_host_sha256(None);
}

#[test]
fn the_comparison_catches_a_wrong_host_digest() {
    install(0, Fail::WrongDigest);
    let mut h = Sha256::new();
    h.update(b"abc");
    assert_ne!(h.finalize().unwrap(), sha256(b"abc"));
    install_host_sha256(None);
}

#[test]
fn a_dropped_hasher_releases_its_handle_and_removal_affects_only_new_hashers() {
    install(0, Fail::Never);
    let mut running = Sha256::new();
    running.update(vec![1u8; 10_000]);
    {
        let mut dropped = Sha256::new();
        dropped.update(vec![2u8; 10_000]);
    }
    assert_eq!(live_handles(), 1);
    install_host_sha256(None);
    assert!(!host_sha256_installed());
    let starts = STARTS.with(Cell::get);
    let mut soft = Sha256::new();
    soft.update(vec![3u8; 10_000]);
    assert_eq!(soft.finalize().unwrap(), sha256(&[3u8; 10_000]));
    assert_eq!(
        STARTS.with(Cell::get),
        starts,
        "a hasher made after removal used the host"
    );
    assert_eq!(running.finalize().unwrap(), sha256(&[1u8; 10_000]));
    assert_eq!(live_handles(), 0);
}

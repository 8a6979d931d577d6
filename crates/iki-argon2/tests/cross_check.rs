//! Random cross-checks against RustCrypto's `argon2` 0.5 (Argon2id v0x13): many small
//! m/t/p combinations, including p > 1, m not a multiple of 4p, tags of 4 to 200 bytes, and
//! optional secret and associated data.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

use argon2::{Algorithm, Argon2, AssociatedData, ParamsBuilder, Version};
use iki_argon2::{hash, Inputs, Params};
use rand_chacha::ChaCha20Rng;
use rand_core::{RngCore, SeedableRng};

fn reference(params: &Params, inputs: &Inputs<'_>, tag_len: usize) -> Vec<u8> {
    let built = ParamsBuilder::new()
        .m_cost(params.m_kib)
        .t_cost(params.t)
        .p_cost(params.p)
        .output_len(tag_len)
        .data(AssociatedData::new(inputs.ad).unwrap())
        .build()
        .unwrap();
    let argon =
        Argon2::new_with_secret(inputs.secret, Algorithm::Argon2id, Version::V0x13, built).unwrap();
    let mut out = vec![0u8; tag_len];
    argon
        .hash_password_into(inputs.password, inputs.salt, &mut out)
        .unwrap();
    out
}

fn random_bytes(rng: &mut ChaCha20Rng, min: usize, max: usize) -> Vec<u8> {
    let len = min + (rng.next_u32() as usize) % (max - min + 1);
    let mut v = vec![0u8; len];
    rng.fill_bytes(&mut v);
    v
}

#[test]
fn matches_the_argon2_crate() {
    let mut rng = ChaCha20Rng::seed_from_u64(0x1c1_a260);
    for case in 0..300 {
        let p = 1 + rng.next_u32() % 6;
        let m_kib = 8 * p + rng.next_u32() % (200 + 40 * p);
        let t = 1 + rng.next_u32() % 4;
        let tag_len = match case % 4 {
            0 => 32,
            1 => 4 + (rng.next_u32() as usize) % 61,
            2 => 65 + (rng.next_u32() as usize) % 136,
            _ => 64,
        };
        let password = random_bytes(&mut rng, 0, 40);
        let salt = random_bytes(&mut rng, 8, 32);
        let (secret, ad) = if case % 3 == 0 {
            (random_bytes(&mut rng, 0, 32), random_bytes(&mut rng, 0, 32))
        } else {
            (Vec::new(), Vec::new())
        };
        let params = Params { m_kib, t, p };
        let inputs = Inputs {
            password: &password,
            salt: &salt,
            secret: &secret,
            ad: &ad,
        };
        let mut tag = vec![0u8; tag_len];
        hash(&params, &inputs, &mut tag).unwrap();
        assert_eq!(
            tag,
            reference(&params, &inputs, tag_len),
            "case {case}: {params:?}"
        );
    }
}

#[test]
fn larger_memory_crosses_address_blocks() {
    // 1 MiB, 2 lanes: segments of 128 blocks, so the data-independent half uses more than
    // one address block per segment.
    for (m_kib, t, p) in [(1024, 2, 2), (1027, 1, 1), (2048, 3, 3)] {
        let params = Params { m_kib, t, p };
        let inputs = Inputs {
            password: b"password",
            salt: b"somesalt",
            secret: b"",
            ad: b"",
        };
        let mut tag = [0u8; 32];
        hash(&params, &inputs, &mut tag).unwrap();
        assert_eq!(tag.to_vec(), reference(&params, &inputs, 32), "{params:?}");
    }
}

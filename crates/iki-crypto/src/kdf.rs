//! Key derivation: HKDF-SHA256 (RFC 5869) and Argon2id version 0x13 (RFC 9106).
//!
//! HKDF derives every sub-key and service key of docs/format.md (sections 3.3, 4, 8 and 9).
//! Its `info` is given as parts that are concatenated with no separator, exactly as the
//! format writes `label || value`. An empty salt is the RFC 5869 §2.2 default (HashLen zero
//! bytes).
//!
//! Argon2id turns a password into the key-encryption key of a password slot (format §3.1):
//! 32-byte output, no secret, no associated data. The cost ceilings (format §10) are the
//! caller's job, checked before calling; this function only refuses parameters the algorithm
//! cannot run with, and reserves its memory fallibly so that an impossible allocation is an
//! error, not an abort.
//!
//! Two implementations give the same bytes: on wasm32 our `iki-argon2`, whose simd128
//! compression function takes about a quarter less time than RustCrypto's `argon2` (which
//! has no wasm32 SIMD backend) at the 64 MiB / t = 3 default in V8; natively RustCrypto's
//! `argon2`, which is faster than `iki-argon2`'s portable scalar code on x86_64.
//! `iki-argon2`'s tests cross-check the two, and the TypeScript suite checks the WASM build
//! against tags pinned from the native one.
//!
//! Zeroization: HKDF's pseudorandom key lives inside `hkdf::Hkdf`, whose HMAC state is
//! dropped when the function returns; the output is a [`SecretKey32`] (zeroized on drop)
//! or the caller's buffer. Argon2id's working memory (which is derived from the password)
//! is zeroized before it is freed (here natively, inside `iki_argon2::hash` on wasm32), and
//! its output is a [`SecretKey32`].

use hkdf::Hkdf;
use sha2::Sha256;
use zeroize::Zeroizing;

use crate::error::Error;
use crate::secret::{SecretKey32, SECRET_KEY_BYTES};

/// The longest HKDF-SHA256 output, 255 · HashLen bytes (RFC 5869 §2.3).
pub const HKDF_SHA256_MAX_OUTPUT_BYTES: usize = 255 * 32;

/// HKDF-SHA256 with a 32-byte output. `info` parts are concatenated with no separator.
#[must_use]
pub fn hkdf_sha256(ikm: &[u8], salt: &[u8], info: &[&[u8]]) -> SecretKey32 {
    let mut okm = Zeroizing::new([0u8; SECRET_KEY_BYTES]);
    // Expansion fails only for outputs above 255 · 32 bytes (RFC 5869 §2.3); 32 bytes is one
    // block, so the result is always Ok.
    let _always_ok = Hkdf::<Sha256>::new(Some(salt), ikm).expand_multi_info(info, &mut okm[..]);
    SecretKey32::from_bytes(*okm)
}

/// HKDF-SHA256 filling `out` (0 to 8160 bytes). A longer `out` is [`Error::InvalidLength`]
/// and is left untouched.
pub fn hkdf_sha256_into(
    ikm: &[u8],
    salt: &[u8],
    info: &[&[u8]],
    out: &mut [u8],
) -> Result<(), Error> {
    if out.len() > HKDF_SHA256_MAX_OUTPUT_BYTES {
        return Err(Error::InvalidLength {
            what: "hkdf output",
            len: out.len(),
        });
    }
    Hkdf::<Sha256>::new(Some(salt), ikm)
        .expand_multi_info(info, out)
        .map_err(|_| Error::InvalidLength {
            what: "hkdf output",
            len: out.len(),
        })
}

/// Argon2id cost parameters, as stored in a password slot (format §3.1).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Argon2Params {
    /// Memory in KiB (`m` in RFC 9106 §3.1); at least `8 · p`.
    pub m_kib: u32,
    /// Number of passes (`t`); at least 1.
    pub t: u32,
    /// Degree of parallelism, i.e. lanes (`p`); 1 to 2^24 − 1. Lanes are computed one after
    /// another here: the result is the same, only slower.
    pub p: u32,
}

/// The largest `p` RFC 9106 §3.1 allows.
const ARGON2_MAX_P: u32 = (1 << 24) - 1;

/// Argon2id v0x13 with a 32-byte output, no secret and no associated data.
///
/// Salt must be 8 bytes or longer (RFC 9106 §3.1) and the password shorter than 4 GiB, else
/// [`Error::InvalidLength`]. Parameters the algorithm refuses, and memory that cannot be
/// reserved, are [`Error::KdfParamsRefused`].
pub fn argon2id(password: &[u8], salt: &[u8], params: &Argon2Params) -> Result<SecretKey32, Error> {
    let refused = Error::KdfParamsRefused {
        m_kib: params.m_kib,
        t: params.t,
        p: params.p,
    };
    if salt.len() < iki_argon2::MIN_SALT_BYTES || u32::try_from(salt.len()).is_err() {
        return Err(Error::InvalidLength {
            what: "argon2 salt",
            len: salt.len(),
        });
    }
    if u32::try_from(password.len()).is_err() {
        return Err(Error::InvalidLength {
            what: "argon2 password",
            len: password.len(),
        });
    }
    // Checked here, in u64, because `argon2::Params::new` computes `8 · p` in u32 and would
    // overflow for a hostile `p` before it reaches its own range check.
    if params.p == 0 || params.p > ARGON2_MAX_P || u64::from(params.m_kib) < 8 * u64::from(params.p)
    {
        return Err(refused);
    }
    let mut okm = Zeroizing::new([0u8; SECRET_KEY_BYTES]);
    argon2id_into(password, salt, params, &mut okm).map_err(|()| refused)?;
    Ok(SecretKey32::from_bytes(*okm))
}

/// Argon2id with checked lengths into `out`; `Err(())` for refused parameters or memory
/// that cannot be reserved (an infallible `vec!` would abort the WASM module instead).
#[cfg(target_arch = "wasm32")]
fn argon2id_into(
    password: &[u8],
    salt: &[u8],
    params: &Argon2Params,
    out: &mut [u8; SECRET_KEY_BYTES],
) -> Result<(), ()> {
    let params = iki_argon2::Params {
        m_kib: params.m_kib,
        t: params.t,
        p: params.p,
    };
    let inputs = iki_argon2::Inputs {
        password,
        salt,
        secret: &[],
        ad: &[],
    };
    // Reserves fallibly and wipes its blocks before freeing them, on success and failure.
    iki_argon2::hash(&params, &inputs, &mut out[..]).map_err(|_| ())
}

/// Argon2id with checked lengths into `out` (RustCrypto's `argon2`); `Err(())` for refused
/// parameters or memory that cannot be reserved.
#[cfg(not(target_arch = "wasm32"))]
fn argon2id_into(
    password: &[u8],
    salt: &[u8],
    params: &Argon2Params,
    out: &mut [u8; SECRET_KEY_BYTES],
) -> Result<(), ()> {
    use argon2::{Algorithm, Argon2, Block, Params, Version};
    use zeroize::Zeroize;

    let argon_params =
        Params::new(params.m_kib, params.t, params.p, Some(SECRET_KEY_BYTES)).map_err(|_| ())?;
    let block_count = argon_params.block_count();
    let mut blocks: Vec<Block> = Vec::new();
    blocks.try_reserve_exact(block_count).map_err(|_| ())?;
    blocks.resize(block_count, Block::default());
    let result = Argon2::new(Algorithm::Argon2id, Version::V0x13, argon_params)
        .hash_password_into_with_memory(password, salt, &mut out[..], &mut blocks[..]);
    // The blocks hold password-derived state; wipe them on success and on failure alike.
    blocks.iter_mut().for_each(Zeroize::zeroize);
    drop(blocks);
    result.map_err(|_| ())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rfc5869_case_1() {
        // RFC 5869 appendix A.1, truncated to the 32 bytes this function produces.
        let ikm = [0x0b; 22];
        let salt: Vec<u8> = (0u8..=0x0c).collect();
        let info: Vec<u8> = (0xf0u8..=0xf9).collect();
        let okm = hkdf_sha256(&ikm, &salt, &[&info[..4], &info[4..]]);
        let expected = "3cb25f25faacd57a90434f64d0362f2a2d2d0a90cf1a5a4c5db02d56ecc4c5bf";
        let hex: String = okm
            .expose_secret()
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect();
        assert_eq!(hex, expected);
    }

    #[test]
    fn hkdf_into_refuses_above_8160_and_accepts_8160() {
        let mut ok = vec![0u8; HKDF_SHA256_MAX_OUTPUT_BYTES];
        assert_eq!(hkdf_sha256_into(b"k", b"", &[b"i"], &mut ok), Ok(()));
        assert!(ok.iter().any(|&b| b != 0));
        let mut too_long = vec![0u8; HKDF_SHA256_MAX_OUTPUT_BYTES + 1];
        assert_eq!(
            hkdf_sha256_into(b"k", b"", &[b"i"], &mut too_long),
            Err(Error::InvalidLength {
                what: "hkdf output",
                len: 8161
            })
        );
        assert!(too_long.iter().all(|&b| b == 0));
    }

    #[test]
    fn argon2_refuses_bad_params_without_panicking() {
        let salt = [2u8; 16];
        let bad = [
            Argon2Params {
                m_kib: 8,
                t: 1,
                p: 0,
            },
            Argon2Params {
                m_kib: 8,
                t: 0,
                p: 1,
            },
            Argon2Params {
                m_kib: 7,
                t: 1,
                p: 1,
            },
            Argon2Params {
                m_kib: 31,
                t: 1,
                p: 4,
            },
            Argon2Params {
                m_kib: u32::MAX,
                t: 1,
                p: u32::MAX,
            },
            Argon2Params {
                m_kib: 64,
                t: 1,
                p: 1 << 24,
            },
        ];
        for params in bad {
            let err = argon2id(b"pw", &salt, &params).err();
            assert_eq!(
                err,
                Some(Error::KdfParamsRefused {
                    m_kib: params.m_kib,
                    t: params.t,
                    p: params.p
                })
            );
        }
    }

    #[test]
    fn argon2_checks_salt_length() {
        let params = Argon2Params {
            m_kib: 8,
            t: 1,
            p: 1,
        };
        assert_eq!(
            argon2id(b"pw", &[0u8; 7], &params).err(),
            Some(Error::InvalidLength {
                what: "argon2 salt",
                len: 7
            })
        );
        assert!(argon2id(b"pw", &[0u8; 8], &params).is_ok());
    }

    #[test]
    fn argon2_smallest_params_run_and_depend_on_password() -> Result<(), Error> {
        let params = Argon2Params {
            m_kib: 8,
            t: 1,
            p: 1,
        };
        let a = argon2id(b"password", b"somesalt", &params)?;
        let b = argon2id(b"passwore", b"somesalt", &params)?;
        assert_ne!(a.expose_secret(), b.expose_secret());
        Ok(())
    }
}

//! The crate's one error type and its stable codes (docs/format.md section 11).
//!
//! Variants carry only non-secret context. Authentication failures are deliberately coarse:
//! a wrong key, a wrong password and a tampered ciphertext are all [`Error::DecryptFailed`],
//! and every signature failure is [`Error::BadSignature`], so that no caller can leak which
//! check failed. No secret is held here, so nothing needs zeroizing.

use core::fmt;

/// Everything that can go wrong in `iki-crypto`.
#[non_exhaustive]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Error {
    /// Authenticated decryption failed: wrong key, wrong nonce or associated data, or a
    /// modified or truncated ciphertext. Never says which. Code `DECRYPT_FAILED`.
    DecryptFailed,
    /// An Ed25519 signature did not verify strictly, or public-key bytes do not decode to a
    /// curve point at all. Code `BAD_SIGNATURE`.
    BadSignature,
    /// A public key is unusable on purpose: an X25519 low-order point or an all-zero shared
    /// secret, or an Ed25519 key that is of small order or not canonically encoded.
    /// Code `WEAK_KEY`.
    WeakKey,
    /// Argon2id parameters the algorithm cannot run with (for example `p = 0`,
    /// `m_kib < 8·p`), or memory for them could not be reserved. The cost ceilings of
    /// format §3.1 are enforced by the caller. Code `KDF_PARAMS_REFUSED`.
    KdfParamsRefused {
        /// Memory cost in KiB, as requested.
        m_kib: u32,
        /// Number of passes, as requested.
        t: u32,
        /// Number of lanes, as requested.
        p: u32,
    },
    /// An input or output has a length this operation does not accept. Code `INVALID_LENGTH`.
    InvalidLength {
        /// What had the wrong length (for example `"secret key"`, `"hkdf output"`).
        what: &'static str,
        /// The length that was given, in bytes.
        len: usize,
    },
    /// The operating system's random number generator failed. Code `RANDOM_FAILED`.
    RandomFailed,
    /// The host SHA-256 backend (`hash::install_host_sha256`) failed, so the hash has no
    /// digest; it is never replaced by a guess. The boundaries report it as `INVALID_STATE`.
    /// Code `HOST_HASH_FAILED`.
    HostHashFailed,
}

impl Error {
    /// The stable SCREAMING_SNAKE code of this error (docs/format.md section 11).
    #[must_use]
    pub const fn code(&self) -> &'static str {
        match self {
            Self::DecryptFailed => "DECRYPT_FAILED",
            Self::BadSignature => "BAD_SIGNATURE",
            Self::WeakKey => "WEAK_KEY",
            Self::KdfParamsRefused { .. } => "KDF_PARAMS_REFUSED",
            Self::InvalidLength { .. } => "INVALID_LENGTH",
            Self::RandomFailed => "RANDOM_FAILED",
            Self::HostHashFailed => "HOST_HASH_FAILED",
        }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::DecryptFailed => f.write_str("decryption failed"),
            Self::BadSignature => f.write_str("signature or signing key invalid"),
            Self::WeakKey => f.write_str("weak or low-order public key refused"),
            Self::KdfParamsRefused { m_kib, t, p } => {
                write!(
                    f,
                    "argon2id parameters refused (m_kib {m_kib}, t {t}, p {p})"
                )
            }
            Self::InvalidLength { what, len } => {
                write!(f, "invalid length for {what}: {len} bytes")
            }
            Self::RandomFailed => f.write_str("operating system random number generator failed"),
            Self::HostHashFailed => f.write_str("the host sha-256 backend failed"),
        }
    }
}

impl std::error::Error for Error {}

#[cfg(test)]
mod tests {
    use super::Error;

    #[test]
    fn codes_are_stable_and_messages_lowercase() {
        let all = [
            (Error::DecryptFailed, "DECRYPT_FAILED"),
            (Error::BadSignature, "BAD_SIGNATURE"),
            (Error::WeakKey, "WEAK_KEY"),
            (
                Error::KdfParamsRefused {
                    m_kib: 1,
                    t: 2,
                    p: 3,
                },
                "KDF_PARAMS_REFUSED",
            ),
            (
                Error::InvalidLength {
                    what: "secret key",
                    len: 31,
                },
                "INVALID_LENGTH",
            ),
            (Error::RandomFailed, "RANDOM_FAILED"),
            (Error::HostHashFailed, "HOST_HASH_FAILED"),
        ];
        for (err, code) in all {
            assert_eq!(err.code(), code);
            let msg = err.to_string();
            assert!(
                msg.chars().next().is_some_and(|c| c.is_ascii_lowercase()),
                "{msg}"
            );
        }
    }
}

//! The one error type of the container (docs/format.md section 11).
//!
//! Each variant maps onto exactly one stable code; codes never change, messages may.
//! Variants carry only non-secret context: which limit and which value, a chunk or entry
//! position, a short reason. Authentication failures stay coarse on purpose:
//! `DecryptFailed` and `BadSignature` never say which check failed.

use core::fmt;

/// A chunk type as it appeared in the file (four bytes, possibly not ASCII).
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct ChunkType(pub [u8; 4]);

impl fmt::Display for ChunkType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for &b in &self.0 {
            if b.is_ascii_alphanumeric() {
                write!(f, "{}", char::from(b))?;
            } else {
                write!(f, "\\x{b:02x}")?;
            }
        }
        Ok(())
    }
}

impl fmt::Debug for ChunkType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "ChunkType({self})")
    }
}

/// Everything that can go wrong reading or writing a container.
#[non_exhaustive]
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Error {
    /// `BAD_MAGIC`: the input does not start with an iki magic.
    BadMagic,
    /// `WRONG_KIND`: a project file where a model was expected, or the reverse.
    WrongKind,
    /// `UNSUPPORTED_VERSION`: a major version other than 1.
    UnsupportedVersion {
        /// The major version found.
        major: u16,
    },
    /// `TRUNCATED`: the input ended before SIGN was complete.
    Truncated,
    /// `TRAILING_BYTES`: bytes follow SIGN.
    TrailingBytes,
    /// `LIMIT_EXCEEDED`: a length or count is beyond its limit.
    LimitExceeded {
        /// Name of the limit (a constant of [`crate::limits`]).
        limit: &'static str,
        /// The value found.
        value: u64,
        /// The largest (or, for lower bounds, smallest) value allowed.
        max: u64,
    },
    /// `CHUNK_ORDER`: a critical chunk missing, repeated or out of place.
    ChunkOrder {
        /// The chunk missing, or found where it may not stand.
        chunk: ChunkType,
        /// When `chunk` is missing: the chunk found in its place.
        found: Option<ChunkType>,
    },
    /// `UNKNOWN_CRITICAL_CHUNK`: an unknown chunk type with an uppercase first letter.
    UnknownCriticalChunk {
        /// The unknown type.
        chunk: ChunkType,
    },
    /// `MALFORMED_CHUNK`: a chunk's fields do not fit its payload.
    MalformedChunk {
        /// The chunk.
        chunk: ChunkType,
        /// What does not fit.
        reason: &'static str,
    },
    /// `UNSUPPORTED_ALGORITHM`: an unknown cipher, hash, signature or KDF identifier.
    UnsupportedAlgorithm {
        /// Which identifier (`cipher`, `hash`, `signature`, `kdf`).
        field: &'static str,
        /// The value found.
        value: u8,
    },
    /// `BAD_MANIFEST`: the manifest JSON is invalid or breaks a rule.
    BadManifest {
        /// What is wrong (never contains key material; may quote manifest text).
        reason: String,
        /// The entry at fault, when one is.
        entry: Option<u32>,
    },
    /// `DATA_SEQUENCE`: DATA chunks out of sequence.
    DataSequence {
        /// Entry field of the chunk at fault (or of the missing chunk).
        entry: u32,
        /// Index field of the chunk at fault (or of the missing chunk).
        index: u32,
        /// What is out of sequence.
        reason: &'static str,
    },
    /// `BAD_DATA`: a chunk does not decode to its exact length.
    BadData {
        /// The entry.
        entry: u32,
        /// The chunk index within the entry.
        index: u32,
    },
    /// `HASH_MISMATCH`: a decoded entry does not match its sha256.
    HashMismatch {
        /// The entry.
        entry: u32,
    },
    /// `DECRYPT_FAILED`: an authenticated decryption failed (wrong key or tampering).
    DecryptFailed,
    /// `BAD_SIGNATURE`: the signature or the signing key is invalid.
    BadSignature,
    /// `BAD_CERTIFICATE`: a key certificate is malformed or not valid for this file.
    BadCertificate {
        /// What is wrong.
        reason: &'static str,
    },
    /// `KEY_REQUIRED`: an encrypted file and no usable key was given.
    KeyRequired,
    /// `KDF_PARAMS_REFUSED`: a password slot's cost is beyond the ceilings.
    KdfParamsRefused {
        /// Memory in KiB.
        m_kib: u32,
        /// Passes.
        t: u32,
        /// Lanes.
        p: u32,
    },
    /// `WEAK_KEY`: a low-order X25519 point or an all-zero shared secret.
    WeakKey,
    /// `INVALID_ARGUMENT`: a caller passed a value the API does not accept.
    InvalidArgument {
        /// Which value and why.
        reason: &'static str,
    },
    /// `INVALID_STATE`: an API was called out of order.
    InvalidState {
        /// Which call.
        reason: &'static str,
    },
}

/// Every code [`Error::code`] can return, in the order of docs/format.md section 11.
pub const ALL_CODES: &[&str] = &[
    "BAD_MAGIC",
    "WRONG_KIND",
    "UNSUPPORTED_VERSION",
    "TRUNCATED",
    "TRAILING_BYTES",
    "LIMIT_EXCEEDED",
    "CHUNK_ORDER",
    "UNKNOWN_CRITICAL_CHUNK",
    "MALFORMED_CHUNK",
    "UNSUPPORTED_ALGORITHM",
    "BAD_MANIFEST",
    "DATA_SEQUENCE",
    "BAD_DATA",
    "HASH_MISMATCH",
    "DECRYPT_FAILED",
    "BAD_SIGNATURE",
    "BAD_CERTIFICATE",
    "KEY_REQUIRED",
    "KDF_PARAMS_REFUSED",
    "WEAK_KEY",
    "INVALID_ARGUMENT",
    "INVALID_STATE",
];

impl Error {
    /// The stable code of this error (docs/format.md section 11).
    #[must_use]
    pub fn code(&self) -> &'static str {
        match self {
            Self::BadMagic => "BAD_MAGIC",
            Self::WrongKind => "WRONG_KIND",
            Self::UnsupportedVersion { .. } => "UNSUPPORTED_VERSION",
            Self::Truncated => "TRUNCATED",
            Self::TrailingBytes => "TRAILING_BYTES",
            Self::LimitExceeded { .. } => "LIMIT_EXCEEDED",
            Self::ChunkOrder { .. } => "CHUNK_ORDER",
            Self::UnknownCriticalChunk { .. } => "UNKNOWN_CRITICAL_CHUNK",
            Self::MalformedChunk { .. } => "MALFORMED_CHUNK",
            Self::UnsupportedAlgorithm { .. } => "UNSUPPORTED_ALGORITHM",
            Self::BadManifest { .. } => "BAD_MANIFEST",
            Self::DataSequence { .. } => "DATA_SEQUENCE",
            Self::BadData { .. } => "BAD_DATA",
            Self::HashMismatch { .. } => "HASH_MISMATCH",
            Self::DecryptFailed => "DECRYPT_FAILED",
            Self::BadSignature => "BAD_SIGNATURE",
            Self::BadCertificate { .. } => "BAD_CERTIFICATE",
            Self::KeyRequired => "KEY_REQUIRED",
            Self::KdfParamsRefused { .. } => "KDF_PARAMS_REFUSED",
            Self::WeakKey => "WEAK_KEY",
            Self::InvalidArgument { .. } => "INVALID_ARGUMENT",
            Self::InvalidState { .. } => "INVALID_STATE",
        }
    }

    /// Small `(key, value)` details for the WASM adapter's `details` object. Keys are
    /// camelCase; values are non-secret.
    #[must_use]
    pub fn details(&self) -> Vec<(&'static str, String)> {
        match self {
            Self::UnsupportedVersion { major } => vec![("major", major.to_string())],
            Self::LimitExceeded { limit, value, max } => vec![
                ("limit", (*limit).to_owned()),
                ("value", value.to_string()),
                ("max", max.to_string()),
            ],
            Self::ChunkOrder {
                chunk,
                found: Some(found),
            } => vec![("chunk", chunk.to_string()), ("found", found.to_string())],
            Self::ChunkOrder { chunk, found: None } | Self::UnknownCriticalChunk { chunk } => {
                vec![("chunk", chunk.to_string())]
            }
            Self::MalformedChunk { chunk, reason } => {
                vec![
                    ("chunk", chunk.to_string()),
                    ("reason", (*reason).to_owned()),
                ]
            }
            Self::UnsupportedAlgorithm { field, value } => {
                vec![("field", (*field).to_owned()), ("value", value.to_string())]
            }
            Self::BadManifest { reason, entry } => {
                let mut out = vec![("reason", reason.clone())];
                if let Some(entry) = entry {
                    out.push(("entry", entry.to_string()));
                }
                out
            }
            Self::DataSequence {
                entry,
                index,
                reason,
            } => vec![
                ("entry", entry.to_string()),
                ("index", index.to_string()),
                ("reason", (*reason).to_owned()),
            ],
            Self::BadData { entry, index } => {
                vec![("entry", entry.to_string()), ("index", index.to_string())]
            }
            Self::HashMismatch { entry } => vec![("entry", entry.to_string())],
            Self::KdfParamsRefused { m_kib, t, p } => {
                vec![
                    ("mKib", m_kib.to_string()),
                    ("t", t.to_string()),
                    ("p", p.to_string()),
                ]
            }
            Self::BadCertificate { reason }
            | Self::InvalidArgument { reason }
            | Self::InvalidState { reason } => vec![("reason", (*reason).to_owned())],
            _ => Vec::new(),
        }
    }

    /// A `LimitExceeded` error.
    pub(crate) fn limit(limit: &'static str, value: u64, max: u64) -> Self {
        Self::LimitExceeded { limit, value, max }
    }

    /// A `BadManifest` error.
    pub(crate) fn manifest(reason: impl Into<String>, entry: Option<u32>) -> Self {
        Self::BadManifest {
            reason: reason.into(),
            entry,
        }
    }

    /// A `MalformedChunk` error.
    pub(crate) fn malformed(chunk: [u8; 4], reason: &'static str) -> Self {
        Self::MalformedChunk {
            chunk: ChunkType(chunk),
            reason,
        }
    }

    /// An `InvalidArgument` error.
    pub(crate) fn argument(reason: &'static str) -> Self {
        Self::InvalidArgument { reason }
    }

    /// An `InvalidState` error.
    pub(crate) fn state(reason: &'static str) -> Self {
        Self::InvalidState { reason }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::BadMagic => f.write_str("not an iki file"),
            Self::WrongKind => f.write_str("wrong kind of iki file"),
            Self::UnsupportedVersion { major } => write!(f, "unsupported major version {major}"),
            Self::Truncated => f.write_str("input ended before the signature was complete"),
            Self::TrailingBytes => f.write_str("bytes after the signature chunk"),
            Self::LimitExceeded {
                limit: "MAX_PASSWORD_SLOTS_TRIED",
                value,
                max,
            } => write!(
                f,
                "the file has {value} password slots and a reader tries at most {max} \
                 (max_password_slots_tried)"
            ),
            Self::LimitExceeded {
                limit: "MAX_UNLOCK_ARGON2_KIB_PASSES",
                value,
                max,
            } => write!(
                f,
                "the next password slot would bring this unlock's Argon2id work to {value} \
                 KiB x passes, beyond its budget of {max} (max_unlock_argon2_kib_passes)"
            ),
            Self::LimitExceeded { limit, value, max } => {
                write!(
                    f,
                    "{} is {value}, beyond its limit {max}",
                    limit.to_ascii_lowercase()
                )
            }
            Self::ChunkOrder {
                chunk,
                found: Some(found),
            } => write!(f, "chunk {chunk} missing: found {found} in its place"),
            Self::ChunkOrder { chunk, found: None } => {
                write!(f, "chunk {chunk} repeated or out of place")
            }
            Self::UnknownCriticalChunk { chunk } => write!(f, "unknown critical chunk {chunk}"),
            Self::MalformedChunk { chunk, reason } => {
                write!(f, "malformed chunk {chunk}: {reason}")
            }
            Self::UnsupportedAlgorithm { field, value } => write!(f, "unsupported {field} {value}"),
            Self::BadManifest {
                reason,
                entry: Some(entry),
            } => {
                write!(f, "bad manifest, entry {entry}: {reason}")
            }
            Self::BadManifest {
                reason,
                entry: None,
            } => write!(f, "bad manifest: {reason}"),
            Self::DataSequence {
                entry,
                index,
                reason,
            } => {
                write!(
                    f,
                    "data chunk {index} of entry {entry} out of sequence: {reason}"
                )
            }
            Self::BadData { entry, index } => {
                write!(
                    f,
                    "data chunk {index} of entry {entry} does not decode to its length"
                )
            }
            Self::HashMismatch { entry } => write!(f, "entry {entry} does not match its sha256"),
            Self::DecryptFailed => f.write_str("decryption failed"),
            Self::BadSignature => f.write_str("bad signature"),
            Self::BadCertificate { reason } => write!(f, "bad key certificate: {reason}"),
            Self::KeyRequired => f.write_str("the file is encrypted and no usable key was given"),
            Self::KdfParamsRefused { m_kib, t, p } => {
                write!(
                    f,
                    "password slot cost refused (m_kib {m_kib}, t {t}, p {p})"
                )
            }
            Self::WeakKey => f.write_str("weak x25519 key"),
            Self::InvalidArgument { reason } => write!(f, "invalid argument: {reason}"),
            Self::InvalidState { reason } => write!(f, "invalid state: {reason}"),
        }
    }
}

impl std::error::Error for Error {}

impl From<iki_crypto::Error> for Error {
    /// Passes crypto's shared codes through; its own codes (bad lengths, a failed OS random
    /// source or host SHA-256 backend) become `INVALID_ARGUMENT` and `INVALID_STATE`.
    fn from(error: iki_crypto::Error) -> Self {
        match error {
            iki_crypto::Error::DecryptFailed => Self::DecryptFailed,
            iki_crypto::Error::BadSignature => Self::BadSignature,
            iki_crypto::Error::WeakKey => Self::WeakKey,
            iki_crypto::Error::KdfParamsRefused { m_kib, t, p } => {
                Self::KdfParamsRefused { m_kib, t, p }
            }
            iki_crypto::Error::InvalidLength { .. } => {
                Self::argument("a cryptographic input has the wrong length")
            }
            iki_crypto::Error::HostHashFailed => Self::state("the host sha-256 backend failed"),
            _ => Self::state("the random number generator failed"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn one_of_each() -> Vec<Error> {
        let chunk = ChunkType(*b"DATA");
        vec![
            Error::BadMagic,
            Error::WrongKind,
            Error::UnsupportedVersion { major: 2 },
            Error::Truncated,
            Error::TrailingBytes,
            Error::limit("MAX_HEAD_PAYLOAD_BYTES", 4097, 4096),
            Error::ChunkOrder { chunk, found: None },
            Error::UnknownCriticalChunk { chunk },
            Error::malformed(*b"SIGN", "length"),
            Error::UnsupportedAlgorithm {
                field: "cipher",
                value: 9,
            },
            Error::manifest("x", Some(1)),
            Error::DataSequence {
                entry: 0,
                index: 1,
                reason: "gap",
            },
            Error::BadData { entry: 0, index: 0 },
            Error::HashMismatch { entry: 0 },
            Error::DecryptFailed,
            Error::BadSignature,
            Error::BadCertificate { reason: "expired" },
            Error::KeyRequired,
            Error::KdfParamsRefused {
                m_kib: 1,
                t: 1,
                p: 1,
            },
            Error::WeakKey,
            Error::argument("x"),
            Error::state("x"),
        ]
    }

    #[test]
    fn codes_are_one_to_one_with_all_codes() {
        let codes: Vec<&str> = one_of_each().iter().map(Error::code).collect();
        assert_eq!(codes, ALL_CODES);
    }

    #[test]
    fn display_is_lowercase_and_details_name_the_limit() {
        for error in one_of_each() {
            let text = error.to_string();
            assert!(text.starts_with(|c: char| c.is_ascii_lowercase()), "{text}");
            assert!(!text.ends_with('.'), "{text}");
        }
        let details = Error::limit("MAX_HEAD_PAYLOAD_BYTES", 4097, 4096).details();
        assert_eq!(details[0], ("limit", "MAX_HEAD_PAYLOAD_BYTES".to_owned()));
        assert_eq!(details[1].1, "4097");
        assert_eq!(ChunkType([b'a', 0, b'Z', 0xff]).to_string(), "a\\x00Z\\xff");
        let missing = Error::ChunkOrder {
            chunk: ChunkType(*b"KEYS"),
            found: Some(ChunkType(*b"MANI")),
        };
        assert_eq!(
            missing.to_string(),
            "chunk KEYS missing: found MANI in its place"
        );
        assert_eq!(missing.details()[1], ("found", "MANI".to_owned()));
        for limit in ["MAX_PASSWORD_SLOTS_TRIED", "MAX_UNLOCK_ARGON2_KIB_PASSES"] {
            let text = Error::limit(limit, 9, 4).to_string();
            assert!(text.contains(&limit.to_ascii_lowercase()), "{text}");
        }
    }
}

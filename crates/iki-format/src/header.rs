//! The file preamble (magic and version) and the HEAD chunk (docs/format.md sections 1, 2).

use crate::error::Error;
use crate::limits::{MAX_CHUNK_SIZE_BYTES, MIN_CHUNK_SIZE_BYTES, MIN_HEAD_PAYLOAD_BYTES};

/// Magic of a project file (`.iki`).
pub const MAGIC_PROJECT: [u8; 8] = [0x89, b'I', b'K', b'I', 0x0D, 0x0A, 0x1A, 0x0A];
/// Magic of a protected model file (`.ikm`).
pub const MAGIC_MODEL: [u8; 8] = [0x89, b'I', b'K', b'M', 0x0D, 0x0A, 0x1A, 0x0A];
/// Major version this crate reads and writes.
pub const VERSION_MAJOR: u16 = 1;
/// Minor version this crate writes.
pub const VERSION_MINOR: u16 = 0;
/// Bytes before the first chunk: magic, major, minor.
pub const PREAMBLE_BYTES: usize = 12;
/// Length of the HEAD payload this version writes (all version 1.0 fields).
pub const HEAD_PAYLOAD_BYTES: usize = 32;

/// Which of the two kinds of iki file.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Kind {
    /// A project file (`.iki`).
    Project,
    /// A protected model file (`.ikm`).
    Model,
}

impl Kind {
    /// The eight magic bytes of this kind.
    #[must_use]
    pub fn magic(self) -> [u8; 8] {
        match self {
            Self::Project => MAGIC_PROJECT,
            Self::Model => MAGIC_MODEL,
        }
    }

    /// The other kind.
    #[must_use]
    pub fn other(self) -> Self {
        match self {
            Self::Project => Self::Model,
            Self::Model => Self::Project,
        }
    }
}

/// Checks a prefix of the magic as soon as bytes arrive: `Ok(true)` when all eight bytes
/// are there and match, `Ok(false)` when the prefix still matches but is incomplete.
///
/// # Errors
/// `WRONG_KIND` for the other kind's magic, `BAD_MAGIC` for anything else.
pub fn check_magic(kind: Kind, prefix: &[u8]) -> Result<bool, Error> {
    let n = prefix.len().min(8);
    let head = prefix.get(..n).unwrap_or_default();
    let expected = kind.magic();
    if expected.get(..n) == Some(head) {
        return Ok(n == 8);
    }
    if kind.other().magic().get(..n) == Some(head) {
        // A shorter prefix could still be either magic only up to byte 3.
        return if n >= 4 {
            Err(Error::WrongKind)
        } else {
            Ok(false)
        };
    }
    Err(Error::BadMagic)
}

/// Checks the 12-byte preamble: magic, then major version 1 (any minor).
///
/// # Errors
/// `BAD_MAGIC`, `WRONG_KIND` or `UNSUPPORTED_VERSION`.
pub fn check_preamble(kind: Kind, preamble: &[u8; PREAMBLE_BYTES]) -> Result<u16, Error> {
    check_magic(kind, preamble)?;
    let [.., a, b, c, d] = *preamble;
    let major = u16::from_le_bytes([a, b]);
    if major != VERSION_MAJOR {
        return Err(Error::UnsupportedVersion { major });
    }
    Ok(u16::from_le_bytes([c, d]))
}

/// The preamble a writer of this version emits.
#[must_use]
pub fn preamble(kind: Kind) -> [u8; PREAMBLE_BYTES] {
    let mut out = [0u8; PREAMBLE_BYTES];
    let (magic, version) = out.split_at_mut(8);
    magic.copy_from_slice(&kind.magic());
    let [a, b] = VERSION_MAJOR.to_le_bytes();
    let [c, d] = VERSION_MINOR.to_le_bytes();
    version.copy_from_slice(&[a, b, c, d]);
    out
}

/// Content cipher named in HEAD.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Cipher {
    /// 0: not encrypted.
    None,
    /// 1: XChaCha20-Poly1305 (section 4); KEYS is present.
    XChaCha20Poly1305,
}

/// The fields of HEAD (section 2).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Header {
    /// Which kind of file (from the magic).
    pub kind: Kind,
    /// Minor version from the preamble (readers accept any).
    pub minor: u16,
    /// Content cipher.
    pub cipher: Cipher,
    /// Decoded bytes per DATA chunk, 4096 to 16777216.
    pub chunk_size: u32,
    /// Random per file; binds nonces and slots to this file.
    pub file_id: [u8; 16],
    /// Milliseconds since the Unix epoch.
    pub created_ms: u64,
}

impl Header {
    /// Parses a HEAD payload (its length was checked against the limit before buffering).
    ///
    /// # Errors
    /// `MALFORMED_CHUNK` below 32 bytes, `UNSUPPORTED_ALGORITHM` for an unknown cipher, hash
    /// or signature, `LIMIT_EXCEEDED` for a chunk_size outside its range.
    pub fn parse(kind: Kind, minor: u16, payload: &[u8]) -> Result<Self, Error> {
        let Some(fixed) = payload.first_chunk::<HEAD_PAYLOAD_BYTES>() else {
            return Err(Error::malformed(*b"HEAD", "payload shorter than 32 bytes"));
        };
        let [cipher, hash, signature, _reserved, c0, c1, c2, c3, rest @ ..] = *fixed;
        let cipher = match cipher {
            0 => Cipher::None,
            1 => Cipher::XChaCha20Poly1305,
            value => {
                return Err(Error::UnsupportedAlgorithm {
                    field: "cipher",
                    value,
                })
            }
        };
        if hash != 1 {
            return Err(Error::UnsupportedAlgorithm {
                field: "hash",
                value: hash,
            });
        }
        if signature != 1 {
            return Err(Error::UnsupportedAlgorithm {
                field: "signature",
                value: signature,
            });
        }
        let chunk_size = u32::from_le_bytes([c0, c1, c2, c3]);
        check_chunk_size(chunk_size)?;
        let (file_id, created) = rest.split_at(16);
        let mut id = [0u8; 16];
        id.copy_from_slice(file_id);
        let mut ms = [0u8; 8];
        ms.copy_from_slice(created);
        Ok(Self {
            kind,
            minor,
            cipher,
            chunk_size,
            file_id: id,
            created_ms: u64::from_le_bytes(ms),
        })
    }

    /// The 32-byte HEAD payload of this version.
    #[must_use]
    pub fn to_payload(&self) -> [u8; HEAD_PAYLOAD_BYTES] {
        let mut out = [0u8; HEAD_PAYLOAD_BYTES];
        let cipher = match self.cipher {
            Cipher::None => 0,
            Cipher::XChaCha20Poly1305 => 1,
        };
        let (algorithms, rest) = out.split_at_mut(4);
        algorithms.copy_from_slice(&[cipher, 1, 1, 0]);
        let (size, rest) = rest.split_at_mut(4);
        size.copy_from_slice(&self.chunk_size.to_le_bytes());
        let (id, created) = rest.split_at_mut(16);
        id.copy_from_slice(&self.file_id);
        created.copy_from_slice(&self.created_ms.to_le_bytes());
        out
    }
}

/// Checks a chunk_size against 4096..=16777216.
///
/// # Errors
/// `LIMIT_EXCEEDED` naming the bound that was crossed.
pub fn check_chunk_size(chunk_size: u32) -> Result<(), Error> {
    if chunk_size < MIN_CHUNK_SIZE_BYTES {
        return Err(Error::limit(
            "MIN_CHUNK_SIZE_BYTES",
            chunk_size.into(),
            MIN_CHUNK_SIZE_BYTES.into(),
        ));
    }
    if chunk_size > MAX_CHUNK_SIZE_BYTES {
        return Err(Error::limit(
            "MAX_CHUNK_SIZE_BYTES",
            chunk_size.into(),
            MAX_CHUNK_SIZE_BYTES.into(),
        ));
    }
    Ok(())
}

const _: () = assert!(HEAD_PAYLOAD_BYTES == MIN_HEAD_PAYLOAD_BYTES as usize);

#[cfg(test)]
mod tests {
    use super::*;

    fn header(chunk_size: u32) -> Header {
        Header {
            kind: Kind::Model,
            minor: 0,
            cipher: Cipher::XChaCha20Poly1305,
            chunk_size,
            file_id: [7; 16],
            created_ms: 1_700_000_000_000,
        }
    }

    #[test]
    fn head_round_trips_and_ignores_appended_bytes() {
        let h = header(4096);
        let mut payload = h.to_payload().to_vec();
        assert_eq!(Header::parse(Kind::Model, 0, &payload).unwrap(), h);
        payload.extend_from_slice(&[0xAA; 100]);
        assert_eq!(Header::parse(Kind::Model, 0, &payload).unwrap(), h);
        assert_eq!(
            Header::parse(Kind::Model, 0, &payload[..31])
                .unwrap_err()
                .code(),
            "MALFORMED_CHUNK"
        );
    }

    #[test]
    fn chunk_size_at_and_past_both_bounds() {
        for (size, ok) in [
            (4096, true),
            (4095, false),
            (16_777_216, true),
            (16_777_217, false),
        ] {
            let payload = header(size).to_payload();
            let result = Header::parse(Kind::Model, 0, &payload);
            assert_eq!(result.is_ok(), ok, "{size}");
            if !ok {
                assert_eq!(result.unwrap_err().code(), "LIMIT_EXCEEDED");
            }
        }
    }

    #[test]
    fn unknown_algorithms_are_refused() {
        for (offset, value) in [(0, 2u8), (1, 0), (1, 2), (2, 0), (2, 2)] {
            let mut payload = header(4096).to_payload();
            payload[offset] = value;
            let err = Header::parse(Kind::Model, 0, &payload).unwrap_err();
            assert_eq!(err.code(), "UNSUPPORTED_ALGORITHM");
        }
        let mut payload = header(4096).to_payload();
        payload[3] = 0xFF;
        assert!(
            Header::parse(Kind::Model, 0, &payload).is_ok(),
            "reserved byte is ignored"
        );
    }

    #[test]
    fn magic_and_version() {
        assert_eq!(check_magic(Kind::Project, &MAGIC_PROJECT[..3]), Ok(false));
        assert_eq!(check_magic(Kind::Project, &MAGIC_MODEL[..3]), Ok(false));
        assert_eq!(
            check_magic(Kind::Project, &MAGIC_MODEL[..4]),
            Err(Error::WrongKind)
        );
        assert_eq!(check_magic(Kind::Project, b"PK\x03"), Err(Error::BadMagic));
        assert_eq!(check_magic(Kind::Model, &MAGIC_MODEL), Ok(true));
        let mut pre = preamble(Kind::Project);
        assert_eq!(check_preamble(Kind::Project, &pre), Ok(0));
        pre[10] = 7;
        assert_eq!(
            check_preamble(Kind::Project, &pre),
            Ok(7),
            "any minor is accepted"
        );
        pre[8] = 2;
        assert_eq!(
            check_preamble(Kind::Project, &pre),
            Err(Error::UnsupportedVersion { major: 2 })
        );
        pre[0] = b'{';
        assert_eq!(check_preamble(Kind::Project, &pre), Err(Error::BadMagic));
    }
}

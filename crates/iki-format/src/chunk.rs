//! Chunk framing, chunk types and the ancillary rule (docs/format.md sections 1, 1.1, 6).
//!
//! `chunk = type(4 ASCII) length(u32) payload(length)`. A type is four bytes of
//! `A-Z a-z 0-9`; an uppercase first letter makes it critical, a lowercase first letter
//! ancillary. The length is checked against the type's limit before any payload byte is
//! read or allocated.

use crate::error::Error;
use crate::limits::{
    max_data_payload_bytes, DATA_HEADER_BYTES, MAX_ANCILLARY_PAYLOAD_BYTES, MAX_HEAD_PAYLOAD_BYTES,
    MAX_KEYS_PAYLOAD_BYTES, MAX_MANI_PAYLOAD_BYTES, MAX_SIGN_PAYLOAD_BYTES,
};

/// Bytes of a chunk's type and length fields.
pub const CHUNK_HEADER_BYTES: usize = 8;
/// Type of the HEAD chunk.
pub const HEAD: [u8; 4] = *b"HEAD";
/// Type of the KEYS chunk.
pub const KEYS: [u8; 4] = *b"KEYS";
/// Type of the MANI chunk.
pub const MANI: [u8; 4] = *b"MANI";
/// Type of a DATA chunk.
pub const DATA: [u8; 4] = *b"DATA";
/// Type of the SIGN chunk.
pub const SIGN: [u8; 4] = *b"SIGN";
/// Flags bit 0 of a DATA chunk: the entry's last chunk.
pub const FLAG_LAST: u8 = 1;

/// What a chunk type is to this version.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ChunkClass {
    /// HEAD.
    Head,
    /// KEYS.
    Keys,
    /// MANI.
    Mani,
    /// DATA.
    Data,
    /// SIGN.
    Sign,
    /// A lowercase first letter: skipped (this version knows none).
    Ancillary,
}

/// Classifies a chunk type.
///
/// # Errors
/// `MALFORMED_CHUNK` for a byte outside `A-Z a-z 0-9` or a digit as first byte,
/// `UNKNOWN_CRITICAL_CHUNK` for an unknown uppercase type.
pub fn classify(chunk_type: [u8; 4]) -> Result<ChunkClass, Error> {
    if !chunk_type.iter().all(u8::is_ascii_alphanumeric) {
        return Err(Error::malformed(
            chunk_type,
            "type byte outside A-Z a-z 0-9",
        ));
    }
    let [first, ..] = chunk_type;
    if first.is_ascii_lowercase() {
        return Ok(ChunkClass::Ancillary);
    }
    if !first.is_ascii_uppercase() {
        return Err(Error::malformed(
            chunk_type,
            "type does not start with a letter",
        ));
    }
    match &chunk_type {
        b"HEAD" => Ok(ChunkClass::Head),
        b"KEYS" => Ok(ChunkClass::Keys),
        b"MANI" => Ok(ChunkClass::Mani),
        b"DATA" => Ok(ChunkClass::Data),
        b"SIGN" => Ok(ChunkClass::Sign),
        _ => Err(Error::UnknownCriticalChunk {
            chunk: crate::error::ChunkType(chunk_type),
        }),
    }
}

/// Checks a payload length against its type's limit (section 10), before buffering.
/// `chunk_size` is HEAD's (DATA chunks only follow HEAD).
///
/// # Errors
/// `LIMIT_EXCEEDED` naming the limit.
pub fn check_length(class: ChunkClass, length: u32, chunk_size: u32) -> Result<(), Error> {
    let (name, max) = match class {
        ChunkClass::Head => ("MAX_HEAD_PAYLOAD_BYTES", u64::from(MAX_HEAD_PAYLOAD_BYTES)),
        ChunkClass::Keys => ("MAX_KEYS_PAYLOAD_BYTES", u64::from(MAX_KEYS_PAYLOAD_BYTES)),
        ChunkClass::Mani => ("MAX_MANI_PAYLOAD_BYTES", u64::from(MAX_MANI_PAYLOAD_BYTES)),
        ChunkClass::Data => ("max_data_payload_bytes", max_data_payload_bytes(chunk_size)),
        ChunkClass::Sign => ("MAX_SIGN_PAYLOAD_BYTES", u64::from(MAX_SIGN_PAYLOAD_BYTES)),
        ChunkClass::Ancillary => (
            "MAX_ANCILLARY_PAYLOAD_BYTES",
            u64::from(MAX_ANCILLARY_PAYLOAD_BYTES),
        ),
    };
    if u64::from(length) > max {
        return Err(Error::limit(name, length.into(), max));
    }
    Ok(())
}

/// Splits an 8-byte chunk header into type and length.
#[must_use]
pub fn parse_chunk_header(bytes: &[u8; CHUNK_HEADER_BYTES]) -> ([u8; 4], u32) {
    let [t0, t1, t2, t3, l0, l1, l2, l3] = *bytes;
    ([t0, t1, t2, t3], u32::from_le_bytes([l0, l1, l2, l3]))
}

/// Appends one chunk (type, length, payload) to `out`.
///
/// # Errors
/// `LIMIT_EXCEEDED` when the payload is longer than a u32 can say.
pub fn write_chunk(out: &mut Vec<u8>, chunk_type: [u8; 4], payload: &[u8]) -> Result<(), Error> {
    let length = u32::try_from(payload.len())
        .map_err(|_| Error::limit("chunk length", payload.len() as u64, u32::MAX.into()))?;
    out.reserve(CHUNK_HEADER_BYTES + payload.len());
    out.extend_from_slice(&chunk_type);
    out.extend_from_slice(&length.to_le_bytes());
    out.extend_from_slice(payload);
    Ok(())
}

/// The 9 plaintext bytes at the start of a DATA payload (section 6).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DataHeader {
    /// Entry id (position in the manifest).
    pub entry: u32,
    /// Chunk index within the entry.
    pub index: u32,
    /// Flags byte as found (bit 0: last chunk).
    pub flags: u8,
}

impl DataHeader {
    /// Whether bit 0 (last chunk of the entry) is set.
    #[must_use]
    pub fn last(&self) -> bool {
        self.flags & FLAG_LAST != 0
    }

    /// Parses the first 9 bytes of a DATA payload; returns the header and the data.
    ///
    /// # Errors
    /// `MALFORMED_CHUNK` when the payload is shorter than 9 bytes, `DATA_SEQUENCE` when a
    /// flag bit other than bit 0 is set.
    pub fn parse(payload: &[u8]) -> Result<(Self, &[u8]), Error> {
        let Some((head, data)) = payload.split_first_chunk::<{ DATA_HEADER_BYTES as usize }>()
        else {
            return Err(Error::malformed(DATA, "payload shorter than 9 bytes"));
        };
        let [e0, e1, e2, e3, i0, i1, i2, i3, flags] = *head;
        let header = Self {
            entry: u32::from_le_bytes([e0, e1, e2, e3]),
            index: u32::from_le_bytes([i0, i1, i2, i3]),
            flags,
        };
        if flags & !FLAG_LAST != 0 {
            return Err(Error::DataSequence {
                entry: header.entry,
                index: header.index,
                reason: "reserved flag bit set",
            });
        }
        Ok((header, data))
    }

    /// The 9 header bytes.
    #[must_use]
    pub fn to_bytes(&self) -> [u8; DATA_HEADER_BYTES as usize] {
        let [e0, e1, e2, e3] = self.entry.to_le_bytes();
        let [i0, i1, i2, i3] = self.index.to_le_bytes();
        [e0, e1, e2, e3, i0, i1, i2, i3, self.flags]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classification_follows_the_ancillary_rule() {
        assert_eq!(classify(*b"HEAD"), Ok(ChunkClass::Head));
        assert_eq!(classify(*b"SIGN"), Ok(ChunkClass::Sign));
        assert_eq!(classify(*b"tEXt"), Ok(ChunkClass::Ancillary));
        assert_eq!(classify(*b"zz99"), Ok(ChunkClass::Ancillary));
        assert_eq!(
            classify(*b"HEAd").unwrap_err().code(),
            "UNKNOWN_CRITICAL_CHUNK"
        );
        assert_eq!(
            classify(*b"XTRA").unwrap_err().code(),
            "UNKNOWN_CRITICAL_CHUNK"
        );
        assert_eq!(classify(*b"9ABC").unwrap_err().code(), "MALFORMED_CHUNK");
        assert_eq!(classify(*b"DA A").unwrap_err().code(), "MALFORMED_CHUNK");
        assert_eq!(
            classify([b'D', 0, 0, 0]).unwrap_err().code(),
            "MALFORMED_CHUNK"
        );
    }

    #[test]
    fn every_length_limit_at_and_one_past() {
        let cases = [
            (ChunkClass::Head, 4096u32),
            (ChunkClass::Keys, 65536),
            (ChunkClass::Mani, 8 << 20),
            (ChunkClass::Sign, 65536),
            (ChunkClass::Ancillary, 16 << 20),
            (ChunkClass::Data, 4096 + 4 + 89),
        ];
        for (class, max) in cases {
            assert!(check_length(class, max, 4096).is_ok(), "{class:?}");
            let err = check_length(class, max + 1, 4096).unwrap_err();
            assert_eq!(err.code(), "LIMIT_EXCEEDED", "{class:?}");
        }
        let big = 16 << 20;
        assert!(check_length(ChunkClass::Data, big + (big / 1024) + 89, big).is_ok());
        assert!(check_length(ChunkClass::Data, big + (big / 1024) + 90, big).is_err());
    }

    #[test]
    fn data_header_round_trip_and_flags() {
        let h = DataHeader {
            entry: 3,
            index: 9,
            flags: FLAG_LAST,
        };
        let mut payload = h.to_bytes().to_vec();
        payload.push(0xEE);
        let (parsed, data) = DataHeader::parse(&payload).unwrap();
        assert_eq!(parsed, h);
        assert!(parsed.last());
        assert_eq!(data, &[0xEE]);
        payload[8] = 0b10;
        assert_eq!(
            DataHeader::parse(&payload).unwrap_err().code(),
            "DATA_SEQUENCE"
        );
        assert_eq!(
            DataHeader::parse(&payload[..8]).unwrap_err().code(),
            "MALFORMED_CHUNK"
        );
    }

    #[test]
    fn framing() {
        let mut out = Vec::new();
        write_chunk(&mut out, *b"tEXt", b"hi").unwrap();
        assert_eq!(out, b"tEXt\x02\x00\x00\x00hi");
        let header: [u8; 8] = out[..8].try_into().unwrap();
        assert_eq!(parse_chunk_header(&header), (*b"tEXt", 2));
    }
}

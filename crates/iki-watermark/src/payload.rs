//! The 80-bit payload: a 64-bit license id and its CRC-16 (SPEC "Watermark",
//! docs/watermark.md section 2).
//!
//! The CRC is CRC-16/IBM-3740, better known as CRC-16/CCITT-FALSE: polynomial
//! 0x1021, initial value 0xFFFF, no reflection, no final XOR, check value 0x29B1
//! over the ASCII bytes `123456789` (Greg Cook's CRC catalogue). The non-zero
//! initial value means an all-zero read-out (a blank or flat image) never has a
//! valid CRC, so "no signal" cannot decode as license id 0.

/// Payload length in bits: 64 license-id bits followed by 16 CRC bits.
pub const PAYLOAD_BITS: usize = 80;

/// The payload bytes: the license id big-endian, then its CRC-16 big-endian.
pub(crate) const PAYLOAD_BYTES: usize = PAYLOAD_BITS / 8;

/// CRC-16/IBM-3740 (CCITT-FALSE) of `data`, bitwise. The payload is 8 bytes,
/// so a table buys nothing.
pub(crate) fn crc16(data: &[u8]) -> u16 {
    let mut crc: u16 = 0xFFFF;
    for &byte in data {
        crc ^= u16::from(byte) << 8;
        for _ in 0..8 {
            crc = if crc & 0x8000 != 0 {
                (crc << 1) ^ 0x1021
            } else {
                crc << 1
            };
        }
    }
    crc
}

/// The 10 payload bytes for a license id.
pub(crate) fn payload_bytes(license_id: u64) -> [u8; PAYLOAD_BYTES] {
    let id = license_id.to_be_bytes();
    let crc = crc16(&id).to_be_bytes();
    let mut out = [0u8; PAYLOAD_BYTES];
    for (dst, src) in out.iter_mut().zip(id.iter().chain(crc.iter())) {
        *dst = *src;
    }
    out
}

/// The 80 payload bits for `license_id`, in embedding order.
///
/// Bit `i` is bit `7 - i % 8` (most significant first) of payload byte `i / 8`,
/// so bits 0..64 are the license id from its most significant bit down and bits
/// 64..80 are the CRC. `true` is the bit value 1, embedded with sign +1.
#[must_use]
pub fn payload_bits(license_id: u64) -> [bool; PAYLOAD_BITS] {
    let bytes = payload_bytes(license_id);
    let mut bits = [false; PAYLOAD_BITS];
    for (i, bit) in bits.iter_mut().enumerate() {
        let byte = bytes.get(i / 8).copied().unwrap_or(0);
        *bit = (byte >> (7 - i % 8)) & 1 == 1;
    }
    bits
}

/// Inverse of [`payload_bits`]: the license id if the CRC matches.
pub(crate) fn decode_bits(bits: &[bool; PAYLOAD_BITS]) -> Option<u64> {
    let mut bytes = [0u8; PAYLOAD_BYTES];
    for (i, &bit) in bits.iter().enumerate() {
        if let Some(byte) = bytes.get_mut(i / 8) {
            *byte |= u8::from(bit) << (7 - i % 8);
        }
    }
    let (id, crc) = bytes.split_at(8);
    let id: [u8; 8] = id.try_into().ok()?;
    let crc: [u8; 2] = crc.try_into().ok()?;
    (crc16(&id) == u16::from_be_bytes(crc)).then(|| u64::from_be_bytes(id))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn crc16_ccitt_false_check_value() {
        assert_eq!(crc16(b"123456789"), 0x29B1);
        assert_eq!(crc16(b""), 0xFFFF);
    }

    #[test]
    fn payload_layout_is_id_big_endian_then_crc() {
        let bytes = payload_bytes(0x0123_4567_89AB_CDEF);
        assert_eq!(bytes[..8], [0x01, 0x23, 0x45, 0x67, 0x89, 0xAB, 0xCD, 0xEF]);
        assert_eq!(u16::from_be_bytes([bytes[8], bytes[9]]), crc16(&bytes[..8]));
        let bits = payload_bits(0x8000_0000_0000_0001);
        assert!(bits[0] && !bits[1] && bits[63]);
    }

    #[test]
    fn bits_round_trip_and_any_single_flip_fails_the_crc() {
        for id in [0u64, 1, u64::MAX, 0xDEAD_BEEF_0BAD_F00D] {
            let bits = payload_bits(id);
            assert_eq!(decode_bits(&bits), Some(id));
            for i in 0..PAYLOAD_BITS {
                let mut flipped = bits;
                flipped[i] = !flipped[i];
                assert_eq!(decode_bits(&flipped), None, "id {id:#x} bit {i}");
            }
        }
    }

    #[test]
    fn the_complement_of_a_valid_payload_is_never_valid() {
        // The CRC is affine: crc(!m) = crc(m) ^ 0xA6E1 for 8-byte m, while the
        // complemented CRC is crc(m) ^ 0xFFFF. A shifted or inverted image
        // reads the complement, so this must hold for every id.
        assert_eq!(crc16(&[0xFF; 8]) ^ crc16(&[0; 8]), 0xA6E1);
        for id in [0u64, 5, u64::MAX, 0x1234_5678_9ABC_DEF0] {
            let flipped = payload_bits(id).map(|b| !b);
            assert_eq!(decode_bits(&flipped), None);
        }
    }

    #[test]
    fn all_zero_and_all_one_read_outs_are_not_valid() {
        assert_eq!(decode_bits(&[false; PAYLOAD_BITS]), None);
        assert_eq!(decode_bits(&[true; PAYLOAD_BITS]), None);
    }
}

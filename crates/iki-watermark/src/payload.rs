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

/// How many of the weakest bits a read may flip to reach a valid CRC
/// (docs/watermark.md section 7.3).
///
/// CRC-16/CCITT-FALSE has Hamming distance 4 on an 80-bit payload, so the 8
/// words reached by flipping a subset of 3 fixed positions differ pairwise in
/// at most 3 bits, and at most one of them is valid: the correction is never
/// ambiguous.
pub const CORRECTABLE_BITS: usize = 3;

/// Like [`decode_bits`], but also tries flipping every subset of the bits at
/// `weakest` (the positions of the smallest `|z_i|`), fewest flips first.
/// Returns the license id and the number of bits flipped.
pub(crate) fn decode_correcting(
    bits: &[bool; PAYLOAD_BITS],
    weakest: &[usize; CORRECTABLE_BITS],
) -> Option<(u64, u32)> {
    let mut masks: [u32; 1 << CORRECTABLE_BITS] = core::array::from_fn(|m| m as u32);
    masks.sort_by_key(|m| m.count_ones());
    masks.iter().find_map(|&mask| {
        let mut candidate = *bits;
        for (k, &position) in weakest.iter().enumerate() {
            if mask & (1 << k) != 0 {
                if let Some(bit) = candidate.get_mut(position) {
                    *bit = !*bit;
                }
            }
        }
        decode_bits(&candidate).map(|id| (id, mask.count_ones()))
    })
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

    /// Syndrome arithmetic: the CRC is affine, so `bits` XOR `error` is valid
    /// exactly when `error` is itself the difference of two valid payloads.
    fn flip(bits: &[bool; PAYLOAD_BITS], positions: &[usize]) -> [bool; PAYLOAD_BITS] {
        let mut out = *bits;
        for &p in positions {
            out[p] = !out[p];
        }
        out
    }

    #[test]
    fn up_to_three_errors_among_the_weakest_are_corrected() {
        let id = 0x0123_4567_89AB_CDEF;
        let bits = payload_bits(id);
        let weakest = [3, 64, 79];
        for mask in 0u32..8 {
            let errors: Vec<usize> = (0..3)
                .filter(|k| mask & (1 << k) != 0)
                .map(|k| weakest[k])
                .collect();
            let read = flip(&bits, &errors);
            assert_eq!(
                decode_correcting(&read, &weakest),
                Some((id, mask.count_ones())),
                "errors at {errors:?}"
            );
        }
    }

    #[test]
    fn no_weight_three_or_lighter_error_is_a_valid_word() {
        // Hamming distance 4: every error of 1 to 3 bits fails the CRC, which
        // is what makes the correction above unambiguous. Exhaustive over the
        // 82,160 patterns of weight 1 to 3.
        let bits = payload_bits(0xFEDC_BA98_7654_3210);
        for a in 0..PAYLOAD_BITS {
            assert_eq!(decode_bits(&flip(&bits, &[a])), None);
            for b in a + 1..PAYLOAD_BITS {
                assert_eq!(decode_bits(&flip(&bits, &[a, b])), None);
                for c in b + 1..PAYLOAD_BITS {
                    assert_eq!(decode_bits(&flip(&bits, &[a, b, c])), None, "{a} {b} {c}");
                }
            }
        }
    }

    #[test]
    fn an_error_outside_the_weakest_is_not_corrected() {
        let id = 42;
        let read = flip(&payload_bits(id), &[10]);
        assert_eq!(decode_correcting(&read, &[0, 1, 2]), None);
        // Two errors, one of them outside the flipped set: flipping can reach
        // at most a 4-bit error pattern, which is valid only if it is one of
        // the CRC's 162 weight-4 words; these positions are not.
        let read = flip(&payload_bits(id), &[0, 10]);
        assert_eq!(decode_correcting(&read, &[0, 1, 2]), None);
    }

    #[test]
    fn the_complement_stays_out_of_reach_of_the_correction() {
        // A shifted image reads the complement (negatives.rs); it lies at
        // least 4 bits from every valid word, so no choice of weakest bits
        // can turn it into one. Exhaustive over the positions of the 3 bits.
        let flipped = payload_bits(0x1234_5678_9ABC_DEF0).map(|b| !b);
        for a in 0..PAYLOAD_BITS {
            for b in a + 1..PAYLOAD_BITS {
                for c in b + 1..PAYLOAD_BITS {
                    assert_eq!(decode_correcting(&flipped, &[a, b, c]), None);
                }
            }
        }
    }

    #[test]
    fn all_zero_and_all_one_read_outs_are_not_valid() {
        assert_eq!(decode_bits(&[false; PAYLOAD_BITS]), None);
        assert_eq!(decode_bits(&[true; PAYLOAD_BITS]), None);
    }
}

//! Every limit of the container, declared once (docs/format.md section 10).
//!
//! Each constant carries its unit in its name and cites the row of the limits table it
//! comes from. `ALL` lists them for the generator that writes `ts/src/limits.ts`, so no
//! other place retypes a number.

/// Smallest HEAD payload: the 32 bytes of version 1.0 fields (format.md 2, 10 "HEAD payload").
pub const MIN_HEAD_PAYLOAD_BYTES: u32 = 32;
/// Largest HEAD payload, in bytes (format.md 10 "HEAD payload").
pub const MAX_HEAD_PAYLOAD_BYTES: u32 = 4096;
/// Largest KEYS payload, in bytes (format.md 10 "KEYS payload").
pub const MAX_KEYS_PAYLOAD_BYTES: u32 = 65536;
/// Fewest key slots in a KEYS chunk (format.md 10 "KEYS payload").
pub const MIN_KEY_SLOTS: u32 = 1;
/// Most key slots in a KEYS chunk (format.md 10 "KEYS payload").
pub const MAX_KEY_SLOTS: u32 = 64;
/// Largest MANI payload, in bytes, the AEAD tag included (format.md 10 "MANI payload").
pub const MAX_MANI_PAYLOAD_BYTES: u32 = 8_388_608;
/// Bytes of a DATA payload besides its data: entry, index and flags (format.md 6).
pub const DATA_HEADER_BYTES: u32 = 9;
/// Bytes added by the XChaCha20-Poly1305 tag, in bytes (format.md 4).
pub const AEAD_TAG_BYTES: u32 = 16;
/// Fixed part of the DATA payload limit beyond `chunk_size + ceil(chunk_size / 1024)`, in
/// bytes: 9 header bytes, 16 tag bytes and 64 bytes of DEFLATE block overhead
/// (format.md 10 "DATA payload").
pub const DATA_PAYLOAD_OVERHEAD_BYTES: u32 = 89;
/// Largest SIGN payload, in bytes (format.md 10 "SIGN payload").
pub const MAX_SIGN_PAYLOAD_BYTES: u32 = 65536;
/// Largest ancillary chunk payload, in bytes; skipped while streaming, never buffered
/// (format.md 10 "ancillary chunk payload").
pub const MAX_ANCILLARY_PAYLOAD_BYTES: u32 = 16_777_216;
/// Smallest chunk_size, in bytes (format.md 10 "chunk_size").
pub const MIN_CHUNK_SIZE_BYTES: u32 = 4096;
/// Largest chunk_size, in bytes (format.md 10 "chunk_size").
pub const MAX_CHUNK_SIZE_BYTES: u32 = 16_777_216;
/// chunk_size writers use unless told otherwise, in bytes (format.md 10 "chunk_size").
pub const DEFAULT_CHUNK_SIZE_BYTES: u32 = 1_048_576;
/// Most manifest entries (format.md 10 "manifest entries").
pub const MAX_ENTRIES: u32 = 65536;
/// Shortest entry path, in bytes of UTF-8 (format.md 10 "entry path").
pub const MIN_PATH_BYTES: u32 = 1;
/// Longest entry path, in bytes of UTF-8 (format.md 10 "entry path").
pub const MAX_PATH_BYTES: u32 = 1024;
/// Longest entry media type, in bytes (format.md 5 `type`).
pub const MAX_MEDIA_TYPE_BYTES: u32 = 255;
/// Largest entry size, in bytes: 2^53 - 1 so that JavaScript numbers hold it exactly
/// (format.md 5 `size`).
pub const MAX_ENTRY_SIZE_BYTES: u64 = (1 << 53) - 1;
/// Smallest image width or height, in pixels (format.md 10 "image width, height").
pub const MIN_IMAGE_DIMENSION_PX: u32 = 1;
/// Largest image width or height, in pixels (format.md 10 "image width, height").
pub const MAX_IMAGE_DIMENSION_PX: u32 = 65535;
/// Shortest account id in an account slot, in bytes (format.md 3.2).
pub const MIN_ACCOUNT_ID_BYTES: u32 = 1;
/// Longest account id in an account slot, in bytes (format.md 3.2).
pub const MAX_ACCOUNT_ID_BYTES: u32 = 256;
/// Longest master id in a license slot, in bytes (format.md 3.4).
pub const MAX_MASTER_ID_BYTES: u32 = 256;
/// Longest signer display name, in bytes (format.md 7.1).
pub const MAX_SIGNER_NAME_BYTES: u32 = 256;
/// Argon2id memory for new password slots, in KiB (format.md 10 "Argon2id, new slots").
pub const ARGON2_DEFAULT_M_KIB: u32 = 65536;
/// Argon2id passes for new password slots (format.md 10 "Argon2id, new slots").
pub const ARGON2_DEFAULT_T: u32 = 3;
/// Argon2id lanes for new password slots (format.md 10 "Argon2id, new slots").
pub const ARGON2_DEFAULT_P: u32 = 1;
/// Argon2id salt length of a password slot, in bytes (format.md 10 "Argon2id, new slots").
pub const ARGON2_SALT_BYTES: u32 = 16;
/// Most Argon2id memory a reader accepts, in KiB (format.md 10 "Argon2id, readers refuse").
pub const ARGON2_MAX_M_KIB: u32 = 262_144;
/// Fewest Argon2id KiB per lane a reader accepts, `m_kib >= 8 * p` (format.md 3.1).
pub const ARGON2_MIN_M_KIB_PER_LANE: u32 = 8;
/// Most Argon2id passes a reader accepts (format.md 10 "Argon2id, readers refuse").
pub const ARGON2_MAX_T: u32 = 10;
/// Most Argon2id lanes a reader accepts (format.md 10 "Argon2id, readers refuse").
pub const ARGON2_MAX_P: u32 = 4;
/// Most password slots a reader derives a key for in one unlock (format.md 3, 10 "password
/// slots tried"). A file may hold 64 slots; without this bound each password try would pay
/// up to 64 derivations at the ceiling, minutes per try. Writers refuse more.
pub const MAX_PASSWORD_SLOTS_TRIED: u32 = 4;
/// Most Argon2id work one unlock may spend, in KiB × passes summed over the slots it derives
/// (format.md 3, 10 "Argon2id per unlock"): exactly one slot at the ceiling (262144 KiB,
/// 10 passes; about 7 s in WebAssembly on a 2-core machine), or 13 slots at the default
/// cost. Lanes are
/// not counted: they split the same memory and are computed one after another here.
pub const MAX_UNLOCK_ARGON2_KIB_PASSES: u64 = ARGON2_MAX_M_KIB as u64 * ARGON2_MAX_T as u64;
/// Length of a content key or license key, in bytes (format.md 10 "content key").
pub const CONTENT_KEY_BYTES: u32 = 32;

/// Largest DATA payload for a chunk_size, in bytes:
/// `chunk_size + ceil(chunk_size / 1024) + 89` (format.md 6 and 10 "DATA payload").
#[must_use]
pub fn max_data_payload_bytes(chunk_size: u32) -> u64 {
    let chunk_size = u64::from(chunk_size);
    chunk_size + chunk_size.div_ceil(1024) + u64::from(DATA_PAYLOAD_OVERHEAD_BYTES)
}

/// Every limit as `(TypeScript name, value, documentation)`, in the order of this module;
/// the generator of `ts/src/limits.ts` writes one constant per row.
pub const ALL: &[(&str, u64, &str)] = &[
    (
        "MIN_HEAD_PAYLOAD_BYTES",
        MIN_HEAD_PAYLOAD_BYTES as u64,
        "Smallest HEAD payload, in bytes.",
    ),
    (
        "MAX_HEAD_PAYLOAD_BYTES",
        MAX_HEAD_PAYLOAD_BYTES as u64,
        "Largest HEAD payload, in bytes.",
    ),
    (
        "MAX_KEYS_PAYLOAD_BYTES",
        MAX_KEYS_PAYLOAD_BYTES as u64,
        "Largest KEYS payload, in bytes.",
    ),
    (
        "MIN_KEY_SLOTS",
        MIN_KEY_SLOTS as u64,
        "Fewest key slots in a KEYS chunk.",
    ),
    (
        "MAX_KEY_SLOTS",
        MAX_KEY_SLOTS as u64,
        "Most key slots in a KEYS chunk.",
    ),
    (
        "MAX_MANI_PAYLOAD_BYTES",
        MAX_MANI_PAYLOAD_BYTES as u64,
        "Largest MANI payload, in bytes (tag included).",
    ),
    (
        "DATA_HEADER_BYTES",
        DATA_HEADER_BYTES as u64,
        "DATA payload bytes before the data: entry, index, flags.",
    ),
    (
        "AEAD_TAG_BYTES",
        AEAD_TAG_BYTES as u64,
        "Bytes of an XChaCha20-Poly1305 tag.",
    ),
    (
        "DATA_PAYLOAD_OVERHEAD_BYTES",
        DATA_PAYLOAD_OVERHEAD_BYTES as u64,
        "Fixed part of the DATA payload limit, in bytes.",
    ),
    (
        "MAX_SIGN_PAYLOAD_BYTES",
        MAX_SIGN_PAYLOAD_BYTES as u64,
        "Largest SIGN payload, in bytes.",
    ),
    (
        "MAX_ANCILLARY_PAYLOAD_BYTES",
        MAX_ANCILLARY_PAYLOAD_BYTES as u64,
        "Largest ancillary chunk payload, in bytes.",
    ),
    (
        "MIN_CHUNK_SIZE_BYTES",
        MIN_CHUNK_SIZE_BYTES as u64,
        "Smallest chunk_size, in bytes.",
    ),
    (
        "MAX_CHUNK_SIZE_BYTES",
        MAX_CHUNK_SIZE_BYTES as u64,
        "Largest chunk_size, in bytes.",
    ),
    (
        "DEFAULT_CHUNK_SIZE_BYTES",
        DEFAULT_CHUNK_SIZE_BYTES as u64,
        "Default chunk_size, in bytes.",
    ),
    ("MAX_ENTRIES", MAX_ENTRIES as u64, "Most manifest entries."),
    (
        "MIN_PATH_BYTES",
        MIN_PATH_BYTES as u64,
        "Shortest entry path, in bytes.",
    ),
    (
        "MAX_PATH_BYTES",
        MAX_PATH_BYTES as u64,
        "Longest entry path, in bytes.",
    ),
    (
        "MAX_MEDIA_TYPE_BYTES",
        MAX_MEDIA_TYPE_BYTES as u64,
        "Longest entry media type, in bytes.",
    ),
    (
        "MAX_ENTRY_SIZE_BYTES",
        MAX_ENTRY_SIZE_BYTES,
        "Largest entry size, in bytes (2^53 - 1).",
    ),
    (
        "MIN_IMAGE_DIMENSION_PX",
        MIN_IMAGE_DIMENSION_PX as u64,
        "Smallest image width or height, in pixels.",
    ),
    (
        "MAX_IMAGE_DIMENSION_PX",
        MAX_IMAGE_DIMENSION_PX as u64,
        "Largest image width or height, in pixels.",
    ),
    (
        "MIN_ACCOUNT_ID_BYTES",
        MIN_ACCOUNT_ID_BYTES as u64,
        "Shortest account id in an account slot, in bytes.",
    ),
    (
        "MAX_ACCOUNT_ID_BYTES",
        MAX_ACCOUNT_ID_BYTES as u64,
        "Longest account id in an account slot, in bytes.",
    ),
    (
        "MAX_MASTER_ID_BYTES",
        MAX_MASTER_ID_BYTES as u64,
        "Longest master id in a license slot, in bytes.",
    ),
    (
        "MAX_SIGNER_NAME_BYTES",
        MAX_SIGNER_NAME_BYTES as u64,
        "Longest signer display name, in bytes.",
    ),
    (
        "ARGON2_DEFAULT_M_KIB",
        ARGON2_DEFAULT_M_KIB as u64,
        "Argon2id memory for new password slots, in KiB.",
    ),
    (
        "ARGON2_DEFAULT_T",
        ARGON2_DEFAULT_T as u64,
        "Argon2id passes for new password slots.",
    ),
    (
        "ARGON2_DEFAULT_P",
        ARGON2_DEFAULT_P as u64,
        "Argon2id lanes for new password slots.",
    ),
    (
        "ARGON2_SALT_BYTES",
        ARGON2_SALT_BYTES as u64,
        "Argon2id salt length, in bytes.",
    ),
    (
        "ARGON2_MAX_M_KIB",
        ARGON2_MAX_M_KIB as u64,
        "Most Argon2id memory a reader accepts, in KiB.",
    ),
    (
        "ARGON2_MIN_M_KIB_PER_LANE",
        ARGON2_MIN_M_KIB_PER_LANE as u64,
        "Fewest Argon2id KiB per lane a reader accepts.",
    ),
    (
        "ARGON2_MAX_T",
        ARGON2_MAX_T as u64,
        "Most Argon2id passes a reader accepts.",
    ),
    (
        "ARGON2_MAX_P",
        ARGON2_MAX_P as u64,
        "Most Argon2id lanes a reader accepts.",
    ),
    (
        "MAX_PASSWORD_SLOTS_TRIED",
        MAX_PASSWORD_SLOTS_TRIED as u64,
        "Most password slots a reader derives a key for in one unlock; writers refuse more.",
    ),
    (
        "MAX_UNLOCK_ARGON2_KIB_PASSES",
        MAX_UNLOCK_ARGON2_KIB_PASSES,
        "Most Argon2id work of one unlock, in KiB x passes summed over the slots derived.",
    ),
    (
        "CONTENT_KEY_BYTES",
        CONTENT_KEY_BYTES as u64,
        "Length of a content or license key, in bytes.",
    ),
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn data_payload_limit_matches_the_formula() {
        assert_eq!(max_data_payload_bytes(4096), 4096 + 4 + 89);
        assert_eq!(max_data_payload_bytes(4097), 4097 + 5 + 89);
        assert_eq!(
            max_data_payload_bytes(MAX_CHUNK_SIZE_BYTES),
            16_777_216 + 16_384 + 89
        );
    }

    #[test]
    fn all_names_are_unique_and_screaming_snake() {
        let mut names: Vec<&str> = ALL.iter().map(|(name, _, _)| *name).collect();
        assert!(names.iter().all(|n| n
            .bytes()
            .all(|b| b.is_ascii_uppercase() || b.is_ascii_digit() || b == b'_')));
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), ALL.len());
    }
}

//! Content encryption of MANI and DATA (docs/format.md section 4).
//!
//! ```text
//! sub_key  = HKDF-SHA256(ikm = content_key, salt = file_id, info = "ikifmt-content-v1")
//! nonce(n) = file_id(16) || n (u64 LE)
//! aad      = keys_digest || "MANI"   |   keys_digest || "DATA" || entry || index || flags
//! ```
//!
//! The sub-key lives only inside the `Aead`, which zeroizes it on drop; the intermediate
//! `SecretKey32` is zeroized when it goes out of scope in [`ContentCipher::new`].

use iki_crypto::{hkdf_sha256, labels, Aead, SecretKey32};

use crate::chunk::DataHeader;
use crate::error::Error;

/// Chunk number of MANI in the nonce sequence; DATA chunks are 1, 2, 3, ...
pub const MANI_CHUNK_NUMBER: u64 = 0;

/// The per-file cipher of MANI and DATA payloads.
pub struct ContentCipher {
    aead: Aead,
    file_id: [u8; 16],
}

impl core::fmt::Debug for ContentCipher {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str("ContentCipher(..)")
    }
}

impl ContentCipher {
    /// Derives the sub-key of `content_key` for the file `file_id`.
    #[must_use]
    pub fn new(content_key: &SecretKey32, file_id: [u8; 16]) -> Self {
        let sub_key = hkdf_sha256(content_key.expose_secret(), &file_id, &[labels::CONTENT_V1]);
        Self {
            aead: Aead::new(&sub_key),
            file_id,
        }
    }

    /// `file_id || n`.
    #[must_use]
    pub fn nonce(&self, n: u64) -> [u8; 24] {
        nonce(&self.file_id, n)
    }

    /// Encrypts `buf` in place and appends the tag.
    ///
    /// # Errors
    /// `INVALID_ARGUMENT` for a plaintext beyond the AEAD's bound (unreachable in limits).
    pub fn seal(&self, n: u64, aad: &[u8], buf: &mut Vec<u8>) -> Result<(), Error> {
        self.aead
            .seal_in_place(&self.nonce(n), aad, buf)
            .map_err(Error::from)
    }

    /// Encrypts `buf` in place and returns the tag, which the caller appends: how the writer
    /// seals a DATA payload where it lies in its output buffer (no copy through another one).
    ///
    /// # Errors
    /// As [`ContentCipher::seal`].
    pub fn seal_detached(
        &self,
        n: u64,
        aad: &[u8],
        buf: &mut [u8],
    ) -> Result<[u8; iki_crypto::TAG_BYTES], Error> {
        self.aead
            .seal_detached(&self.nonce(n), aad, buf)
            .map_err(Error::from)
    }

    /// Verifies and decrypts `buf` (ciphertext || tag) in place.
    ///
    /// # Errors
    /// `DECRYPT_FAILED` for any failure; `buf` is then unchanged.
    pub fn open(&self, n: u64, aad: &[u8], buf: &mut Vec<u8>) -> Result<(), Error> {
        self.aead
            .open_in_place(&self.nonce(n), aad, buf)
            .map_err(|_| Error::DecryptFailed)
    }
}

/// `nonce(n) = file_id(16) || n (u64 LE)`.
#[must_use]
pub fn nonce(file_id: &[u8; 16], n: u64) -> [u8; 24] {
    let mut out = [0u8; 24];
    let (id, counter) = out.split_at_mut(16);
    id.copy_from_slice(file_id);
    counter.copy_from_slice(&n.to_le_bytes());
    out
}

/// `aad(MANI) = keys_digest || "MANI"`.
#[must_use]
pub fn mani_aad(keys_digest: &[u8; 32]) -> [u8; 36] {
    let mut out = [0u8; 36];
    let (digest, tag) = out.split_at_mut(32);
    digest.copy_from_slice(keys_digest);
    tag.copy_from_slice(b"MANI");
    out
}

/// `aad(DATA) = keys_digest || "DATA" || entry(u32) || index(u32) || flags(u8)`.
#[must_use]
pub fn data_aad(keys_digest: &[u8; 32], header: &DataHeader) -> [u8; 45] {
    let mut out = [0u8; 45];
    let (digest, rest) = out.split_at_mut(32);
    digest.copy_from_slice(keys_digest);
    let (tag, fields) = rest.split_at_mut(4);
    tag.copy_from_slice(b"DATA");
    fields.copy_from_slice(&header.to_bytes());
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nonce_and_aad_layout() {
        let id = [0xAB; 16];
        let n = nonce(&id, 0x0102);
        assert_eq!(&n[..16], &id);
        assert_eq!(&n[16..], &[2, 1, 0, 0, 0, 0, 0, 0]);
        let digest = [9u8; 32];
        assert_eq!(&mani_aad(&digest)[32..], b"MANI");
        let aad = data_aad(
            &digest,
            &DataHeader {
                entry: 1,
                index: 2,
                flags: 1,
            },
        );
        assert_eq!(&aad[32..], b"DATA\x01\x00\x00\x00\x02\x00\x00\x00\x01");
    }

    #[test]
    fn seal_open_binds_number_aad_and_file() {
        let key = SecretKey32::from_bytes([0x11; 32]);
        let cipher = ContentCipher::new(&key, [1; 16]);
        let mut buf = b"hello".to_vec();
        cipher.seal(3, b"aad", &mut buf).unwrap();
        assert_eq!(buf.len(), 5 + 16);
        let sealed = buf.clone();
        assert_eq!(cipher.open(4, b"aad", &mut buf), Err(Error::DecryptFailed));
        assert_eq!(cipher.open(3, b"aaD", &mut buf), Err(Error::DecryptFailed));
        let other = ContentCipher::new(&key, [2; 16]);
        assert_eq!(other.open(3, b"aad", &mut buf), Err(Error::DecryptFailed));
        assert_eq!(buf, sealed);
        cipher.open(3, b"aad", &mut buf).unwrap();
        assert_eq!(buf, b"hello");
    }
}

//! XChaCha20-Poly1305 (draft-irtf-cfrg-xchacha-03 over RFC 8439 §2.8): content chunks,
//! manifest and key wrapping (docs/format.md sections 3, 4 and 8).
//!
//! The 24-byte nonce is a type (`&[u8; 24]`), so a nonce of the wrong size cannot be passed.
//! Opening verifies the Poly1305 tag in constant time before any plaintext is produced; on
//! failure the buffer still holds the unmodified ciphertext and the error is the one coarse
//! [`Error::DecryptFailed`].
//!
//! Zeroization: [`Aead`] holds the cipher, which zeroizes its key on drop (and derives its
//! per-message Poly1305 key into a buffer it zeroizes itself); see `Cipher` for which one.
//! [`wrap_key`] and [`unwrap_key`] work in a stack buffer wrapped in `Zeroizing`, so the
//! plaintext key never reaches the heap.

use core::fmt;

use zeroize::Zeroizing;

use crate::error::Error;
use crate::secret::{SecretKey32, SECRET_KEY_BYTES};

/// The cipher: RustCrypto's `chacha20poly1305` natively (SIMD backends for x86 and ARM);
/// on wasm32, where RustCrypto's `chacha20` has no SIMD backend, our own construction over
/// a simd128 ChaCha20 kernel ([`crate::xchacha`]), held to the same bytes by Wycheproof and
/// random-input tests.
#[cfg(not(target_arch = "wasm32"))]
type Cipher = chacha20poly1305::XChaCha20Poly1305;
#[cfg(target_arch = "wasm32")]
type Cipher = crate::xchacha::XChaCha20Poly1305;

/// Length of the Poly1305 tag appended to every ciphertext, in bytes.
pub const TAG_BYTES: usize = 16;
/// Length of an XChaCha20 nonce, in bytes.
pub const XNONCE_BYTES: usize = 24;
/// Length of a wrapped 32-byte key: ciphertext plus tag.
pub const WRAPPED_KEY_BYTES: usize = SECRET_KEY_BYTES + TAG_BYTES;

/// The longest plaintext one (nonce, key) pair may seal, in bytes: the 32-bit ChaCha20 block
/// counter starts at 1 (block 0 keys Poly1305), so fewer than `(2^32 − 1) · 64` bytes, the
/// bound `chacha20poly1305` enforces. Only reachable on 64-bit hosts.
const MAX_PLAINTEXT_BYTES: u64 = u32::MAX as u64 * 64 - 1;

/// An XChaCha20-Poly1305 cipher keyed once and used for many messages.
///
/// The caller owns nonce uniqueness: the container derives nonces from `file_id` and the
/// chunk number (format §4), key slots draw them at random.
pub struct Aead {
    cipher: Cipher,
}

impl Aead {
    /// Keys the cipher. The key bytes are copied into the cipher, which zeroizes them on drop.
    #[must_use]
    pub fn new(key: &SecretKey32) -> Self {
        #[cfg(not(target_arch = "wasm32"))]
        let cipher = {
            use chacha20poly1305::KeyInit;
            Cipher::new(chacha20poly1305::Key::from_slice(key.expose_secret()))
        };
        #[cfg(target_arch = "wasm32")]
        let cipher = Cipher::new(key.expose_secret());
        Self { cipher }
    }

    /// Encrypts `buf` in place and returns the tag (a caller sealing a region of a larger
    /// buffer, such as a container chunk in the writer's output, appends it there itself).
    ///
    /// # Errors
    /// `InvalidLength` for a plaintext beyond the AEAD's bound.
    pub fn seal_detached(
        &self,
        nonce: &[u8; XNONCE_BYTES],
        aad: &[u8],
        buf: &mut [u8],
    ) -> Result<[u8; TAG_BYTES], Error> {
        check_plaintext_len(buf.len())?;
        #[cfg(not(target_arch = "wasm32"))]
        {
            use chacha20poly1305::AeadInPlace;
            self.cipher
                .encrypt_in_place_detached(chacha20poly1305::XNonce::from_slice(nonce), aad, buf)
                .map(Into::into)
                .map_err(|_| Error::InvalidLength {
                    what: "plaintext",
                    len: buf.len(),
                })
        }
        #[cfg(target_arch = "wasm32")]
        Ok(self.cipher.seal_detached(nonce, aad, buf))
    }

    /// Checks `tag` and decrypts `buf` in place; `buf` is unchanged on failure.
    fn open_detached(
        &self,
        nonce: &[u8; XNONCE_BYTES],
        aad: &[u8],
        buf: &mut [u8],
        tag: &[u8; TAG_BYTES],
    ) -> Result<(), Error> {
        check_plaintext_len(buf.len()).map_err(|_| Error::DecryptFailed)?;
        #[cfg(not(target_arch = "wasm32"))]
        {
            use chacha20poly1305::AeadInPlace;
            self.cipher
                .decrypt_in_place_detached(
                    chacha20poly1305::XNonce::from_slice(nonce),
                    aad,
                    buf,
                    chacha20poly1305::Tag::from_slice(tag),
                )
                .map_err(|_| Error::DecryptFailed)
        }
        #[cfg(target_arch = "wasm32")]
        self.cipher
            .open_detached(nonce, aad, buf, tag)
            .map_err(|()| Error::DecryptFailed)
    }

    /// Encrypts `buf` in place and appends the 16-byte tag.
    ///
    /// Reserve [`TAG_BYTES`] of spare capacity to avoid a reallocation; if one happens it only
    /// ever copies ciphertext, since encryption is done before the tag is appended.
    pub fn seal_in_place(
        &self,
        nonce: &[u8; XNONCE_BYTES],
        aad: &[u8],
        buf: &mut Vec<u8>,
    ) -> Result<(), Error> {
        let tag = self.seal_detached(nonce, aad, buf)?;
        buf.extend_from_slice(&tag);
        Ok(())
    }

    /// Verifies and decrypts `buf` (ciphertext || tag) in place and strips the tag.
    ///
    /// On failure `buf` is unchanged and the error is [`Error::DecryptFailed`].
    pub fn open_in_place(
        &self,
        nonce: &[u8; XNONCE_BYTES],
        aad: &[u8],
        buf: &mut Vec<u8>,
    ) -> Result<(), Error> {
        let len = buf
            .len()
            .checked_sub(TAG_BYTES)
            .ok_or(Error::DecryptFailed)?;
        let (ciphertext, tag) = buf.split_at_mut(len);
        let tag: [u8; TAG_BYTES] = (&*tag).try_into().map_err(|_| Error::DecryptFailed)?;
        self.open_detached(nonce, aad, ciphertext, &tag)?;
        buf.truncate(len);
        Ok(())
    }

    /// Encrypts `plaintext` into a new vector `ciphertext || tag`.
    pub fn seal(
        &self,
        nonce: &[u8; XNONCE_BYTES],
        aad: &[u8],
        plaintext: &[u8],
    ) -> Result<Vec<u8>, Error> {
        check_plaintext_len(plaintext.len())?;
        let mut buf = Vec::with_capacity(plaintext.len() + TAG_BYTES);
        buf.extend_from_slice(plaintext);
        self.seal_in_place(nonce, aad, &mut buf)?;
        Ok(buf)
    }

    /// Verifies and decrypts `ciphertext || tag` into a new vector. Fails with
    /// [`Error::DecryptFailed`] for any authentication failure, including input shorter than
    /// the tag. The caller should wrap secret plaintext in `Zeroizing`.
    pub fn open(
        &self,
        nonce: &[u8; XNONCE_BYTES],
        aad: &[u8],
        ciphertext: &[u8],
    ) -> Result<Vec<u8>, Error> {
        let mut buf = ciphertext.to_vec();
        self.open_in_place(nonce, aad, &mut buf)?;
        Ok(buf)
    }
}

impl fmt::Debug for Aead {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Aead(..)")
    }
}

fn check_plaintext_len(len: usize) -> Result<(), Error> {
    match u64::try_from(len) {
        Ok(l) if l <= MAX_PLAINTEXT_BYTES => Ok(()),
        _ => Err(Error::InvalidLength {
            what: "plaintext",
            len,
        }),
    }
}

/// Wraps a 32-byte key under `kek`: `XChaCha20-Poly1305(kek, nonce, aad, key)`, 48 bytes
/// (format §3 and §8.3).
pub fn wrap_key(
    kek: &SecretKey32,
    nonce: &[u8; XNONCE_BYTES],
    aad: &[u8],
    key: &SecretKey32,
) -> Result<[u8; WRAPPED_KEY_BYTES], Error> {
    let mut buf = Zeroizing::new(*key.expose_secret());
    let tag = Aead::new(kek)
        .seal_detached(nonce, aad, &mut buf[..])
        .map_err(|_| Error::InvalidLength {
            what: "wrapped key",
            len: SECRET_KEY_BYTES,
        })?;
    let mut out = [0u8; WRAPPED_KEY_BYTES];
    for (dst, src) in out.iter_mut().zip(buf.iter().chain(tag.iter())) {
        *dst = *src;
    }
    Ok(out)
}

/// Unwraps the output of [`wrap_key`]. Any failure is [`Error::DecryptFailed`].
pub fn unwrap_key(
    kek: &SecretKey32,
    nonce: &[u8; XNONCE_BYTES],
    aad: &[u8],
    wrapped: &[u8; WRAPPED_KEY_BYTES],
) -> Result<SecretKey32, Error> {
    let (ciphertext, tag) = wrapped
        .split_first_chunk::<SECRET_KEY_BYTES>()
        .ok_or(Error::DecryptFailed)?;
    let tag: &[u8; TAG_BYTES] = tag.try_into().map_err(|_| Error::DecryptFailed)?;
    let mut buf = Zeroizing::new(*ciphertext);
    Aead::new(kek)
        .open_detached(nonce, aad, &mut buf[..], tag)
        .map_err(|_| Error::DecryptFailed)?;
    Ok(SecretKey32::from_bytes(*buf))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(b: u8) -> SecretKey32 {
        SecretKey32::from_bytes([b; 32])
    }

    #[test]
    fn in_place_round_trip_keeps_allocation() -> Result<(), Error> {
        let aead = Aead::new(&key(1));
        let nonce = [9u8; XNONCE_BYTES];
        let mut buf = Vec::with_capacity(1024 + TAG_BYTES);
        buf.resize(1024, 0x5a);
        let ptr = buf.as_ptr();
        aead.seal_in_place(&nonce, b"aad", &mut buf)?;
        assert_eq!(buf.len(), 1024 + TAG_BYTES);
        assert_eq!(buf.as_ptr(), ptr);
        assert_eq!(aead.seal(&nonce, b"aad", &[0x5a; 1024])?, buf);
        aead.open_in_place(&nonce, b"aad", &mut buf)?;
        assert_eq!(buf, vec![0x5a; 1024]);
        assert_eq!(buf.as_ptr(), ptr);
        Ok(())
    }

    #[test]
    fn failed_open_leaves_buffer_unchanged() -> Result<(), Error> {
        let aead = Aead::new(&key(1));
        let nonce = [9u8; XNONCE_BYTES];
        let mut buf = aead.seal(&nonce, b"aad", b"hello")?;
        let sealed = buf.clone();
        assert_eq!(
            aead.open_in_place(&nonce, b"aae", &mut buf),
            Err(Error::DecryptFailed)
        );
        assert_eq!(buf, sealed);
        let mut short = vec![0u8; TAG_BYTES - 1];
        assert_eq!(
            aead.open_in_place(&nonce, b"", &mut short),
            Err(Error::DecryptFailed)
        );
        assert_eq!(aead.open(&nonce, b"", &[]), Err(Error::DecryptFailed));
        Ok(())
    }

    #[test]
    fn wrap_matches_seal_and_unwraps() -> Result<(), Error> {
        let nonce = [3u8; XNONCE_BYTES];
        let wrapped = wrap_key(&key(1), &nonce, b"slot", &key(2))?;
        assert_eq!(
            Aead::new(&key(1)).seal(&nonce, b"slot", &[2u8; 32])?,
            wrapped.to_vec()
        );
        let unwrapped = unwrap_key(&key(1), &nonce, b"slot", &wrapped)?;
        assert_eq!(unwrapped.expose_secret(), &[2u8; 32]);
        Ok(())
    }

    #[cfg(target_pointer_width = "64")]
    #[test]
    fn plaintext_limit_at_and_past() {
        let max = MAX_PLAINTEXT_BYTES as usize;
        assert_eq!(check_plaintext_len(max), Ok(()));
        assert_eq!(
            check_plaintext_len(max + 1),
            Err(Error::InvalidLength {
                what: "plaintext",
                len: max + 1
            })
        );
    }
}

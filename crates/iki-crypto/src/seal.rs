//! Ephemeral-static sealing to an X25519 public key (docs/format.md sections 3.3 and 8.2):
//!
//! ```text
//! shared = X25519(ephemeral_secret, recipient)                        (RFC 7748 §5)
//! kek    = HKDF-SHA256(ikm = shared, salt = ephemeral_pub || recipient_pub, info)   (RFC 5869)
//! sealed = XChaCha20-Poly1305(kek, random nonce, aad, plaintext)
//! ```
//!
//! Both public keys enter the salt, so a kek is bound to the exact key pair. The recipient
//! key is checked against the low-order blocklist before anything is generated, and the
//! shared secret is refused when all-zero ([`Error::WeakKey`]).
//!
//! Zeroization: the ephemeral secret is an [`X25519Secret`] dropped (zeroized) before
//! [`seal_to`] returns, a [`SenderKey`]'s when that value drops; the shared secret and kek are [`SecretKey32`] values zeroized on
//! drop; [`open_sealed`] returns the plaintext in `Zeroizing`.

use zeroize::{Zeroize, Zeroizing};

use crate::aead::{Aead, XNONCE_BYTES};
use crate::error::Error;
use crate::kdf::hkdf_sha256;
use crate::secret::{fill_random, SecretKey32};
use crate::x25519::{is_low_order_x25519, X25519Secret, X25519_KEY_BYTES};

/// The output of [`seal_to`]; none of it is secret.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Sealed {
    /// The one-time X25519 public key of the sender.
    pub ephemeral: [u8; X25519_KEY_BYTES],
    /// The random XChaCha20 nonce.
    pub nonce: [u8; XNONCE_BYTES],
    /// `ciphertext || tag`, 16 bytes longer than the plaintext.
    pub ciphertext: Vec<u8>,
}

/// Seals `plaintext` to `recipient` with a fresh ephemeral key and a random nonce.
pub fn seal_to(
    recipient: &[u8; X25519_KEY_BYTES],
    info: &[u8],
    aad: &[u8],
    plaintext: &[u8],
) -> Result<Sealed, Error> {
    // The ephemeral secret and the nonce from one draw: on wasm32 each draw is a call out to
    // the host's `getRandomValues` (issue 28 item 1: the two draws were 3.5 % of a seal's CPU).
    let mut fresh = Zeroizing::new([0u8; X25519_KEY_BYTES + XNONCE_BYTES]);
    fill_random(fresh.as_mut_slice())?;
    let (secret_bytes, nonce_bytes) = fresh.split_at(X25519_KEY_BYTES);
    let mut secret = [0u8; X25519_KEY_BYTES];
    secret.copy_from_slice(secret_bytes);
    let mut nonce = [0u8; XNONCE_BYTES];
    nonce.copy_from_slice(nonce_bytes);
    let ephemeral_secret = X25519Secret::from_key(SecretKey32::from_bytes(secret));
    secret.zeroize();
    drop(fresh);
    let ephemeral = ephemeral_secret.public_key();
    seal_with(
        &ephemeral_secret,
        ephemeral,
        recipient,
        nonce,
        info,
        aad,
        plaintext,
    )
}

/// The sealing both senders share: a low-order `recipient` is [`Error::WeakKey`]; the kek
/// from `secret` (whose public key is `public`) and `recipient`, then XChaCha20-Poly1305
/// under `nonce`.
fn seal_with(
    secret: &X25519Secret,
    public: [u8; X25519_KEY_BYTES],
    recipient: &[u8; X25519_KEY_BYTES],
    nonce: [u8; XNONCE_BYTES],
    info: &[u8],
    aad: &[u8],
    plaintext: &[u8],
) -> Result<Sealed, Error> {
    if is_low_order_x25519(recipient) {
        return Err(Error::WeakKey);
    }
    let kek = x25519_kek(secret, recipient, &public, recipient, info)?;
    let ciphertext = Aead::new(&kek).seal(&nonce, aad, plaintext)?;
    Ok(Sealed {
        ephemeral: public,
        nonce,
        ciphertext,
    })
}

/// A sender's X25519 key pair kept across several [`seal_from`] calls: the key release's
/// service side (docs/format.md §8.2), where the recipient's key is the ephemeral one and a
/// fresh sender key per seal would only add a base-point multiplication (issue 28 item 1).
/// The caller bounds how long one is kept; the secret is zeroized when this value drops.
pub struct SenderKey {
    secret: X25519Secret,
    public: [u8; X25519_KEY_BYTES],
}

impl SenderKey {
    /// A fresh key pair from OS randomness.
    pub fn generate() -> Result<Self, Error> {
        Ok(Self::from_secret(X25519Secret::generate()?))
    }

    /// The key pair of `secret` (its public key computed once, here).
    #[must_use]
    pub fn from_secret(secret: X25519Secret) -> Self {
        let public = secret.public_key();
        Self { secret, public }
    }

    /// `X25519(k, 9)`, what the recipient reads from [`Sealed::ephemeral`].
    #[must_use]
    pub fn public_key(&self) -> [u8; X25519_KEY_BYTES] {
        self.public
    }
}

impl core::fmt::Debug for SenderKey {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str("SenderKey(..)")
    }
}

/// Seals `plaintext` to `recipient` from `sender`'s key pair with a random nonce: the same
/// bytes as [`seal_to`] (the sender's public key in [`Sealed::ephemeral`]), one random draw
/// (the 24-byte nonce) and one X25519 multiplication instead of two. Sound only where the
/// recipient's key is fresh or the nonce is never repeated under one kek: the nonce is
/// random (192 bits), so a recipient that sends the same key twice gets the same kek and
/// two independent nonces, which XChaCha20-Poly1305 allows.
pub fn seal_from(
    sender: &SenderKey,
    recipient: &[u8; X25519_KEY_BYTES],
    info: &[u8],
    aad: &[u8],
    plaintext: &[u8],
) -> Result<Sealed, Error> {
    let mut nonce = [0u8; XNONCE_BYTES];
    fill_random(&mut nonce)?;
    seal_with(
        &sender.secret,
        sender.public,
        recipient,
        nonce,
        info,
        aad,
        plaintext,
    )
}

/// Opens what [`seal_to`] produced for `secret`'s public key. A weak `ephemeral` is
/// [`Error::WeakKey`]; every other failure is [`Error::DecryptFailed`].
pub fn open_sealed(
    secret: &X25519Secret,
    ephemeral: &[u8; X25519_KEY_BYTES],
    nonce: &[u8; XNONCE_BYTES],
    info: &[u8],
    aad: &[u8],
    ciphertext: &[u8],
) -> Result<Zeroizing<Vec<u8>>, Error> {
    let kek = x25519_kek(secret, ephemeral, ephemeral, &secret.public_key(), info)?;
    Aead::new(&kek)
        .open(nonce, aad, ciphertext)
        .map(Zeroizing::new)
}

/// `HKDF-SHA256(ikm = X25519(secret, peer), salt = salt_first || salt_second, info)`.
///
/// The writer of a recipient slot calls it with (ephemeral secret, recipient,
/// ephemeral public, recipient); the reader with (recipient secret, ephemeral,
/// ephemeral, recipient public). The caller then wraps with its own AAD layout.
pub fn x25519_kek(
    secret: &X25519Secret,
    peer: &[u8; X25519_KEY_BYTES],
    salt_first: &[u8; X25519_KEY_BYTES],
    salt_second: &[u8; X25519_KEY_BYTES],
    info: &[u8],
) -> Result<SecretKey32, Error> {
    let shared = secret.diffie_hellman(peer)?;
    let mut salt = [0u8; 2 * X25519_KEY_BYTES];
    for (dst, src) in salt
        .iter_mut()
        .zip(salt_first.iter().chain(salt_second.iter()))
    {
        *dst = *src;
    }
    Ok(hkdf_sha256(shared.expose_secret(), &salt, &[info]))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn writer_and_reader_derive_the_same_kek() -> Result<(), Error> {
        let recipient = X25519Secret::from_key(SecretKey32::from_bytes([1; 32]));
        let ephemeral = X25519Secret::from_key(SecretKey32::from_bytes([2; 32]));
        let (r, e) = (recipient.public_key(), ephemeral.public_key());
        let writer = x25519_kek(&ephemeral, &r, &e, &r, b"info")?;
        let reader = x25519_kek(&recipient, &e, &e, &r, b"info")?;
        assert_eq!(writer.expose_secret(), reader.expose_secret());
        let swapped = x25519_kek(&recipient, &e, &r, &e, b"info")?;
        assert_ne!(writer.expose_secret(), swapped.expose_secret());
        Ok(())
    }

    #[test]
    fn seal_from_reuses_the_sender_key_with_fresh_nonces() -> Result<(), Error> {
        let recipient = X25519Secret::from_key(SecretKey32::from_bytes([1; 32]));
        let r = recipient.public_key();
        let sender =
            SenderKey::from_secret(X25519Secret::from_key(SecretKey32::from_bytes([2; 32])));
        let first = seal_from(&sender, &r, b"info", b"aad", b"key")?;
        let second = seal_from(&sender, &r, b"info", b"aad", b"key")?;
        assert_eq!(first.ephemeral, sender.public_key());
        assert_eq!(second.ephemeral, sender.public_key());
        assert_ne!(first.nonce, second.nonce);
        assert_ne!(first.ciphertext, second.ciphertext);
        for sealed in [&first, &second] {
            let opened = open_sealed(
                &recipient,
                &sealed.ephemeral,
                &sealed.nonce,
                b"info",
                b"aad",
                &sealed.ciphertext,
            )?;
            assert_eq!(opened.as_slice(), b"key");
        }
        assert!(matches!(
            seal_from(&sender, &[0; 32], b"info", b"aad", b"key"),
            Err(Error::WeakKey)
        ));
        assert_eq!(format!("{sender:?}"), "SenderKey(..)");
        Ok(())
    }
}

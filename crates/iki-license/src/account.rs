//! Account slots (docs/format.md sections 3.2, 8.2 and 8.3; SPEC behaviour rule 7): the key
//! service side ([`ServiceKeys::create_account_blob`], [`ServiceKeys::unwrap_account_blob`])
//! and the app side ([`seal_content_key_for_account`], [`AccountUnwrap`]).
//!
//! ```text
//! client -> service : content key sealed to the service's X25519 key,
//!                     context "iki-account-slot-v1" || 0x00 || account_id
//! blob              : version(u8 = 1) nonce(24) wrapped(48)
//! wrapped           = XChaCha20-Poly1305(kek_account, nonce,
//!                       aad = "iki-account-slot-v1" || 0x00 || account_id, content_key)
//! kek_account       = HKDF-SHA256(ikm = root, salt = "", info = "account-kek-v1" || account_id)
//! service -> client : content key sealed to the client's ephemeral key,
//!                     context "iki-account-unwrap-v1" || 0x00 || account_id
//! ```
//!
//! The account id is bound twice: in the kek and in the AAD, so a blob presented under
//! another account id fails with `DECRYPT_FAILED`. The route checks that the signed-in
//! account is the one named; this module only ever answers for the name it is given.
//!
//! Zeroization: content keys and keks are [`SecretKey32`] values (or `Zeroizing` buffers
//! from `open_sealed`) dropped before each function returns; the client's ephemeral secret
//! is an [`X25519Secret`] consumed by [`AccountUnwrap::open`].

use core::fmt;

use iki_crypto::{
    derive, labels, open_sealed, random_bytes, seal_to, unwrap_key, wrap_key, SecretKey32,
    X25519Secret, WRAPPED_KEY_BYTES, XNONCE_BYTES,
};

use crate::error::Error;
use crate::service::ServiceKeys;
use crate::types::{check_account_id, SealedKey};

/// Version byte of the account blob layout.
pub const ACCOUNT_BLOB_VERSION: u8 = 1;
/// Length of an account blob: version, nonce and wrapped key.
pub const ACCOUNT_BLOB_BYTES: usize = 1 + XNONCE_BYTES + WRAPPED_KEY_BYTES;

impl ServiceKeys {
    /// Makes the blob of an account slot from the client's content key sealed to
    /// [`ServiceKeys::x25519_public`] for `account_id` (see [`seal_content_key_for_account`]).
    ///
    /// # Errors
    /// `DECRYPT_FAILED` when the sealed key was not sealed to this service for this account,
    /// `WEAK_KEY` for a low-order ephemeral key, `INVALID_ARGUMENT` for a bad account id.
    pub fn create_account_blob(
        &self,
        account_id: &str,
        sealed_content_key: &SealedKey,
    ) -> Result<Vec<u8>, Error> {
        check_account_id(account_id)?;
        let context = labels::context(labels::ACCOUNT_SLOT_V1, account_id.as_bytes());
        let content_key = open_key(&self.x25519, sealed_content_key, &context)?;
        let kek = derive::account_kek(&self.root, account_id);
        let nonce: [u8; XNONCE_BYTES] = random_bytes()?;
        let wrapped = wrap_key(&kek, &nonce, &context, &content_key)?;
        let mut blob = Vec::with_capacity(ACCOUNT_BLOB_BYTES);
        blob.push(ACCOUNT_BLOB_VERSION);
        blob.extend_from_slice(&nonce);
        blob.extend_from_slice(&wrapped);
        Ok(blob)
    }

    /// Unwraps an account slot's blob for `account_id`, the signed-in account named in the
    /// slot, and seals the content key to the client's ephemeral key with context
    /// `"iki-account-unwrap-v1" || 0x00 || account_id`.
    ///
    /// # Errors
    /// `DECRYPT_FAILED` when the blob is not this service's blob for `account_id`,
    /// `INVALID_ARGUMENT` for a blob of the wrong length, `UNSUPPORTED_ALGORITHM` for an
    /// unknown blob version, `WEAK_KEY` for a low-order client key.
    pub fn unwrap_account_blob(
        &self,
        account_id: &str,
        blob: &[u8],
        client_public: &[u8; 32],
    ) -> Result<SealedKey, Error> {
        check_account_id(account_id)?;
        // The length first (docs/format.md 8.3): a short blob of any first byte is malformed,
        // not of an unknown version.
        if blob.len() != ACCOUNT_BLOB_BYTES {
            return Err(Error::argument("account blob is not 73 bytes"));
        }
        let (version, rest) = blob
            .split_first()
            .ok_or(Error::argument("account blob is empty"))?;
        if *version != ACCOUNT_BLOB_VERSION {
            return Err(iki_format::Error::UnsupportedAlgorithm {
                field: "account blob version",
                value: *version,
            }
            .into());
        }
        let (nonce, wrapped) = rest
            .split_first_chunk::<XNONCE_BYTES>()
            .ok_or(Error::argument("account blob is not 73 bytes"))?;
        let wrapped: &[u8; WRAPPED_KEY_BYTES] = wrapped
            .try_into()
            .map_err(|_| Error::argument("account blob is not 73 bytes"))?;
        let slot_context = labels::context(labels::ACCOUNT_SLOT_V1, account_id.as_bytes());
        let kek = derive::account_kek(&self.root, account_id);
        let content_key = unwrap_key(&kek, nonce, &slot_context, wrapped)?;
        let context = labels::context(labels::ACCOUNT_UNWRAP_V1, account_id.as_bytes());
        SealedKey::from_sealed(seal_to(
            client_public,
            &context,
            &context,
            content_key.expose_secret(),
        )?)
    }
}

/// App side: seals a content key to the key service (`service_public`, its
/// [`ServiceKeys::x25519_public`]) for an account slot of `account_id`.
///
/// # Errors
/// `WEAK_KEY` for a low-order service key, `INVALID_ARGUMENT` for a bad account id.
pub fn seal_content_key_for_account(
    service_public: &[u8; 32],
    account_id: &str,
    content_key: &SecretKey32,
) -> Result<SealedKey, Error> {
    check_account_id(account_id)?;
    let context = labels::context(labels::ACCOUNT_SLOT_V1, account_id.as_bytes());
    SealedKey::from_sealed(seal_to(
        service_public,
        &context,
        &context,
        content_key.expose_secret(),
    )?)
}

/// App side of an unwrap: an ephemeral X25519 key made and kept inside, whose public half is
/// sent with the request, and which opens the answer once.
pub struct AccountUnwrap {
    secret: X25519Secret,
}

impl AccountUnwrap {
    /// A fresh ephemeral key.
    ///
    /// # Errors
    /// `INVALID_STATE` when the random number generator fails.
    pub fn new() -> Result<Self, Error> {
        Ok(Self {
            secret: X25519Secret::generate()?,
        })
    }

    /// The public key to send to `POST /api/keys/unwrap`.
    #[must_use]
    pub fn public_key(&self) -> [u8; 32] {
        self.secret.public_key()
    }

    /// Opens the service's answer for `account_id`; the ephemeral secret is consumed.
    ///
    /// # Errors
    /// `DECRYPT_FAILED` when the answer is not for this key and account, `WEAK_KEY` for a
    /// low-order ephemeral key in the answer.
    pub fn open(self, account_id: &str, answer: &SealedKey) -> Result<SecretKey32, Error> {
        let context = labels::context(labels::ACCOUNT_UNWRAP_V1, account_id.as_bytes());
        open_key(&self.secret, answer, &context)
    }
}

impl fmt::Debug for AccountUnwrap {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AccountUnwrap")
            .field("public_key", &hex::encode(self.public_key()))
            .finish()
    }
}

/// Opens a sealed 32-byte key with `context` as both HKDF info and AAD (format §8.2).
pub(crate) fn open_key(
    secret: &X25519Secret,
    sealed: &SealedKey,
    context: &[u8],
) -> Result<SecretKey32, Error> {
    let plain = open_sealed(
        secret,
        &sealed.ephemeral,
        &sealed.nonce,
        context,
        context,
        &sealed.sealed,
    )?;
    Ok(SecretKey32::try_from_slice(&plain)?)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn keys() -> ServiceKeys {
        ServiceKeys::from_root(SecretKey32::from_bytes([0xA0; 32]), "https://iki.test").unwrap()
    }

    #[test]
    fn blob_round_trip_for_the_named_account_only() {
        let service = keys();
        let content_key = SecretKey32::from_bytes([0xC4; 32]);
        let sealed =
            seal_content_key_for_account(&service.x25519_public(), "acct_ada", &content_key)
                .unwrap();
        let blob = service.create_account_blob("acct_ada", &sealed).unwrap();
        assert_eq!(blob.len(), ACCOUNT_BLOB_BYTES);
        assert_eq!(blob[0], ACCOUNT_BLOB_VERSION);

        let client = AccountUnwrap::new().unwrap();
        let answer = service
            .unwrap_account_blob("acct_ada", &blob, &client.public_key())
            .unwrap();
        assert_eq!(
            client.open("acct_ada", &answer).unwrap().expose_secret(),
            &[0xC4; 32]
        );

        let client = AccountUnwrap::new().unwrap();
        let err = service
            .unwrap_account_blob("acct_bob", &blob, &client.public_key())
            .unwrap_err();
        assert_eq!(err.code(), "DECRYPT_FAILED");
        // Sealed for one account, presented for another.
        assert_eq!(
            service
                .create_account_blob("acct_bob", &sealed)
                .unwrap_err()
                .code(),
            "DECRYPT_FAILED"
        );
        // Another service's blob.
        let other = ServiceKeys::from_root(SecretKey32::from_bytes([0xA1; 32]), "https://iki.test")
            .unwrap();
        assert_eq!(
            other
                .unwrap_account_blob("acct_ada", &blob, &client.public_key())
                .unwrap_err()
                .code(),
            "DECRYPT_FAILED"
        );
    }

    #[test]
    fn unwrap_answer_opens_only_for_its_key_and_account() {
        let service = keys();
        let sealed = seal_content_key_for_account(
            &service.x25519_public(),
            "a",
            &SecretKey32::from_bytes([1; 32]),
        )
        .unwrap();
        let blob = service.create_account_blob("a", &sealed).unwrap();
        let (client, stranger) = (AccountUnwrap::new().unwrap(), AccountUnwrap::new().unwrap());
        let answer = service
            .unwrap_account_blob("a", &blob, &client.public_key())
            .unwrap();
        assert_eq!(
            stranger.open("a", &answer).unwrap_err().code(),
            "DECRYPT_FAILED"
        );
        assert_eq!(
            client.open("b", &answer).unwrap_err().code(),
            "DECRYPT_FAILED"
        );
        let mut low_order = [0u8; 32];
        low_order[0] = 1;
        assert_eq!(
            service
                .unwrap_account_blob("a", &blob, &low_order)
                .unwrap_err()
                .code(),
            "WEAK_KEY"
        );
    }

    #[test]
    fn malformed_blobs_are_refused() {
        let service = keys();
        let client = [9u8; 32];
        let sealed = seal_content_key_for_account(
            &service.x25519_public(),
            "a",
            &SecretKey32::from_bytes([1; 32]),
        )
        .unwrap();
        let blob = service.create_account_blob("a", &sealed).unwrap();
        let code = |b: &[u8]| {
            service
                .unwrap_account_blob("a", b, &client)
                .unwrap_err()
                .code()
        };
        assert_eq!(code(&[]), "INVALID_ARGUMENT");
        assert_eq!(code(&blob[..ACCOUNT_BLOB_BYTES - 1]), "INVALID_ARGUMENT");
        assert_eq!(code(&[&blob[..], &[0]].concat()), "INVALID_ARGUMENT");
        // Whatever the first byte, a wrong length is the blob's fault, not its version's.
        assert_eq!(code(&[2, 0, 0, 0]), "INVALID_ARGUMENT");
        assert_eq!(
            code(&[&[2u8][..], &blob[1..], &[0]].concat()),
            "INVALID_ARGUMENT"
        );
        let mut v2 = blob.clone();
        v2[0] = 2;
        assert_eq!(code(&v2), "UNSUPPORTED_ALGORITHM");
        let mut flipped = blob;
        flipped[40] ^= 1;
        assert_eq!(code(&flipped), "DECRYPT_FAILED");
    }
}

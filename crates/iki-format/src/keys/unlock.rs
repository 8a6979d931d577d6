//! Opening key slots for a reader (docs/format.md sections 3.1, 3.3).
//!
//! Every slot of the asked kind is tried in file order. The error reports the best reason
//! found: `DECRYPT_FAILED` if a usable slot did not open (wrong password or key, or a slot
//! moved from another file), else `KDF_PARAMS_REFUSED`, else `UNSUPPORTED_ALGORITHM` (only
//! unknown KDFs), else `KEY_REQUIRED` (no slot of that kind). Argon2 cost is checked against
//! the ceilings before any memory is allocated.

use iki_crypto::{
    argon2id, labels, unwrap_key, x25519_kek, Argon2Params, SecretKey32, X25519Secret,
};

use super::{
    password_aad_fields, slot_aad, PasswordSlot, RecipientSlot, Slot, KDF_ARGON2ID, SLOT_PASSWORD,
    SLOT_RECIPIENT,
};
use crate::error::Error;
use crate::limits::{ARGON2_MAX_M_KIB, ARGON2_MAX_P, ARGON2_MAX_T, ARGON2_MIN_M_KIB_PER_LANE};

/// Checks Argon2id cost against the readers' ceilings: `8 * p <= m_kib <= 262144`,
/// `1 <= t <= 10`, `1 <= p <= 4`.
///
/// # Errors
/// `KDF_PARAMS_REFUSED` with the parameters.
pub fn check_kdf_params(params: &Argon2Params) -> Result<(), Error> {
    let Argon2Params { m_kib, t, p } = *params;
    let p_ok = (1..=ARGON2_MAX_P).contains(&p);
    let m_ok = m_kib <= ARGON2_MAX_M_KIB
        && u64::from(m_kib) >= u64::from(ARGON2_MIN_M_KIB_PER_LANE) * u64::from(p);
    let t_ok = (1..=ARGON2_MAX_T).contains(&t);
    if p_ok && m_ok && t_ok {
        Ok(())
    } else {
        Err(Error::KdfParamsRefused { m_kib, t, p })
    }
}

/// Better-reason ordering of unlock failures.
fn rank(error: &Error) -> u8 {
    match error {
        Error::KeyRequired => 0,
        Error::UnsupportedAlgorithm { .. } => 1,
        Error::KdfParamsRefused { .. } => 2,
        _ => 3,
    }
}

fn keep_best(best: &mut Error, next: Error) {
    if rank(&next) > rank(best) {
        *best = next;
    }
}

/// Opens the content key with a password.
///
/// # Errors
/// See the module documentation.
pub fn unlock_password(
    slots: &[Slot],
    file_id: &[u8; 16],
    password: &[u8],
) -> Result<SecretKey32, Error> {
    let mut best = Error::KeyRequired;
    for slot in slots {
        let Slot::Password(slot) = slot else { continue };
        match open_password(slot, file_id, password) {
            Ok(key) => return Ok(key),
            Err(e) => keep_best(&mut best, e),
        }
    }
    Err(best)
}

fn open_password(
    slot: &PasswordSlot,
    file_id: &[u8; 16],
    password: &[u8],
) -> Result<SecretKey32, Error> {
    if slot.kdf != KDF_ARGON2ID {
        return Err(Error::UnsupportedAlgorithm {
            field: "kdf",
            value: slot.kdf,
        });
    }
    check_kdf_params(&slot.params)?;
    // kek is zeroized when it drops at the end of this function.
    let kek = argon2id(password, &slot.salt, &slot.params)?;
    let aad = slot_aad(file_id, SLOT_PASSWORD, &password_aad_fields(slot));
    unwrap_key(&kek, &slot.nonce, &aad, &slot.wrapped).map_err(|_| Error::DecryptFailed)
}

/// Opens the content key with an X25519 identity: the recipient slots naming its public key.
///
/// # Errors
/// `WEAK_KEY` for a low-order ephemeral key; otherwise see the module documentation (a
/// file with recipient slots, none for this identity, is `DECRYPT_FAILED`).
pub fn unlock_identity(
    slots: &[Slot],
    file_id: &[u8; 16],
    secret: &X25519Secret,
) -> Result<SecretKey32, Error> {
    let public = secret.public_key();
    let mut best = Error::KeyRequired;
    for slot in slots {
        let Slot::Recipient(slot) = slot else {
            continue;
        };
        if slot.recipient != public {
            keep_best(&mut best, Error::DecryptFailed);
            continue;
        }
        match open_recipient(slot, file_id, secret) {
            Ok(key) => return Ok(key),
            Err(Error::WeakKey) => return Err(Error::WeakKey),
            Err(e) => keep_best(&mut best, e),
        }
    }
    Err(best)
}

fn open_recipient(
    slot: &RecipientSlot,
    file_id: &[u8; 16],
    secret: &X25519Secret,
) -> Result<SecretKey32, Error> {
    // kek is zeroized when it drops at the end of this function.
    let kek = x25519_kek(
        secret,
        &slot.ephemeral,
        &slot.ephemeral,
        &slot.recipient,
        labels::RECIPIENT_V1,
    )?;
    let mut before_nonce = slot.recipient.to_vec();
    before_nonce.extend_from_slice(&slot.ephemeral);
    let aad = slot_aad(file_id, SLOT_RECIPIENT, &before_nonce);
    unwrap_key(&kek, &slot.nonce, &aad, &slot.wrapped).map_err(|_| Error::DecryptFailed)
}

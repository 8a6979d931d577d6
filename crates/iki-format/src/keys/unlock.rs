//! Opening key slots for a reader (docs/format.md sections 3.1, 3.3).
//!
//! Every slot of the asked kind is tried in file order. The error reports the best reason
//! found: `LIMIT_EXCEEDED` if a password slot was left untried (beyond
//! `MAX_PASSWORD_SLOTS_TRIED` derivations or the `MAX_UNLOCK_ARGON2_KIB_PASSES` budget), else
//! `DECRYPT_FAILED` if a usable slot did not open (wrong password or key, or a slot moved
//! from another file), else `KDF_PARAMS_REFUSED`, else `UNSUPPORTED_ALGORITHM` (only
//! unknown KDFs), else `KEY_REQUIRED` (no slot of that kind). Argon2 cost is checked against
//! the ceilings and the unlock's budget before any memory is allocated.
//!
//! A password unlock is a [`PasswordAttempt`] that derives at most one key per step, so a
//! caller can check for cancellation between slots; [`unlock_password`] runs every step.

use iki_crypto::{
    argon2id, labels, unwrap_key, x25519_kek, Argon2Params, SecretKey32, X25519Secret,
};

use super::{
    password_aad_fields, slot_aad, PasswordSlot, RecipientSlot, Slot, KDF_ARGON2ID, SLOT_PASSWORD,
    SLOT_RECIPIENT,
};
use crate::error::Error;
use crate::limits::{
    ARGON2_MAX_M_KIB, ARGON2_MAX_P, ARGON2_MAX_T, ARGON2_MIN_M_KIB_PER_LANE,
    MAX_PASSWORD_SLOTS_TRIED, MAX_UNLOCK_ARGON2_KIB_PASSES,
};

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
        // A slot left untried may be the one this password opens: say so rather than
        // "wrong password".
        Error::LimitExceeded { .. } => 4,
        _ => 3,
    }
}

fn keep_best(best: &mut Error, next: Error) {
    if rank(&next) > rank(best) {
        *best = next;
    }
}

/// The Argon2id work of one derivation, in KiB × passes (lanes share the memory).
fn kdf_cost(params: &Argon2Params) -> u64 {
    u64::from(params.m_kib) * u64::from(params.t)
}

/// Checks the password slots a writer is asked for against what one unlock tries: at most
/// `MAX_PASSWORD_SLOTS_TRIED` slots whose costs sum to at most
/// `MAX_UNLOCK_ARGON2_KIB_PASSES`, so a reader tries every slot written.
///
/// # Errors
/// `KDF_PARAMS_REFUSED` for a cost above the ceilings, `LIMIT_EXCEEDED` naming the limit.
pub fn check_password_slot_costs(costs: &[Argon2Params]) -> Result<(), Error> {
    costs.iter().try_for_each(check_kdf_params)?;
    let count = costs.len() as u64;
    if count > u64::from(MAX_PASSWORD_SLOTS_TRIED) {
        return Err(Error::limit(
            "MAX_PASSWORD_SLOTS_TRIED",
            count,
            MAX_PASSWORD_SLOTS_TRIED.into(),
        ));
    }
    let total: u64 = costs.iter().map(kdf_cost).sum();
    if total > MAX_UNLOCK_ARGON2_KIB_PASSES {
        return Err(Error::limit(
            "MAX_UNLOCK_ARGON2_KIB_PASSES",
            total,
            MAX_UNLOCK_ARGON2_KIB_PASSES,
        ));
    }
    Ok(())
}

/// One password unlock in progress: the next slot to look at, the derivations made and the
/// Argon2id work spent so far, and the best reason for a refusal met so far.
#[derive(Debug)]
pub struct PasswordAttempt {
    next: usize,
    derived: u32,
    spent: u64,
    best: Error,
}

impl Default for PasswordAttempt {
    fn default() -> Self {
        Self {
            next: 0,
            derived: 0,
            spent: 0,
            best: Error::KeyRequired,
        }
    }
}

impl PasswordAttempt {
    /// Looks at the following slots and derives a key for at most one of them: `Some(key)`
    /// when it opened, `None` when more slots remain (call again, with the same password).
    ///
    /// # Errors
    /// When no slot is left, the best reason of the module documentation.
    pub fn step(
        &mut self,
        slots: &[Slot],
        file_id: &[u8; 16],
        password: &[u8],
    ) -> Result<Option<SecretKey32>, Error> {
        while let Some(slot) = slots.get(self.next) {
            self.next += 1;
            let Slot::Password(slot) = slot else { continue };
            let cost = match self.admit(slot, slots) {
                Ok(cost) => cost,
                Err(e) => {
                    keep_best(&mut self.best, e);
                    continue;
                }
            };
            self.derived += 1;
            self.spent += cost;
            return match open_password(slot, file_id, password) {
                Ok(key) => Ok(Some(key)),
                Err(e) => {
                    keep_best(&mut self.best, e);
                    Ok(None)
                }
            };
        }
        Err(self.best.clone())
    }

    /// The cost of deriving `slot`'s key, or why it is not derived.
    fn admit(&self, slot: &PasswordSlot, slots: &[Slot]) -> Result<u64, Error> {
        if slot.kdf != KDF_ARGON2ID {
            return Err(Error::UnsupportedAlgorithm {
                field: "kdf",
                value: slot.kdf,
            });
        }
        check_kdf_params(&slot.params)?;
        if self.derived >= MAX_PASSWORD_SLOTS_TRIED {
            let count = slots
                .iter()
                .filter(|s| matches!(s, Slot::Password(_)))
                .count();
            return Err(Error::limit(
                "MAX_PASSWORD_SLOTS_TRIED",
                count as u64,
                MAX_PASSWORD_SLOTS_TRIED.into(),
            ));
        }
        let cost = kdf_cost(&slot.params);
        if self.spent + cost > MAX_UNLOCK_ARGON2_KIB_PASSES {
            return Err(Error::limit(
                "MAX_UNLOCK_ARGON2_KIB_PASSES",
                self.spent + cost,
                MAX_UNLOCK_ARGON2_KIB_PASSES,
            ));
        }
        Ok(cost)
    }
}

/// Opens the content key with a password: every step of a [`PasswordAttempt`].
///
/// # Errors
/// See the module documentation.
pub fn unlock_password(
    slots: &[Slot],
    file_id: &[u8; 16],
    password: &[u8],
) -> Result<SecretKey32, Error> {
    let mut attempt = PasswordAttempt::default();
    loop {
        if let Some(key) = attempt.step(slots, file_id, password)? {
            return Ok(key);
        }
    }
}

fn open_password(
    slot: &PasswordSlot,
    file_id: &[u8; 16],
    password: &[u8],
) -> Result<SecretKey32, Error> {
    // The slot's kdf, cost ceilings and the unlock's budget were checked by `admit`.
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

#[cfg(test)]
mod tests {
    use super::*;

    const fn params(m_kib: u32, t: u32) -> Argon2Params {
        Argon2Params { m_kib, t, p: 1 }
    }

    fn slot(m_kib: u32, t: u32) -> PasswordSlot {
        PasswordSlot {
            kdf: KDF_ARGON2ID,
            params: params(m_kib, t),
            salt: [0; 16],
            nonce: [0; 24],
            wrapped: [0; 48],
        }
    }

    #[test]
    fn writer_check_at_and_past_both_limits() {
        assert!(check_password_slot_costs(&[params(8, 1); 4]).is_ok());
        assert_eq!(
            check_password_slot_costs(&[params(8, 1); 5])
                .unwrap_err()
                .code(),
            "LIMIT_EXCEEDED"
        );
        // Exactly the budget: one ceiling slot split over two.
        assert!(check_password_slot_costs(&[params(262_144, 9), params(262_144, 1)]).is_ok());
        assert!(check_password_slot_costs(&[params(262_144, 10)]).is_ok());
        assert_eq!(
            check_password_slot_costs(&[params(262_144, 10), params(8, 1)]).unwrap_err(),
            Error::limit(
                "MAX_UNLOCK_ARGON2_KIB_PASSES",
                MAX_UNLOCK_ARGON2_KIB_PASSES + 8,
                MAX_UNLOCK_ARGON2_KIB_PASSES
            )
        );
        // A cost above the ceilings is named as such, not as the budget.
        assert_eq!(
            check_password_slot_costs(&[params(262_145, 10)])
                .unwrap_err()
                .code(),
            "KDF_PARAMS_REFUSED"
        );
    }

    #[test]
    fn reader_admits_up_to_the_budget_and_the_slot_count() {
        let slots = vec![Slot::Password(slot(8, 1)); 5];
        let spent = MAX_UNLOCK_ARGON2_KIB_PASSES - 262_144;
        let at = PasswordAttempt {
            spent,
            ..PasswordAttempt::default()
        };
        assert_eq!(at.admit(&slot(262_144, 1), &slots), Ok(262_144));
        assert_eq!(
            at.admit(&slot(262_144, 2), &slots).unwrap_err(),
            Error::limit(
                "MAX_UNLOCK_ARGON2_KIB_PASSES",
                spent + 2 * 262_144,
                MAX_UNLOCK_ARGON2_KIB_PASSES
            )
        );
        let fourth = PasswordAttempt {
            derived: MAX_PASSWORD_SLOTS_TRIED - 1,
            ..PasswordAttempt::default()
        };
        assert!(fourth.admit(&slot(8, 1), &slots).is_ok());
        let fifth = PasswordAttempt {
            derived: MAX_PASSWORD_SLOTS_TRIED,
            ..PasswordAttempt::default()
        };
        assert_eq!(
            fifth.admit(&slot(8, 1), &slots).unwrap_err(),
            Error::limit("MAX_PASSWORD_SLOTS_TRIED", 5, 4)
        );
    }
}

//! Sealing new key slots for a writer (docs/format.md sections 3.1 to 3.4).
//!
//! Salts, nonces and ephemeral X25519 keys come from the OS random source. Test-vector
//! generators may instead ask for [`SlotEntropy::FixedForTestVectors`], which derives them
//! from a seed with HKDF so that vectors are reproducible; a real file must never use it
//! (two files written with the same seed and password would reuse a wrap nonce).

use iki_crypto::{
    argon2id, fill_random, hkdf_sha256_into, labels, wrap_key, x25519_kek, Argon2Params,
    SecretKey32, X25519Secret,
};
use zeroize::Zeroizing;

use super::{
    check_kdf_params, check_password_slot_costs, password_aad_fields, slot_aad, PasswordSlot,
    RecipientSlot, Slot, KDF_ARGON2ID, SLOT_PASSWORD, SLOT_RECIPIENT,
};
use crate::error::Error;

/// Label of the test-vector entropy derivation; never part of a file.
const TEST_VECTOR_ENTROPY: &[u8] = b"iki-test-vector-slot-entropy";

/// A key slot a writer is asked to add.
pub enum NewSlot {
    /// A password slot; the password is zeroized when this value drops.
    Password {
        /// The password's UTF-8 bytes (NFC-normalised by the app and CLI).
        password: Zeroizing<Vec<u8>>,
        /// Argon2id cost; must be within the readers' ceilings (section 3.1).
        params: Argon2Params,
    },
    /// A recipient slot sealed to an X25519 public key.
    Recipient {
        /// The recipient's X25519 public key.
        public_key: [u8; 32],
    },
    /// An account slot whose blob the key service made.
    Account {
        /// Account id, 1 to 256 bytes.
        account_id: String,
        /// The key service's blob.
        blob: Vec<u8>,
    },
    /// A license slot (the content key must then be the license key).
    License {
        /// Service identifier (its base URL).
        service: String,
        /// 16 lowercase hex digits.
        license_id: String,
        /// Master id, 1 to 256 bytes.
        master_id: String,
    },
    /// A slot of a type this version does not define (5 to 255), written as given. Only
    /// for forward-compatibility tests: readers keep and skip it.
    Unknown {
        /// Slot type, not 1 to 4.
        slot_type: u8,
        /// Body bytes.
        body: Vec<u8>,
    },
}

impl core::fmt::Debug for NewSlot {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            Self::Password { params, .. } => write!(
                f,
                "NewSlot::Password {{ password: .., params: {params:?} }}"
            ),
            Self::Recipient { .. } => f.write_str("NewSlot::Recipient"),
            Self::Account { account_id, .. } => {
                write!(f, "NewSlot::Account {{ account_id: {account_id:?} }}")
            }
            Self::License { license_id, .. } => {
                write!(f, "NewSlot::License {{ license_id: {license_id:?} }}")
            }
            Self::Unknown { slot_type, .. } => {
                write!(f, "NewSlot::Unknown {{ slot_type: {slot_type} }}")
            }
        }
    }
}

/// Where a writer's slot salts, nonces and ephemeral keys come from.
#[derive(Clone, Default)]
pub enum SlotEntropy {
    /// The operating system's random source (always, for real files).
    #[default]
    Os,
    /// HKDF of this seed, file_id and a counter: reproducible test vectors only.
    FixedForTestVectors([u8; 32]),
}

impl core::fmt::Debug for SlotEntropy {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            Self::Os => f.write_str("Os"),
            Self::FixedForTestVectors(_) => f.write_str("FixedForTestVectors(..)"),
        }
    }
}

struct Entropy<'a> {
    source: &'a SlotEntropy,
    file_id: [u8; 16],
    counter: u64,
}

impl Entropy<'_> {
    fn fill(&mut self, buf: &mut [u8]) -> Result<(), Error> {
        match self.source {
            SlotEntropy::Os => fill_random(buf)?,
            SlotEntropy::FixedForTestVectors(seed) => {
                self.counter += 1;
                hkdf_sha256_into(
                    seed,
                    &self.file_id,
                    &[TEST_VECTOR_ENTROPY, &self.counter.to_le_bytes()],
                    buf,
                )?;
            }
        }
        Ok(())
    }

    fn array<const N: usize>(&mut self) -> Result<[u8; N], Error> {
        let mut out = [0u8; N];
        self.fill(&mut out)?;
        Ok(out)
    }
}

/// Seals every new slot around `content_key` for the file `file_id`.
///
/// # Errors
/// `KDF_PARAMS_REFUSED` for Argon2 parameters readers would refuse, `LIMIT_EXCEEDED` for
/// more password slots (or more Argon2id work) than one unlock tries, `WEAK_KEY` for a
/// low-order recipient, `INVALID_ARGUMENT` for an unknown slot with a known type number,
/// and the layout errors of [`Slot::body`].
pub fn seal_slots(
    new: &[NewSlot],
    file_id: [u8; 16],
    content_key: &SecretKey32,
    entropy: &SlotEntropy,
) -> Result<Vec<Slot>, Error> {
    let costs: Vec<Argon2Params> = new
        .iter()
        .filter_map(|slot| match slot {
            NewSlot::Password { params, .. } => Some(*params),
            _ => None,
        })
        .collect();
    check_password_slot_costs(&costs)?;
    let mut entropy = Entropy {
        source: entropy,
        file_id,
        counter: 0,
    };
    new.iter()
        .map(|slot| seal_one(slot, file_id, content_key, &mut entropy))
        .collect()
}

fn seal_one(
    new: &NewSlot,
    file_id: [u8; 16],
    key: &SecretKey32,
    entropy: &mut Entropy<'_>,
) -> Result<Slot, Error> {
    let slot = match new {
        NewSlot::Password { password, params } => {
            seal_password(password, *params, file_id, key, entropy)?
        }
        NewSlot::Recipient { public_key } => seal_recipient(public_key, file_id, key, entropy)?,
        NewSlot::Account { account_id, blob } => Slot::Account {
            account_id: account_id.clone(),
            blob: blob.clone(),
        },
        NewSlot::License {
            service,
            license_id,
            master_id,
        } => Slot::License {
            service: service.clone(),
            license_id: license_id.clone(),
            master_id: master_id.clone(),
        },
        NewSlot::Unknown { slot_type, body } => {
            if (1..=4).contains(slot_type) {
                return Err(Error::argument("unknown slot with a known type number"));
            }
            Slot::Unknown {
                slot_type: *slot_type,
                body: body.clone(),
            }
        }
    };
    slot.body()?; // Checks the layout rules now rather than when KEYS is written.
    Ok(slot)
}

fn seal_password(
    password: &[u8],
    params: Argon2Params,
    file_id: [u8; 16],
    key: &SecretKey32,
    entropy: &mut Entropy<'_>,
) -> Result<Slot, Error> {
    check_kdf_params(&params)?;
    let mut slot = PasswordSlot {
        kdf: KDF_ARGON2ID,
        params,
        salt: entropy.array()?,
        nonce: entropy.array()?,
        wrapped: [0; 48],
    };
    // kek is zeroized when it drops at the end of this function.
    let kek = argon2id(password, &slot.salt, &params)?;
    let aad = slot_aad(&file_id, SLOT_PASSWORD, &password_aad_fields(&slot));
    slot.wrapped = wrap_key(&kek, &slot.nonce, &aad, key)?;
    Ok(Slot::Password(slot))
}

fn seal_recipient(
    recipient: &[u8; 32],
    file_id: [u8; 16],
    key: &SecretKey32,
    entropy: &mut Entropy<'_>,
) -> Result<Slot, Error> {
    let ephemeral = match entropy.source {
        SlotEntropy::Os => X25519Secret::generate()?,
        SlotEntropy::FixedForTestVectors(_) => {
            X25519Secret::from_key(SecretKey32::from_bytes(entropy.array()?))
        }
    };
    let ephemeral_public = ephemeral.public_key();
    // The ephemeral secret and kek are zeroized when they drop at the end of this function.
    let kek = x25519_kek(
        &ephemeral,
        recipient,
        &ephemeral_public,
        recipient,
        labels::RECIPIENT_V1,
    )?;
    let nonce = entropy.array()?;
    let mut before_nonce = recipient.to_vec();
    before_nonce.extend_from_slice(&ephemeral_public);
    let aad = slot_aad(&file_id, SLOT_RECIPIENT, &before_nonce);
    let wrapped = wrap_key(&kek, &nonce, &aad, key)?;
    Ok(Slot::Recipient(RecipientSlot {
        recipient: *recipient,
        ephemeral: ephemeral_public,
        nonce,
        wrapped,
    }))
}

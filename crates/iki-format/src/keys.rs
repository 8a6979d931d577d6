//! The KEYS chunk and its key slots (docs/format.md section 3).
//!
//! ```text
//! KEYS = count(u16, 1..64) slot{count}
//! slot = type(u8) length(u16) body(length)
//! ```
//!
//! Parsing keeps unknown slot types (type and body) so they can be shown and skipped.
//! Sealing new slots lives in [`seal`], opening them in [`unlock`].

mod seal;
mod unlock;

use iki_crypto::{Argon2Params, WRAPPED_KEY_BYTES, XNONCE_BYTES};

use crate::chunk::KEYS;
use crate::cursor::{put_u16_bytes, Cursor};
use crate::error::Error;
use crate::limits::{
    MAX_ACCOUNT_ID_BYTES, MAX_KEYS_PAYLOAD_BYTES, MAX_KEY_SLOTS, MAX_MASTER_ID_BYTES,
    MIN_ACCOUNT_ID_BYTES, MIN_KEY_SLOTS,
};
use crate::manifest::is_lower_hex;

pub use seal::{seal_slots, NewSlot, SlotEntropy};
pub use unlock::{
    check_kdf_params, check_password_slot_costs, unlock_identity, unlock_password, PasswordAttempt,
};

/// Slot type 1: password (Argon2id).
pub const SLOT_PASSWORD: u8 = 1;
/// Slot type 2: account (key service).
pub const SLOT_ACCOUNT: u8 = 2;
/// Slot type 3: recipient (X25519).
pub const SLOT_RECIPIENT: u8 = 3;
/// Slot type 4: license (names the license key; no key material).
pub const SLOT_LICENSE: u8 = 4;
/// KDF id of Argon2id version 0x13 in a password slot.
pub const KDF_ARGON2ID: u8 = 1;
/// Body length of a password slot.
pub const PASSWORD_SLOT_BYTES: usize = 101;
/// Body length of a recipient slot.
pub const RECIPIENT_SLOT_BYTES: usize = 136;

/// A password slot (section 3.1).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PasswordSlot {
    /// KDF id; only [`KDF_ARGON2ID`] is usable.
    pub kdf: u8,
    /// Argon2id cost as stored (checked against the ceilings before use).
    pub params: Argon2Params,
    /// Argon2id salt.
    pub salt: [u8; 16],
    /// Nonce of the wrapped key.
    pub nonce: [u8; XNONCE_BYTES],
    /// The content key wrapped under the password's key.
    pub wrapped: [u8; WRAPPED_KEY_BYTES],
}

/// A recipient slot (section 3.3).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RecipientSlot {
    /// X25519 public key the slot is sealed to.
    pub recipient: [u8; 32],
    /// The writer's one-time X25519 public key.
    pub ephemeral: [u8; 32],
    /// Nonce of the wrapped key.
    pub nonce: [u8; XNONCE_BYTES],
    /// The content key wrapped under the X25519-derived key.
    pub wrapped: [u8; WRAPPED_KEY_BYTES],
}

/// One key slot as found in KEYS. No field is secret.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Slot {
    /// Type 1.
    Password(PasswordSlot),
    /// Type 2: handed to the key service's unwrap call.
    Account {
        /// Account id, 1 to 256 bytes.
        account_id: String,
        /// Opaque blob made by the key service.
        blob: Vec<u8>,
    },
    /// Type 3.
    Recipient(RecipientSlot),
    /// Type 4: the content key is the license key, obtained from `service`.
    License {
        /// Service identifier (its base URL).
        service: String,
        /// 16 lowercase hex digits.
        license_id: String,
        /// Master id, 1 to 256 bytes.
        master_id: String,
    },
    /// A type this version does not know: kept and skipped.
    Unknown {
        /// The slot type.
        slot_type: u8,
        /// The body, as found.
        body: Vec<u8>,
    },
}

impl Slot {
    /// The slot's type byte.
    #[must_use]
    pub fn slot_type(&self) -> u8 {
        match self {
            Self::Password(_) => SLOT_PASSWORD,
            Self::Account { .. } => SLOT_ACCOUNT,
            Self::Recipient(_) => SLOT_RECIPIENT,
            Self::License { .. } => SLOT_LICENSE,
            Self::Unknown { slot_type, .. } => *slot_type,
        }
    }

    /// Parses one slot body of a known or unknown type.
    ///
    /// # Errors
    /// `MALFORMED_CHUNK` when a known type's body does not have exactly its layout.
    pub fn parse(slot_type: u8, body: &[u8]) -> Result<Self, Error> {
        let malformed = |reason| Error::malformed(KEYS, reason);
        let mut c = Cursor::new(body);
        let slot = match slot_type {
            SLOT_PASSWORD => {
                parse_password(&mut c).ok_or(malformed("password slot is not 101 bytes"))?
            }
            SLOT_RECIPIENT => {
                parse_recipient(&mut c).ok_or(malformed("recipient slot is not 136 bytes"))?
            }
            SLOT_ACCOUNT => parse_account(&mut c).ok_or(malformed("account slot layout"))?,
            SLOT_LICENSE => parse_license(&mut c).ok_or(malformed("license slot layout"))?,
            _ => {
                return Ok(Self::Unknown {
                    slot_type,
                    body: body.to_vec(),
                })
            }
        };
        if !c.is_empty() {
            return Err(malformed("bytes left over in a slot body"));
        }
        Ok(slot)
    }

    /// The slot's body bytes.
    ///
    /// # Errors
    /// `INVALID_ARGUMENT` when a field breaks the layout's rules (lengths, hex id).
    pub fn body(&self) -> Result<Vec<u8>, Error> {
        let mut out = Vec::new();
        match self {
            Self::Password(s) => {
                out.extend_from_slice(&password_aad_fields(s));
                out.extend_from_slice(&s.nonce);
                out.extend_from_slice(&s.wrapped);
            }
            Self::Recipient(s) => {
                for part in [&s.recipient[..], &s.ephemeral, &s.nonce, &s.wrapped] {
                    out.extend_from_slice(part);
                }
            }
            Self::Account { account_id, blob } => {
                check_account_id(account_id)
                    .ok_or(Error::argument("account id is not 1 to 256 bytes"))?;
                put_u16_bytes(&mut out, account_id.as_bytes())
                    .ok_or(Error::argument("account id"))?;
                put_u16_bytes(&mut out, blob)
                    .ok_or(Error::argument("account blob above 65535 bytes"))?;
            }
            Self::License {
                service,
                license_id,
                master_id,
            } => {
                check_license(license_id, master_id)
                    .ok_or(Error::argument("license id or master id"))?;
                for field in [service, license_id, master_id] {
                    put_u16_bytes(&mut out, field.as_bytes())
                        .ok_or(Error::argument("license slot field"))?;
                }
            }
            Self::Unknown { body, .. } => out.extend_from_slice(body),
        }
        Ok(out)
    }
}

/// kdf, m_kib, t, p and salt: the password-slot bytes before the nonce.
fn password_aad_fields(s: &PasswordSlot) -> Vec<u8> {
    let mut out = Vec::with_capacity(29);
    out.push(s.kdf);
    for v in [s.params.m_kib, s.params.t, s.params.p] {
        out.extend_from_slice(&v.to_le_bytes());
    }
    out.extend_from_slice(&s.salt);
    out
}

/// `slot_aad = file_id(16) || slot type(u8) || every body byte before the nonce`.
#[must_use]
pub fn slot_aad(file_id: &[u8; 16], slot_type: u8, before_nonce: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(17 + before_nonce.len());
    out.extend_from_slice(file_id);
    out.push(slot_type);
    out.extend_from_slice(before_nonce);
    out
}

fn parse_password(c: &mut Cursor<'_>) -> Option<Slot> {
    let kdf = c.u8()?;
    let params = Argon2Params {
        m_kib: c.u32()?,
        t: c.u32()?,
        p: c.u32()?,
    };
    Some(Slot::Password(PasswordSlot {
        kdf,
        params,
        salt: c.array()?,
        nonce: c.array()?,
        wrapped: c.array()?,
    }))
}

fn parse_recipient(c: &mut Cursor<'_>) -> Option<Slot> {
    Some(Slot::Recipient(RecipientSlot {
        recipient: c.array()?,
        ephemeral: c.array()?,
        nonce: c.array()?,
        wrapped: c.array()?,
    }))
}

fn parse_account(c: &mut Cursor<'_>) -> Option<Slot> {
    let account_id = c.u16_str()?;
    check_account_id(account_id)?;
    Some(Slot::Account {
        account_id: account_id.to_owned(),
        blob: c.u16_bytes()?.to_vec(),
    })
}

fn parse_license(c: &mut Cursor<'_>) -> Option<Slot> {
    let (service, license_id, master_id) = (c.u16_str()?, c.u16_str()?, c.u16_str()?);
    check_license(license_id, master_id)?;
    Some(Slot::License {
        service: service.to_owned(),
        license_id: license_id.to_owned(),
        master_id: master_id.to_owned(),
    })
}

fn check_account_id(account_id: &str) -> Option<()> {
    let len = account_id.len();
    (MIN_ACCOUNT_ID_BYTES as usize..=MAX_ACCOUNT_ID_BYTES as usize)
        .contains(&len)
        .then_some(())
}

fn check_license(license_id: &str, master_id: &str) -> Option<()> {
    let master_ok = (1..=MAX_MASTER_ID_BYTES as usize).contains(&master_id.len());
    (is_lower_hex(license_id, 16) && master_ok).then_some(())
}

/// Parses a KEYS payload into its slots.
///
/// # Errors
/// `LIMIT_EXCEEDED` for a count of 0 or above 64, `MALFORMED_CHUNK` when the slots do not
/// fill the payload exactly or a known slot's body is malformed.
pub fn parse_keys(payload: &[u8]) -> Result<Vec<Slot>, Error> {
    let mut c = Cursor::new(payload);
    let count = c
        .u16()
        .ok_or(Error::malformed(KEYS, "payload shorter than its count"))?;
    check_slot_count(usize::from(count))?;
    let mut slots = Vec::with_capacity(usize::from(count));
    for _ in 0..count {
        let slot_type = c.u8().ok_or(Error::malformed(KEYS, "short slot"))?;
        let body = c.u16_bytes().ok_or(Error::malformed(KEYS, "short slot"))?;
        slots.push(Slot::parse(slot_type, body)?);
    }
    if !c.is_empty() {
        return Err(Error::malformed(KEYS, "bytes left over after the slots"));
    }
    Ok(slots)
}

/// Writes a KEYS payload.
///
/// # Errors
/// `LIMIT_EXCEEDED` for a count outside 1..64 or a payload above 65536 bytes,
/// `INVALID_ARGUMENT` for a slot whose fields break its layout.
pub fn write_keys(slots: &[Slot]) -> Result<Vec<u8>, Error> {
    check_slot_count(slots.len())?;
    let mut out = Vec::new();
    out.extend_from_slice(&u16::try_from(slots.len()).unwrap_or(u16::MAX).to_le_bytes());
    for slot in slots {
        out.push(slot.slot_type());
        put_u16_bytes(&mut out, &slot.body()?)
            .ok_or(Error::argument("slot body above 65535 bytes"))?;
    }
    if out.len() > MAX_KEYS_PAYLOAD_BYTES as usize {
        return Err(Error::limit(
            "MAX_KEYS_PAYLOAD_BYTES",
            out.len() as u64,
            MAX_KEYS_PAYLOAD_BYTES.into(),
        ));
    }
    Ok(out)
}

fn check_slot_count(count: usize) -> Result<(), Error> {
    if count < MIN_KEY_SLOTS as usize {
        return Err(Error::limit(
            "MIN_KEY_SLOTS",
            count as u64,
            MIN_KEY_SLOTS.into(),
        ));
    }
    if count > MAX_KEY_SLOTS as usize {
        return Err(Error::limit(
            "MAX_KEY_SLOTS",
            count as u64,
            MAX_KEY_SLOTS.into(),
        ));
    }
    Ok(())
}

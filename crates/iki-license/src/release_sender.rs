//! The service's side of the key release seal (docs/format.md §8.2, SPEC behaviour rule 4),
//! kept for a bounded number of releases and a bounded time instead of drawn per release.
//!
//! SPEC's crypto table names the construction "ephemeral-static": the player's key is the
//! ephemeral one, made per session inside its WebAssembly module. The service's key pair in
//! §8.2 only has to be one the service holds; a fresh pair per release cost a base-point
//! multiplication (about a fifth of a release's seal in WebAssembly, issue 28 item 1) and
//! added no secrecy: whoever can read the service's memory reads the root secret every
//! license key is derived from (§8.1), so a key pair kept for a minute opens nothing more
//! than that memory already does. Each release still draws its own 192-bit nonce, so two
//! releases to the same player key never repeat a (kek, nonce) pair.
//!
//! The pair is replaced after [`RELEASE_SENDER_MAX_USES`] seals or [`RELEASE_SENDER_MAX_AGE_MS`]
//! (or when the clock the caller passes goes backwards). Zeroization: the secret is an
//! `iki_crypto::SenderKey`, zeroized when it is replaced or when the [`ReleaseSender`] drops.

use iki_crypto::{seal_from, SenderKey};

use crate::error::Error;
use crate::service::ServiceKeys;
use crate::types::{MasterRef, SealedKey};

/// Seals from one service key pair before it is replaced: 4096 keeps the base-point
/// multiplication under 0.03 % of the releases at any rate, and bounds how many answers one
/// pair is in.
pub const RELEASE_SENDER_MAX_USES: u32 = 4096;

/// Milliseconds one service key pair is kept at most: one minute, so a pair is in at most a
/// minute's answers however low the rate.
pub const RELEASE_SENDER_MAX_AGE_MS: u64 = 60_000;

/// The service's current key release pair, made on the first release (a process that never
/// releases never draws one). One per `ServiceKeys` handle; not shared between threads.
#[derive(Debug, Default)]
pub struct ReleaseSender {
    current: Option<Current>,
}

#[derive(Debug)]
struct Current {
    key: SenderKey,
    born_ms: u64,
    uses: u32,
}

impl ReleaseSender {
    /// No pair yet; the first release makes one.
    #[must_use]
    pub fn new() -> Self {
        Self::default()
    }

    /// The public key of the current pair, if one was made (for tests and diagnostics).
    #[must_use]
    pub fn public_key(&self) -> Option<[u8; 32]> {
        self.current.as_ref().map(|c| c.key.public_key())
    }

    /// The pair to seal with at `now_ms`, replaced first when it is spent, too old or from
    /// the future (the clock stepped back).
    fn key_at(&mut self, now_ms: u64) -> Result<&SenderKey, Error> {
        let current = match self.current.take() {
            Some(c) if c.usable_at(now_ms) => c,
            // The old pair, if any, drops (and is zeroized) here.
            _ => Current {
                key: SenderKey::generate()?,
                born_ms: now_ms,
                uses: 0,
            },
        };
        let current = self.current.insert(current);
        current.uses += 1;
        Ok(&current.key)
    }
}

impl Current {
    /// Neither spent nor too old, nor from the future (the clock stepped back).
    fn usable_at(&self, now_ms: u64) -> bool {
        self.uses < RELEASE_SENDER_MAX_USES
            && now_ms
                .checked_sub(self.born_ms)
                .is_some_and(|age| age < RELEASE_SENDER_MAX_AGE_MS)
    }
}

impl ServiceKeys {
    /// Key release (format §8.2) as [`ServiceKeys::seal_license_key`] does it, sealed from
    /// `sender`'s current key pair (see the module notes) at `now_ms` (milliseconds since the
    /// epoch). The answer's layout and the player's side are unchanged.
    ///
    /// # Errors
    /// `WEAK_KEY` for a low-order `player_public`, `INVALID_ARGUMENT` for a bad master id,
    /// `INVALID_STATE` when the random source fails.
    pub fn seal_license_key_from(
        &self,
        sender: &mut ReleaseSender,
        now_ms: u64,
        master: &MasterRef,
        license_id: u64,
        player_public: &[u8; 32],
    ) -> Result<SealedKey, Error> {
        let (key, context) = self.release_key_and_context(master, license_id)?;
        let pair = sender.key_at(now_ms)?;
        let sealed = seal_from(pair, player_public, &context, &context, key.expose_secret())?;
        SealedKey::from_sealed(sealed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::player::PlayerSession;
    use crate::types::license_id_hex;
    use iki_crypto::{labels, open_sealed, SecretKey32, X25519Secret};

    fn service() -> ServiceKeys {
        ServiceKeys::from_root(SecretKey32::from_bytes([9; 32]), "https://service.test").unwrap()
    }

    fn master() -> MasterRef {
        MasterRef {
            id: "master-1".into(),
            sha256: [3; 32],
        }
    }

    #[test]
    fn two_releases_share_the_pair_not_the_nonce_and_the_player_opens_both() {
        let (keys, mut sender) = (service(), ReleaseSender::new());
        assert_eq!(sender.public_key(), None);
        let mut players = [PlayerSession::new().unwrap(), PlayerSession::new().unwrap()];
        let mut sealed = Vec::new();
        for player in &mut players {
            let answer = keys
                .seal_license_key_from(&mut sender, 1_000, &master(), 7, &player.public_key())
                .unwrap();
            player.accept_license_key(7, &answer).unwrap();
            sealed.push(answer);
        }
        assert_eq!(sealed[0].ephemeral, sealed[1].ephemeral);
        assert_eq!(Some(sealed[0].ephemeral), sender.public_key());
        assert_ne!(sealed[0].nonce, sealed[1].nonce);

        // One player key sent twice: the same kek, two nonces, two different answers, both open.
        let player = X25519Secret::from_key(SecretKey32::from_bytes([5; 32]));
        let context = labels::context(labels::LICENSE_KEY_RELEASE_V1, license_id_hex(7).as_bytes());
        let a = keys
            .seal_license_key_from(&mut sender, 1_001, &master(), 7, &player.public_key())
            .unwrap();
        let b = keys
            .seal_license_key_from(&mut sender, 1_002, &master(), 7, &player.public_key())
            .unwrap();
        assert_ne!((a.nonce, a.sealed), (b.nonce, b.sealed));
        let open = |s: &SealedKey| {
            open_sealed(
                &player,
                &s.ephemeral,
                &s.nonce,
                &context,
                &context,
                &s.sealed,
            )
            .unwrap()
        };
        assert_eq!(open(&a).as_slice(), open(&b).as_slice());
        // The same license key as the per-release pair of seal_license_key gives.
        let fresh = keys
            .seal_license_key(&master(), 7, &player.public_key())
            .unwrap();
        assert_eq!(open(&fresh).as_slice(), open(&a).as_slice());
    }

    #[test]
    fn the_pair_is_replaced_after_max_uses() {
        let (keys, mut sender) = (service(), ReleaseSender::new());
        let player = PlayerSession::new().unwrap().public_key();
        let first = keys
            .seal_license_key_from(&mut sender, 0, &master(), 1, &player)
            .unwrap()
            .ephemeral;
        for _ in 1..RELEASE_SENDER_MAX_USES {
            let same = keys
                .seal_license_key_from(&mut sender, 0, &master(), 1, &player)
                .unwrap()
                .ephemeral;
            assert_eq!(same, first);
        }
        let next = keys
            .seal_license_key_from(&mut sender, 0, &master(), 1, &player)
            .unwrap()
            .ephemeral;
        assert_ne!(next, first);
    }

    #[test]
    fn the_pair_is_replaced_at_max_age_and_when_the_clock_steps_back() {
        let (keys, mut sender) = (service(), ReleaseSender::new());
        let player = PlayerSession::new().unwrap().public_key();
        let mut at = |now: u64| {
            keys.seal_license_key_from(&mut sender, now, &master(), 1, &player)
                .unwrap()
                .ephemeral
        };
        let born = 5_000_000;
        let first = at(born);
        assert_eq!(at(born + RELEASE_SENDER_MAX_AGE_MS - 1), first);
        let second = at(born + RELEASE_SENDER_MAX_AGE_MS);
        assert_ne!(second, first);
        let third = at(born);
        assert_ne!(third, second);
    }

    #[test]
    fn a_low_order_player_key_is_refused_and_debug_shows_no_secret() {
        let (keys, mut sender) = (service(), ReleaseSender::new());
        let low_order = [0u8; 32];
        let err = keys
            .seal_license_key_from(&mut sender, 0, &master(), 1, &low_order)
            .unwrap_err();
        assert_eq!(err.code(), "WEAK_KEY");
        assert!(!format!("{sender:?}").contains("secret"));
    }
}

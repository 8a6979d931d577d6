//! Unlocking a reader at `Event::Locked` (docs/format.md section 3): by password, one slot
//! per step; by X25519 identity; by a content key obtained elsewhere; or not at all.

use iki_crypto::{SecretKey32, X25519Secret};

use super::{Reader, Stage};
use crate::content::ContentCipher;
use crate::error::Error;
use crate::keys::{unlock_identity, Slot};

impl Reader {
    /// Opens the content key with a password (after `Event::Locked`).
    ///
    /// # Errors
    /// `KEY_REQUIRED`, `UNSUPPORTED_ALGORITHM`, `KDF_PARAMS_REFUSED`, `DECRYPT_FAILED` or
    /// `LIMIT_EXCEEDED` (a slot left untried by the unlock's bounds; see
    /// `keys::unlock_password`). These leave the reader locked, so another password or key
    /// may be tried; `INVALID_STATE` (no `Event::Locked` pending) is final.
    pub fn unlock_password(&mut self, password: &[u8]) -> Result<(), Error> {
        self.attempt = None;
        while !self.unlock_password_step(password)? {}
        Ok(())
    }

    /// One step of a password unlock: derives a key for at most one password slot. `true`
    /// when the file is open, `false` when more slots remain (call again with the same
    /// password, after checking for cancellation if the caller wants to). The attempt starts
    /// over after it ends either way, or when another unlock or `skip_content` is called.
    ///
    /// # Errors
    /// As `unlock_password`, once no slot is left.
    pub fn unlock_password_step(&mut self, password: &[u8]) -> Result<bool, Error> {
        self.check()?;
        let (Stage::AwaitUnlock, Some(header)) = (self.stage, &self.header) else {
            return self.fail(Error::state("unlock without Event::Locked"));
        };
        let file_id = header.file_id;
        let mut attempt = self.attempt.take().unwrap_or_default();
        // A refusal by the slots is not recorded in `failed` (module documentation).
        match attempt.step(&self.slots, &file_id, password)? {
            Some(key) => {
                self.cipher = Some(ContentCipher::new(&key, file_id));
                self.stage = Stage::ChunkHeader;
                Ok(true)
            }
            None => {
                self.attempt = Some(attempt);
                Ok(false)
            }
        }
    }

    /// Opens the content key with an X25519 identity (recipient slots).
    ///
    /// # Errors
    /// As `keys::unlock_identity`; like `unlock_password`, a refusal by the slots leaves the
    /// reader locked.
    pub fn unlock_identity(&mut self, secret: &X25519Secret) -> Result<(), Error> {
        self.unlock_with(|slots, file_id| unlock_identity(slots, file_id, secret))
    }

    /// Uses a content key obtained elsewhere (account or license slots). A wrong key shows
    /// as `DECRYPT_FAILED` when MANI is read, and that error is final (MANI has been
    /// consumed by then).
    ///
    /// # Errors
    /// `INVALID_STATE` when the reader is not waiting for a key.
    pub fn unlock_content_key(&mut self, key: SecretKey32) -> Result<(), Error> {
        self.unlock_with(|_, _| Ok(key))
    }

    /// Reads on without a key: structure, limits, DATA sequence and the signature are still
    /// checked, but no manifest or content is released.
    ///
    /// # Errors
    /// `INVALID_STATE` when the reader is not waiting for a key.
    pub fn skip_content(&mut self) -> Result<(), Error> {
        self.check()?;
        if self.stage != Stage::AwaitUnlock {
            return self.fail(Error::state("skip_content without Event::Locked"));
        }
        self.attempt = None;
        self.skipping = true;
        self.stage = Stage::ChunkHeader;
        Ok(())
    }

    fn unlock_with(
        &mut self,
        open: impl FnOnce(&[Slot], &[u8; 16]) -> Result<SecretKey32, Error>,
    ) -> Result<(), Error> {
        self.check()?;
        let (Stage::AwaitUnlock, Some(header)) = (self.stage, &self.header) else {
            return self.fail(Error::state("unlock without Event::Locked"));
        };
        let file_id = header.file_id;
        self.attempt = None;
        // A refusal by the slots is not recorded in `failed`: the stage stays AwaitUnlock
        // and the caller may try again (module documentation).
        let key = open(&self.slots, &file_id)?;
        self.cipher = Some(ContentCipher::new(&key, file_id));
        self.stage = Stage::ChunkHeader;
        Ok(())
    }
}

//! The end of a file (docs/format.md section 7): SIGN, signed by the writer's key, by an
//! external key ([`PendingSignature`]), or over a file digest computed elsewhere.
//!
//! # A file digest computed elsewhere
//!
//! The signature covers SHA-256 of every byte before it. In a browser that pass runs in WASM
//! (no streaming native digest there) on the thread that also moves the bytes, about as long
//! again as the copy itself (bench/RESULTS.md, issue 28 item 4). A caller may instead hash the
//! output itself as it streams out (a second Web Worker): [`Writer::digest_elsewhere`] stops
//! the writer's own pass over its output (the KEYS digest, needed for the content's AAD, is
//! still the writer's), and [`Writer::finish_elsewhere`] hands back the last output with a
//! [`DigestRequest`], which takes the digest and the number of bytes it covers.
//!
//! Who is trusted with what: the digest comes from the caller's own code (in a browser, a
//! worker of the same origin started by the saving worker), which can already ask the signer
//! to sign any message; no check here could stop it, and a full check would be a second
//! SHA-256 pass, the very cost this mode removes. What the writer does check is what a fault
//! (a batch lost, repeated or left out between the workers) changes: the digest must cover
//! exactly the number of bytes the writer emitted before the signature, or it is refused
//! (`INVALID_ARGUMENT`) and no signature is made. A digest of the right length but of other
//! bytes yields a file whose signature does not verify: every reader refuses it
//! (`BAD_SIGNATURE`, a `modified` verdict), so it never passes as signed. The signature is
//! still checked strictly against SIGN's key before the last bytes are released.

use crate::chunk::{CHUNK_HEADER_BYTES, SIGN};
use crate::error::Error;
use crate::sign::{sign_digest, sign_payload_prefix, signature_message, SIGNATURE_BYTES};

use super::{PendingSignature, SignWith, Writer};

/// A file whose digest is computed elsewhere, waiting for it: see the module comment.
#[derive(Debug)]
pub struct DigestRequest {
    length: u64,
    signing: SignWith,
}

impl DigestRequest {
    /// The number of bytes the digest must cover: the whole file up to its signature.
    #[must_use]
    pub fn length(&self) -> u64 {
        self.length
    }

    /// Takes the SHA-256 of the file up to its signature, computed over `hashed` bytes, and
    /// returns the signature step (signed here when the writer holds the key).
    ///
    /// # Errors
    /// `INVALID_ARGUMENT` when `hashed` is not [`DigestRequest::length`]: the digest cannot be
    /// the file's, and no signature is made.
    pub fn supply(self, digest: [u8; 32], hashed: u64) -> Result<PendingSignature, Error> {
        if hashed != self.length {
            return Err(Error::argument(
                "the file digest computed elsewhere does not cover exactly the bytes written",
            ));
        }
        Ok(pending(&self.signing, &digest))
    }
}

fn pending(signing: &SignWith, digest: &[u8; 32]) -> PendingSignature {
    let signature = match signing {
        SignWith::Key(key) => Some(sign_digest(key, digest)),
        SignWith::External(_) => None,
    };
    PendingSignature {
        public_key: signing.public_key(),
        message: signature_message(digest),
        signature,
    }
}

impl Writer {
    /// From now on the caller computes the file digest over every byte it takes from
    /// [`Writer::take_output`] (from the very first) and hands it to
    /// [`Writer::finish_elsewhere`]'s request; the writer stops hashing its output. See the
    /// module comment for what is checked.
    ///
    /// # Errors
    /// `INVALID_STATE` after a failure.
    pub fn digest_elsewhere(&mut self) -> Result<(), Error> {
        self.check()?;
        self.hash_output = false;
        self.hasher = iki_crypto::hash::Sha256::new();
        Ok(())
    }

    /// Emits SIGN and returns the remaining output.
    ///
    /// # Errors
    /// `INVALID_STATE` when an entry has not ended, when the key is external (use
    /// [`Writer::finish_external`]) or when the digest is computed elsewhere (use
    /// [`Writer::finish_elsewhere`]).
    pub fn finish(self) -> Result<Vec<u8>, Error> {
        if matches!(self.signing, SignWith::External(_)) {
            return Err(Error::state(
                "finish with an external key; use finish_external",
            ));
        }
        let (mut out, digest, signing) = self.sign_prefix()?;
        if let SignWith::Key(key) = &signing {
            out.extend_from_slice(&sign_digest(key, &digest));
        }
        Ok(out)
    }

    /// Emits SIGN up to its signature and returns that output with the message the external
    /// key must sign. A writer with its own key signs with it here, so every writer can be
    /// finished this way.
    ///
    /// # Errors
    /// `INVALID_STATE` when an entry has not ended, or when the digest is computed elsewhere.
    pub fn finish_external(self) -> Result<(Vec<u8>, PendingSignature), Error> {
        let (out, digest, signing) = self.sign_prefix()?;
        let pending = pending(&signing, &digest);
        Ok((out, pending))
    }

    /// For a digest computed elsewhere: emits SIGN up to its signature and returns that
    /// output (which the digest must cover too) with the request that takes the digest.
    ///
    /// # Errors
    /// `INVALID_STATE` when an entry has not ended, or when the writer hashes its own output.
    pub fn finish_elsewhere(mut self) -> Result<(Vec<u8>, DigestRequest), Error> {
        if self.hash_output {
            return Err(Error::state("finish_elsewhere without digest_elsewhere"));
        }
        self.emit_sign_prefix()?;
        let length = self.emitted;
        Ok((
            self.out,
            DigestRequest {
                length,
                signing: self.signing,
            },
        ))
    }

    /// Emits SIGN's chunk header and payload up to the signature; returns the output left
    /// to drain, the file digest and the signing key.
    fn sign_prefix(mut self) -> Result<(Vec<u8>, [u8; 32], SignWith), Error> {
        if !self.hash_output {
            return Err(Error::state(
                "the file digest is computed elsewhere; use finish_elsewhere",
            ));
        }
        self.emit_sign_prefix()?;
        let digest: [u8; 32] = std::mem::take(&mut self.hasher).finalize()?;
        Ok((self.out, digest, self.signing))
    }

    fn emit_sign_prefix(&mut self) -> Result<(), Error> {
        self.check()?;
        if self.entry as usize != self.plans.len() {
            return Err(Error::state("finish before every entry ended"));
        }
        let prefix = sign_payload_prefix(&self.signing.public_key(), &self.signer_json)?;
        let length = u32::try_from(prefix.len() + SIGNATURE_BYTES)
            .map_err(|_| Error::state("sign length"))?;
        let mut head = [0u8; CHUNK_HEADER_BYTES];
        let (t, l) = head.split_at_mut(4);
        t.copy_from_slice(&SIGN);
        l.copy_from_slice(&length.to_le_bytes());
        self.emit_raw(&head);
        self.emit_raw(&prefix);
        Ok(())
    }
}

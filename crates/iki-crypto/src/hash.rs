//! SHA-256 (FIPS 180-4), the only hash of the iki container (HEAD hash = 1, format §2).
//!
//! Streaming users (the container's signature digest and `keys_digest`, format §4 and §7,
//! entry hashes, a master's identity) use [`Sha256`]; [`sha256`] is a software one-shot for
//! short and fixed inputs.
//! Inputs here are public file bytes or plaintext entries that the caller sees anyway, so
//! nothing is zeroized. Key derivation (HKDF, `kdf.rs`) never comes through here: it uses
//! `sha2` directly, so no secret ever reaches a host backend.
//!
//! # Host backend (docs/format.md section 2, "Who computes SHA-256")
//!
//! The compression function is software (`sha2`) everywhere by default. A host whose native
//! SHA-256 is faster (Node's `node:crypto`: about 6x the WASM speed on our bench machine)
//! may install one with [`install_host_sha256`]; the WASM adapter does so for the Node
//! loader, and browsers and native builds keep `sha2`. The crate stays free of I/O: a
//! backend is a table of plain function pointers over integer handles ([`HostSha256`]),
//! installed per thread (a WASM instance is one thread; native tests stay isolated).
//!
//! Rules that keep the digest bit-identical and failures typed:
//! - The backend is read once, when a hasher is created; a hasher keeps it to its end.
//! - A message shorter than [`HostSha256::min_bytes`] never crosses: it is buffered and
//!   hashed by `sha2` at the end, because a host round trip costs more than it saves.
//! - Updates below [`HOST_COALESCE_BYTES`] are gathered and sent together.
//! - Any host failure makes the hasher fail for good: [`Sha256::finalize`] and
//!   [`Sha256::digest_so_far`] return [`Error::HostHashFailed`], never a wrong digest.

use core::cell::Cell;

use crate::error::Error;

/// SHA-256 digest length in bytes.
pub const SHA256_BYTES: usize = 32;

/// Updates shorter than this are gathered before they cross to the host backend. Chosen so
/// that the 8-byte chunk headers and short chunk payloads of a container do not each pay a
/// host call (about 1 µs in Node), while a data chunk (64 KiB and up) crosses at once.
pub const HOST_COALESCE_BYTES: usize = 4096;

/// A host SHA-256 implementation, installed with [`install_host_sha256`].
///
/// Handles are the host's; the crate only passes them back. Each function reports failure
/// as an [`Error`] (the WASM adapter uses [`Error::HostHashFailed`]).
#[derive(Clone, Copy, Debug)]
pub struct HostSha256 {
    /// Starts a hash; returns its handle.
    pub start: fn() -> Result<u32, Error>,
    /// Feeds bytes into the hash `handle`.
    pub update: fn(u32, &[u8]) -> Result<(), Error>,
    /// A new handle whose state is a copy of `handle` (for a digest of a prefix).
    pub fork: fn(u32) -> Result<u32, Error>,
    /// The digest of `handle`; the handle is released whether or not this succeeds.
    pub finish: fn(u32) -> Result<[u8; SHA256_BYTES], Error>,
    /// Releases `handle` without a digest (a hasher dropped before its end).
    pub release: fn(u32),
    /// Messages shorter than this stay in `sha2` (see the module docs).
    pub min_bytes: usize,
}

thread_local! {
    static HOST: Cell<Option<HostSha256>> = const { Cell::new(None) };
}

/// Installs (`Some`) or removes (`None`) this thread's host SHA-256 backend for hashers
/// created from now on. Hashers already running keep the backend they started with.
pub fn install_host_sha256(host: Option<HostSha256>) {
    HOST.with(|cell| cell.set(host));
}

/// Whether this thread has a host SHA-256 backend installed.
#[must_use]
pub fn host_sha256_installed() -> bool {
    HOST.with(Cell::get).is_some()
}

/// SHA-256 of `data`, always in software (`sha2`): for short or fixed inputs and callers
/// that cannot fail. Long inputs that may use the host backend go through [`Sha256`].
#[must_use]
pub fn sha256(data: &[u8]) -> [u8; SHA256_BYTES] {
    use sha2::Digest;
    sha2::Sha256::digest(data).into()
}

/// Incremental SHA-256: [`Sha256::update`] any number of times, then
/// [`Sha256::finalize`]. See the module docs for when the host backend is used.
#[derive(Default)]
pub struct Sha256 {
    state: State,
}

enum State {
    /// A host backend is installed but fewer than `min_bytes` have arrived.
    Short { host: HostSha256, bytes: Vec<u8> },
    /// Software hashing: no backend, or the message ended short.
    Soft(sha2::Sha256),
    /// The host has the state; `gathered` holds small updates not yet sent.
    Host {
        host: HostSha256,
        handle: u32,
        gathered: Vec<u8>,
    },
    /// A host call failed; every later result is this error.
    Failed(Error),
}

impl Default for State {
    fn default() -> Self {
        match HOST.with(Cell::get) {
            Some(host) => Self::Short {
                host,
                bytes: Vec::new(),
            },
            None => Self::Soft(sha2::Sha256::default()),
        }
    }
}

impl Sha256 {
    /// A fresh hasher, with this thread's backend as it is now.
    #[must_use]
    pub fn new() -> Self {
        Self::default()
    }

    /// Feeds `data` into the hash. A host failure is kept and reported by the digest calls.
    pub fn update(&mut self, data: impl AsRef<[u8]>) {
        let data = data.as_ref();
        let state = take_state(&mut self.state);
        self.state = match state {
            State::Soft(mut soft) => {
                sha2::Digest::update(&mut soft, data);
                State::Soft(soft)
            }
            State::Short { host, mut bytes } => {
                if bytes.len().saturating_add(data.len()) < host.min_bytes {
                    bytes.extend_from_slice(data);
                    State::Short { host, bytes }
                } else {
                    start_host(host, bytes, data)
                }
            }
            State::Host {
                host,
                handle,
                gathered,
            } => host_update(host, handle, gathered, data),
            failed @ State::Failed(_) => failed,
        };
    }

    /// The digest of everything fed so far; the hasher can go on.
    pub fn digest_so_far(&mut self) -> Result<[u8; SHA256_BYTES], Error> {
        self.flush();
        match &self.state {
            State::Soft(soft) => Ok(sha2::Digest::finalize(soft.clone()).into()),
            State::Short { bytes, .. } => Ok(sha256(bytes)),
            State::Host { host, handle, .. } => {
                let digest = (host.fork)(*handle).and_then(host.finish);
                if let Err(error) = digest {
                    self.fail(error);
                }
                digest
            }
            State::Failed(error) => Err(*error),
        }
    }

    /// The digest of everything fed; consumes the hasher.
    pub fn finalize(mut self) -> Result<[u8; SHA256_BYTES], Error> {
        self.flush();
        match take_state(&mut self.state) {
            State::Soft(soft) => Ok(sha2::Digest::finalize(soft).into()),
            State::Short { bytes, .. } => Ok(sha256(&bytes)),
            State::Host { host, handle, .. } => (host.finish)(handle),
            State::Failed(error) => Err(error),
        }
    }

    /// Sends gathered small updates to the host.
    fn flush(&mut self) {
        if let State::Host {
            host,
            handle,
            gathered,
        } = &mut self.state
        {
            if !gathered.is_empty() {
                let result = (host.update)(*handle, gathered);
                gathered.clear();
                if let Err(error) = result {
                    self.fail(error);
                }
            }
        }
    }

    /// Releases a host handle, if any, and keeps `error` for every later call.
    fn fail(&mut self, error: Error) {
        let old = core::mem::replace(&mut self.state, State::Failed(error));
        if let State::Host { host, handle, .. } = old {
            (host.release)(handle);
        }
    }
}

impl Drop for Sha256 {
    fn drop(&mut self) {
        if let State::Host { host, handle, .. } = &self.state {
            (host.release)(*handle);
        }
    }
}

/// Moves the state out, leaving one that owns no host handle (so `Drop` releases nothing
/// twice).
fn take_state(state: &mut State) -> State {
    core::mem::replace(state, State::Failed(Error::HostHashFailed))
}

/// Moves a short message to a new host hash (it becomes the first gathered bytes), then `data`.
fn start_host(host: HostSha256, bytes: Vec<u8>, data: &[u8]) -> State {
    match (host.start)() {
        Ok(handle) => host_update(host, handle, bytes, data),
        Err(error) => State::Failed(error),
    }
}

/// Gathers a small `data`; otherwise sends what was gathered, then `data` (gathered instead
/// when it is small). The buffer is kept for the next updates. On a host failure the handle
/// is released and the state becomes `Failed`.
fn host_update(host: HostSha256, handle: u32, mut gathered: Vec<u8>, data: &[u8]) -> State {
    let small = data.len() < HOST_COALESCE_BYTES;
    if small && gathered.len().saturating_add(data.len()) <= HOST_COALESCE_BYTES {
        gathered.extend_from_slice(data);
        return State::Host {
            host,
            handle,
            gathered,
        };
    }
    let mut sent = Ok(());
    if !gathered.is_empty() {
        sent = (host.update)(handle, &gathered);
        gathered.clear();
    }
    if small {
        gathered.extend_from_slice(data);
    } else {
        sent = sent.and_then(|()| (host.update)(handle, data));
    }
    match sent {
        Ok(()) => State::Host {
            host,
            handle,
            gathered,
        },
        Err(error) => {
            (host.release)(handle);
            State::Failed(error)
        }
    }
}

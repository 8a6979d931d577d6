//! Open arbitrary bytes as encrypted files with the fixed fake keys of the container
//! vectors (password, identity, content key), so mutations of the seed corpus reach
//! slot unwrapping, MANI and DATA decryption and decoding.
#![no_main]

use iki_crypto::{SecretKey32, X25519Secret};
use iki_format::{read_all, Kind, Unlock};
use libfuzzer_sys::fuzz_target;

const PASSWORD: &[u8] = b"correct horse battery staple";
const FAKE_CONTENT_KEY: [u8; 32] = [0xC0; 32];
const FAKE_IDENTITY: [u8; 32] = [0x1D; 32];

fuzz_target!(|data: &[u8]| {
    let Some((&mode, bytes)) = data.split_first() else { return };
    let kind = if mode & 1 == 0 { Kind::Project } else { Kind::Model };
    let identity = X25519Secret::from_key(SecretKey32::from_bytes(FAKE_IDENTITY));
    let unlock = match (mode >> 1) % 3 {
        0 => Unlock::Password(PASSWORD),
        1 => Unlock::Identity(&identity),
        _ => Unlock::ContentKey(SecretKey32::from_bytes(FAKE_CONTENT_KEY)),
    };
    let _ = read_all(kind, bytes, unlock);
});

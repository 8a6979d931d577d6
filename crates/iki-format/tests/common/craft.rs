//! Byte-level surgery on container files, for tests and the vector generator: split a file
//! into chunks, put it back together, and re-sign it after an edit.
#![allow(
    dead_code,
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

use iki_crypto::hash::sha256;
use iki_crypto::SigningKey;
use iki_format::sign::{sign_digest, sign_payload_prefix};

/// A file as preamble and (type, payload) chunks.
#[derive(Clone, Debug)]
pub struct Parts {
    pub preamble: Vec<u8>,
    pub chunks: Vec<([u8; 4], Vec<u8>)>,
}

impl Parts {
    /// Splits a well-formed file.
    pub fn split(bytes: &[u8]) -> Self {
        let mut chunks = Vec::new();
        let mut at = 12;
        while at < bytes.len() {
            let t: [u8; 4] = bytes[at..at + 4].try_into().unwrap();
            let len = u32::from_le_bytes(bytes[at + 4..at + 8].try_into().unwrap()) as usize;
            chunks.push((t, bytes[at + 8..at + 8 + len].to_vec()));
            at += 8 + len;
        }
        Self {
            preamble: bytes[..12].to_vec(),
            chunks,
        }
    }

    /// The file bytes as they stand (no re-signing).
    pub fn join(&self) -> Vec<u8> {
        let mut out = self.preamble.clone();
        for (t, payload) in &self.chunks {
            out.extend_from_slice(t);
            out.extend_from_slice(&(payload.len() as u32).to_le_bytes());
            out.extend_from_slice(payload);
        }
        out
    }

    /// Positions of the chunks of one type.
    pub fn find(&self, chunk_type: &[u8; 4]) -> Vec<usize> {
        self.chunks
            .iter()
            .enumerate()
            .filter(|(_, (t, _))| t == chunk_type)
            .map(|(i, _)| i)
            .collect()
    }

    /// Replaces the last chunk (SIGN) by a fresh signature over everything before it,
    /// with signer JSON `info`.
    pub fn resign_with(&mut self, key: &SigningKey, info: &[u8]) -> Vec<u8> {
        let (t, _) = self.chunks.pop().unwrap();
        assert_eq!(&t, b"SIGN");
        let mut bytes = self.join();
        let prefix = sign_payload_prefix(&key.public_key(), info).unwrap();
        bytes.extend_from_slice(b"SIGN");
        bytes.extend_from_slice(&((prefix.len() + 64) as u32).to_le_bytes());
        bytes.extend_from_slice(&prefix);
        let signature = sign_digest(key, &sha256(&bytes));
        let mut payload = prefix;
        payload.extend_from_slice(&signature);
        self.chunks.push((*b"SIGN", payload));
        self.join()
    }

    /// Re-signs keeping the signer JSON of the current SIGN chunk.
    pub fn resign(&mut self, key: &SigningKey) -> Vec<u8> {
        let sign = &self.chunks.last().unwrap().1;
        let info_len = u32::from_le_bytes(sign[33..37].try_into().unwrap()) as usize;
        let info = sign[37..37 + info_len].to_vec();
        self.resign_with(key, &info)
    }
}

/// A raw DEFLATE stream of `empty_blocks` empty stored blocks and one final stored block
/// holding `data` (at most 65535 bytes): `data.len() + 5 * (empty_blocks + 1)` bytes.
pub fn stored_deflate(data: &[u8], empty_blocks: usize) -> Vec<u8> {
    let mut out = Vec::new();
    for _ in 0..empty_blocks {
        out.extend_from_slice(&[0x00, 0x00, 0x00, 0xFF, 0xFF]);
    }
    let len = data.len() as u16;
    out.push(0x01);
    out.extend_from_slice(&len.to_le_bytes());
    out.extend_from_slice(&(!len).to_le_bytes());
    out.extend_from_slice(data);
    out
}

/// A DATA payload: entry, index, flags, data.
pub fn data_payload(entry: u32, index: u32, flags: u8, data: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    out.extend_from_slice(&entry.to_le_bytes());
    out.extend_from_slice(&index.to_le_bytes());
    out.push(flags);
    out.extend_from_slice(data);
    out
}

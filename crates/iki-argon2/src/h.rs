//! H0 (RFC 9106 §3.2 steps 1-2) and the variable-length hash H' (§3.3), over BLAKE2b.
//!
//! Zeroization: H0 is returned in `Zeroizing`; H' chains its 64-byte intermediate values
//! `V_i` through a `Zeroizing` buffer and writes its output straight into the caller's
//! slice (a block's byte buffer or the tag), so that no copy is left behind. The BLAKE2b
//! hashers (`crate::blake2b`) wipe themselves when they drop.

use zeroize::Zeroizing;

use crate::blake2b::{Blake2b, MAX_OUT_BYTES};
use crate::{Error, Inputs, Params};

/// Argon2 version 0x13 (RFC 9106 §3.1, `v`).
const VERSION: u32 = 0x13;
/// Argon2id (RFC 9106 §3.1, `y`).
pub(crate) const TYPE_ID: u32 = 2;
/// BLAKE2b's longest output, in bytes.
const H_BYTES: usize = MAX_OUT_BYTES;

fn le32(len: usize, what: &'static str) -> Result<[u8; 4], Error> {
    u32::try_from(len)
        .map(u32::to_le_bytes)
        .map_err(|_| Error::Length { what, len })
}

/// H0 = H^64(LE32(p) || LE32(T) || LE32(m) || LE32(t) || LE32(v) || LE32(y) || P || S || K
/// || X), each of P, S, K and X preceded by its LE32 length (RFC 9106 §3.2 step 1).
pub(crate) fn h0(
    params: &Params,
    inputs: &Inputs<'_>,
    tag_len: usize,
) -> Result<Zeroizing<[u8; H_BYTES]>, Error> {
    let tag_len = u32::try_from(tag_len).map_err(|_| Error::Length {
        what: "tag",
        len: tag_len,
    })?;
    let mut h = Blake2b::new(H_BYTES).ok_or(Error::Length {
        what: "tag",
        len: H_BYTES,
    })?;
    for word in [params.p, tag_len, params.m_kib, params.t, VERSION, TYPE_ID] {
        h.update(&word.to_le_bytes());
    }
    let fields: [(&[u8], &'static str); 4] = [
        (inputs.password, "password"),
        (inputs.salt, "salt"),
        (inputs.secret, "secret"),
        (inputs.ad, "associated data"),
    ];
    for (bytes, what) in fields {
        h.update(&le32(bytes.len(), what)?);
        h.update(bytes);
    }
    let mut out = Zeroizing::new([0u8; H_BYTES]);
    h.finalize_into(&mut out[..]);
    Ok(out)
}

/// BLAKE2b with an output of `out.len()` bytes (1 to 64) over the concatenated `parts`.
fn blake2b_into(parts: &[&[u8]], out: &mut [u8]) -> Result<(), Error> {
    let refused = Error::Length {
        what: "tag",
        len: out.len(),
    };
    let mut h = Blake2b::new(out.len()).ok_or(refused)?;
    for part in parts {
        h.update(part);
    }
    if h.finalize_into(out) {
        Ok(())
    } else {
        Err(refused)
    }
}

/// H'^T(parts) with T = `out.len()` (RFC 9106 §3.3): for T ≤ 64 one BLAKE2b of LE32(T) ||
/// parts; otherwise the first 32 bytes of each of V_1 .. V_r, then V_{r+1} of T − 32r bytes,
/// where V_1 = H^64(LE32(T) || parts), V_{i+1} = H^64(V_i) and r = ceil(T/32) − 2.
pub(crate) fn h_prime(parts: &[&[u8]], out: &mut [u8]) -> Result<(), Error> {
    let t = le32(out.len(), "tag")?;
    if out.len() <= H_BYTES {
        let mut all: Vec<&[u8]> = Vec::with_capacity(parts.len() + 1);
        all.push(&t);
        all.extend_from_slice(parts);
        return blake2b_into(&all, out);
    }
    let r = out.len().div_ceil(32) - 2;
    let (words, last) = out.split_at_mut(32 * r);
    let mut v = Zeroizing::new([0u8; H_BYTES]);
    let mut all: Vec<&[u8]> = Vec::with_capacity(parts.len() + 1);
    all.push(&t);
    all.extend_from_slice(parts);
    blake2b_into(&all, &mut v[..])?;
    let mut chunks = words.chunks_exact_mut(32).peekable();
    while let Some(chunk) = chunks.next() {
        let (head, _) = v.split_at(32);
        chunk.copy_from_slice(head);
        if chunks.peek().is_some() {
            let previous = Zeroizing::new(*v);
            blake2b_into(&[&previous[..]], &mut v[..])?;
        }
    }
    blake2b_into(&[&v[..]], last)
}

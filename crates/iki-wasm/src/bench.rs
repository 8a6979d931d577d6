//! Raw primitives for `make bench` (bench/run.sh): thin calls into iki-crypto and
//! iki-format so the benchmark can time each primitive through the same WebAssembly module
//! the TS API uses, beside JS and native peers. They hold no logic; the product API does
//! not use them (STYLE.md "WASM boundary" keeps that surface small).
//!
//! Bytes cross as everywhere else: `&[u8]` in (one copy into WASM memory by the glue) and
//! `Vec<u8>` out (one copy out). The handles keep their state (cipher, codec buffers)
//! across calls, as the container's reader and writer do across chunks.
//!
//! Secrets: the benchmark's keys are test keys, but [`BenchAead`] still holds its key in
//! `iki_crypto::Aead`, which zeroizes on drop.

use iki_crypto::{Aead, Argon2Params, SecretKey32, VerifyingKey, X25519Secret, TAG_BYTES};
use iki_format::encoding::{Deflater, Inflater};
use iki_format::DeflateHint;
use wasm_bindgen::prelude::*;

use crate::convert::{argument_error, array32};
use crate::error::js_error;

fn nonce24(nonce: &[u8]) -> Result<&[u8; 24], JsValue> {
    nonce
        .try_into()
        .map_err(|_| argument_error("nonce", "must be exactly 24 bytes"))
}

/// XChaCha20-Poly1305 keyed once (`iki_crypto::Aead`, as the container's content cipher).
#[wasm_bindgen]
pub struct BenchAead {
    aead: Aead,
}

#[wasm_bindgen]
impl BenchAead {
    /// Keys the cipher with 32 bytes.
    #[wasm_bindgen(constructor)]
    pub fn new(key: &[u8]) -> Result<BenchAead, JsValue> {
        let key = SecretKey32::try_from_slice(key).map_err(js_error)?;
        Ok(Self {
            aead: Aead::new(&key),
        })
    }

    /// `ciphertext || tag` of `plaintext` under the 24-byte `nonce` and `aad`.
    pub fn seal(&self, nonce: &[u8], aad: &[u8], plaintext: &[u8]) -> Result<Vec<u8>, JsValue> {
        let mut buf = Vec::with_capacity(plaintext.len() + TAG_BYTES);
        buf.extend_from_slice(plaintext);
        self.aead
            .seal_in_place(nonce24(nonce)?, aad, &mut buf)
            .map_err(js_error)?;
        Ok(buf)
    }

    /// The plaintext of `ciphertext || tag`; `DECRYPT_FAILED` when it does not authenticate.
    pub fn open(&self, nonce: &[u8], aad: &[u8], sealed: &[u8]) -> Result<Vec<u8>, JsValue> {
        let mut buf = sealed.to_vec();
        self.aead
            .open_in_place(nonce24(nonce)?, aad, &mut buf)
            .map_err(js_error)?;
        Ok(buf)
    }
}

/// One buffer kept inside WASM memory, on which the halves of the chunk AEAD are timed
/// without the copies in and out (`iki_crypto::parts`): where a chunk's time goes.
#[wasm_bindgen]
pub struct BenchAeadParts {
    key: zeroize::Zeroizing<[u8; 32]>,
    buf: Vec<u8>,
}

#[wasm_bindgen]
impl BenchAeadParts {
    /// Copies `data` into WASM memory once, under the 32-byte test `key`.
    #[wasm_bindgen(constructor)]
    pub fn new(key: &[u8], data: &[u8]) -> Result<BenchAeadParts, JsValue> {
        Ok(Self {
            key: zeroize::Zeroizing::new(array32(key, "key").map_err(js_error)?),
            buf: data.to_vec(),
        })
    }

    /// XORs the XChaCha20 keystream into the buffer (the cipher half alone).
    pub fn chacha20(&mut self, nonce: &[u8]) -> Result<(), JsValue> {
        iki_crypto::parts::xchacha20_xor(&self.key, nonce24(nonce)?, &mut self.buf);
        Ok(())
    }

    /// Poly1305 of the buffer, padded to 16 bytes (the MAC half alone).
    pub fn poly1305(&self) -> Vec<u8> {
        iki_crypto::parts::poly1305_padded(&self.key, &self.buf).to_vec()
    }

    /// Seals the buffer in place and returns the tag (the whole AEAD, no copies).
    pub fn seal(&mut self, nonce: &[u8], aad: &[u8]) -> Result<Vec<u8>, JsValue> {
        let tag = iki_crypto::parts::xchacha20poly1305_seal(
            &self.key,
            nonce24(nonce)?,
            aad,
            &mut self.buf,
        );
        Ok(tag.to_vec())
    }
}

/// Holds iki-crypto's XChaCha20-Poly1305 (on wasm32 its own simd128 ChaCha20 kernel) to
/// RustCrypto's scalar `chacha20poly1305` on pseudo-random inputs of many lengths, inside
/// this module; true when every output agrees (`iki_crypto::xchacha20poly1305_cross_check`).
#[wasm_bindgen(js_name = benchAeadCrossCheck)]
#[must_use]
pub fn bench_aead_cross_check(seed: u32) -> bool {
    iki_crypto::xchacha20poly1305_cross_check(u64::from(seed) << 32 | 0x9E37_79B9)
}

/// Holds the pixel encoder of this module (on wasm32 with its simd128 tokenizer) to the
/// scalar tokenizer on pseudo-random pixels of many shapes, inside this module; true when
/// every stream is the same (`iki_format::encoding::pixel_encoder_cross_check`).
#[wasm_bindgen(js_name = benchPixelsCrossCheck)]
#[must_use]
pub fn bench_pixels_cross_check(seed: u32) -> bool {
    iki_format::encoding::pixel_encoder_cross_check(u64::from(seed) << 32 | 0x7F4A_7C15)
}

/// Holds the watermark's row keystream of this module (on wasm32 with simd128,
/// `iki_crypto::chacha8_keystream`) to rand_chacha's ChaCha8 inside this module; true when
/// every byte agrees (`iki_watermark::keystream_cross_check`).
#[wasm_bindgen(js_name = benchWatermarkStreamCrossCheck)]
#[must_use]
pub fn bench_watermark_stream_cross_check(seed: u32) -> bool {
    iki_watermark::keystream_cross_check(u64::from(seed) << 32 | 0x1B87_3593)
}

/// Raw DEFLATE (RFC 1951) through `iki_format::encoding`, the codec of DATA chunks.
#[wasm_bindgen]
pub struct BenchCodec {
    deflater: Deflater,
    inflater: Inflater,
}

#[wasm_bindgen]
impl BenchCodec {
    /// A codec deflating at `level` (0 to 10).
    #[wasm_bindgen(constructor)]
    pub fn new(level: u8) -> Result<BenchCodec, JsValue> {
        Ok(Self {
            deflater: Deflater::new(level).map_err(js_error)?,
            inflater: Inflater::new(),
        })
    }

    /// One complete raw DEFLATE stream of `input`.
    pub fn deflate(&mut self, input: &[u8]) -> Result<Vec<u8>, JsValue> {
        // Stored blocks cost 5 bytes per 65535: this bound always fits.
        let max = input.len() + input.len() / 16_384 + 64;
        self.deflater
            .deflate(input, max)
            .map(<[u8]>::to_vec)
            .map_err(js_error)
    }

    /// One raw DEFLATE stream of rgba8 rows of `row_bytes` through the pixel encoder, as a
    /// license copy deflates its textures' chunks (`DeflateHint::Pixels`).
    #[wasm_bindgen(js_name = deflatePixels)]
    pub fn deflate_pixels(&mut self, input: &[u8], row_bytes: u32) -> Result<Vec<u8>, JsValue> {
        let max = input.len() + input.len() / 16_384 + 64;
        self.deflater
            .deflate_hinted(input, max, DeflateHint::Pixels { row_bytes })
            .map(<[u8]>::to_vec)
            .map_err(js_error)
    }

    /// Inflates one raw DEFLATE stream that must decode to exactly `expected` bytes.
    pub fn inflate(&mut self, input: &[u8], expected: usize) -> Result<Vec<u8>, JsValue> {
        self.inflater
            .inflate_exact(input, expected)
            .map(<[u8]>::to_vec)
            .map_err(|()| argument_error("input", "not a raw DEFLATE stream of that length"))
    }
}

/// Argon2id v0x13, 32-byte output (`iki_crypto::argon2id`, the password slot's KDF).
#[wasm_bindgen(js_name = benchArgon2id)]
pub fn bench_argon2id(
    password: &[u8],
    salt: &[u8],
    m_kib: u32,
    t: u32,
    p: u32,
) -> Result<Vec<u8>, JsValue> {
    let key =
        iki_crypto::argon2id(password, salt, &Argon2Params { m_kib, t, p }).map_err(js_error)?;
    Ok(key.expose_secret().to_vec())
}

/// Strict Ed25519 verification (`iki_crypto::VerifyingKey::verify_strict`, as SIGN).
#[wasm_bindgen(js_name = benchEd25519Verify)]
pub fn bench_ed25519_verify(
    public_key: &[u8],
    message: &[u8],
    signature: &[u8],
) -> Result<bool, JsValue> {
    let key = VerifyingKey::from_bytes(&array32(public_key, "publicKey").map_err(js_error)?)
        .map_err(js_error)?;
    let signature: &[u8; 64] = signature
        .try_into()
        .map_err(|_| argument_error("signature", "must be exactly 64 bytes"))?;
    Ok(key.verify_strict(message, signature).is_ok())
}

/// X25519 (`iki_crypto::X25519Secret::diffie_hellman`, as recipient slots and key release).
#[wasm_bindgen(js_name = benchX25519)]
pub fn bench_x25519(secret: &[u8], peer: &[u8]) -> Result<Vec<u8>, JsValue> {
    let secret = X25519Secret::from_key(SecretKey32::try_from_slice(secret).map_err(js_error)?);
    let peer = array32(peer, "peer").map_err(js_error)?;
    let shared = secret.diffie_hellman(&peer).map_err(js_error)?;
    Ok(shared.expose_secret().to_vec())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn deflate_bound_fits_incompressible_input() {
        let mut codec = BenchCodec::new(6).ok().unwrap();
        let mut x = 0x9E37_79B9_7F4A_7C15u64;
        let noise: Vec<u8> = (0..200_000)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                (x >> 24) as u8
            })
            .collect();
        let packed = codec.deflate(&noise).ok().unwrap();
        assert_eq!(codec.inflate(&packed, noise.len()).ok().unwrap(), noise);
    }

    #[test]
    fn aead_round_trip() {
        let aead = BenchAead::new(&[7; 32]).ok().unwrap();
        let sealed = aead.seal(&[1; 24], b"aad", b"chunk").ok().unwrap();
        assert_eq!(sealed.len(), 5 + TAG_BYTES);
        assert_eq!(aead.open(&[1; 24], b"aad", &sealed).ok().unwrap(), b"chunk");
    }
}

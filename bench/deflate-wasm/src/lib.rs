//! Raw DEFLATE (RFC 1951) through miniz_oxide and through zlib-rs, in one WebAssembly
//! module, for `make bench` (bench/cases/deflate.mjs). Each codec keeps its state and
//! output buffer across calls, as iki-format's `Deflater` and `Inflater` do; both are
//! called the same way: one complete stream per chunk, output bounded by the caller.
#![forbid(unsafe_code)]

use miniz_oxide::deflate::core::{compress, CompressorOxide, TDEFLFlush, TDEFLStatus};
use miniz_oxide::inflate::core::{decompress, inflate_flags, DecompressorOxide};
use miniz_oxide::inflate::TINFLStatus;
use wasm_bindgen::prelude::*;
use zlib_rs::{Deflate, DeflateFlush, Inflate, InflateFlush, Status};

fn bound(len: usize) -> usize {
    len + len / 16_384 + 64
}

/// miniz_oxide, called exactly as iki-format's encoding module calls it.
#[wasm_bindgen]
pub struct Miniz {
    deflater: Box<CompressorOxide>,
    inflater: Box<DecompressorOxide>,
    level: u8,
    out: Vec<u8>,
}

#[wasm_bindgen]
impl Miniz {
    /// A codec deflating at `level`.
    #[wasm_bindgen(constructor)]
    pub fn new(level: u8) -> Miniz {
        Miniz {
            deflater: Box::default(),
            inflater: Box::default(),
            level,
            out: Vec::new(),
        }
    }

    /// One raw stream of `input` (empty when it does not fit the bound).
    pub fn deflate(&mut self, input: &[u8]) -> Vec<u8> {
        self.out.resize(bound(input.len()), 0);
        self.deflater.reset();
        self.deflater
            .set_format_and_level(miniz_oxide::DataFormat::Raw, self.level);
        let (status, _, written) =
            compress(&mut self.deflater, input, &mut self.out, TDEFLFlush::Finish);
        if status != TDEFLStatus::Done {
            return Vec::new();
        }
        self.out
            .get(..written)
            .map(<[u8]>::to_vec)
            .unwrap_or_default()
    }

    /// The decoded bytes of one raw stream of `expected` bytes (empty on any error).
    pub fn inflate(&mut self, input: &[u8], expected: usize) -> Vec<u8> {
        self.out.resize(expected + 1, 0);
        self.inflater.init();
        let flags = inflate_flags::TINFL_FLAG_USING_NON_WRAPPING_OUTPUT_BUF;
        let (status, _, written) = decompress(&mut self.inflater, input, &mut self.out, 0, flags);
        if status != TINFLStatus::Done || written != expected {
            return Vec::new();
        }
        self.out
            .get(..written)
            .map(<[u8]>::to_vec)
            .unwrap_or_default()
    }
}

/// zlib-rs through its safe `Deflate`/`Inflate` API (raw streams, 32 KiB window).
#[wasm_bindgen]
pub struct ZlibRs {
    deflater: Deflate,
    inflater: Inflate,
    out: Vec<u8>,
}

#[wasm_bindgen]
impl ZlibRs {
    /// A codec deflating at `level`.
    #[wasm_bindgen(constructor)]
    pub fn new(level: i32) -> ZlibRs {
        ZlibRs {
            deflater: Deflate::new(level, false, 15),
            inflater: Inflate::new(false, 15),
            out: Vec::new(),
        }
    }

    /// One raw stream of `input` (empty when it does not fit the bound).
    pub fn deflate(&mut self, input: &[u8]) -> Vec<u8> {
        self.out.resize(bound(input.len()), 0);
        self.deflater.reset();
        match self
            .deflater
            .compress(input, &mut self.out, DeflateFlush::Finish)
        {
            Ok(Status::StreamEnd) => {}
            _ => return Vec::new(),
        }
        let written = usize::try_from(self.deflater.total_out()).unwrap_or(0);
        self.out
            .get(..written)
            .map(<[u8]>::to_vec)
            .unwrap_or_default()
    }

    /// The decoded bytes of one raw stream of `expected` bytes (empty on any error).
    pub fn inflate(&mut self, input: &[u8], expected: usize) -> Vec<u8> {
        self.out.resize(expected + 1, 0);
        self.inflater.reset(false);
        match self
            .inflater
            .decompress(input, &mut self.out, InflateFlush::Finish)
        {
            Ok(Status::StreamEnd) => {}
            _ => return Vec::new(),
        }
        let written = usize::try_from(self.inflater.total_out()).unwrap_or(0);
        if written != expected {
            return Vec::new();
        }
        self.out
            .get(..written)
            .map(<[u8]>::to_vec)
            .unwrap_or_default()
    }
}

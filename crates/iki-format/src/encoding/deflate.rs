//! The raw DEFLATE encoder of DATA chunks (docs/format.md section 6). Deflation samples each
//! chunk first to skip match searches that cannot pay (see [`Deflater`]).

use miniz_oxide::deflate::core::{
    compress, create_comp_flags_from_zip_params, CompressorOxide, TDEFLFlush, TDEFLStatus,
};

use super::pixels::PixelEncoder;
use crate::error::Error;
/// Chunks shorter than this are deflated without a sample: the attempt itself is cheap.
const SAMPLE_MIN_INPUT: usize = 4 * SAMPLE_WINDOW;
/// Bytes in each of the [`SAMPLE_WINDOWS`] windows a chunk's compressibility is judged on
/// (8 KiB: half the cost of 16 KiB windows, about 3 % of a level-1 pass over a 1 MiB chunk,
/// and the same verdicts on noise, the fixture atlases and the bench textures).
const SAMPLE_WINDOW: usize = 8 * 1024;
/// Windows, spread evenly over the chunk.
const SAMPLE_WINDOWS: usize = 4;
/// A chunk whose sampled windows deflate (level 1, each on its own) to more than this many
/// 1/64ths of their length is written as stored blocks: what it could save is under 3 %.
const STORE_ABOVE_64THS: usize = 62;
/// Largest stored block (RFC 1951 section 3.2.4: LEN is 16 bits).
const STORED_BLOCK_MAX: usize = 0xFFFF;

/// What the caller knows of a chunk's compressibility before it is deflated (see
/// [`Deflater::deflate_hinted`]). A license copy knows how the master's encoder judged the
/// same pixels before they were watermarked, so it need not sample them again.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum DeflateHint {
    /// Nothing known: the chunk is sampled as [`Deflater::deflate`] does.
    #[default]
    Unknown,
    /// The bytes (or the bytes these were derived from by small changes) did not compress:
    /// a chunk of 32 KiB or more (the sampled length) becomes stored blocks straight away, with
    /// neither a sample nor a match search, the stream a sample judging it incompressible
    /// gives; a shorter one is attempted at the level, as without a hint.
    Incompressible,
    /// The bytes (or their source) compressed. At level 1 the chunk goes straight to the
    /// match search, without the sample and its compressor resets; above level 1 it is
    /// sampled as without a hint (the literal test needs the level-1 sample's ratio). A chunk
    /// whose attempt does not fit `max_out` is stored, as always.
    Compressible,
    /// Compressible rgba8 rows of `row_bytes` bytes each (a license copy's marked pixels,
    /// whose master chunk compressed): at any level but 0 the chunk goes to the pixel encoder
    /// (`pixels.rs`: matches 1 to 5 pixels to the left and around the pixel one row up, no
    /// hash search), not to miniz_oxide, at about half level 1's instructions for no more
    /// bytes on marked atlases (bench/RESULTS.md, "Codec cost per MiB, sixth pass"). A chunk
    /// whose stream would be longer than stored blocks, or than `max_out`, is stored.
    Pixels {
        /// Bytes per pixel row (width * 4).
        row_bytes: u32,
    },
}

/// Raw DEFLATE encoder with a reused state and output buffer.
///
/// Every chunk becomes one complete raw stream (RFC 1951), so any inflater reads it. A chunk
/// of at least [`SAMPLE_MIN_INPUT`] bytes is first judged on a sample (four 8 KiB windows
/// deflated at level 1, about 3 % of a level-1 pass over 1 MiB): one that would not shrink by 3 % is
/// written as stored blocks straight away, a copy instead of a match search; one whose
/// sample shows little to match (noise in a channel) is deflated at level 1 when the chosen
/// level would save under 2 % more (see [`Deflater::plan`]). A chunk whose attempt would
/// not fit the DATA limit is stored too.
pub struct Deflater {
    state: Box<CompressorOxide>,
    level: u8,
    out: Vec<u8>,
    pixels: PixelEncoder,
}

impl Deflater {
    /// An encoder at `level` (0 to 10; miniz levels, 6 is zlib's default).
    ///
    /// # Errors
    /// `INVALID_ARGUMENT` for a level above 10.
    pub fn new(level: u8) -> Result<Self, Error> {
        if level > 10 {
            return Err(Error::argument("deflate level above 10"));
        }
        Ok(Self {
            state: Box::new(CompressorOxide::new(raw_flags(level))),
            level,
            out: Vec::new(),
            pixels: PixelEncoder::default(),
        })
    }

    /// Deflates `input` into one complete raw stream of at most `max_out` bytes. Data that
    /// does not compress (judged on a sample, see [`Deflater`]), and data whose attempt at
    /// the chosen level would exceed `max_out`, become stored blocks, whose overhead (5
    /// bytes per 64 KiB block) is far inside the DATA limit's margin.
    ///
    /// # Errors
    /// `LIMIT_EXCEEDED` if even stored blocks do not fit (cannot happen within the limits).
    pub fn deflate(&mut self, input: &[u8], max_out: usize) -> Result<&[u8], Error> {
        self.deflate_hinted(input, max_out, DeflateHint::Unknown)
    }

    /// Like [`Deflater::deflate`], with what the caller knows of the chunk ([`DeflateHint`])
    /// in place of the sample: on a 1 MiB chunk at level 1 the sample costs four compressor
    /// resets (each zeroes about 300 KiB of tables) and four 8 KiB searches.
    ///
    /// # Errors
    /// As [`Deflater::deflate`].
    pub fn deflate_hinted(
        &mut self,
        input: &[u8],
        max_out: usize,
        hint: DeflateHint,
    ) -> Result<&[u8], Error> {
        if let DeflateHint::Pixels { row_bytes } = hint {
            if self.level > 0 {
                // Never longer than stored blocks (the encoder stores block by block).
                let len = self.pixels.encode(input, row_bytes as usize);
                if len <= max_out && len <= stored_len(input.len()) {
                    return Ok(self.pixels.stream());
                }
                return self.stored(input, max_out);
            }
        }
        match self.plan_hinted(input, hint) {
            Some(level) => self.compress(input, max_out, level),
            None => self.stored(input, max_out),
        }
    }

    /// Like [`Deflater::deflate`], but the stream replaces the contents of `out` (whose
    /// capacity is reused). Stored blocks are written straight into `out`, so an
    /// incompressible chunk is copied once instead of twice; a deflated stream is copied
    /// from the encoder's buffer (kept at its full length, so it is never zero-filled again).
    ///
    /// # Errors
    /// As [`Deflater::deflate`]; `out` is then empty.
    pub fn deflate_into(
        &mut self,
        input: &[u8],
        max_out: usize,
        out: &mut Vec<u8>,
    ) -> Result<(), Error> {
        out.clear();
        let result = match self.plan(input) {
            None => stored(input, max_out, out),
            Some(level) => self
                .compress(input, max_out, level)
                .map(|packed| out.extend_from_slice(packed)),
        };
        if result.is_err() {
            out.clear();
        }
        result
    }

    /// `input` at `level`, or stored blocks when that does not fit `max_out`.
    fn compress(&mut self, input: &[u8], max_out: usize, level: u8) -> Result<&[u8], Error> {
        if self.out.len() < max_out {
            self.out.resize(max_out, 0);
        }
        self.state.reset();
        self.state
            .set_format_and_level(miniz_oxide::DataFormat::Raw, level);
        let out = self
            .out
            .get_mut(..max_out)
            .ok_or(Error::argument("deflate buffer"))?;
        let (status, consumed, written) = compress(&mut self.state, input, out, TDEFLFlush::Finish);
        if status == TDEFLStatus::Done && consumed == input.len() {
            return self
                .out
                .get(..written)
                .ok_or(Error::argument("deflate buffer"));
        }
        self.stored(input, max_out)
    }

    /// `input` as stored blocks in the encoder's buffer.
    fn stored(&mut self, input: &[u8], max_out: usize) -> Result<&[u8], Error> {
        let mut out = std::mem::take(&mut self.out);
        let result = stored(input, max_out, &mut out);
        self.out = out;
        result?;
        Ok(&self.out)
    }

    /// [`Deflater::plan`], or what `hint` settles without a sample.
    fn plan_hinted(&mut self, input: &[u8], hint: DeflateHint) -> Option<u8> {
        match hint {
            _ if self.level == 0 => None,
            DeflateHint::Incompressible if input.len() >= SAMPLE_MIN_INPUT => None,
            DeflateHint::Compressible if self.level == 1 => Some(1),
            _ => self.plan(input),
        }
    }

    /// The level to deflate `input` at, or `None` to store it. Short inputs take the chosen
    /// level. Longer ones are sampled at level 1: a sample that stays above 62/64 of its
    /// length is stored; one that stays above a quarter is literal-dominated (few matches
    /// to find, most of the gain is Huffman coding), so it is sampled at the chosen level
    /// too, and level 1 is used when the deeper search saves under 2 % of the sample.
    fn plan(&mut self, input: &[u8]) -> Option<u8> {
        if self.level == 0 {
            return None;
        }
        if input.len() < SAMPLE_MIN_INPUT {
            return Some(self.level);
        }
        let Some((sampled, fast)) = self.sample(input, 1) else {
            return Some(self.level);
        };
        if fast * 64 > sampled * STORE_ABOVE_64THS {
            return None;
        }
        if self.level > 1 && fast * 4 > sampled {
            if let Some((_, deep)) = self.sample(input, self.level) {
                if fast * 50 <= deep * 51 {
                    return Some(1);
                }
            }
        }
        Some(self.level)
    }

    /// (bytes sampled, their deflated length) of [`SAMPLE_WINDOWS`] windows of `input`,
    /// each deflated on its own at `level`; `None` if a window did not fit its room.
    fn sample(&mut self, input: &[u8], level: u8) -> Option<(usize, usize)> {
        let stride = input.len() / SAMPLE_WINDOWS;
        // Any level writes a window as stored blocks (+ 5 bytes each) when that is shorter.
        let room = SAMPLE_WINDOW + SAMPLE_WINDOW / 8;
        if self.out.len() < room {
            self.out.resize(room, 0);
        }
        let mut sampled = 0usize;
        let mut packed = 0usize;
        for i in 0..SAMPLE_WINDOWS {
            let window = input.get(i * stride..i * stride + SAMPLE_WINDOW)?;
            self.state.reset();
            self.state
                .set_format_and_level(miniz_oxide::DataFormat::Raw, level);
            let scratch = self.out.get_mut(..room)?;
            let (status, consumed, written) =
                compress(&mut self.state, window, scratch, TDEFLFlush::Finish);
            if status != TDEFLStatus::Done || consumed != window.len() {
                return None;
            }
            sampled += window.len();
            packed += written;
        }
        Some((sampled, packed))
    }
}

/// `input` as stored blocks (RFC 1951 section 3.2.4) in place of `out`'s contents: one
/// final empty block for an empty input, else blocks of up to 65535 bytes, the last one final.
fn stored(input: &[u8], max_out: usize, out: &mut Vec<u8>) -> Result<(), Error> {
    let total = stored_len(input.len());
    if total > max_out {
        return Err(Error::limit(
            "deflated chunk",
            input.len() as u64,
            max_out as u64,
        ));
    }
    out.clear();
    out.reserve(total);
    let mut pieces = input.chunks(STORED_BLOCK_MAX).peekable();
    if pieces.peek().is_none() {
        out.extend_from_slice(&[1, 0, 0, 0xFF, 0xFF]);
    }
    while let Some(piece) = pieces.next() {
        let last = pieces.peek().is_none();
        // piece.len() <= 65535.
        let len = u16::try_from(piece.len()).unwrap_or(u16::MAX);
        out.push(u8::from(last));
        out.extend_from_slice(&len.to_le_bytes());
        out.extend_from_slice(&(!len).to_le_bytes());
        out.extend_from_slice(piece);
    }
    Ok(())
}

/// Length of `len` bytes as stored blocks (5 bytes of header per block, at least one block).
fn stored_len(len: usize) -> usize {
    len + 5 * len.div_ceil(STORED_BLOCK_MAX).max(1)
}

fn raw_flags(level: u8) -> u32 {
    create_comp_flags_from_zip_params(i32::from(level), 0, 0)
}

#[cfg(test)]
mod tests;

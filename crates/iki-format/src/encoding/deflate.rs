//! The raw DEFLATE codec of DATA chunks (docs/format.md section 6). Inflation writes into a
//! reused buffer of the decoded length + 1 and stops there (RFC 1951 raw streams, via
//! miniz_oxide), so a chunk can never expand without bound. Deflation samples each chunk
//! first to skip match searches that cannot pay (see [`Deflater`]).

use miniz_oxide::deflate::core::{
    compress, create_comp_flags_from_zip_params, CompressorOxide, TDEFLFlush, TDEFLStatus,
};
use miniz_oxide::inflate::core::{decompress, inflate_flags, DecompressorOxide};
use miniz_oxide::inflate::TINFLStatus;

use crate::error::Error;

/// Raw DEFLATE decoder with a reused state and output buffer.
pub struct Inflater {
    state: Box<DecompressorOxide>,
    out: Vec<u8>,
}

impl Default for Inflater {
    fn default() -> Self {
        Self::new()
    }
}

impl Inflater {
    /// A decoder; its output buffer grows to the largest chunk it decoded + 1.
    #[must_use]
    pub fn new() -> Self {
        Self {
            state: Box::default(),
            out: Vec::new(),
        }
    }

    /// Inflates one complete raw DEFLATE stream that must produce exactly `expected` bytes
    /// and consume all of `input`. Returns the decoded bytes (valid until the next call).
    ///
    /// # Errors
    /// `Err(())` for an invalid or incomplete stream, input left over, or any other length;
    /// the caller turns it into `BAD_DATA` with the chunk's position.
    #[allow(clippy::result_unit_err)]
    pub fn inflate_exact(&mut self, input: &[u8], expected: usize) -> Result<&[u8], ()> {
        let mut out = std::mem::take(&mut self.out);
        let result = self.inflate_into(input, expected, &mut out);
        self.out = out;
        result?;
        self.out.get(..expected).ok_or(())
    }

    /// Like [`Inflater::inflate_exact`], but decodes into `out`, which holds exactly the
    /// `expected` decoded bytes on success. Its earlier contents are overwritten, not zeroed
    /// first, and its capacity is reused, so a buffer handed back chunk after chunk is
    /// allocated once and never cleared byte by byte.
    ///
    /// # Errors
    /// As [`Inflater::inflate_exact`]; `out`'s contents are then unspecified.
    #[allow(clippy::result_unit_err)]
    pub fn inflate_into(
        &mut self,
        input: &[u8],
        expected: usize,
        out: &mut Vec<u8>,
    ) -> Result<(), ()> {
        // One byte of room past `expected`: a stream that would decode longer stops with
        // more output pending instead of ending exactly at the buffer's end.
        let bound = expected.checked_add(1).ok_or(())?;
        // Truncates a longer buffer; only bytes past its current length are zero-filled.
        out.resize(bound, 0);
        self.state.init();
        let flags = inflate_flags::TINFL_FLAG_USING_NON_WRAPPING_OUTPUT_BUF;
        let (status, consumed, written) = decompress(&mut self.state, input, out, 0, flags);
        if status != TINFLStatus::Done || consumed != input.len() || written != expected {
            return Err(());
        }
        out.truncate(expected);
        Ok(())
    }
}

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
        let level = match self.plan_hinted(input, hint) {
            Some(level) => level,
            None => {
                let mut out = std::mem::take(&mut self.out);
                let result = stored(input, max_out, &mut out);
                self.out = out;
                result?;
                return Ok(&self.out);
            }
        };
        self.compress(input, max_out, level)
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
        self.deflate_into_hinted(input, max_out, out, DeflateHint::Unknown)
    }

    /// [`Deflater::deflate_into`] with a [`DeflateHint`] (see [`Deflater::deflate_hinted`]).
    ///
    /// # Errors
    /// As [`Deflater::deflate`]; `out` is then empty.
    pub fn deflate_into_hinted(
        &mut self,
        input: &[u8],
        max_out: usize,
        out: &mut Vec<u8>,
        hint: DeflateHint,
    ) -> Result<(), Error> {
        out.clear();
        let result = match self.plan_hinted(input, hint) {
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
    let blocks = input.len().div_ceil(STORED_BLOCK_MAX).max(1);
    let total = input.len() + 5 * blocks;
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

fn raw_flags(level: u8) -> u32 {
    create_comp_flags_from_zip_params(i32::from(level), 0, 0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::encoding::max_encoded_bytes;

    #[test]
    fn deflate_round_trip_and_exact_length() {
        let mut deflater = Deflater::new(6).unwrap();
        let mut inflater = Inflater::new();
        let text: Vec<u8> = (0..5000u32).map(|i| (i % 7) as u8).collect();
        let packed = deflater.deflate(&text, 6000).unwrap().to_vec();
        assert!(packed.len() < 200);
        assert_eq!(inflater.inflate_exact(&packed, 5000).unwrap(), &text[..]);
        assert!(
            inflater.inflate_exact(&packed, 4999).is_err(),
            "expands past the bound"
        );
        assert!(inflater.inflate_exact(&packed, 5001).is_err(), "too short");
        let mut extra = packed.clone();
        extra.push(0);
        assert!(
            inflater.inflate_exact(&extra, 5000).is_err(),
            "input left over"
        );
        assert!(
            inflater
                .inflate_exact(&packed[..packed.len() - 1], 5000)
                .is_err(),
            "incomplete"
        );
        let empty = deflater.deflate(&[], 100).unwrap().to_vec();
        assert_eq!(inflater.inflate_exact(&empty, 0).unwrap(), &[] as &[u8]);
    }

    #[test]
    fn incompressible_chunks_fit_the_data_limit() {
        for chunk_size in [4096u32, 65536 * 3 + 7, 1 << 20] {
            // xorshift noise: incompressible.
            let mut x = 0x2545_F491_4F6C_DD1Du64;
            let noise: Vec<u8> = (0..chunk_size)
                .map(|_| {
                    x ^= x << 13;
                    x ^= x >> 7;
                    x ^= x << 17;
                    (x >> 32) as u8
                })
                .collect();
            let max = usize::try_from(max_encoded_bytes(chunk_size, true)).unwrap();
            let mut deflater = Deflater::new(9).unwrap();
            let packed = deflater.deflate(&noise, max).unwrap().to_vec();
            assert!(packed.len() <= max, "{chunk_size}");
            assert_eq!(
                Inflater::new().inflate_exact(&packed, noise.len()).unwrap(),
                &noise[..]
            );
        }
    }

    fn xorshift(len: usize, mut x: u64) -> Vec<u8> {
        (0..len)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                (x >> 32) as u8
            })
            .collect()
    }

    /// `data` as RFC 1951 stored blocks of 65535 bytes, built by hand.
    fn stored_form(data: &[u8]) -> Vec<u8> {
        let mut out = Vec::new();
        let pieces: Vec<&[u8]> = data.chunks(0xFFFF).collect();
        for (i, piece) in pieces.iter().enumerate() {
            let len = piece.len() as u16;
            out.push(u8::from(i + 1 == pieces.len()));
            out.extend_from_slice(&len.to_le_bytes());
            out.extend_from_slice(&(!len).to_le_bytes());
            out.extend_from_slice(piece);
        }
        out
    }

    #[test]
    fn incompressible_chunks_become_stored_blocks_without_a_match_search() {
        let mut inflater = Inflater::new();
        for level in [1u8, 6, 9] {
            let mut deflater = Deflater::new(level).unwrap();
            // At the sample's threshold and past it: 32 KiB and 1 MiB of noise are stored
            // in 65535-byte blocks, exactly.
            for len in [SAMPLE_MIN_INPUT, SAMPLE_MIN_INPUT + 1, 1 << 20] {
                let noise = xorshift(len, 0x9E37_79B9_7F4A_7C15);
                let packed = deflater.deflate(&noise, len + 1000).unwrap().to_vec();
                assert_eq!(packed, stored_form(&noise), "level {level}, {len} bytes");
                assert_eq!(inflater.inflate_exact(&packed, len).unwrap(), &noise[..]);
            }
            // Just under it, no sample: the attempt at the level decides, and still fits.
            let noise = xorshift(SAMPLE_MIN_INPUT - 1, 3);
            let packed = deflater
                .deflate(&noise, SAMPLE_MIN_INPUT + 100)
                .unwrap()
                .to_vec();
            assert_eq!(
                inflater.inflate_exact(&packed, noise.len()).unwrap(),
                &noise[..]
            );
        }
    }

    #[test]
    fn compressible_chunks_are_still_deflated() {
        let mut inflater = Inflater::new();
        let mut deflater = Deflater::new(1).unwrap();
        // Noise with one byte in eight zeroed: level 1 saves well over 3 % of it.
        let mut mostly_noise = xorshift(1 << 20, 5);
        for byte in mostly_noise.iter_mut().step_by(8) {
            *byte = 0;
        }
        let packed = deflater.deflate(&mostly_noise, 2 << 20).unwrap().to_vec();
        assert!(
            packed.len() < mostly_noise.len() * 62 / 64,
            "{}",
            packed.len()
        );
        assert_eq!(
            inflater.inflate_exact(&packed, 1 << 20).unwrap(),
            &mostly_noise[..]
        );
        // Pixels that repeat: a small fraction of their length.
        let tiles: Vec<u8> = (0..1u32 << 20).map(|i| ((i % 4096) / 64) as u8).collect();
        let packed = deflater.deflate(&tiles, 2 << 20).unwrap().to_vec();
        assert!(packed.len() < tiles.len() / 50, "{}", packed.len());
        assert_eq!(
            inflater.inflate_exact(&packed, 1 << 20).unwrap(),
            &tiles[..]
        );
    }

    #[test]
    fn stored_blocks_respect_the_output_bound() {
        let mut deflater = Deflater::new(0).unwrap();
        let data = xorshift(70_000, 9);
        // Two blocks: 70000 + 10 bytes, at the bound and one byte under it.
        assert_eq!(deflater.deflate(&data, 70_010).unwrap().len(), 70_010);
        assert!(deflater.deflate(&data, 70_009).is_err());
        let empty = deflater.deflate(&[], 5).unwrap().to_vec();
        assert_eq!(
            Inflater::new().inflate_exact(&empty, 0).unwrap(),
            &[] as &[u8]
        );
    }

    #[test]
    fn literal_dominated_chunks_take_level_1_and_match_rich_ones_keep_the_level() {
        let mut inflater = Inflater::new();
        let mut fast = Deflater::new(1).unwrap();
        let mut deep = Deflater::new(6).unwrap();
        // Pixels with a gradient, a noise channel and opaque alpha (the export bench's
        // texture): level 6 finds almost nothing level 1 does not.
        let noise = xorshift(1 << 18, 13);
        let pixels: Vec<u8> = (0..1usize << 18)
            .flat_map(|i| [(i % 2048 / 8) as u8, (i / 2048) as u8, noise[i], 255])
            .collect();
        let at_1 = fast.deflate(&pixels, 2 << 20).unwrap().to_vec();
        let at_6 = deep.deflate(&pixels, 2 << 20).unwrap().to_vec();
        assert_eq!(at_6, at_1);
        assert_eq!(
            inflater.inflate_exact(&at_6, pixels.len()).unwrap(),
            &pixels[..]
        );
        // Just under the sample's threshold the level is used as asked.
        let short = &pixels[..SAMPLE_MIN_INPUT - 4];
        let at_1 = fast.deflate(short, 1 << 20).unwrap().to_vec();
        let at_6 = deep.deflate(short, 1 << 20).unwrap().to_vec();
        assert_ne!(at_6, at_1);
        // Repeating tiles: the deeper search pays, so level 6 stays.
        let tiles: Vec<u8> = (0..1u32 << 20)
            .map(|i| ((i * 7 % 4093) / 64) as u8 ^ (i % 3) as u8)
            .collect();
        let at_1 = fast.deflate(&tiles, 2 << 20).unwrap().to_vec();
        let at_6 = deep.deflate(&tiles, 2 << 20).unwrap().to_vec();
        assert_ne!(at_6, at_1);
        assert_eq!(
            inflater.inflate_exact(&at_6, tiles.len()).unwrap(),
            &tiles[..]
        );
    }

    #[test]
    fn hints_settle_the_plan_without_a_sample() {
        let mut inflater = Inflater::new();
        let mut fast = Deflater::new(1).unwrap();
        let tiles: Vec<u8> = (0..1u32 << 20).map(|i| ((i % 4096) / 64) as u8).collect();
        let noise = xorshift(1 << 20, 21);
        let max = 2 << 20;
        // A chunk the sample deflates: the hint gives the same stream.
        let plain = fast.deflate(&tiles, max).unwrap().to_vec();
        let hinted = fast
            .deflate_hinted(&tiles, max, DeflateHint::Compressible)
            .unwrap()
            .to_vec();
        assert_eq!(hinted, plain);
        // Incompressible: stored blocks even where a search would pay.
        let stored_tiles = fast
            .deflate_hinted(&tiles, max, DeflateHint::Incompressible)
            .unwrap()
            .to_vec();
        assert_eq!(stored_tiles, stored_form(&tiles));
        // Compressible at level 1: searched although the sample would store it; the
        // stream still decodes and fits.
        let searched = fast
            .deflate_hinted(&noise, max, DeflateHint::Compressible)
            .unwrap()
            .to_vec();
        assert_ne!(searched, stored_form(&noise));
        assert!(searched.len() <= max);
        assert_eq!(
            inflater.inflate_exact(&searched, noise.len()).unwrap(),
            &noise[..]
        );
        // Above level 1 the sample still decides, and level 0 always stores.
        let mut deep = Deflater::new(6).unwrap();
        let at_6 = deep
            .deflate_hinted(&noise, max, DeflateHint::Compressible)
            .unwrap()
            .to_vec();
        assert_eq!(at_6, stored_form(&noise));
        let mut none = Deflater::new(0).unwrap();
        let at_0 = none
            .deflate_hinted(&tiles, max, DeflateHint::Compressible)
            .unwrap()
            .to_vec();
        assert_eq!(at_0, stored_form(&tiles));
        // deflate_into_hinted gives the same bytes into the caller's buffer.
        let mut out = vec![9u8; 3];
        fast.deflate_into_hinted(&tiles, max, &mut out, DeflateHint::Compressible)
            .unwrap();
        assert_eq!(out, plain);
    }

    #[test]
    fn hinted_streams_round_trip_on_mixed_inputs() {
        let mut inflater = Inflater::new();
        let mut x = 0x1234_5678_9ABC_DEF1u64;
        let mut next = move || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        let hints = [
            DeflateHint::Unknown,
            DeflateHint::Incompressible,
            DeflateHint::Compressible,
        ];
        for round in 0..60u64 {
            let len = (next() % (200 * 1024)) as usize;
            // Runs of a byte, copies of earlier bytes and noise, mixed at random.
            let mut data = Vec::with_capacity(len);
            while data.len() < len {
                let run = 1 + (next() % 300) as usize;
                match next() % 3 {
                    0 => data.extend(std::iter::repeat_n((next() & 0xFF) as u8, run)),
                    1 if data.len() > run => {
                        let from = (next() as usize) % (data.len() - run);
                        data.extend_from_within(from..from + run);
                    }
                    _ => data.extend((0..run).map(|_| (next() >> 24) as u8)),
                }
            }
            data.truncate(len);
            let max = len + 5 * len.div_ceil(STORED_BLOCK_MAX).max(1);
            for level in [1u8, 6] {
                let mut deflater = Deflater::new(level).unwrap();
                for hint in hints {
                    let packed = deflater.deflate_hinted(&data, max, hint).unwrap().to_vec();
                    assert!(packed.len() <= max, "round {round} level {level} {hint:?}");
                    assert_eq!(
                        inflater.inflate_exact(&packed, len).unwrap(),
                        &data[..],
                        "round {round} level {level} {hint:?}"
                    );
                }
            }
        }
    }
}

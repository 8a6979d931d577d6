//! Tests of the sampled deflater and its hints (deflate.rs).

use super::*;
use crate::encoding::{max_encoded_bytes, Inflater};

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

//! Pins the keystream layout to plain ChaCha8 so that a second implementation
//! can follow docs/watermark.md without rand_chacha.

use super::*;

/// Textbook ChaCha block (Bernstein's original 64-bit counter, 64-bit nonce)
/// with `rounds` rounds, written out independently of rand_chacha.
fn chacha_block(key: &[u8; 32], counter: u64, nonce: u64, rounds: usize) -> [u8; 64] {
    let mut s = [0u32; 16];
    s[..4].copy_from_slice(&[0x6170_7865, 0x3320_646e, 0x7962_2d32, 0x6b20_6574]);
    for i in 0..8 {
        s[4 + i] = u32::from_le_bytes(key[4 * i..4 * i + 4].try_into().unwrap());
    }
    s[12] = counter as u32;
    s[13] = (counter >> 32) as u32;
    s[14] = nonce as u32;
    s[15] = (nonce >> 32) as u32;
    let mut x = s;
    fn qr(x: &mut [u32; 16], a: usize, b: usize, c: usize, d: usize) {
        x[a] = x[a].wrapping_add(x[b]);
        x[d] = (x[d] ^ x[a]).rotate_left(16);
        x[c] = x[c].wrapping_add(x[d]);
        x[b] = (x[b] ^ x[c]).rotate_left(12);
        x[a] = x[a].wrapping_add(x[b]);
        x[d] = (x[d] ^ x[a]).rotate_left(8);
        x[c] = x[c].wrapping_add(x[d]);
        x[b] = (x[b] ^ x[c]).rotate_left(7);
    }
    for _ in 0..rounds / 2 {
        qr(&mut x, 0, 4, 8, 12);
        qr(&mut x, 1, 5, 9, 13);
        qr(&mut x, 2, 6, 10, 14);
        qr(&mut x, 3, 7, 11, 15);
        qr(&mut x, 0, 5, 10, 15);
        qr(&mut x, 1, 6, 11, 12);
        qr(&mut x, 2, 7, 8, 13);
        qr(&mut x, 3, 4, 9, 14);
    }
    let mut out = [0u8; 64];
    for i in 0..16 {
        out[4 * i..4 * i + 4].copy_from_slice(&x[i].wrapping_add(s[i]).to_le_bytes());
    }
    out
}

fn reference_row(key: &[u8; 32], row: u32, len: usize) -> Vec<u8> {
    (0..len.div_ceil(64) as u64)
        .flat_map(|c| chacha_block(key, c, u64::from(row), 8))
        .take(len)
        .collect()
}

const FAKE_KEY: [u8; 32] = *b"fake-watermark-key-for-tests-000";

#[test]
fn row_stream_is_plain_chacha8_with_nonce_equal_to_row() {
    let width = 1000;
    let mut stream = RowStream::new(&WatermarkKey::from_bytes(FAKE_KEY), width);
    // Rows out of order, including a reload of an earlier row.
    for row in [7u32, 0, 1, u32::MAX, 7] {
        stream.load(row);
        let reference = reference_row(&FAKE_KEY, row, PRELUDE_BYTES + width.div_ceil(8));
        assert_eq!(
            &stream.prelude[..],
            &reference[..PRELUDE_BYTES],
            "row {row}"
        );
        assert_eq!(&stream.chips[..], &reference[PRELUDE_BYTES..], "row {row}");
    }
}

#[test]
fn iki_crypto_chacha8_is_the_reference_chacha8() {
    // The keystream the WASM build uses, in its scalar form here, against the independent
    // block function above, then against rand_chacha (keystream_cross_check), including a
    // block counter that carries into its high word.
    for (block, len) in [(0u32, 64usize), (2, 1000), (u32::MAX - 2, 400)] {
        let mut ours = vec![0u8; len];
        iki_crypto::chacha8_keystream(&FAKE_KEY, 9, block, &mut ours);
        let reference: Vec<u8> = (0..len.div_ceil(64) as u64)
            .flat_map(|c| chacha_block(&FAKE_KEY, u64::from(block) + c, 9, 8))
            .take(len)
            .collect();
        assert_eq!(ours, reference, "block {block}");
    }
    for seed in [0, 1, u64::MAX] {
        assert!(keystream_cross_check(seed), "seed {seed}");
    }
}

#[test]
fn chacha20_reference_matches_rfc7539_block_with_zero_key() {
    // RFC 7539 section 2.3.2 uses a 96-bit nonce; with key 0, counter 0 and
    // nonce 0 both layouts agree, and the first 16 keystream bytes are known.
    let block = chacha_block(&[0u8; 32], 0, 0, 20);
    assert_eq!(
        block[..16],
        [
            0x76, 0xb8, 0xe0, 0xad, 0xa0, 0xf1, 0x3d, 0x90, 0x40, 0x5d, 0x6a, 0xe5, 0x53, 0x86,
            0xbd, 0x28
        ]
    );
}

#[test]
fn permutation_is_a_permutation_and_differs_between_rows() {
    let mut stream = RowStream::new(&WatermarkKey::from_bytes(FAKE_KEY), 8);
    let mut seen_perms = std::collections::HashSet::new();
    for row in 0..200 {
        stream.load(row);
        let mut sorted = stream.perm;
        sorted.sort_unstable();
        assert!(sorted.iter().enumerate().all(|(i, &v)| usize::from(v) == i));
        seen_perms.insert(stream.perm);
    }
    assert_eq!(seen_perms.len(), 200);
}

#[test]
fn permutation_follows_the_documented_fisher_yates() {
    let mut stream = RowStream::new(&WatermarkKey::from_bytes(FAKE_KEY), 8);
    stream.load(3);
    let bytes = reference_row(&FAKE_KEY, 3, PRELUDE_BYTES);
    let mut perm: Vec<u8> = (0..80).collect();
    for k in (1..80usize).rev() {
        let i = 79 - k;
        let w = u32::from_le_bytes(bytes[4 * i..4 * i + 4].try_into().unwrap());
        let j = ((u64::from(w) * (k as u64 + 1)) >> 32) as usize;
        perm.swap(k, j);
    }
    assert_eq!(stream.perm.to_vec(), perm);
}

#[test]
fn debug_hides_the_key() {
    let key = WatermarkKey::from_bytes([0xAB; 32]);
    let shown = format!("{key:?}");
    assert_eq!(shown, "WatermarkKey(..)");
    assert!(!shown.to_lowercase().contains("ab"));
}

/// Visible pixels per payload bit on a fixture atlas and on a 64x64 crop of
/// it, with the per-row permutation versus an i.i.d. uniform bit per pixel.
/// Returns (min, max) share relative to the mean for each scheme.
fn balance(alpha: &[u8], width: usize, height: usize) -> ((f64, f64), (f64, f64)) {
    let mut stream = RowStream::new(&WatermarkKey::from_bytes(FAKE_KEY), width);
    let mut iid_rng = ChaCha8Rng::from_seed([9u8; 32]);
    let (mut perm_counts, mut iid_counts) = ([0u64; PAYLOAD_BITS], [0u64; PAYLOAD_BITS]);
    for y in 0..height {
        stream.load(y as u32);
        for x in 0..width {
            if alpha[y * width + x] >= crate::VISIBLE_ALPHA_MIN {
                perm_counts[usize::from(stream.perm[x % PAYLOAD_BITS])] += 1;
                iid_counts[(iid_rng.next_u32() % PAYLOAD_BITS as u32) as usize] += 1;
            }
        }
    }
    let spread = |c: &[u64; PAYLOAD_BITS]| {
        let mean = c.iter().sum::<u64>() as f64 / PAYLOAD_BITS as f64;
        (
            *c.iter().min().unwrap() as f64 / mean,
            *c.iter().max().unwrap() as f64 / mean,
        )
    };
    (spread(&perm_counts), spread(&iid_counts))
}

#[test]
fn the_row_permutation_shares_pixels_evenly_between_bits() {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../../shared/fixtures/textures/kenney-platformer-pack-redux_spritesheet_players.png"
    );
    let mut reader = png::Decoder::new(std::fs::File::open(path).unwrap())
        .read_info()
        .unwrap();
    let mut rgba = vec![0; reader.output_buffer_size()];
    let info = reader.next_frame(&mut rgba).unwrap();
    let (w, h) = (info.width as usize, info.height as usize);
    let alpha: Vec<u8> = rgba.chunks_exact(4).map(|p| p[3]).collect();
    let (perm, iid) = balance(&alpha, w, h);
    println!("players atlas: permutation {perm:.4?}, i.i.d. {iid:.4?}");
    assert!(perm.0 > 0.99 && perm.1 < 1.01, "{perm:?}");
    // A fully visible 64 x 64 texture: narrower than the 80-pixel period, so
    // each row covers 64 distinct bits and the 16 it misses vary by row.
    let (perm, iid) = balance(&[255u8; 64 * 64], 64, 64);
    println!("64x64 opaque: permutation {perm:.3?}, i.i.d. {iid:.3?}");
    assert!(
        perm.0 > 0.8 && perm.1 < 1.2 && iid.0 < 0.8,
        "{perm:?} vs {iid:?}"
    );
}

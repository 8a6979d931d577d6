//! Unit tests of soft matching: the exact bound against its closed forms, naming, mixes.

use super::*;

/// A read of `license_id` with every bit at strength `strength(i)`.
fn read_of(license_id: u64, strength: impl Fn(usize) -> f64) -> [f64; PAYLOAD_BITS] {
    let mut z = [0.0; PAYLOAD_BITS];
    for (i, (slot, bit)) in z.iter_mut().zip(payload_bits(license_id)).enumerate() {
        *slot = if bit { strength(i) } else { -strength(i) };
    }
    z
}

/// A deterministic generator for the tests (splitmix64).
fn ids(seed: u64, n: usize) -> Vec<u64> {
    let mut x = seed;
    (0..n)
        .map(|_| {
            x = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
            let mut z = x;
            z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
            z ^ (z >> 31)
        })
        .collect()
}

#[test]
fn the_code_mgf_is_the_cosh_product_when_the_crc_bits_read_nothing() {
    // With z zero on the 16 CRC bits, the id bits of a random id are independent fair
    // signs, so the expectation is exactly the product of cosh(l z_i).
    let mut z = [0.0; PAYLOAD_BITS];
    for (i, v) in z.iter_mut().enumerate().take(64) {
        *v = (i as f64 * 0.37).sin() * 3.0;
    }
    let l = 0.7;
    let want: f64 = z.iter().map(|v| ln_cosh(l * v)).sum();
    let got = ln_code_mgf(&z, l, &mut (vec![0.0; 1 << 16], vec![0.0; 1 << 16]));
    assert!((want - got).abs() < 1e-9, "{want} {got}");
}

#[test]
fn the_code_mgf_sees_that_the_crc_follows_the_id() {
    // All 80 bits of one payload at strength 10: a random id matches it with
    // probability 2^-64 (its CRC then matches too), not the 2^-80 of 80 independent
    // signs, so the exact expectation is 16 ln 2 above the independent product's.
    let z = read_of(0x0123_4567_89ab_cdef, |_| 10.0);
    let l = 3.0;
    let exact = ln_code_mgf(&z, l, &mut (vec![0.0; 1 << 16], vec![0.0; 1 << 16]));
    let independent: f64 = z.iter().map(|v| ln_cosh(l * v)).sum();
    let ln2 = core::f64::consts::LN_2;
    assert!((exact - (l * 800.0 - 64.0 * ln2)).abs() < 1e-6, "{exact}");
    assert!(
        (exact - independent - 16.0 * ln2).abs() < 1e-6,
        "{exact} {independent}"
    );
}

#[test]
fn a_copy_whose_crc_fails_is_still_named() {
    // Weak bits with 12 of them read wrong: the CRC cannot check, the score still names.
    let guilty = 0x5eed_0000_1234_abcd;
    let z = read_of(guilty, |i| if i % 7 == 0 { -0.8 } else { 2.2 });
    let mut issued = ids(1, 10_000);
    issued[4321] = guilty;
    let m = match_licenses(&z, 12.0, &issued, 2.0);
    assert!(!m.mixed);
    let first = m.candidates[0];
    assert_eq!((first.license_id, first.named), (guilty, true));
    assert!(first.false_accusation < NAME_SINGLE_MAX);
    assert!(m.candidates[1..]
        .iter()
        .all(|c| !c.named && c.false_accusation > 0.01));
}

#[test]
fn an_average_of_two_copies_is_a_mix_and_names_both() {
    let (a, b) = (0x1111_2222_3333_4444u64, 0x9999_aaaa_bbbb_cccc);
    let (pa, pb) = (payload_bits(a), payload_bits(b));
    let mut z = [0.0; PAYLOAD_BITS];
    for (i, slot) in z.iter_mut().enumerate() {
        let sa = if pa[i] { 30.0 } else { -30.0 };
        let sb = if pb[i] { 30.0 } else { -30.0 };
        // The mean of the two marks plus a little noise.
        *slot = (sa + sb) / 2.0 + (i as f64 * 1.7).sin();
    }
    let mut issued = ids(2, 10_000);
    issued[10] = a;
    issued[9000] = b;
    let m = match_licenses(&z, 100.0, &issued, 2.0);
    assert!(m.mixed);
    let named: Vec<u64> = m.named().collect();
    assert!(named.contains(&a) && named.contains(&b), "{m:?}");
    assert_eq!(named.len(), 2);
}

#[test]
fn means_of_two_and_four_copies_are_mixes_and_honest_reads_are_not() {
    // Each bit carries the mean of the copies' signs (levels of +-2 each, strength 15 a level).
    let ids4 = [
        0x1111_2222_3333_4444u64,
        0x9999_aaaa_bbbb_cccc,
        0x0f0f_f0f0_1234_5678,
        0x7777_1234_0000_ffff,
    ];
    for k in [2usize, 4] {
        let bits: Vec<[bool; PAYLOAD_BITS]> =
            ids4[..k].iter().map(|&id| payload_bits(id)).collect();
        let mut z = [0.0; PAYLOAD_BITS];
        for (i, slot) in z.iter_mut().enumerate() {
            let sum: i32 = bits.iter().map(|b| if b[i] { 2 } else { -2 }).sum();
            *slot = 15.0 * f64::from(sum) / k as f64 + (i as f64 * 0.9).cos();
        }
        assert!(looks_mixed(&z, 200.0), "{k}");
    }
    // One copy with unit noise, strong or weak, is not a mix; nor is an unmarked read.
    for strength in [1.5, 3.0, 8.0, 40.0, 400.0] {
        let honest = read_of(ids4[0], |i| strength + (i as f64 * 2.3).sin());
        assert!(!looks_mixed(&honest, 50.0), "{strength}");
    }
    assert!(!looks_mixed(&read_of(1, |i| (i % 3) as f64), 0.5));
}

#[test]
fn means_of_three_copies_are_mixes_by_the_split_and_spread_honest_reads_are_not() {
    // 20-odd bits where all three agree at full strength, the rest at half (a mean rounded to
    // whole levels: +2, +2, -2 give +1) or a third (exact); strength 15 a level, as above.
    let ids3 = [
        0x1111_2222_3333_4444u64,
        0x9999_aaaa_bbbb_cccc,
        0x0f0f_f0f0_1234_5678,
    ];
    let bits: Vec<[bool; PAYLOAD_BITS]> = ids3.iter().map(|&id| payload_bits(id)).collect();
    for (rounded, level) in [(true, 10.0), (false, 10.0), (true, 15.0), (false, 15.0)] {
        let mut z = [0.0; PAYLOAD_BITS];
        for (i, slot) in z.iter_mut().enumerate() {
            let sum: i32 = bits.iter().map(|b| if b[i] { 2 } else { -2 }).sum();
            let mean = if rounded {
                (f64::from(sum) / 3.0).round()
            } else {
                f64::from(sum) / 3.0
            };
            *slot = level * mean + (i as f64 * 0.9).cos();
        }
        let floor_only = {
            let mut m = z.map(f64::abs);
            m.sort_unstable_by(|a, b| b.total_cmp(a));
            let floor = BIT_FLOOR_RATIO * m.iter().take(40).sum::<f64>() / 40.0 - BIT_FLOOR_SLACK;
            m.iter().filter(|&&v| v < floor).count() >= MIX_MIN_WEAK_BITS
        };
        // The rounded mean is the case the balance floor alone misses.
        assert!(
            !rounded || !floor_only,
            "the balance floor alone misses it ({level})"
        );
        assert!(looks_mixed(&z, 200.0), "rounded {rounded}, {level} a level");
    }
    // One copy whose bits spread by 20 % of their strength besides unit noise, strong or weak,
    // is not a mix.
    for strength in [1.5, 3.0, 8.0, 20.0, 40.0, 400.0] {
        let spread = read_of(ids3[0], |i| {
            strength * (1.0 + 0.2 * (i as f64 * 1.7).sin()) + (i as f64 * 2.3).sin()
        });
        assert!(!looks_mixed(&spread, 50.0), "{strength}");
    }
}

#[test]
fn a_rounded_mean_of_three_read_by_the_sign_like_blind_reader_is_a_mix_by_its_gap() {
    // As measured on the tiles atlas: the bits all three copies agree on at about 125, the
    // others at about 111 (the clip makes the blind read nearly a sign detector), unit spread.
    let ids3 = [
        0x1111_2222_3333_4444u64,
        0x9999_aaaa_bbbb_cccc,
        0x0f0f_f0f0_1234_5678,
    ];
    let bits: Vec<[bool; PAYLOAD_BITS]> = ids3.iter().map(|&id| payload_bits(id)).collect();
    let mut z = [0.0; PAYLOAD_BITS];
    for (i, slot) in z.iter_mut().enumerate() {
        let sum: i32 = bits.iter().map(|b| if b[i] { 1 } else { -1 }).sum();
        let level = if sum.abs() == 3 { 125.0 } else { 111.0 };
        *slot = f64::from(sum.signum()) * (level + (i as f64 * 0.9).cos());
    }
    assert!(looks_mixed(&z, 1600.0));
    // One copy at that strength with two units of spread, or with a few bits (fewer than
    // MIX_GAP_SIDE) far weaker, is not.
    let spread = read_of(ids3[0], |i| 120.0 + 2.0 * (i as f64 * 2.3).sin());
    assert!(!looks_mixed(&spread, 1600.0));
    let few = read_of(ids3[0], |i| {
        if i < MIX_GAP_SIDE - 1 {
            100.0
        } else {
            120.0 + (i as f64).sin()
        }
    });
    assert!(!looks_mixed(&few, 1600.0));
}

#[test]
fn independent_bound_is_calibrated_and_monotone() {
    let z = read_of(7, |i| 1.0 + (i % 5) as f64);
    let mut last = 1.0;
    for k in 0..40 {
        let p = independent_bound(&z, f64::from(k) * 5.0);
        assert!(p <= last + 1e-15 && p >= 0.0);
        last = p;
    }
    let total: f64 = z.iter().map(|v| v.abs()).sum();
    let top = independent_bound(&z, total);
    assert!((top.log2() + 80.0).abs() < 1e-6, "{top}");
    assert_eq!(independent_bound(&z, total * 1.01), 0.0);
}

#[test]
fn no_issued_licenses_or_no_signal_name_nobody() {
    let z = [0.0; PAYLOAD_BITS];
    let m = match_licenses(&z, -11.8, &ids(3, 100), 1.0);
    assert!(m
        .candidates
        .iter()
        .all(|c| !c.named && c.false_accusation == 1.0));
    assert!(match_licenses(&read_of(5, |_| 9.0), 99.0, &[], 1.0)
        .candidates
        .is_empty());
    let mut nan = read_of(5, |_| 9.0);
    nan[3] = f64::NAN;
    assert!(match_licenses(&nan, 99.0, &[5], 1.0).candidates.is_empty());
}

#[test]
fn duplicates_count_once_and_the_list_is_bounded() {
    let z = read_of(42, |_| 3.0);
    let mut issued = vec![42u64; 10];
    issued.extend(ids(4, 20));
    let m = match_licenses(&z, 20.0, &issued, 1.0);
    assert_eq!(m.candidates.len(), LISTED_CANDIDATES);
    assert_eq!(
        m.candidates.iter().filter(|c| c.license_id == 42).count(),
        1
    );
    assert_eq!(m.candidates[0].license_id, 42);
}

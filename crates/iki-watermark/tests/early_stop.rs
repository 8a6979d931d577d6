//! Score-only reads stop early (docs/watermark.md section 11.10): a leak whose bits no longer
//! decode but whose scores name an issued license ends the search at that read, with the same
//! license the full search names; a leak that names nobody is searched as before; and the
//! shares of the bound over a texture's reads sum to at most 1.
mod common;

use common::*;
use iki_watermark::{
    embed_image, match_licenses, read_factor, read_informed, read_informed_until, Detection,
    InformedRead, SoftMatch, Suspect, WatermarkKey, MAX_READS,
};

const ID: u64 = 0x0e57_0b5e_a11d_2c93;

/// 100 issued ids, `ID` among them.
fn issued() -> Vec<u64> {
    let mut rng = TestRng(0x5709_0e71);
    let mut ids: Vec<u64> = (0..99).map(|_| rng.next_u64()).collect();
    ids.insert(61, ID);
    ids
}

/// Scores a read as identify does for one texture (half of the budget, `read_factor` of it).
fn score(d: &Detection, position: u32, ids: &[u64]) -> SoftMatch {
    match_licenses(
        &d.bit_confidence,
        d.confidence,
        ids,
        2.0 * read_factor(position),
    )
}

/// The full search (every registration) and the one stopping at the first that names.
fn both(
    original: &Texture,
    leak: &Texture,
    key: &WatermarkKey,
    ids: &[u64],
) -> (InformedRead, InformedRead) {
    let mut suspect = Suspect::new(leak.width, leak.height, leak.rgba.clone()).unwrap();
    let full = read_informed(
        key,
        original.width,
        original.height,
        &original.rgba,
        &mut suspect,
        &mut || true,
    )
    .unwrap();
    let mut asked = Vec::new();
    let mut enough = |position: u32, d: &Detection| {
        asked.push(position);
        score(d, position, ids).named().next().is_some()
    };
    let early = read_informed_until(
        key,
        original.width,
        original.height,
        &original.rgba,
        &mut suspect,
        &mut enough,
        &mut || true,
    )
    .unwrap();
    // Asked once per read that did not decode, in order.
    assert_eq!(asked, (1..=early.candidates).collect::<Vec<_>>());
    (full, early)
}

#[test]
fn a_quarter_size_leak_named_by_its_score_stops_at_the_first_read() {
    // The whole tiles atlas at 25 % and JPEG q75: its CRC fails, its score names it.
    let atlas = load_atlas(TILES);
    let mut marked = atlas.clone();
    embed_image(&key_a(), ID, marked.width, marked.height, &mut marked.rgba).unwrap();
    let leak = jpeg_round_trip(&scaled(&marked, 0.25), 75, None);
    let ids = issued();
    let (full, early) = both(&atlas, &leak, &key_a(), &ids);
    let d = early.detection.as_ref().expect("registered");
    assert_eq!(d.found, None, "the bits decode: not a score-only read");
    assert!(early.accepted && early.complete, "{early:?}");
    assert_eq!((early.position, early.candidates), (1, 1));
    assert!(
        full.candidates > early.candidates,
        "the full search read {} registrations",
        full.candidates
    );
    // The same license as the full search's read, scored at its own share.
    let named: Vec<u64> = score(d, early.position, &ids).named().collect();
    assert_eq!(named, [ID]);
    let fd = full.detection.as_ref().expect("registered");
    assert_eq!(
        score(fd, full.position, &ids).named().collect::<Vec<_>>(),
        [ID]
    );
    assert_eq!(early.registration, full.registration);
}

#[test]
fn a_leak_that_names_nobody_is_searched_as_before() {
    // The unmarked atlas at 25 % and JPEG q75: nobody named, every registration read.
    let atlas = load_atlas(TILES);
    let leak = jpeg_round_trip(&scaled(&atlas, 0.25), 75, None);
    let mut rng = TestRng(0x0b0d_1e55);
    let ids: Vec<u64> = (0..10_000).map(|_| rng.next_u64()).collect();
    let (full, early) = both(&atlas, &leak, &key_a(), &ids);
    assert!(!early.accepted);
    assert_eq!(
        (early.candidates, early.registration),
        (full.candidates, full.registration)
    );
    let d = early.detection.as_ref().expect("registered");
    assert_eq!(score(d, early.position, &ids).named().count(), 0);
    assert!(early.position >= 1 && early.position <= MAX_READS);
}

#[test]
fn the_shares_of_a_textures_reads_sum_to_at_most_one() {
    let total: f64 = (1..=MAX_READS).map(|p| 1.0 / read_factor(p)).sum();
    assert!(total <= 1.0 + 1e-12, "{total}");
    assert_eq!(read_factor(1), 2.0);
    // The first read, the likeliest registration, keeps half of the texture's budget.
    assert!((1.0 / read_factor(1) - 0.5).abs() < 1e-12);
}

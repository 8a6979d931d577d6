//! Copy throughput, natively (`cargo test -p iki-license --release --test throughput --
//! --ignored --nocapture`): MB/s of decoded bytes through the upload check and the copier,
//! for masters built around the CC0 atlases.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

mod common;

use std::time::Instant;

use common::*;
use iki_format::EntryMeta;
use iki_license::{decode_image, MasterRef};

#[test]
#[ignore = "measurement; run with --release --ignored --nocapture"]
fn copy_throughput() {
    let service = service();
    for atlas in [ATLAS, "kenney-top-down-shooter_tilesheet_complete_2X.png"] {
        let mut package = package();
        let (w, h, pixels) = decode_image(&fixture(atlas)).unwrap();
        let (entry, bytes) = package
            .files
            .iter_mut()
            .find(|(e, _)| e.path == ATLAS_PATH)
            .unwrap();
        *entry = iki_format::manifest_entry_for(
            ATLAS_PATH,
            "image/x-rgba8",
            iki_format::Encoding::Rgba8,
            &pixels,
        );
        entry.meta = Some(EntryMeta {
            kind: Some("texture".into()),
            width: Some(w),
            height: Some(h),
            source: None,
        });
        *bytes = pixels;
        let decoded: u64 = package.files.iter().map(|(e, _)| e.size).sum();
        let master = write_master(&package, MasterSpec::good(&service));

        let start = Instant::now();
        let mut verifier = service.master_verifier();
        for piece in master.chunks(64 * 1024) {
            verifier.push(piece).unwrap();
        }
        let summary = verifier.finish().unwrap();
        let verify_s = start.elapsed().as_secs_f64();

        let master_ref = MasterRef {
            id: "mst_bench".into(),
            sha256: summary.sha256,
        };
        let start = Instant::now();
        let copy = copy(&service, &master_ref, &master, &license(1)).unwrap();
        let copy_s = start.elapsed().as_secs_f64();
        let mb = decoded as f64 / 1e6;
        eprintln!(
            "{atlas} ({w} x {h}): {mb:.1} MB decoded, master {:.1} MB, copy {:.1} MB; \
             upload check {:.0} MB/s, license copy {:.0} MB/s",
            master.len() as f64 / 1e6,
            copy.len() as f64 / 1e6,
            mb / verify_s,
            mb / copy_s
        );
    }
}

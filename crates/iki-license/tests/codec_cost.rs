//! CPU cost of the codec side of a master export and a license copy, natively
//! (`cargo test -p iki-license --release --test codec_cost -- --ignored --nocapture`):
//! CPU milliseconds per MiB of decoded pixels, from the thread's own run time
//! (`/proc/thread-self/schedstat`), so the figures hold on a loaded machine. Inputs: each
//! CC0 fixture atlas alone in a master, and a 2048 x 2048 xorshift noise texture (the
//! incompressible bench master). bench/RESULTS.md, "Codec cost per MiB", records the rows.
//! `parallel_export` writes the same masters with their chunks deflated by N threads
//! (`deflate_chunk` + `Writer::write_deflated`, issue 28 item 2): wall time and the CPU of
//! every thread.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

mod common;

use common::*;
use std::collections::BTreeMap;
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::time::Instant;

use iki_format::{deflate_chunk, manifest_entry_for, Encoding, EntryMeta, Writer};
use iki_license::{decode_image, MasterRef};

/// Run time of this thread so far, in nanoseconds.
fn thread_cpu_ns() -> u64 {
    let text = std::fs::read_to_string("/proc/thread-self/schedstat").unwrap();
    text.split_whitespace().next().unwrap().parse().unwrap()
}

/// Lowest CPU ms of `rounds` runs of `f`, and its last result.
fn best_ms<T>(rounds: usize, mut f: impl FnMut() -> T) -> (f64, T) {
    let mut best = f64::MAX;
    let mut last = None;
    for _ in 0..rounds {
        let start = thread_cpu_ns();
        let out = f();
        best = best.min((thread_cpu_ns() - start) as f64 / 1e6);
        last = Some(out);
    }
    (best, last.unwrap())
}

/// `syntheticRgba` of tests/fixtures/packages.mjs, the texture of make bench-export and
/// bench-copies: gradients in red and green, a noise channel in blue, a disc of opaque alpha.
fn bench_texture(w: u32, h: u32, seed: u64) -> Vec<u8> {
    let grain = noise((w * h) as usize, seed);
    let mut rgba = Vec::with_capacity((w * h * 4) as usize);
    for y in 0..h {
        for x in 0..w {
            let (dx, dy, r) = (
                f64::from(x) - f64::from(w) / 2.0,
                f64::from(y) - f64::from(h) / 2.0,
                f64::from(w.min(h)) / 2.2,
            );
            let alpha = if dx * dx + dy * dy < r * r {
                255
            } else if x < w / 8 {
                (255 * x / (w / 8)) as u8
            } else {
                0
            };
            let blue = ((seed * 37) as u8) ^ grain[(y * w + x) as usize];
            rgba.extend_from_slice(&[(x * 255 / w) as u8, (y * 255 / h) as u8, blue, alpha]);
        }
    }
    rgba
}

fn texture_package(w: u32, h: u32, pixels: Vec<u8>) -> Package {
    let mut entry = manifest_entry_for(ATLAS_PATH, "image/x-rgba8", Encoding::Rgba8, &pixels);
    entry.meta = Some(EntryMeta {
        kind: Some("texture".into()),
        width: Some(w),
        height: Some(h),
        source: None,
    });
    Package {
        files: vec![(entry, pixels)],
    }
}

/// The measured inputs: the four fixture atlases, noise and the bench texture.
fn inputs() -> Vec<(String, u32, u32, Vec<u8>)> {
    let mut inputs: Vec<(String, u32, u32, Vec<u8>)> = [
        "kenney-platformer-pack-redux_spritesheet_players.png",
        "kenney-top-down-shooter_spritesheet_tiles.png",
        "kenney-top-down-shooter_tilesheet_complete_2X.png",
        "kenney-platformer-pack-redux_spritesheet_complete.png",
    ]
    .iter()
    .map(|name| {
        let (w, h, pixels) = decode_image(&fixture(name)).unwrap();
        ((*name).to_owned(), w, h, pixels)
    })
    .collect();
    inputs.push((
        "noise 2048x2048".into(),
        2048,
        2048,
        noise(2048 * 2048 * 4, 11),
    ));
    inputs.push((
        "bench texture 2048x2048".into(),
        2048,
        2048,
        bench_texture(2048, 2048, 5),
    ));
    // ONLY=<part of a name> keeps the matching inputs (for a profiler).
    let only = std::env::var("ONLY").unwrap_or_default();
    inputs.retain(|(name, ..)| name.contains(&only));
    inputs
}

#[test]
#[ignore = "measurement; run with --release --ignored --nocapture"]
fn codec_cost_per_mib() {
    let service = service();
    let rounds: usize = std::env::var("ROUNDS")
        .ok()
        .and_then(|r| r.parse().ok())
        .unwrap_or(3);
    let inputs = inputs();
    // COPIES=<n> copy rounds (default ROUNDS), so that a profile is mostly copies.
    let copies: usize = std::env::var("COPIES")
        .ok()
        .and_then(|r| r.parse().ok())
        .unwrap_or(rounds);
    eprintln!("input | MiB | export ms/MiB | master % of pixels | copy ms/MiB | copy % of pixels");
    for (name, w, h, pixels) in inputs {
        let mib = pixels.len() as f64 / (1024.0 * 1024.0);
        let package = texture_package(w, h, pixels);
        let (export_ms, master) = best_ms(rounds, || {
            write_master_with_chunk_size(&package, MasterSpec::good(&service), 1 << 20)
        });
        let mut verifier = service.master_verifier();
        verifier.push(&master).unwrap();
        let master_ref = MasterRef {
            id: "mst_bench".into(),
            sha256: verifier.finish().unwrap().sha256,
        };
        let (copy_ms, copied) = best_ms(copies, || {
            copy(&service, &master_ref, &master, &license(1)).unwrap()
        });
        eprintln!(
            "{name} | {mib:.1} | {:.2} | {:.2} | {:.2} | {:.2}",
            export_ms / mib,
            master.len() as f64 / package.files[0].1.len() as f64 * 100.0,
            copy_ms / mib,
            copied.len() as f64 / package.files[0].1.len() as f64 * 100.0,
        );
    }
}

/// Deflate alone, chunk by chunk (1 MiB), at every level: CPU ms per MiB and output size,
/// to choose the master's level.
#[test]
#[ignore = "measurement; run with --release --ignored --nocapture"]
fn deflate_levels() {
    let mut pixels = Vec::new();
    for name in [
        "kenney-platformer-pack-redux_spritesheet_players.png",
        "kenney-top-down-shooter_spritesheet_tiles.png",
        "kenney-top-down-shooter_tilesheet_complete_2X.png",
        "kenney-platformer-pack-redux_spritesheet_complete.png",
    ] {
        pixels.extend_from_slice(&decode_image(&fixture(name)).unwrap().2);
    }
    let mib = pixels.len() as f64 / (1024.0 * 1024.0);
    eprintln!("level | ms/MiB | % of pixels ({mib:.1} MiB of the four atlases)");
    for level in 1..=9u8 {
        let mut deflater = iki_format::encoding::Deflater::new(level).unwrap();
        let (ms, size) = best_ms(2, || {
            pixels
                .chunks(1 << 20)
                .map(|c| deflater.deflate(c, 2 << 20).unwrap().len())
                .sum::<usize>()
        });
        eprintln!(
            "{level} | {:.2} | {:.2}",
            ms / mib,
            size as f64 / pixels.len() as f64 * 100.0
        );
    }
}

/// A master written with its chunks deflated by `jobs` threads, at most `2 * jobs` chunks in
/// flight, the writer (check, seal, sign) in this thread: (file, CPU ms of every thread, CPU ms
/// of the writer's thread, wall ms).
fn export_spread(package: &Package, spec: MasterSpec, jobs: usize) -> (Vec<u8>, f64, f64, f64) {
    let chunk_size = 1 << 20;
    let (options, manifest) = master_options(package, spec, chunk_size);
    let encrypted = !matches!(options.protection, iki_format::Protection::None);
    let level = options.deflate_level;
    let wall = Instant::now();
    let main_start = thread_cpu_ns();
    let (work_tx, work_rx) = mpsc::channel::<(usize, &[u8])>();
    let work_rx = Arc::new(Mutex::new(work_rx));
    let (done_tx, done_rx) = mpsc::channel::<(usize, Vec<u8>)>();
    let (out, workers_ns) = std::thread::scope(|scope| {
        let workers: Vec<_> = (0..jobs)
            .map(|_| {
                let (rx, tx) = (Arc::clone(&work_rx), done_tx.clone());
                scope.spawn(move || {
                    let start = thread_cpu_ns();
                    loop {
                        let next = rx.lock().unwrap().recv();
                        let Ok((i, raw)) = next else { break };
                        tx.send((i, deflate_chunk(raw, level, chunk_size, encrypted).unwrap()))
                            .unwrap();
                    }
                    thread_cpu_ns() - start
                })
            })
            .collect();
        let mut writer = Writer::new(options, &manifest).unwrap();
        let mut out = writer.take_output();
        for (entry, (_, bytes)) in package.files.iter().enumerate() {
            let step = writer.chunk_bytes(entry as u32).unwrap() as usize;
            let pieces: Vec<&[u8]> = bytes.chunks(step).collect();
            let mut raw = pieces.iter().copied();
            let count = bytes.len().div_ceil(step);
            let (mut sent, mut next) = (0, 0);
            let mut ready = BTreeMap::new();
            while next < count {
                while sent < count && sent < next + 2 * jobs {
                    work_tx.send((sent, raw.next().unwrap())).unwrap();
                    sent += 1;
                }
                let (i, chunk) = done_rx.recv().unwrap();
                ready.insert(i, chunk);
                while let Some(stream) = ready.remove(&next) {
                    writer.write_deflated(pieces[next], &stream).unwrap();
                    out.extend(writer.take_output());
                    next += 1;
                }
            }
            writer.end_entry().unwrap();
        }
        out.extend(writer.finish().unwrap());
        drop(work_tx);
        (
            out,
            workers.into_iter().map(|w| w.join().unwrap()).sum::<u64>(),
        )
    });
    let main_ns = thread_cpu_ns() - main_start;
    let cpu = (main_ns + workers_ns) as f64 / 1e6;
    (
        out,
        cpu,
        main_ns as f64 / 1e6,
        wall.elapsed().as_secs_f64() * 1e3,
    )
}

/// The master export with its chunks spread over threads (issue 28 item 2): for 1 thread
/// (`write_all`, today's export) and for JOBS (default 1, 2 and 4) deflate threads, the CPU of
/// all threads, the CPU of the writer's thread (with enough free cores, the wall time cannot
/// go below it) and the wall time per MiB (best of ROUNDS), and the master's size.
#[test]
#[ignore = "measurement; run with --release --ignored --nocapture"]
fn parallel_export() {
    let service = service();
    let rounds: usize = std::env::var("ROUNDS")
        .ok()
        .and_then(|r| r.parse().ok())
        .unwrap_or(3);
    let jobs: Vec<usize> = std::env::var("JOBS")
        .unwrap_or_else(|_| "1,2,4".into())
        .split(',')
        .map(|j| j.parse().unwrap())
        .collect();
    eprintln!("input | MiB | jobs | CPU ms/MiB | writer thread CPU ms/MiB | wall ms/MiB | wall MB/s | master % of pixels");
    for (name, w, h, pixels) in inputs() {
        let mib = pixels.len() as f64 / (1024.0 * 1024.0);
        let package = texture_package(w, h, pixels);
        let mut best = (f64::MAX, f64::MAX, f64::MAX);
        let mut size = 0;
        for _ in 0..rounds {
            let wall = Instant::now();
            let (cpu, master) = best_ms(1, || {
                write_master_with_chunk_size(&package, MasterSpec::good(&service), 1 << 20)
            });
            best = (
                best.0.min(cpu),
                best.1.min(cpu),
                best.2.min(wall.elapsed().as_secs_f64() * 1e3),
            );
            size = master.len();
        }
        let row = |jobs: &str, (cpu, writer, wall): (f64, f64, f64), size: usize| {
            eprintln!(
                "{name} | {mib:.1} | {jobs} | {:.2} | {:.2} | {:.2} | {:.0} | {:.2}",
                cpu / mib,
                writer / mib,
                wall / mib,
                mib * 1.048_576 / (wall / 1e3),
                size as f64 / package.files[0].1.len() as f64 * 100.0
            );
        };
        row("write_all", best, size);
        for &n in &jobs {
            let mut best = (f64::MAX, f64::MAX, f64::MAX);
            for _ in 0..rounds {
                let (master, cpu, writer, wall) =
                    export_spread(&package, MasterSpec::good(&service), n);
                let mut verifier = service.master_verifier();
                verifier.push(&master).unwrap();
                verifier.finish().unwrap();
                // The recipient slot is sealed with fresh randomness, so only the size is compared.
                assert_eq!(master.len(), size, "{name}: {n} threads");
                best = (best.0.min(cpu), best.1.min(writer), best.2.min(wall));
            }
            row(&n.to_string(), best, size);
        }
    }
}

/// One raw DEFLATE stream of `input` per 1 MiB chunk, as DATA chunks are, by zlib-rs at `level`
/// (raw, 32 KiB window); each is checked by iki's inflater. Returns the total length.
fn zlib_rs_chunks(state: &mut zlib_rs::Deflate, input: &[u8], out: &mut [u8]) -> usize {
    let mut inflater = iki_format::encoding::Inflater::new();
    input
        .chunks(1 << 20)
        .map(|chunk| {
            state.reset();
            let status = state
                .compress(chunk, out, zlib_rs::DeflateFlush::Finish)
                .unwrap();
            assert_eq!(status, zlib_rs::Status::StreamEnd);
            let written = state.total_out() as usize;
            assert_eq!(
                inflater
                    .inflate_exact(&out[..written], chunk.len())
                    .unwrap(),
                chunk
            );
            written
        })
        .sum()
}

/// The same through iki's `Deflater` (miniz_oxide, sampled, stored where it does not pay).
fn miniz_chunks(deflater: &mut iki_format::encoding::Deflater, input: &[u8]) -> usize {
    input
        .chunks(1 << 20)
        .map(|c| deflater.deflate(c, 2 << 20).unwrap().len())
        .sum()
}

/// zlib-rs (zlib-ng's deflate_quick at level 1, deflate_fast at 2, deflate_medium at 3 to 6,
/// deflate_slow above) beside the deflater DATA chunks use, texture by texture: each fixture
/// atlas as exported (unmarked) and as copied (marked by the watermark), the noise and the
/// bench texture. CPU ms per MiB (best of `ROUNDS`) and output, % of the pixels, natively.
#[test]
#[ignore = "measurement; run with --release --ignored --nocapture"]
fn deflaters() {
    let rounds: usize = std::env::var("ROUNDS")
        .ok()
        .and_then(|r| r.parse().ok())
        .unwrap_or(3);
    let key = iki_watermark::WatermarkKey::from_bytes([7; 32]);
    let mut inputs: Vec<(String, Vec<u8>, bool)> = Vec::new();
    for name in [
        "kenney-platformer-pack-redux_spritesheet_players.png",
        "kenney-top-down-shooter_spritesheet_tiles.png",
        "kenney-top-down-shooter_tilesheet_complete_2X.png",
        "kenney-platformer-pack-redux_spritesheet_complete.png",
    ] {
        let (w, h, pixels) = decode_image(&fixture(name)).unwrap();
        let mut marked = pixels.clone();
        iki_watermark::embed_image(&key, 0x0123_4567_89AB, w, h, &mut marked).unwrap();
        inputs.push((name.to_owned(), pixels, false));
        inputs.push((format!("{name}, marked"), marked, true));
    }
    inputs.push(("noise 2048x2048".into(), noise(2048 * 2048 * 4, 11), false));
    inputs.push((
        "bench texture 2048x2048".into(),
        bench_texture(2048, 2048, 5),
        false,
    ));
    // Pixels of a 4093-byte pattern: long repeats, short runs (zlib-rs's weak case).
    inputs.push((
        "repeats".into(),
        (0..16u32 << 20)
            .map(|i| ((i * 7 % 4093) / 64) as u8 ^ (i % 3) as u8)
            .collect(),
        false,
    ));
    let mut out = vec![0u8; 3 << 20];
    eprintln!("input | deflater | CPU ms/MiB | % of pixels");
    for (name, pixels, marked) in &inputs {
        let mib = pixels.len() as f64 / (1024.0 * 1024.0);
        // A copy deflates marked pixels at level 1, an export unmarked ones at level 6.
        let levels: &[u8] = if *marked { &[1, 2] } else { &[6, 5, 7] };
        let miniz_level = levels[0];
        let mut deflater = iki_format::encoding::Deflater::new(miniz_level).unwrap();
        let (ms, size) = best_ms(rounds, || miniz_chunks(&mut deflater, pixels));
        eprintln!(
            "{name} | miniz_oxide {miniz_level} (iki) | {:.2} | {:.2}",
            ms / mib,
            size as f64 / pixels.len() as f64 * 100.0
        );
        for &level in levels {
            let mut state = zlib_rs::Deflate::new(i32::from(level), false, 15);
            let (ms, size) = best_ms(rounds, || zlib_rs_chunks(&mut state, pixels, &mut out));
            eprintln!(
                "{name} | zlib-rs {level} | {:.2} | {:.2}",
                ms / mib,
                size as f64 / pixels.len() as f64 * 100.0
            );
        }
    }
}

/// A copy's deflater input: each fixture atlas (ONLY= filters) marked as a copy marks it, cut
/// into the copy's chunks of whole rows (1 MiB masters), with its row length.
fn marked_chunks() -> Vec<(String, usize, Vec<Vec<u8>>)> {
    let key = iki_watermark::WatermarkKey::from_bytes([7; 32]);
    inputs()
        .into_iter()
        .filter(|(name, ..)| name.starts_with("kenney"))
        .map(|(name, w, h, mut pixels)| {
            iki_watermark::embed_image(&key, 1, w, h, &mut pixels).unwrap();
            let row = w as usize * 4;
            let step = (1 << 20) / row * row;
            (name, row, pixels.chunks(step).map(<[u8]>::to_vec).collect())
        })
        .collect()
}

/// miniz_oxide (its flags set) over each chunk, each its own raw stream, appended to
/// `streams` with their lengths in `lens`.
#[inline(always)]
fn miniz_with(
    state: &mut miniz_oxide::deflate::core::CompressorOxide,
    chunks: &[Vec<u8>],
    streams: &mut Vec<u8>,
    lens: &mut Vec<usize>,
) {
    use miniz_oxide::deflate::core::{compress, TDEFLFlush, TDEFLStatus};
    let mut out = vec![0u8; 3 << 20];
    for chunk in chunks {
        state.reset();
        let (status, consumed, written) = compress(state, chunk, &mut out, TDEFLFlush::Finish);
        assert_eq!((status, consumed), (TDEFLStatus::Done, chunk.len()));
        streams.extend_from_slice(&out[..written]);
        lens.push(written);
    }
}

macro_rules! miniz_variant {
    ($name:ident, $strategy:expr) => {
        #[inline(never)]
        fn $name(chunks: &[Vec<u8>], _row: usize, streams: &mut Vec<u8>, lens: &mut Vec<usize>) {
            let flags = miniz_oxide::deflate::core::create_comp_flags_from_zip_params(
                1,
                0,
                $strategy as i32,
            );
            let mut state = miniz_oxide::deflate::core::CompressorOxide::new(flags);
            miniz_with(&mut state, chunks, streams, lens);
        }
    };
}

use miniz_oxide::deflate::core::CompressionStrategy as Strategy;
miniz_variant!(variant_level1, Strategy::Default);
miniz_variant!(variant_rle, Strategy::RLE);
miniz_variant!(variant_huffman_only, Strategy::HuffmanOnly);
miniz_variant!(variant_fixed, Strategy::Fixed);
miniz_variant!(variant_filtered, Strategy::Filtered);

/// The pixel encoder (`DeflateHint::Pixels`, as the copy calls it) over each chunk.
#[inline(never)]
fn variant_pixels(chunks: &[Vec<u8>], row: usize, streams: &mut Vec<u8>, lens: &mut Vec<usize>) {
    let mut deflater = iki_format::encoding::Deflater::new(1).unwrap();
    let hint = iki_format::DeflateHint::Pixels {
        row_bytes: row as u32,
    };
    for chunk in chunks {
        let packed = deflater.deflate_hinted(chunk, 2 << 20, hint).unwrap();
        streams.extend_from_slice(packed);
        lens.push(packed.len());
    }
}

type Variant = fn(&[Vec<u8>], usize, &mut Vec<u8>, &mut Vec<usize>);

/// The copy's deflater input (marked atlas chunks) through miniz_oxide's level 1 with each
/// strategy and through the pixel encoder: CPU ms per MiB (best of ROUNDS) and output, % of
/// the pixels; every stream is then checked by inflating it (untimed). VARIANTS=<names,...>
/// picks some. For instruction counts run it under callgrind with
/// `--toggle-collect='codec_cost::variant_*'`; the check is outside those functions.
#[test]
#[ignore = "measurement; run with --release --ignored --nocapture"]
fn copy_deflate_variants() {
    let rounds: usize = std::env::var("ROUNDS")
        .ok()
        .and_then(|r| r.parse().ok())
        .unwrap_or(3);
    let pick = std::env::var("VARIANTS").unwrap_or_default();
    let variants: [(&str, Variant); 6] = [
        ("level1", variant_level1),
        ("rle", variant_rle),
        ("huffman_only", variant_huffman_only),
        ("fixed", variant_fixed),
        ("filtered", variant_filtered),
        ("pixels", variant_pixels),
    ];
    let mut inflater = iki_format::encoding::Inflater::new();
    eprintln!("input | variant | CPU ms/MiB | % of pixels");
    for (name, row, chunks) in marked_chunks() {
        let bytes: usize = chunks.iter().map(Vec::len).sum();
        let mib = bytes as f64 / (1024.0 * 1024.0);
        for (variant, f) in variants
            .iter()
            .filter(|(v, _)| pick.is_empty() || pick.split(',').any(|p| p == *v))
        {
            let (ms, (streams, lens)) = best_ms(rounds, || {
                let (mut streams, mut lens) = (Vec::with_capacity(bytes / 4), Vec::new());
                f(&chunks, row, &mut streams, &mut lens);
                (streams, lens)
            });
            let mut at = 0;
            for (chunk, len) in chunks.iter().zip(&lens) {
                assert_eq!(
                    inflater
                        .inflate_exact(&streams[at..at + len], chunk.len())
                        .unwrap(),
                    &chunk[..],
                    "{variant}"
                );
                at += len;
            }
            eprintln!(
                "{name} | {variant} | {:.2} | {:.3}",
                ms / mib,
                streams.len() as f64 / bytes as f64 * 100.0
            );
        }
    }
}

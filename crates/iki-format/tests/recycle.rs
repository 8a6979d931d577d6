//! `Reader::recycle`: a caller that hands every chunk's buffer back reads a whole file
//! without a chunk-sized allocation per chunk. Its own test binary, because it counts the
//! process's allocations with a global allocator.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

mod common;

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering};

use common::*;
use iki_format::{write_all, Encoding, Event, Kind, Reader};

/// Counts allocations of at least one chunk (4 KiB here); everything else is passed through.
struct Counting;

static LARGE_ALLOCATIONS: AtomicUsize = AtomicUsize::new(0);
const CHUNK: usize = 4096;

// SAFETY: every call forwards to the system allocator with the caller's own arguments.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        if layout.size() >= CHUNK {
            LARGE_ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        }
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        if new_size >= CHUNK && layout.size() < CHUNK {
            LARGE_ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        }
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

/// Reads `file` to the end; returns the decoded entries and the number of chunk-sized
/// allocations made after the first chunk arrived.
fn read(file: &[u8], entries: usize, recycle: bool) -> (Vec<Vec<u8>>, usize) {
    let mut reader = Reader::new(Kind::Project);
    reader.push(file).unwrap();
    reader.finish().unwrap();
    let mut decoded = vec![Vec::new(); entries];
    // Sized up front, so that collecting the bytes allocates nothing during the read.
    for (d, size) in decoded.iter_mut().zip([40 * CHUNK, 40 * CHUNK, 40 * CHUNK]) {
        d.reserve(size);
    }
    let mut before = None;
    while let Some(event) = reader.next().unwrap() {
        match event {
            Event::Locked(_) => reader.unlock_identity(&identity()).unwrap(),
            Event::Chunk { entry, data, .. } => {
                before.get_or_insert(LARGE_ALLOCATIONS.load(Ordering::Relaxed));
                decoded[entry as usize].extend_from_slice(&data);
                if recycle {
                    reader.recycle(data);
                }
            }
            Event::End(_) => break,
            _ => {}
        }
    }
    let after = LARGE_ALLOCATIONS.load(Ordering::Relaxed);
    (decoded, after - before.unwrap())
}

#[test]
fn recycled_buffers_are_decoded_into_with_no_allocation_per_chunk() {
    // 30 chunks of each decode path (deflate, stored, rgba8), encrypted.
    let stored = sample(30 * CHUNK, 1, true);
    let deflated = sample(30 * CHUNK - 7, 2, false);
    let pixels = sample(30 * CHUNK, 3, true);
    let entries = vec![
        iki_format::manifest_entry_for(
            "a.bin",
            "application/octet-stream",
            Encoding::Stored,
            &stored,
        ),
        iki_format::manifest_entry_for(
            "b.bin",
            "application/octet-stream",
            Encoding::Deflate,
            &deflated,
        ),
        rgba8_entry("c.png", 256, 120, &pixels),
    ];
    let file = write_all(
        options(
            Kind::Project,
            CHUNK as u32,
            encrypted(vec![recipient_slot()]),
        ),
        &manifest(Kind::Project, entries),
        &[&stored, &deflated, &pixels],
    )
    .unwrap();
    let expected = vec![stored, deflated, pixels];

    let (decoded, allocations) = read(&file, 3, true);
    assert_eq!(decoded, expected);
    // The first chunk's buffer is reused; one more allocation at most, for the inflater's
    // one byte of room past the chunk.
    assert!(
        allocations <= 1,
        "{allocations} chunk-sized allocations while recycling"
    );

    let (decoded, allocations) = read(&file, 3, false);
    assert_eq!(decoded, expected);
    assert!(
        allocations >= 80,
        "{allocations} without recycling: about one per chunk expected"
    );
}

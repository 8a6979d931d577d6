//! Writes the container vectors to `testdata/container/` (or the directory given as the
//! first argument): `cargo run -p iki-format --example gen_vectors -- testdata/container`.
//! Deterministic: fixed, obviously fake keys, file ids, timestamps and slot entropy.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

#[path = "../tests/common/mod.rs"]
mod common;

use std::path::PathBuf;

fn main() -> std::io::Result<()> {
    let dir = PathBuf::from(
        std::env::args()
            .nth(1)
            .unwrap_or_else(|| "testdata/container".into()),
    );
    std::fs::create_dir_all(&dir)?;
    let vectors = common::vectors::all();
    for entry in std::fs::read_dir(&dir)? {
        let path = entry?.path();
        if path.extension().is_some_and(|e| e == "ikv") {
            std::fs::remove_file(path)?;
        }
    }
    for v in &vectors {
        std::fs::write(dir.join(format!("{}.ikv", v.name)), v.render())?;
    }
    println!("wrote {} vectors to {}", vectors.len(), dir.display());
    Ok(())
}

//! Writes `ts/src/limits.ts` and `ts/src/codes.ts`: `cargo run -p iki-license --example gen_ts
//! -- ts/src` (`make gen`). The limits and the container's codes come from iki-format's own
//! generator (included below); this one adds [`iki_license::OWN_CODES`] to `codes.ts`, which
//! iki-format cannot do because it does not depend on this crate. `tests/generated_ts.rs`
//! fails when either checked-in file is stale.
#![allow(dead_code)]

use std::path::PathBuf;

#[path = "../../iki-format/examples/gen_ts.rs"]
#[allow(clippy::duplicate_mod)]
mod format_gen;

/// The text of `ts/src/limits.ts`: the container's limits, then the license copy's DEFLATE level
/// (the benchmark's native reference deflates at the same level) and the image codecs' bounds
/// (the CLI refuses a texture beyond them before decoding or encoding it).
pub fn limits_ts() -> String {
    let mut out = format_gen::limits_ts();
    out += "\n/** DEFLATE level of every license copy's DATA chunks (crates/iki-license/src/copy.rs). */\n";
    out += &format!(
        "export const COPY_DEFLATE_LEVEL = {} as const;\n",
        iki_license::COPY_DEFLATE_LEVEL
    );
    out += "\n/** Largest image side the codecs decode or encode, in pixels (crates/iki-license/src/image.rs). */\n";
    out += &format!(
        "export const MAX_IMAGE_SIDE_PX = {} as const;\n",
        iki_license::MAX_IMAGE_SIDE_PX
    );
    out += "\n/** Largest image the codecs decode or encode, in bytes of RGBA8 (crates/iki-license/src/image.rs). */\n";
    out += &format!(
        "export const MAX_IMAGE_RGBA_BYTES = {} as const;\n",
        iki_license::MAX_IMAGE_RGBA_BYTES
    );
    out
}

/// The text of `ts/src/codes.ts`: the container's codes, iki-license's, then INTERNAL.
pub fn codes_ts() -> String {
    format_gen::codes_ts_with(
        "crates/iki-license/examples/gen_ts.rs",
        &[(
            "crates/iki-license/src/error.rs (OWN_CODES)",
            iki_license::OWN_CODES,
        )],
    )
}

fn main() -> std::io::Result<()> {
    let dir = PathBuf::from(std::env::args().nth(1).unwrap_or_else(|| "ts/src".into()));
    std::fs::create_dir_all(&dir)?;
    std::fs::write(dir.join("limits.ts"), limits_ts())?;
    std::fs::write(dir.join("codes.ts"), codes_ts())?;
    println!("wrote {0}/limits.ts and {0}/codes.ts", dir.display());
    Ok(())
}

#!/usr/bin/env bash
# `make lint`: rustfmt's check, clippy with warnings denied on every Rust target natively and on the
# crates of the WebAssembly build for wasm32 (with simd128, so the code paths only that
# build compiles are linted too), then the TypeScript type checks of ts/ and server/
# including their tests, and the browser code (ts/src/browser, server/web) checked without
# Node's types. Not part of `make test`: CI time goes to behaviour.
#
# wasm32 clippy: the rustup target when installed; otherwise Debian's wasm-capable
# toolchain, whose clippy comes in the package rust-web-clippy (installed here when
# missing, like scripts/setup.sh installs rustc-web).
set -euo pipefail
cd "$(dirname "$0")/.."

say() { echo "lint: $*"; }
WASM_CRATES=(-p iki-format -p iki-crypto -p iki-argon2 -p iki-watermark -p iki-license -p iki-wasm)
WASM_FLAGS="-C target-feature=+simd128,-reference-types"

say "cargo fmt --check (rustfmt's defaults; \`cargo fmt\` formats)"
cargo fmt --all --check

say "cargo clippy --workspace --all-targets (native)"
cargo clippy -q --workspace --all-targets -- -D warnings

if command -v rustup >/dev/null && rustup target list --installed 2>/dev/null | grep -q '^wasm32-unknown-unknown$'; then
  say "cargo clippy (wasm32, rustup target)"
  RUSTFLAGS="$WASM_FLAGS" cargo clippy -q --release --target wasm32-unknown-unknown "${WASM_CRATES[@]}" \
    --target-dir target/wasm-clippy -- -D warnings
else
  if [ ! -x /usr/bin/clippy-driver ]; then
    say "installing Debian's rust-web-clippy"
    sudo=(); [ "$(id -u)" = 0 ] || sudo=(sudo -n)
    DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y -q rust-web-clippy </dev/null
  fi
  say "cargo clippy (wasm32, Debian rustc-web, -Zbuild-std)"
  # PATH first: cargo must find Debian's cargo-clippy and clippy-driver, not rustup's.
  PATH=/usr/bin:$PATH RUSTC=/usr/bin/rustc RUSTC_BOOTSTRAP=1 RUSTFLAGS="$WASM_FLAGS" \
    /usr/bin/cargo clippy -q --release --target wasm32-unknown-unknown -Zbuild-std=std,panic_abort \
    "${WASM_CRATES[@]}" --target-dir target/wasm-clippy -- -D warnings
fi

say "tsc (ts/ and server/ with their tests; ts/src/browser and server/web for browsers, without Node types)"
node_modules/.bin/tsc -p ts/tsconfig.test.json
node_modules/.bin/tsc -p server/tsconfig.test.json
node_modules/.bin/tsc -p ts/tsconfig.browser.json
node_modules/.bin/tsc -p server/web/tsconfig.json
say "clean"

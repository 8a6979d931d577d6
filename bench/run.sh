#!/usr/bin/env bash
# Performance benchmarks (make bench, which runs `make build` first). Writes its block of
# bench/RESULTS.md (the rest of the file is kept; every row with its CPU ms per call and
# the previous run's figures beside it) and bench/out/results.json. Arguments go to suite.mjs:
#   --quick             fewer rounds, shorter timings, half the texture data
#   --rounds N          rounds per figure (median of N; default 7)
#   --only a,b          cases: aead sha256 deflate argon2 curves watermark pipelines
#
# 1. npm ci --prefix bench when bench/node_modules is missing or older than
#    bench/package-lock.json (the peers live outside the root workspace, so
#    make test never installs them).
# 2. bench/deflate-wasm (miniz_oxide beside zlib-rs in one WASM module, with
#    the flags of scripts/build-wasm.sh) into target/bench-wasm, then
#    wasm-bindgen into bench/out/deflate-wasm. If it does not build, the
#    DEFLATE case says so and compares the rest.
set -euo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
ROOT="$(cd "$HERE/.." && pwd)"
cd "$ROOT"

if [ ! -f "$HERE/node_modules/.package-lock.json" ] || [ "$HERE/package-lock.json" -nt "$HERE/node_modules/.package-lock.json" ]; then
  echo "bench: npm ci --prefix bench" >&2
  npm ci --prefix "$HERE" --no-audit --no-fund --silent
fi

build_deflate_wasm() {
  local triple=wasm32-unknown-unknown target="$ROOT/target/bench-wasm" out="$HERE/out/deflate-wasm"
  export RUSTFLAGS="-C target-feature=+simd128,-reference-types"
  if command -v rustup >/dev/null && rustup target list --installed 2>/dev/null | grep -q "^$triple\$"; then
    cargo build --quiet --release --manifest-path "$HERE/deflate-wasm/Cargo.toml" --target-dir "$target" --target $triple
  else
    RUSTC=/usr/bin/rustc RUSTC_BOOTSTRAP=1 /usr/bin/cargo build --quiet --release --target $triple \
      -Zbuild-std=std,panic_abort --manifest-path "$HERE/deflate-wasm/Cargo.toml" --target-dir "$target"
  fi
  local wasm="$target/$triple/release/iki_bench_deflate.wasm"
  if [ ! -f "$out/iki_bench_deflate_bg.wasm" ] || [ "$wasm" -nt "$out/iki_bench_deflate_bg.wasm" ]; then
    rm -rf "$out"
    wasm-bindgen --target web --out-dir "$out" "$wasm"
    if command -v wasm-opt >/dev/null; then
      wasm-opt -O3 "$out/iki_bench_deflate_bg.wasm" -o "$out/opt.wasm" && mv "$out/opt.wasm" "$out/iki_bench_deflate_bg.wasm"
    fi
  fi
}

echo "bench: building bench/deflate-wasm (miniz_oxide and zlib-rs)" >&2
if ! build_deflate_wasm; then
  echo "bench: note: bench/deflate-wasm did not build; the DEFLATE case skips zlib-rs" >&2
  rm -rf "$HERE/out/deflate-wasm"
fi

exec node "$HERE/suite.mjs" "$@"

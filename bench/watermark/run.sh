#!/usr/bin/env bash
# Watermark robustness benchmark (not CI). Run from anywhere:
#   bench/watermark/run.sh            full run (about an hour on 2 cores)
#   bench/watermark/run.sh --quick    smoke run on the generated textures
#   RESULTS_NAME=RESULTS-identify.md bench/watermark/run.sh --textures "tiles,players,art 256,10%,RGB bleed" \
#     --ids 4 --competitor-ids-large 1 --null-per-registration 1200
#                                     the documented subset (about 50 minutes under load) whose
#                                     figures docs/watermark.md section 11.5 quotes
# Extra arguments go to bench.py (see `bench.py --help`). Writes
# bench/out/watermark/{results.json,RESULTS.md} and copies RESULTS.md here.
set -euo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"
OUT="$ROOT/bench/out/watermark"
TARGET="$ROOT/target/bench-watermark"
VENV="$HERE/.venv"
mkdir -p "$OUT"

echo "== building the iki pipe server (native, release)" >&2
cargo build --quiet --release --manifest-path "$HERE/iki-bench/Cargo.toml" --target-dir "$TARGET"

if [ -x /usr/bin/cargo ] && [ -x /usr/bin/rustc ] && command -v node >/dev/null; then
  echo "== wasm32 speed (Debian rustc, build-std)" >&2
  if RUSTC=/usr/bin/rustc RUSTC_BOOTSTRAP=1 /usr/bin/cargo build --quiet --release \
      --manifest-path "$HERE/wasm-speed/Cargo.toml" --target-dir "$TARGET" \
      --target wasm32-unknown-unknown -Zbuild-std=std,panic_abort; then
    node "$HERE/wasm-speed/speed.mjs" "$TARGET/wasm32-unknown-unknown/release/iki_watermark_wasm_speed.wasm" 4096 \
      > "$OUT/wasm_speed.json"
    cat "$OUT/wasm_speed.json" >&2
  else
    echo "wasm build failed; RESULTS.md will omit the wasm figure" >&2
    rm -f "$OUT/wasm_speed.json"
  fi
fi

if [ ! -x "$VENV/bin/python" ]; then
  echo "== virtualenv with Pillow and the two PyPI watermark packages" >&2
  python3 -m venv "$VENV"
  "$VENV/bin/pip" install --quiet numpy==2.4.6 PyWavelets==1.9.0 opencv-python-headless==5.0.0.93 Pillow==13.0.0
  # --no-deps: invisible-watermark lists torch (for its rivaGan method, not
  # benchmarked here) and both list opencv-python; the headless build of the
  # same OpenCV is installed above instead.
  "$VENV/bin/pip" install --quiet --no-deps invisible-watermark==0.2.0 blind-watermark==0.4.4
fi

echo "== benchmark" >&2
cd "$HERE"
"$VENV/bin/python" bench.py --iki-bin "$TARGET/release/iki-watermark-bench" --out "$OUT" "$@"
cp "$OUT/RESULTS.md" "$HERE/${RESULTS_NAME:-RESULTS.md}"
echo "== wrote $HERE/${RESULTS_NAME:-RESULTS.md}" >&2

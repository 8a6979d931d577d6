#!/usr/bin/env bash
# Builds crates/iki-wasm into pkg/ (called by `make wasm`, which decides
# whether anything changed).
#
#   1. cargo build --release for wasm32-unknown-unknown into target/wasm, so
#      it never fights the native build over target/. A rustup wasm32 target
#      is preferred when installed; otherwise Debian's rustc-web builds std
#      from rust-web-src (-Zbuild-std, allowed by RUSTC_BOOTSTRAP=1).
#   2. wasm-bindgen --target web: one glue file and one .wasm that load in
#      browsers (fetch) and in Node 20 (initSync with the file's bytes).
#   3. wasm-opt -O3 when binaryen accepts the module, kept only if a Node
#      smoke test of the optimised module passes.
#
# Target features (checked with Node 20.20 and Chromium 156):
#   +simd128          Wasm SIMD, in every engine since 2021 (Node 16.4,
#                     Chrome 91, Firefox 89, Safari 16.4). Loads and runs in
#                     both; LLVM auto-vectorises hashing and cipher loops.
#   -reference-types  rustc enables it by default, and wasm-bindgen then keeps
#                     JS objects in an externref table. Binaryen 108 (Debian
#                     12's wasm-opt) rewrites that module so the exported
#                     table becomes a funcref table and initialisation throws
#                     in Node. Without it, wasm-bindgen uses its JS-side heap,
#                     wasm-opt works, and the byte-oriented API loses nothing.
set -euo pipefail
cd "$(dirname "$0")/.."

OUT=pkg
TARGET_DIR=target/wasm
TRIPLE=wasm32-unknown-unknown
export RUSTFLAGS="${IKI_WASM_RUSTFLAGS:--C target-feature=+simd128,-reference-types}"

say() { echo "wasm: $*"; }

if command -v rustup >/dev/null && rustup target list --installed 2>/dev/null | grep -q "^$TRIPLE\$"; then
  say "cargo build (rustup $TRIPLE target)"
  cargo build --release --target $TRIPLE -p iki-wasm --target-dir $TARGET_DIR
else
  say "cargo build (Debian rustc-web, -Zbuild-std)"
  RUSTC=/usr/bin/rustc RUSTC_BOOTSTRAP=1 /usr/bin/cargo build --release --target $TRIPLE \
    -Zbuild-std=std,panic_abort -p iki-wasm --target-dir $TARGET_DIR
fi

want=$(awk '/^name = "wasm-bindgen"$/ { getline; gsub(/version = |"/, ""); print; exit }' Cargo.lock)
have=$(wasm-bindgen --version | awk '{print $2}')
if [ "$have" != "$want" ]; then
  echo "wasm: error: wasm-bindgen CLI is $have but Cargo.lock has $want; run make setup" >&2
  exit 1
fi

rm -rf "$OUT.tmp"
wasm-bindgen --target web --out-dir "$OUT.tmp" "$TARGET_DIR/$TRIPLE/release/iki_wasm.wasm"
wasm="$OUT.tmp/iki_wasm_bg.wasm"

# Loads a candidate .wasm with the new glue and checks two exports.
smoke() {
  node --input-type=module -e "
    import { readFileSync } from 'node:fs';
    import { pathToFileURL } from 'node:url';
    const glue = await import(pathToFileURL('$OUT.tmp/iki_wasm.js').href);
    glue.initSync({ module: readFileSync('$1') });
    const hex = Buffer.from(glue.sha256(new TextEncoder().encode('abc'))).toString('hex');
    if (hex !== 'ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad') process.exit(1);
    if (typeof glue.version() !== 'string') process.exit(1);
  "
}

if ! command -v wasm-opt >/dev/null; then
  say "note: wasm-opt not found; pkg/ is not post-optimised"
elif ! wasm-opt -O3 "$wasm" -o "$wasm.opt" 2>"$OUT.tmp/wasm-opt.log"; then
  say "note: wasm-opt ($(wasm-opt --version)) rejected the module; keeping it unoptimised:"
  head -3 "$OUT.tmp/wasm-opt.log" | sed 's/^/wasm:   /'
elif ! smoke "$wasm.opt"; then
  say "note: the wasm-opt output failed the Node smoke test; keeping the unoptimised module"
else
  mv "$wasm.opt" "$wasm"
fi
rm -f "$wasm.opt" "$OUT.tmp/wasm-opt.log"
smoke "$wasm" || { echo "wasm: error: $wasm fails the Node smoke test" >&2; exit 1; }

rm -rf "$OUT"
mv "$OUT.tmp" "$OUT"
say "$OUT/iki_wasm_bg.wasm ($(wc -c <"$OUT/iki_wasm_bg.wasm") bytes)"

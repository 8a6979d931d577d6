#!/usr/bin/env bash
# Soft-decision matching benchmark (docs/watermark.md section 12), natively on the fixture atlases:
#   bench/watermark/soft.sh            both atlases, 6 ids a row (about 15 minutes on 2 busy cores)
#   bench/watermark/soft.sh --quick    the tiles atlas, 2 ids a row (about 2 minutes)
#   bench/watermark/soft.sh --model    the modelled k-copy table and the scoring time
# Writes bench/watermark/RESULTS-soft.md (or RESULTS-soft-model.md), with the load average.
set -euo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"
NAME=RESULTS-soft.md
for a in "$@"; do [ "$a" = --model ] && NAME=RESULTS-soft-model.md; done
cargo build --quiet --release --manifest-path "$ROOT/Cargo.toml" -p iki-watermark --example soft_match
{
  echo "# Soft matching: \`bench/watermark/soft.sh $*\`"
  echo
  echo "Run $(date -u +%Y-%m-%dT%H:%MZ); load average at start: $(cut -d' ' -f1-3 /proc/loadavg)."
  echo
  "$ROOT/target/release/examples/soft_match" "$@"
  echo
  echo "Load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)."
} > "$HERE/$NAME.tmp"
mv "$HERE/$NAME.tmp" "$HERE/$NAME"
cat "$HERE/$NAME"

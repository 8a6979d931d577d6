#!/usr/bin/env bash
# Harder geometry and compositing benchmark (docs/watermark.md section 11.5), natively on the
# fixture atlases:
#   bench/watermark/geometry.sh                 both atlases, 10 ids a row
#   bench/watermark/geometry.sh --quick         the tiles atlas, 3 ids a row
#   ... --ids N, --small (adds a 1024 x 1024 part of the tiles atlas), --row TEXT (rows containing TEXT)
# Writes bench/watermark/RESULTS-geometry.md, with the load average.
set -euo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"
cargo build --quiet --release --manifest-path "$ROOT/Cargo.toml" -p iki-watermark --example geometry
{
  echo "# Harder geometry and compositing: \`bench/watermark/geometry.sh $*\`"
  echo
  echo "Run $(date -u +%Y-%m-%dT%H:%MZ); load average at start: $(cut -d' ' -f1-3 /proc/loadavg)."
  echo
  nice "$ROOT/target/release/examples/geometry" "$@"
  echo
  echo "Load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)."
} > "$HERE/RESULTS-geometry.md.tmp"
mv "$HERE/RESULTS-geometry.md.tmp" "$HERE/RESULTS-geometry.md"
cat "$HERE/RESULTS-geometry.md"

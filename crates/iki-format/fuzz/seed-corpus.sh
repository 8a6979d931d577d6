#!/usr/bin/env sh
# Builds the fuzz seed corpora from testdata/container/*.ikv: the container bytes after
# the `---` line, prefixed with the mode byte each target reads first.
set -eu
cd "$(dirname "$0")"
for target in read_plain read_encrypted; do mkdir -p "corpus/$target"; done
for f in ../../../testdata/container/*.ikv; do
  name=$(basename "$f" .ikv)
  kind=0; grep -q '^kind: model$' "$f" && kind=1
  mode=$kind
  grep -q '^identity: ' "$f" && mode=$((kind + 2))
  grep -q '^content-key: ' "$f" && mode=$((kind + 4))
  body=$(mktemp)
  # Byte-exact split: everything after the first "\n---\n".
  python3 - "$f" "$body" <<'PY'
import sys
data = open(sys.argv[1], 'rb').read()
open(sys.argv[2], 'wb').write(data[data.index(b'\n---\n') + 5:])
PY
  { printf "\\$(printf '%03o' $((kind + 64)))"; cat "$body"; } > "corpus/read_plain/$name"
  { printf "\\$(printf '%03o' $mode)"; cat "$body"; } > "corpus/read_encrypted/$name"
  rm -f "$body"
done
echo "seeded $(ls corpus/read_plain | wc -l) files per target"

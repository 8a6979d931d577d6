#!/usr/bin/env bash
# The body of `make test` (after `make setup`): runs every suite, keeps going
# after a failure so one run shows everything, then prints one plain line
#
#   tests: N passed, N failed   (the plain closing line CI reads)
#
# summed from cargo's "test result:" lines and vitest's "Tests" lines. A step
# that fails without reporting a failed test (a compile error, a crash) counts
# as one failure. Exits non-zero when anything failed.
set -uo pipefail
cd "$(dirname "$0")/.."

LOGDIR=$(mktemp -d)
trap 'rm -rf "$LOGDIR"' EXIT
FAILED_STEPS=()
PASSED=0 FAILED=0 SKIPPED=0

# Sums "N passed", "N failed", "N skipped"/"N ignored" from one step's log.
count() {
  sed 's/\x1b\[[0-9;]*[A-Za-z]//g' "$1" | awk '
    /^test result: / {
      for (i = 1; i <= NF; i++) {
        v = $(i - 1) + 0
        if ($i ~ /^passed/) p += v; else if ($i ~ /^failed/) f += v; else if ($i ~ /^ignored/) s += v
      }
    }
    /^[ \t]*Tests[ \t]+[0-9]/ {
      for (i = 1; i <= NF; i++) {
        v = $(i - 1) + 0
        if ($i ~ /^passed/) p += v; else if ($i ~ /^failed/) f += v; else if ($i ~ /^skipped/ || $i ~ /^todo/) s += v
      }
    }
    END { printf "%d %d %d\n", p, f, s }'
}

# step NAME CMD...: runs CMD with output shown live and logged, then counts.
step() {
  local name=$1 log="$LOGDIR/$1.log" start rc p f s
  shift
  echo "=== $name: $*"
  start=$SECONDS
  "$@" 2>&1 | tee "$log"
  rc=${PIPESTATUS[0]}
  read -r p f s < <(count "$log")
  if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then f=1; fi
  PASSED=$((PASSED + p)) FAILED=$((FAILED + f)) SKIPPED=$((SKIPPED + s))
  [ "$rc" -ne 0 ] && FAILED_STEPS+=("$name")
  echo "=== $name: exit $rc, $p passed, $f failed ($((SECONDS - start)) s)"
}

has_test_script() {
  [ -f "$1/package.json" ] && node -e "process.exit(require('./$1/package.json').scripts?.test ? 0 : 1)"
}

# Generated files (STYLE.md: CI fails if a generated file is stale): ts/src/codes.ts and
# ts/src/limits.ts are compared byte for byte with the generator's output by
# crates/iki-license/tests/generated_ts.rs, inside `cargo test --workspace` below. (A separate
# `cargo run -p iki-license --example gen_ts` step did the same check again, and took 126 s
# of a clean-clone run, most of it compiling.)
step rust cargo test --workspace
step build make --no-print-directory -s build
step ts bash -c 'cd ts && ../node_modules/.bin/vitest run'
if has_test_script server; then step server npm test -w server --silent; fi

echo
if [ ${#FAILED_STEPS[@]} -gt 0 ]; then echo "failed steps: ${FAILED_STEPS[*]}"; fi
if [ "$SKIPPED" -gt 0 ]; then
  echo "tests: $PASSED passed, $FAILED failed, $SKIPPED skipped"
else
  echo "tests: $PASSED passed, $FAILED failed"
fi
[ ${#FAILED_STEPS[@]} -eq 0 ] && [ "$FAILED" -eq 0 ]

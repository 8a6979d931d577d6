#!/usr/bin/env sh
# Regenerates the container vectors in testdata/container/ (deterministic; see
# testdata/README.md). Run from anywhere; commit the result.
set -eu
cd "$(dirname "$0")/.."
cargo run --quiet -p iki-format --example gen_vectors -- testdata/container

#!/usr/bin/env bash
# `make bench-memory` (after `make build`): the streaming-memory benchmarks. Today one: the
# licensing service's RSS while a 512 MiB master is uploaded and a license copy of it is
# downloaded (bench/memory/server.mjs; options: --mib N, --check).
set -euo pipefail
cd "$(dirname "$0")/../.."
node bench/memory/server.mjs "$@"

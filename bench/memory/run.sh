#!/usr/bin/env bash
# `make bench-memory` (after `make build`): the streaming-memory benchmarks.
#   memory.mjs  peak RSS of a large encrypted container written and read back through the TS API
#   server.mjs  the licensing service's RSS while a 512 MiB master is uploaded and a license
#               copy of it is downloaded (options: --mib N, --check)
set -euo pipefail
cd "$(dirname "$0")/../.."
if [ -f bench/memory/memory.mjs ]; then node --expose-gc bench/memory/memory.mjs; fi
node bench/memory/server.mjs

#!/usr/bin/env bash
# The body of `make serve` once everything is built: picks the port and runs the service
# through the iki CLI (`iki serve`), which prints the address when it answers.
#
#   PORT=n or IKI_PORT=n   the port (both may be set only to the same value); 8080 by default
#   DATA=dir               the data folder (.data by default)
set -euo pipefail
cd "$(dirname "$0")/.."

port=${PORT:-}
if [ -n "${IKI_PORT:-}" ]; then
  if [ -n "$port" ] && [ "$port" != "$IKI_PORT" ]; then
    echo "serve: PORT=$port and IKI_PORT=$IKI_PORT disagree; set only one of them" >&2
    exit 2
  fi
  port=$IKI_PORT
fi
port=${port:-8080}
data=${DATA:-.data}
echo "serve: starting the service on port $port with its data in $data"
exec node ts/dist/cli/main.js serve --port "$port" --data "$data"

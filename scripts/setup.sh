#!/usr/bin/env bash
# Installs what `make test` needs on Debian 12, skipping whatever is present.
#
#   - Debian packages: chromium (browser tests), fonts-ipafont-gothic (a Japanese font, so the
#     Japanese pages' screenshots show text instead of empty boxes), binaryen (wasm-opt), and,
#     when rustup has no wasm32 target, Debian's wasm-capable compiler
#     (rustc-web cargo-web rust-web-src lld-22). `apt-get update` runs only
#     when something is missing.
#   - wasm-bindgen-cli at exactly the version Cargo.lock pins for the
#     wasm-bindgen crate, so the crate and the CLI can never drift.
#   - npm ci when node_modules is missing or older than package-lock.json.
#   - Debian's postgresql (server binaries only; its cluster is not used: the
#     server tests start a throwaway one) when no initdb is found, so the
#     PostgreSQL suites run wherever `make test` runs. IKI_SKIP_PG=1 skips it.
#   - moto's S3 server in a venv under target/s3-server (pip, pinned by
#     scripts/s3-server/requirements.txt; Debian's python3-venv first when
#     python3 cannot make a venv), for the S3 blob store's tests; reinstalled
#     only when the requirements change. IKI_SKIP_S3=1 skips it.
#
# Prints what it does; prints nothing when there is nothing to do.
set -euo pipefail
cd "$(dirname "$0")/.."

say() { echo "setup: $*"; }
die() { echo "setup: error: $*" >&2; exit 1; }

as_root() {
  if [ "$(id -u)" = 0 ]; then "$@"
  elif command -v sudo >/dev/null; then sudo -n "$@"
  else die "need root to run: $*"
  fi
}

have_rustup_wasm32() {
  command -v rustup >/dev/null && rustup target list --installed 2>/dev/null | grep -q '^wasm32-unknown-unknown$'
}

installed() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q 'install ok installed'; }

apt_packages() {
  local wanted=(chromium fonts-ipafont-gothic binaryen) missing=()
  if ! have_rustup_wasm32; then wanted+=(rustc-web cargo-web rust-web-src lld-22); fi
  for p in "${wanted[@]}"; do installed "$p" || missing+=("$p"); done
  [ ${#missing[@]} -eq 0 ] && return 0
  say "installing Debian packages: ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  as_root apt-get update -q
  as_root apt-get install -y -q "${missing[@]}" </dev/null
}

check_node() {
  command -v node >/dev/null && command -v npm >/dev/null || die "Node.js 20+ and npm are required"
  local major
  major=$(node -p 'process.versions.node.split(".")[0]')
  [ "$major" -ge 20 ] || die "Node.js 20+ is required (found $(node --version))"
}

# The wasm-bindgen version Cargo.lock resolved (the crate pins it with `=`).
locked_wasm_bindgen_version() {
  awk '/^name = "wasm-bindgen"$/ { getline; gsub(/version = |"/, ""); print; exit }' Cargo.lock
}

wait_for_other_install() {
  # A `cargo install wasm-bindgen-cli` started elsewhere (e.g. a provisioning
  # step) is waited for rather than raced: two would fight over ~/.cargo.
  local waited=0
  while pgrep -f 'cargo install.*wasm-bindgen-cli' >/dev/null 2>&1; do
    [ $waited -eq 0 ] && say "waiting for a running 'cargo install wasm-bindgen-cli' to finish"
    sleep 10; waited=$((waited + 10))
    [ $waited -ge 1800 ] && die "gave up waiting for the other wasm-bindgen-cli install"
  done
  return 0
}

wasm_bindgen_cli() {
  local want have
  want=$(locked_wasm_bindgen_version)
  [ -n "$want" ] || die "Cargo.lock has no wasm-bindgen entry"
  have() { wasm-bindgen --version 2>/dev/null | awk '{print $2}'; }
  [ "$(have)" = "$want" ] && return 0
  wait_for_other_install
  [ "$(have)" = "$want" ] && return 0
  say "installing wasm-bindgen-cli $want (cargo install, a few minutes)"
  if ! cargo install --locked --version "=$want" wasm-bindgen-cli; then
    # 0.2.130's own lockfile pins webpki-roots 1.0.11, which the registry no
    # longer serves; only that CLI's download feature uses it. Resolving
    # afresh keeps the CLI itself at exactly $want.
    say "note: 'cargo install --locked' failed; retrying without --locked (same CLI version)"
    cargo install --version "=$want" wasm-bindgen-cli
  fi
  [ "$(have)" = "$want" ] || die "wasm-bindgen --version is '$(have)', expected $want (is ~/.cargo/bin on PATH?)"
}

npm_deps() {
  if [ ! -e node_modules/.package-lock.json ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
    say "npm ci"
    if command -v flock >/dev/null; then flock /tmp/iki-npm.lock npm ci --no-audit --no-fund
    else npm ci --no-audit --no-fund; fi
  fi
}

# initdb of any installed PostgreSQL major version (server/test/helpers/global-postgres.ts looks
# in the same places).
have_postgres_server() {
  compgen -G '/usr/lib/postgresql/*/bin/initdb' >/dev/null || command -v initdb >/dev/null
}

postgres_server() {
  [ "${IKI_SKIP_PG:-}" = 1 ] && return 0
  have_postgres_server && return 0
  say "installing Debian's postgresql (no PostgreSQL server found; the server tests start their own)"
  export DEBIAN_FRONTEND=noninteractive
  as_root apt-get update -q
  as_root apt-get install -y -q postgresql </dev/null
  have_postgres_server || die "postgresql was installed but no initdb was found under /usr/lib/postgresql"
}

# The S3 protocol server the S3 blob store's tests start (server/test/helpers/global-s3.ts).
s3_server() {
  [ "${IKI_SKIP_S3:-}" = 1 ] && return 0
  local venv=target/s3-server/venv req=scripts/s3-server/requirements.txt stamp
  stamp=$(sha256sum "$req" | cut -c1-16)
  [ -x "$venv/bin/moto_server" ] && [ "$(cat "$venv/.stamp" 2>/dev/null)" = "$stamp" ] && return 0
  if ! command -v python3 >/dev/null || ! python3 -c 'import ensurepip, venv' 2>/dev/null; then
    say "installing Debian's python3-venv (for the S3 test server's venv)"
    export DEBIAN_FRONTEND=noninteractive
    as_root apt-get update -q
    as_root apt-get install -y -q python3 python3-venv </dev/null
  fi
  say "installing moto's S3 server into $venv (pip, pinned versions)"
  rm -rf "$venv"
  python3 -m venv "$venv"
  # A full freeze: no resolving needed.
  "$venv/bin/pip" install --quiet --disable-pip-version-check --no-deps -r "$req"
  echo "$stamp" > "$venv/.stamp"
}

apt_packages
postgres_server
s3_server
check_node
command -v cargo >/dev/null || die "cargo (rustup) is required for the native build"
wasm_bindgen_cli
npm_deps

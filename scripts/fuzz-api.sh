#!/usr/bin/env bash
# make fuzz-api: Schemathesis (pinned in scripts/fuzz-api/requirements.txt, installed into
# target/fuzz-api/venv) against /api/openapi.json of a running service with the real crypto
# (scripts/fuzz-api/serve.mjs), on PGlite and, when Debian's PostgreSQL server binaries are there (any major version),
# on PostgreSQL; each once with a seller's access token and once without. Every check runs
# (scripts/fuzz-api/schemathesis.toml). Passes when Schemathesis finds nothing and the service
# logged no unexpected error; prints the figures of each run.
#
#   FUZZ_API_EXAMPLES   test cases per operation and phase (default 100)
#   FUZZ_API_SEED       a seed, to repeat a run
set -euo pipefail
cd "$(dirname "$0")/.."

here=$PWD/scripts/fuzz-api
out=$PWD/target/fuzz-api
venv=$out/venv
examples=${FUZZ_API_EXAMPLES:-100}
mkdir -p "$out"

# Install once per requirements file (idempotent: the stamp holds its hash).
stamp=$(sha256sum "$here/requirements.txt" | cut -d' ' -f1)
if [[ ! -x $venv/bin/schemathesis || "$(cat "$venv/.stamp" 2>/dev/null)" != "$stamp" ]]; then
  command -v python3 >/dev/null || { echo "make fuzz-api: python3 is required" >&2; exit 1; }
  rm -rf "$venv"
  python3 -m venv "$venv"
  "$venv/bin/pip" install --quiet --disable-pip-version-check -r "$here/requirements.txt"
  echo "$stamp" > "$venv/.stamp"
fi

engines=(pglite)
if compgen -G '/usr/lib/postgresql/*/bin/initdb' >/dev/null; then engines+=(postgres)
else echo "make fuzz-api: no PostgreSQL server binaries under /usr/lib/postgresql; fuzzing PGlite only" >&2; fi

server=
stop_server() { [[ -n $server ]] && kill "$server" 2>/dev/null && wait "$server" 2>/dev/null; server=; }
trap stop_server EXIT

failed=0
summary=()
for engine in "${engines[@]}"; do
  state=$out/$engine.json
  rm -f "$state"
  node "$here/serve.mjs" --engine "$engine" --out "$state" 2> "$out/$engine-server.log" &
  server=$!
  for _ in $(seq 600); do [[ -s $state ]] && break; kill -0 "$server" 2>/dev/null || break; sleep 0.2; done
  [[ -s $state ]] || { echo "make fuzz-api: the $engine service did not start:" >&2; cat "$out/$engine-server.log" >&2; exit 1; }
  field() { node -e "process.stdout.write(String(JSON.parse(require('fs').readFileSync('$state','utf8'))['$1']))"; }
  url=$(field url)
  export IKI_FUZZ_OUT=$out IKI_FUZZ_HOOKS=$here/hooks.py IKI_FUZZ_MASTER_ID=$(field masterId) IKI_FUZZ_LICENSE_ID=$(field licenseId) \
    IKI_FUZZ_PUBLIC_KEY=$(field publicKey)
  token=$(field token)
  for who in authenticated anonymous; do
    auth=()
    [[ $who == authenticated ]] && auth=(-H "Authorization: Bearer $token")
    log=$out/$engine-$who.log
    echo "make fuzz-api: $engine, $who ($url)"
    set +e
    # Run inside target/fuzz-api: Schemathesis and Hypothesis keep their state in the working folder.
    (cd "$out" && HYPOTHESIS_STORAGE_DIRECTORY=$out/hypothesis "$venv/bin/schemathesis" --config-file "$here/schemathesis.toml" \
      run "$url/api/openapi.json" "${auth[@]}" --checks all --max-examples "$examples" ${FUZZ_API_SEED:+--seed "$FUZZ_API_SEED"} \
      --no-color --report junit --report-junit-path "$out/$engine-$who.xml") > "$log" 2>&1
    status=$?
    set -e
    sed -n '/^=* SUMMARY =*$/,$p' "$log"
    cases=$(grep -Eo '[0-9]+ generated' "$log" | tail -1 | cut -d' ' -f1)
    [[ $status -eq 0 ]] || { failed=1; echo "make fuzz-api: failures in $log" >&2; }
    summary+=("$engine $who: ${cases:-?} test cases, exit status $status")
  done
  stop_server
  errors=$(grep -c '"level":"error"' "$out/$engine-server.log" || true)
  summary+=("$engine: $errors unexpected errors logged by the service")
  [[ $errors -eq 0 ]] || { failed=1; echo "make fuzz-api: the $engine service logged errors: $out/$engine-server.log" >&2; }
done

printf 'make fuzz-api: %s\n' "${summary[@]}"
exit $failed

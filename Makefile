# iki: one Makefile for the Rust core, the WebAssembly package, the
# TypeScript library and CLI, and the licensing service.
#
#   make test    install what is missing, build everything, run every test
#   make serve   run the licensing service
#
# `make help` lists the rest.

SHELL := /bin/bash
.DEFAULT_GOAL := help

DATA ?= .data
FUZZ_SECONDS ?= 60
BENCH_ARGS ?=

# Everything the wasm build reads. Tests, examples, benches and fuzz targets
# do not go into pkg/, so editing them does not rebuild it.
WASM_INPUTS := Cargo.toml Cargo.lock scripts/build-wasm.sh \
  $(shell find crates -type f \( -name '*.rs' -o -name Cargo.toml \) \
      -not -path '*/tests/*' -not -path '*/examples/*' -not -path '*/benches/*' \
      -not -path '*/fuzz/*' 2>/dev/null)
WASM_OUT := pkg/iki_wasm_bg.wasm

.PHONY: help setup wasm gen vectors build build-ts build-server build-web build-cli test serve \
        lint fuzz fuzz-api bench bench-watermark bench-watermark-soft bench-watermark-geometry bench-memory bench-project bench-export bench-load bench-copies bench-runtime bench-activity clean

help:
	@echo "make test             install what is missing, build, run all Rust and TS tests"
	@echo "make serve            run the licensing service (PORT= or IKI_PORT=, default 8080; DATA=$(DATA))"
	@echo "make setup            install toolchains and dependencies (idempotent)"
	@echo "make wasm             build crates/iki-wasm into pkg/ (incremental)"
	@echo "make build            wasm + compile ts/ and server/, bundle the web pages (only what changed)"
	@echo "make gen              regenerate ts/src/limits.ts and ts/src/codes.ts from Rust"
	@echo "make vectors          regenerate testdata/container/"
	@echo "make lint             clippy (native and wasm32+simd128, warnings denied) and the TS type checks"
	@echo "make fuzz             run each fuzz target for FUZZ_SECONDS=$(FUZZ_SECONDS)"
	@echo "make fuzz-api         Schemathesis against the running service's OpenAPI document (PGlite, PostgreSQL)"
	@echo "make bench            benchmarks; bench-watermark, bench-watermark-soft and bench-memory for those suites (BENCH_ARGS=--quick ...)"
	@echo "make bench-project    save and open of a 200 MB project in headless Chromium (MB/s, peak memory)"
	@echo "make bench-export     master export of a 200 MB model folder in headless Chromium beside iki pack"
	@echo "make bench-load       key releases/s and p50/p99 at 16 connections (DATABASE_URL= for PostgreSQL; BENCH_ARGS=--seconds N)"
	@echo "make bench-copies     key-release latency alone and while copies download, worker pool or in-thread (BENCH_ARGS=--in-thread, --atlas for the fixture atlases ...)"
	@echo "make bench-activity   activity reads over 1,000,000 releases and the release's added cost (DATABASE_URL= PostgreSQL)"
	@echo "make bench-runtime    /player in headless Chromium: Open -> first texture drawn, by package URL beside the resolver (BENCH_ARGS=--runs N --atlas PX)"
	@echo "make clean            remove pkg/, ts/dist, server/dist, .build and target/wasm"

setup:
	@scripts/setup.sh

wasm: $(WASM_OUT)

# setup is order-only: it runs first but never forces a rebuild by itself.
$(WASM_OUT): $(WASM_INPUTS) | setup
	@scripts/build-wasm.sh

# iki-license's generator includes iki-format's and adds the license codes to codes.ts.
gen:
	@cargo run -q -p iki-license --example gen_ts -- ts/src

vectors:
	@if [ -f crates/iki-format/examples/gen_vectors.rs ]; then \
	  cargo run -q -p iki-format --example gen_vectors; \
	else \
	  echo "make vectors: crates/iki-format/examples/gen_vectors.rs does not exist yet"; \
	fi

build: wasm build-ts build-server build-web build-cli

TSC := node_modules/.bin/tsc
# Stamp files and tsc build info of the incremental build: a step runs only when one of its
# inputs is newer than its stamp, so a second `make build` (and `make serve`) does nothing.
STAMPS := .build
TS_SRC := $(shell find ts/src -name '*.ts' 2>/dev/null) ts/tsconfig.json ts/package.json package-lock.json
TS_TESTS := $(shell find ts/test tests/fixtures -name '*.ts' -o -name '*.mjs' 2>/dev/null) ts/tsconfig.test.json ts/vitest.config.ts
SERVER_SRC := $(shell find server/src -name '*.ts' 2>/dev/null) server/tsconfig.json server/package.json
SERVER_TESTS := $(shell find server/test tests/fixtures -name '*.ts' -o -name '*.mjs' 2>/dev/null) server/tsconfig.test.json server/vitest.config.ts
WEB_SRC := $(shell find server/web -name '*.ts' 2>/dev/null) server/web/tsconfig.json scripts/build-web.mjs
TS_OUT := ts/dist/.built
SERVER_OUT := server/dist/.built
WEB_OUT := server/dist/web/.built

$(STAMPS):
	@mkdir -p $@

# ts/: @iki/core (with @iki/core/browser) and the iki CLI.
$(TS_OUT): $(TS_SRC) $(WASM_OUT)
	@echo "build: compiling ts/ (@iki/core, the iki CLI)"
	@$(TSC) -p ts/tsconfig.json
	@chmod +x ts/dist/cli/main.js
	@# npm links a bin only if its file exists, and npm ci runs before the first build.
	@[ -e node_modules/.bin/iki ] || flock /tmp/iki-npm.lock npm rebuild --ignore-scripts --silent @iki/core
	@touch $@

# The tests are type-checked too (vitest only strips types).
$(STAMPS)/ts-tests: $(TS_OUT) $(TS_TESTS) | $(STAMPS)
	@echo "build: type-checking ts/test"
	@$(TSC) -p ts/tsconfig.test.json
	@touch $@

# The browser modules again without Node's types: nothing there may lean on Node.
$(STAMPS)/ts-browser: $(TS_OUT) ts/tsconfig.browser.json | $(STAMPS)
	@echo "build: type-checking ts/src/browser for browsers (no Node types)"
	@$(TSC) -p ts/tsconfig.browser.json
	@touch $@

build-ts: $(TS_OUT) $(STAMPS)/ts-tests $(STAMPS)/ts-browser

$(SERVER_OUT): $(SERVER_SRC) $(TS_OUT)
	@echo "build: compiling server/"
	@$(TSC) -p server/tsconfig.json
	@touch $@

$(STAMPS)/server-tests: $(SERVER_OUT) $(SERVER_TESTS) | $(STAMPS)
	@echo "build: type-checking server/test"
	@$(TSC) -p server/tsconfig.test.json
	@touch $@

build-server: $(SERVER_OUT) $(STAMPS)/server-tests

# The pages and workers of server/web: type-checked (DOM, no Node types), then bundled by
# esbuild into server/dist/web, which the service serves (scripts/build-web.mjs).
$(WEB_OUT): $(WEB_SRC) $(TS_OUT)
	@echo "build: type-checking and bundling the web pages (server/web)"
	@$(TSC) -p server/web/tsconfig.json
	@node scripts/build-web.mjs
	@touch $@

build-web: $(WEB_OUT)

# The CLI as a self-contained npm tarball the service serves at /downloads/iki-cli.tgz.
CLI_TGZ := server/dist/downloads/iki-cli.tgz
$(CLI_TGZ): $(TS_OUT) $(WASM_OUT) scripts/build-cli-tarball.mjs scripts/lib/tarball.mjs
	@echo "build: the CLI tarball (server/dist/downloads/iki-cli.tgz)"
	@node scripts/build-cli-tarball.mjs

# @iki/core's browser entry as the npm tarball served at /downloads/iki-core.tgz (issue 25 item 3).
CORE_TGZ := server/dist/downloads/iki-core.tgz
$(CORE_TGZ): $(TS_OUT) $(WASM_OUT) scripts/build-core-tarball.mjs scripts/lib/tarball.mjs
	@echo "build: the @iki/core browser tarball (server/dist/downloads/iki-core.tgz)"
	@node scripts/build-core-tarball.mjs

build-cli: $(CLI_TGZ) $(CORE_TGZ)

# Every step runs even after a failure; scripts/test-all.sh prints
# "make test: N passed, N failed" and exits non-zero if anything failed.
test: setup
	@scripts/test-all.sh

# The final command: the iki CLI runs @iki/server's entry point (scripts/serve.sh picks the
# port from PORT= or IKI_PORT=).
serve: setup build
	@DATA='$(DATA)' scripts/serve.sh

# cargo fuzz needs nightly flags: a rustup nightly when installed, otherwise
# the stable compiler with RUSTC_BOOTSTRAP=1 (its std ships the ASan runtime).
fuzz:
	@if [ ! -d crates/iki-format/fuzz ]; then \
	  echo "make fuzz: no fuzz targets yet (crates/iki-format/fuzz arrives with the format work)"; exit 0; \
	fi; \
	command -v cargo-fuzz >/dev/null || cargo install --locked cargo-fuzz || exit 1; \
	cd crates/iki-format/fuzz || exit 1; \
	if [ ! -d corpus ] && [ -f seed-corpus.sh ]; then sh seed-corpus.sh || exit 1; fi; \
	if rustup toolchain list 2>/dev/null | grep -q '^nightly'; then fuzz="cargo +nightly fuzz"; \
	else export RUSTC_BOOTSTRAP=1; fuzz="cargo fuzz"; fi; \
	for t in $$($$fuzz list); do \
	  echo "make fuzz: $$t for $(FUZZ_SECONDS) s"; \
	  $$fuzz run "$$t" -- -max_total_time=$(FUZZ_SECONDS) || exit 1; \
	done

# Not part of test: property-based requests from the OpenAPI document (Python venv in target/).
fuzz-api: build
	@scripts/fuzz-api.sh

# Not part of test: clippy for wasm32 builds std for checking (a few minutes).
lint: setup
	@scripts/lint.sh

bench: build
	@if [ -f bench/run.sh ]; then bash bench/run.sh $(BENCH_ARGS); else echo "make bench: bench/run.sh does not exist yet"; fi

bench-watermark: build
	@if [ -f bench/watermark/run.sh ]; then bash bench/watermark/run.sh $(BENCH_ARGS); \
	else echo "make bench-watermark: bench/watermark/run.sh does not exist yet"; fi

# Soft matching against issued licenses and mixes of several copies (docs/watermark.md section
# 12): BENCH_ARGS=--quick for the tiles atlas only, --model for the modelled k-copy table.
bench-watermark-soft:
	@bash bench/watermark/soft.sh $(BENCH_ARGS)

# Harder geometry and compositing (docs/watermark.md section 11.5): quarter and third sizes,
# rotations, tight crops, JPEG 60/50, a preview over a checkerboard. BENCH_ARGS=--quick: tiles only.
bench-watermark-geometry:
	@bash bench/watermark/geometry.sh $(BENCH_ARGS)

bench-memory: build
	@if [ -f bench/memory/run.sh ]; then bash bench/memory/run.sh $(BENCH_ARGS); \
	else echo "make bench-memory: bench/memory/run.sh does not exist yet"; fi

bench-load: build
	@node bench/load.mjs $(BENCH_ARGS)

bench-project: build
	@node bench/project/bench.mjs $(BENCH_ARGS)

bench-export: build
	@node bench/export/bench.mjs $(BENCH_ARGS)

bench-copies: build
	@node bench/load/releases-during-copies.mjs $(BENCH_ARGS)

bench-runtime: build
	@node bench/runtime/open-to-texture.mjs $(BENCH_ARGS)

bench-activity: build
	@node bench/activity/bench.mjs $(BENCH_ARGS)
	@node bench/activity/release-cost.mjs

# Only this Makefile's outputs: the native target/ is shared and left alone.
clean:
	rm -rf pkg pkg.tmp ts/dist server/dist $(STAMPS) target/wasm target/wasm-clippy

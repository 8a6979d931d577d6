# iki: one Makefile for the Rust core, the WebAssembly package, the
# TypeScript library and CLI, and the licensing service.
#
#   make test    install what is missing, build everything, run every test
#   make serve   run the licensing service
#
# `make help` lists the rest.

SHELL := /bin/bash
.DEFAULT_GOAL := help

PORT ?= 8080
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

.PHONY: help setup wasm gen vectors build build-ts build-server test serve \
        lint fuzz bench bench-watermark bench-memory bench-project clean

help:
	@echo "make test             install what is missing, build, run all Rust and TS tests"
	@echo "make serve            run the licensing service (PORT=$(PORT) DATA=$(DATA))"
	@echo "make setup            install toolchains and dependencies (idempotent)"
	@echo "make wasm             build crates/iki-wasm into pkg/ (incremental)"
	@echo "make build            wasm + compile ts/ and server/"
	@echo "make gen              regenerate ts/src/limits.ts and ts/src/codes.ts from Rust"
	@echo "make vectors          regenerate testdata/container/"
	@echo "make lint             clippy (native and wasm32+simd128, warnings denied) and the TS type checks"
	@echo "make fuzz             run each fuzz target for FUZZ_SECONDS=$(FUZZ_SECONDS)"
	@echo "make bench            benchmarks; bench-watermark and bench-memory for those suites (BENCH_ARGS=--quick ...)"
	@echo "make bench-project    save and open of a 200 MB project in headless Chromium (MB/s, peak memory)"
	@echo "make clean            remove pkg/, ts/dist, server/dist and target/wasm"

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

build: wasm build-ts build-server

TSC := node_modules/.bin/tsc

# tsconfig.test.json type-checks the tests too (vitest only strips types).
build-ts: wasm
	@$(TSC) -p ts/tsconfig.json
	@$(TSC) -p ts/tsconfig.test.json
	@chmod +x ts/dist/cli/main.js
	@# npm links a bin only if its file exists, and npm ci runs before the first build.
	@[ -e node_modules/.bin/iki ] || flock /tmp/iki-npm.lock npm rebuild --ignore-scripts --silent @iki/core

build-server: build-ts
	@if [ -f server/tsconfig.json ]; then $(TSC) -p server/tsconfig.json && $(TSC) -p server/tsconfig.test.json; fi

# Every step runs even after a failure; scripts/test-all.sh prints
# "make test: N passed, N failed" and exits non-zero if anything failed.
test: setup
	@scripts/test-all.sh

# The final command: the iki CLI runs @iki/server's entry point.
serve: setup build
	@node ts/dist/cli/main.js serve --port $(PORT) --data $(DATA)

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

# Not part of test: clippy for wasm32 builds std for checking (a few minutes).
lint: setup
	@scripts/lint.sh

bench: build
	@if [ -f bench/run.sh ]; then bash bench/run.sh $(BENCH_ARGS); else echo "make bench: bench/run.sh does not exist yet"; fi

bench-watermark: build
	@if [ -f bench/watermark/run.sh ]; then bash bench/watermark/run.sh $(BENCH_ARGS); \
	else echo "make bench-watermark: bench/watermark/run.sh does not exist yet"; fi

bench-memory: build
	@if [ -f bench/memory/run.sh ]; then bash bench/memory/run.sh $(BENCH_ARGS); \
	else echo "make bench-memory: bench/memory/run.sh does not exist yet"; fi

bench-project: build
	@node bench/project/bench.mjs $(BENCH_ARGS)

# Only this Makefile's outputs: the native target/ is shared and left alone.
clean:
	rm -rf pkg pkg.tmp ts/dist server/dist target/wasm target/wasm-clippy

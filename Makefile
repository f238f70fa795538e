# hyperseal — two commands on a fresh clone:
#   make bench   build in release mode, install the peers it can, run the benchmark report
#   make test    every test, all languages (installs what it needs first)
SHELL := /bin/bash
TOOLS := $(CURDIR)/.tools
GOBIN := $(TOOLS)/bin
AGE_VERSION := v1.3.1
CARGO ?= cargo
BENCH_ARGS ?= --quick

.PHONY: all build test bench tools age rage node-addon clean fmt clippy wasm-target wasm-core test-portable wasm wasm-bindgen-cli wasm-test chromium

all: build

build:
	$(CARGO) build --release -p hyperseal-cli

# age v1.3 from the Go module proxy, into a project-local folder (interop tests and the bench).
age: $(GOBIN)/age
$(GOBIN)/age:
	@mkdir -p $(GOBIN)
	GOBIN=$(GOBIN) GOFLAGS=-mod=mod go install filippo.io/age/cmd/...@$(AGE_VERSION)

# rage from crates.io (optional peer; a long build, so only `make rage` or `make bench RAGE=1`).
rage: $(TOOLS)/cargo/bin/rage
$(TOOLS)/cargo/bin/rage:
	$(CARGO) install --locked --root $(TOOLS)/cargo rage

tools: age

test: tools wasm-core
	$(CARGO) test --release --workspace
	$(MAKE) test-portable
	@if [ -f bindings/node/package.json ]; then $(MAKE) -C bindings/node test; fi

# The library for WebAssembly: the portable RustCrypto backend (crates/hyperseal/src/crypto/),
# since aws-lc and ring do not build for wasm32-unknown-unknown.
wasm-target:
	@rustup target list --installed 2>/dev/null | grep -qx wasm32-unknown-unknown || rustup target add wasm32-unknown-unknown
wasm-core: wasm-target
	$(CARGO) build --release -p hyperseal --target wasm32-unknown-unknown

# wasm-bindgen-cli must be exactly the version of the wasm-bindgen crate in Cargo.lock (its
# output format changes between releases), so the version is read from there. Its own lock file
# may name a dependency release the registry no longer serves (webpki-roots 1.0.11 for 0.2.130):
# then it is resolved afresh, still at that exact CLI version.
WASM_BINDGEN_VERSION := $(shell awk '/^name = "wasm-bindgen"$$/{getline; gsub(/"/,"",$$3); print $$3}' Cargo.lock)
WASM_BINDGEN := $(TOOLS)/cargo/bin/wasm-bindgen
wasm-bindgen-cli:
	@if [ "$$($(WASM_BINDGEN) --version 2>/dev/null)" != "wasm-bindgen $(WASM_BINDGEN_VERSION)" ]; then \
	  $(CARGO) install --locked --root $(TOOLS)/cargo wasm-bindgen-cli --version $(WASM_BINDGEN_VERSION) \
	  || $(CARGO) install --root $(TOOLS)/cargo wasm-bindgen-cli --version $(WASM_BINDGEN_VERSION); fi

# The browser package: bindings/wasm/pkg/hyperseal.js + hyperseal_bg.wasm (wasm-bindgen's
# `--target web` layout: default export `init`, then the named exports).
wasm: wasm-target wasm-bindgen-cli
	$(MAKE) -C bindings/wasm pkg WASM_BINDGEN=$(WASM_BINDGEN)

# Debian's Chromium for the browser tests (root on the project's machines; apt-get only when it
# is missing).
chromium:
	@command -v chromium >/dev/null || { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends chromium; }

# The browser package in headless Chromium: round trips, error codes, and files crossing between
# the page and the native CLI both ways (bindings/wasm/test/run.mjs).
wasm-test: wasm build chromium
	$(MAKE) -C bindings/wasm test

# The library's whole test suite on the portable backend natively (same bytes as aws-lc: see
# crates/hyperseal/tests/backends.rs and src/crypto/tests.rs).
test-portable:
	$(CARGO) test --release -p hyperseal --features portable

# The Node addon, for the bench's `node` table (skipped with a note if npm is missing or fails).
node-addon:
	-@if command -v npm >/dev/null && [ -f bindings/node/package.json ]; then $(MAKE) -C bindings/node build; fi

bench: build age node-addon $(if $(RAGE),rage)
	PATH="$(GOBIN):$(TOOLS)/cargo/bin:$$PATH" ./target/release/hyperseal bench $(BENCH_ARGS) --out bench-report

fmt:
	$(CARGO) fmt --all

clippy:
	$(CARGO) clippy --workspace --all-targets

clean:
	$(CARGO) clean
	rm -rf bench-report

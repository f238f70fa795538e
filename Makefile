# hyperseal — two commands on a fresh clone:
#   make bench   build in release mode, install the peers it can, run the benchmark report
#   make test    every test, all languages (installs what it needs first)
#   make fuzz    every fuzz target for FUZZ_SECONDS each (installs nightly and cargo-fuzz first)
SHELL := /bin/bash
TOOLS := $(CURDIR)/.tools
GOBIN := $(TOOLS)/bin
# Built peers live in a per-user cache keyed by tool and version (<tool>/<version>/bin), so a
# fresh clone on the same machine builds none of them again; .tools/bin and .tools/cargo/bin
# hold links into it (the paths the tests use). The venv stays per clone: it holds this clone's
# own build of the package.
TOOLS_CACHE ?= $(or $(XDG_CACHE_HOME),$(HOME)/.cache)/hyperseal-tools
AGE_VERSION := v1.3.1
AGE_CACHE := $(TOOLS_CACHE)/age/$(AGE_VERSION)/bin
# MinIO, the S3 server of the Python tests (a pseudo-version: MinIO publishes no module tags).
MINIO_VERSION := v0.0.0-20260212201848-7aac2a2c5b7c
MINIO := $(TOOLS_CACHE)/minio/$(MINIO_VERSION)/bin/minio
CARGO_FUZZ_VERSION := 0.13.2
CARGO ?= cargo
VENV := $(TOOLS)/venv
PYTHON ?= python3
# pyca's C2SP chunked-encryption vectors (SHA-256 instantiation) ship in its vectors package.
C2SP_VECTORS_PKG := cryptography_vectors==50.0.2
C2SP_VECTORS_SHA256 := 99e0330ddfe2df9d80572f672767d77614b3d4ad356658bb9bd7c2a2e6c9b9d6
BENCH_ARGS ?= --quick

.PHONY: all build bench-build test bench tools age minio tag-plugin ssh-keygen test-plugin rage node-addon wasm-deps wasm-bench clean fmt clippy lint fuzz fuzz-tools fuzz-cmin wasm-target wasm-core test-portable wasm wasm-bindgen-cli wasm-test chromium venv c2sp-vectors python python-test python-bench

all: build

# The shipped `hyperseal` is linked statically (static-pie on Linux: still position-independent,
# so ASLR stays): a process that starts in a millisecond should not spend a third of it in the
# dynamic loader resolving libc symbols and relocating. Measured in the README (small files).
# `cargo rustc` applies the flag to this one binary; the addons (cdylibs) cannot be static.
CLI_RUSTFLAGS := $(if $(filter Linux,$(shell uname -s)),-C target-feature=+crt-static)
build:
	$(CARGO) rustc --release -p hyperseal-cli --bin hyperseal -- $(CLI_RUSTFLAGS)

# The benchmark is its own binary (crates/hyperseal-bench), never part of the shipped `hyperseal`;
# it measures the `hyperseal` built next to it in target/release.
bench-build:
	$(CARGO) build --release -p hyperseal-bench
	$(MAKE) build

# age v1.3 from the Go module proxy, into a project-local folder (interop tests and the bench):
# age, age-keygen, age-inspect (tests/inspect_age.rs) and age-plugin-batchpass, one module.
AGE_BINS := $(GOBIN)/age $(GOBIN)/age-keygen $(GOBIN)/age-inspect $(GOBIN)/age-plugin-batchpass
age: $(AGE_BINS)
$(AGE_BINS) &:
	@mkdir -p $(GOBIN) $(AGE_CACHE)
	@[ -x $(AGE_CACHE)/age-plugin-batchpass ] || GOBIN=$(AGE_CACHE) GOFLAGS=-mod=mod go install filippo.io/age/cmd/...@$(AGE_VERSION)
	for b in $(notdir $(AGE_BINS)); do ln -sfn $(AGE_CACHE)/$$b $(GOBIN)/$$b; done

# age's own test plugin for tag recipients (its fixed software keys open age1tag1/age1tagpq1
# files: tests/age_tag.rs), from the same age module.
tag-plugin: $(GOBIN)/age-plugin-tagtest
$(GOBIN)/age-plugin-tagtest:
	@mkdir -p $(GOBIN) $(AGE_CACHE)
	@[ -x $(AGE_CACHE)/age-plugin-tagtest ] || GOBIN=$(AGE_CACHE) GOFLAGS=-mod=mod go install filippo.io/age/tag/internal/age-plugin-tagtest@$(AGE_VERSION)
	ln -sfn $(AGE_CACHE)/age-plugin-tagtest $@

# MinIO from the Go module proxy into the tools cache: about 10 minutes of CPU on 2 cores the
# first time on a machine (niced, so it never starves a build), then a link.
minio: $(GOBIN)/minio
$(GOBIN)/minio:
	@mkdir -p $(GOBIN) $(dir $(MINIO))
	@[ -x $(MINIO) ] || GOBIN=$(dir $(MINIO)) CGO_ENABLED=0 GOFLAGS=-trimpath nice -n 19 go install github.com/minio/minio@$(MINIO_VERSION)
	ln -sfn $(MINIO) $@

# rage from crates.io (optional peer; a long build, so only `make rage` or `make bench RAGE=1`).
rage: $(TOOLS)/cargo/bin/rage
$(TOOLS)/cargo/bin/rage:
	$(CARGO) install --locked --root $(TOOLS)/cargo rage

# ssh-keygen (Debian's openssh-client) makes the keys of the SSH interop tests (tests/age_ssh.rs).
ssh-keygen:
	@command -v ssh-keygen >/dev/null || (apt-get update && apt-get install -y --no-install-recommends openssh-client)

# A project venv with the pinned Python peers (pyca/cryptography for the c2sp-chunked interop test).
venv: $(VENV)/.installed
$(VENV)/.installed: requirements-test.txt
	$(PYTHON) -m venv $(VENV)
	$(VENV)/bin/pip install --quiet --disable-pip-version-check -r requirements-test.txt
	touch $@

# The one JSON file the c2sp tests read, checked against its pinned hash.
c2sp-vectors: $(TOOLS)/c2sp/vectors.json
$(TOOLS)/c2sp/vectors.json: | $(VENV)/.installed
	rm -rf $(TOOLS)/c2sp/dl && mkdir -p $(TOOLS)/c2sp/dl
	$(VENV)/bin/pip download --quiet --disable-pip-version-check --no-deps --only-binary=:all: \
		-d $(TOOLS)/c2sp/dl $(C2SP_VECTORS_PKG)
	$(VENV)/bin/python -c "import glob, zipfile; \
		z = zipfile.ZipFile(glob.glob('$(TOOLS)/c2sp/dl/*.whl')[0]); \
		open('$@.tmp', 'wb').write(z.read('cryptography_vectors/chunked-encryption/vectors.json'))"
	echo "$(C2SP_VECTORS_SHA256)  $@.tmp" | sha256sum -c --quiet
	mv $@.tmp $@ && rm -rf $(TOOLS)/c2sp/dl

tools: age tag-plugin ssh-keygen test-plugin venv c2sp-vectors

# The `hyperseal` Python package (bindings/python, PyO3 stable ABI) built by maturin into the venv.
python: $(VENV)/.installed
	cd bindings/python && VIRTUAL_ENV=$(VENV) PATH="$(VENV)/bin:$$PATH" maturin develop --release --quiet

python-test: python minio
	$(VENV)/bin/python -m pytest -q bindings/python/tests

# A test plugin built on age's own filippo.io/age/plugin package (tests/age_plugin.rs).
TEST_PLUGIN := crates/hyperseal-cli/tests/plugin
test-plugin: $(GOBIN)/age-plugin-hstest
$(GOBIN)/age-plugin-hstest: $(TEST_PLUGIN)/main.go $(TEST_PLUGIN)/go.mod $(TEST_PLUGIN)/go.sum
	@mkdir -p $(GOBIN)
	cd $(TEST_PLUGIN) && GOFLAGS=-mod=mod go build -o $(GOBIN)/age-plugin-hstest .

# HYPERSEAL_REQUIRE_PEERS: a test whose real peer (age, openssl, the C2SP vectors…) is missing
# fails here instead of skipping with a note, as it may in a bare `cargo test`. `python` first:
# the bench's python table test (crates/hyperseal-bench/tests) needs the built package.
test: tools lint wasm-core wasm-deps python
	HYPERSEAL_REQUIRE_PEERS=1 $(CARGO) test --release --workspace
	@$(CARGO) run --release -q -p sm4-simd --example backends
	$(MAKE) test-portable
	@if [ -f bindings/node/package.json ]; then $(MAKE) -C bindings/node test; fi
	$(MAKE) python-test
	$(MAKE) wasm-test

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
	  root=$(TOOLS_CACHE)/wasm-bindgen-cli/$(WASM_BINDGEN_VERSION); \
	  [ -x $$root/bin/wasm-bindgen ] || $(CARGO) install --locked --root $$root wasm-bindgen-cli --version $(WASM_BINDGEN_VERSION) \
	  || $(CARGO) install --root $$root wasm-bindgen-cli --version $(WASM_BINDGEN_VERSION); \
	  mkdir -p $(TOOLS)/cargo/bin && ln -sfn $$root/bin/wasm-bindgen $(WASM_BINDGEN); fi

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
	HYPERSEAL_REQUIRE_PEERS=1 $(CARGO) test --release -p hyperseal --features portable
	$(CARGO) test --release -p hyperseal-toolkit --features portable --lib --test wycheproof --test sign_portable

# The Node addon, for the bench's `node` table (skipped with a note if npm is missing or fails).
node-addon:
	-@if command -v npm >/dev/null && [ -f bindings/node/package.json ]; then $(MAKE) -C bindings/node build; fi

# The WebAssembly build, its npm packages (playwright-core, esbuild, the benchmark's peers) and
# Chromium: for the browser tests and the bench's `browser` table. `make bench` goes on without
# them (the table is then a note); `make test` requires them.
wasm-deps: wasm chromium
	$(MAKE) -C bindings/wasm node_modules/.installed
wasm-bench:
	-@$(MAKE) wasm-deps

# The Python package and its peers (pyca/cryptography, pyrage) for the `python` table; a failed
# build leaves the table as a note, as for node and browser.
python-bench:
	-@$(MAKE) python

bench: bench-build age node-addon wasm-bench python-bench $(if $(RAGE),rage)
	PATH="$(GOBIN):$(TOOLS)/cargo/bin:$$PATH" ./target/release/hyperseal-bench $(BENCH_ARGS) --out bench-report

# Fuzzing (libFuzzer through cargo-fuzz, nightly Rust): the targets are fuzz/fuzz_targets, their
# bodies crates/hyperseal-fuzz; `make test` replays fuzz/corpus on stable. New inputs go to
# fuzz/work (not committed); `make fuzz-cmin` folds what adds coverage into fuzz/corpus.
FUZZ_SECONDS ?= 180
FUZZ_TARGETS ?= header armor stanza decrypt token keys checklist plugin part_key armor_push opener \
	ssh_key ssh_recipient identity_file c2sp
CARGO_FUZZ := $(TOOLS)/cargo/bin/cargo-fuzz
# Every input runs within 256 MiB of RSS, no single allocation of 64 MiB or more, and 5 s: a
# memory blow-up or a hang is a finding (an artifact in fuzz/artifacts/TARGET), not a pass.
# ASan's quarantine of freed memory is kept small so that it does not count against the RSS
# limit. Debug assertions on: integer overflow panics instead of wrapping.
FUZZ_LIMITS := -rss_limit_mb=256 -malloc_limit_mb=64 -timeout=5
FUZZ_ENV := PATH="$(TOOLS)/cargo/bin:$$PATH" ASAN_OPTIONS=quarantine_size_mb=16
FUZZ_RUN := nice -n 19 cargo +nightly fuzz run --debug-assertions

fuzz-tools: $(CARGO_FUZZ)
	@rustup toolchain list | grep -q '^nightly' || rustup toolchain install nightly --profile minimal
$(CARGO_FUZZ):
	@root=$(TOOLS_CACHE)/cargo-fuzz/$(CARGO_FUZZ_VERSION); mkdir -p $(dir $@); \
	  [ -x $$root/bin/cargo-fuzz ] || $(CARGO) install --locked --root $$root cargo-fuzz --version $(CARGO_FUZZ_VERSION); \
	  ln -sfn $$root/bin/cargo-fuzz $@

fuzz: fuzz-tools
	@set -e; cd fuzz; for t in $(FUZZ_TARGETS); do \
	  mkdir -p work/$$t; \
	  echo "== fuzz $$t for $(FUZZ_SECONDS) s"; \
	  $(FUZZ_ENV) $(FUZZ_RUN) $$t work/$$t corpus/$$t -- \
	    $(FUZZ_LIMITS) -max_total_time=$(FUZZ_SECONDS) -print_final_stats=1; \
	done

fuzz-cmin: fuzz-tools
	@set -e; cd fuzz; for t in $(FUZZ_TARGETS); do \
	  rm -rf work/min && mkdir -p work/min work/$$t; \
	  $(FUZZ_ENV) $(FUZZ_RUN) $$t work/min corpus/$$t work/$$t -- $(FUZZ_LIMITS) -merge=1; \
	  rm -rf corpus/$$t && mv work/min corpus/$$t; \
	done

fmt:
	$(CARGO) fmt --all

clippy: lint

# Formatting and clippy with warnings denied, part of `make test`. The Node addon is linted
# without test targets: its napi exports only register inside a running node process.
lint:
	$(CARGO) fmt --all --check
	$(CARGO) clippy --release --workspace --all-targets --exclude hyperseal-node -- -D warnings
	$(CARGO) clippy --release -p hyperseal-node -- -D warnings

clean:
	$(CARGO) clean
	rm -rf bench-report

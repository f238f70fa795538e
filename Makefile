# hyperseal — two commands on a fresh clone:
#   make bench   build in release mode, install the peers it can, run the benchmark report
#   make test    every test, all languages (installs what it needs first)
#   make fuzz    every fuzz target for FUZZ_SECONDS each (installs nightly and cargo-fuzz first)
SHELL := /bin/bash
TOOLS := $(CURDIR)/.tools
GOBIN := $(TOOLS)/bin
AGE_VERSION := v1.3.1
CARGO ?= cargo
BENCH_ARGS ?= --quick

.PHONY: all build test bench tools age ssh-keygen test-plugin rage node-addon clean fmt clippy lint fuzz fuzz-tools fuzz-cmin

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

# ssh-keygen (Debian's openssh-client) makes the keys of the SSH interop tests (tests/age_ssh.rs).
ssh-keygen:
	@command -v ssh-keygen >/dev/null || (apt-get update && apt-get install -y --no-install-recommends openssh-client)

# A test plugin built on age's own filippo.io/age/plugin package (tests/age_plugin.rs).
TEST_PLUGIN := crates/hyperseal-cli/tests/plugin
test-plugin: $(GOBIN)/age-plugin-hstest
$(GOBIN)/age-plugin-hstest: $(TEST_PLUGIN)/main.go $(TEST_PLUGIN)/go.mod $(TEST_PLUGIN)/go.sum
	@mkdir -p $(GOBIN)
	cd $(TEST_PLUGIN) && GOFLAGS=-mod=mod go build -o $(GOBIN)/age-plugin-hstest .

tools: age ssh-keygen test-plugin

test: tools lint
	$(CARGO) test --release --workspace
	@if [ -f bindings/node/package.json ]; then $(MAKE) -C bindings/node test; fi

# The Node addon, for the bench's `node` table (skipped with a note if npm is missing or fails).
node-addon:
	-@if command -v npm >/dev/null && [ -f bindings/node/package.json ]; then $(MAKE) -C bindings/node build; fi

bench: build age node-addon $(if $(RAGE),rage)
	PATH="$(GOBIN):$(TOOLS)/cargo/bin:$$PATH" ./target/release/hyperseal bench $(BENCH_ARGS) --out bench-report

# Fuzzing (libFuzzer through cargo-fuzz, nightly Rust): the targets are fuzz/fuzz_targets, their
# bodies crates/hyperseal-fuzz; `make test` replays fuzz/corpus on stable. New inputs go to
# fuzz/work (not committed); `make fuzz-cmin` folds what adds coverage into fuzz/corpus.
FUZZ_SECONDS ?= 180
FUZZ_TARGETS ?= header armor stanza decrypt token keys checklist
CARGO_FUZZ := $(TOOLS)/cargo/bin/cargo-fuzz
FUZZ_ENV := PATH="$(TOOLS)/cargo/bin:$$PATH"

fuzz-tools: $(CARGO_FUZZ)
	@rustup toolchain list | grep -q '^nightly' || rustup toolchain install nightly --profile minimal
$(CARGO_FUZZ):
	$(CARGO) install --locked --root $(TOOLS)/cargo cargo-fuzz

fuzz: fuzz-tools
	@set -e; cd fuzz; for t in $(FUZZ_TARGETS); do \
	  mkdir -p work/$$t; \
	  echo "== fuzz $$t for $(FUZZ_SECONDS) s"; \
	  $(FUZZ_ENV) nice -n 15 cargo +nightly fuzz run $$t work/$$t corpus/$$t -- \
	    -max_total_time=$(FUZZ_SECONDS) -print_final_stats=1; \
	done

fuzz-cmin: fuzz-tools
	@set -e; cd fuzz; for t in $(FUZZ_TARGETS); do \
	  rm -rf work/min && mkdir -p work/min work/$$t; \
	  $(FUZZ_ENV) nice -n 15 cargo +nightly fuzz run $$t work/min corpus/$$t work/$$t -- -merge=1; \
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

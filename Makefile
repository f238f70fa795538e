# hyperseal — two commands on a fresh clone:
#   make bench   build in release mode, install the peers it can, run the benchmark report
#   make test    every test, all languages (installs what it needs first)
SHELL := /bin/bash
TOOLS := $(CURDIR)/.tools
GOBIN := $(TOOLS)/bin
AGE_VERSION := v1.3.1
CARGO ?= cargo
BENCH_ARGS ?= --quick

.PHONY: all build bench-build test bench tools age rage node-addon clean fmt clippy

all: build

build:
	$(CARGO) build --release -p hyperseal-cli

# The benchmark is its own binary (crates/hyperseal-bench), never part of the shipped `hyperseal`;
# it measures the `hyperseal` built next to it in target/release.
bench-build:
	$(CARGO) build --release -p hyperseal-cli -p hyperseal-bench

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

test: tools
	$(CARGO) test --release --workspace
	@if [ -f bindings/node/package.json ]; then $(MAKE) -C bindings/node test; fi

# The Node addon, for the bench's `node` table (skipped with a note if npm is missing or fails).
node-addon:
	-@if command -v npm >/dev/null && [ -f bindings/node/package.json ]; then $(MAKE) -C bindings/node build; fi

bench: bench-build age node-addon $(if $(RAGE),rage)
	PATH="$(GOBIN):$(TOOLS)/cargo/bin:$$PATH" ./target/release/hyperseal-bench $(BENCH_ARGS) --out bench-report

fmt:
	$(CARGO) fmt --all

clippy:
	$(CARGO) clippy --workspace --all-targets

clean:
	$(CARGO) clean
	rm -rf bench-report

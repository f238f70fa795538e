# hyperseal — two commands on a fresh clone:
#   make bench   build in release mode, install the peers it can, run the benchmark report
#   make test    every test, all languages (installs what it needs first)
SHELL := /bin/bash
TOOLS := $(CURDIR)/.tools
GOBIN := $(TOOLS)/bin
AGE_VERSION := v1.3.1
CARGO ?= cargo
VENV := $(TOOLS)/venv
PYTHON ?= python3
# pyca's C2SP chunked-encryption vectors (SHA-256 instantiation) ship in its vectors package.
C2SP_VECTORS_PKG := cryptography_vectors==50.0.2
C2SP_VECTORS_SHA256 := 99e0330ddfe2df9d80572f672767d77614b3d4ad356658bb9bd7c2a2e6c9b9d6
BENCH_ARGS ?= --quick

.PHONY: all build test bench tools age rage venv c2sp-vectors python python-test node-addon clean fmt clippy

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

tools: age venv c2sp-vectors

# The `hyperseal` Python package (bindings/python, PyO3 stable ABI) built by maturin into the venv.
python: $(VENV)/.installed
	cd bindings/python && VIRTUAL_ENV=$(VENV) PATH="$(VENV)/bin:$$PATH" maturin develop --release --quiet

python-test: python
	$(VENV)/bin/python -m pytest -q bindings/python/tests

test: tools
	$(CARGO) test --release --workspace
	@if [ -f bindings/node/package.json ]; then $(MAKE) -C bindings/node test; fi

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

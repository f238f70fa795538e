# The Rust `age` crate's drop-in (crates/hyperseal-age, docs/RUST.md): its tests, the age 0.12.1
# crate's own integration tests run against it, rage 0.12.1 built unchanged against it and run
# with the real age v1.3.1, and the `rust-age` bench table's two programs.
# Included by the Makefile; BENCH_DEPS is appended to there.
#
# The real age 0.12.1 pins kem =0.3.0-pre.0 (through ml-kem 0.2) and the core needs kem 0.3.0,
# so nothing here builds in the workspace: each scratch crate under target/age-crate has its own
# [workspace] and lock. Their target directory is a per-user cache (the registry crates are
# built once per machine); hyperseal itself is a path dependency, which cargo rebuilds whenever
# the clone's sources change, and per clone path.
.PHONY: age-crate-test age-crate-bench age-crate-src age-crate-rage
BENCH_DEPS += age-crate-bench

AGE_CRATE_VERSION := 0.12.1
# Every feature of hyperseal-age, on in the workspace's test and lint builds (the Makefile's
# cargo-test and lint), so its own tests run there with the rest, in the same build.
AGE_CRATE_FEATURES := hyperseal-age/armor,hyperseal-age/ssh,hyperseal-age/plugin,hyperseal-age/cli-common,hyperseal-age/async
AGE_CRATE_DIR := $(CURDIR)/target/age-crate
AGE_CRATE_TARGET := $(TOOLS_CACHE)/age-crate/target
AGE_CRATE_PEER := $(CURDIR)/crates/hyperseal-age/peer
AGE_SHIM := $(CURDIR)/crates/hyperseal-age/age
AGE_CRATE_CARGO = cd $(1) && CARGO_TARGET_DIR=$(AGE_CRATE_TARGET) $(CARGO)
# age's tests and rage share that target directory and build at one setting (the Makefile's
# TOOL_INSTALL: opt-level 1, no LTO), so the core, aws-lc and the registry crates they have in
# common are compiled once for both. The bench's programs keep the release profile.
AGE_CRATE_TEST_CARGO = cd $(1) && CARGO_TARGET_DIR=$(AGE_CRATE_TARGET) CARGO_PROFILE_RELEASE_OPT_LEVEL=1 CARGO_PROFILE_RELEASE_LTO=false $(CARGO)

# The scratch crate of a peer template: $(1) template folder, $(2) scratch name, $(3) package name.
define age-crate-scratch
	@mkdir -p $(AGE_CRATE_DIR)/$(2)
	sed -e 's|@AGE_SHIM@|$(AGE_SHIM)|' -e 's|@NAME@|$(3)|' $(AGE_CRATE_PEER)/$(1)/Cargo.toml > $(AGE_CRATE_DIR)/$(2)/Cargo.toml
endef

# The real age program of the bench, which also pins the registry crate whose tests/ folder
# (with the CCTV test kit) the tests copy: `cargo metadata` says where cargo unpacked it.
age-crate-src:
	$(call age-crate-scratch,copy-bench,copy-real,age-copy-real)
	cp $(AGE_CRATE_PEER)/copy-bench/main.rs $(AGE_CRATE_DIR)/copy-real/
	$(call AGE_CRATE_CARGO,$(AGE_CRATE_DIR)/copy-real) metadata -q --format-version 1 \
	  | python3 -c 'import json,sys; print(next(p["manifest_path"] for p in json.load(sys.stdin)["packages"] if p["name"] == "age" and p["version"] == "$(AGE_CRATE_VERSION)"))' \
	  > $(AGE_CRATE_DIR)/age-manifest

# age 0.12.1's own tests against the crate, then rage built against it and run with the real
# age. (The crate's own tests, whose peers are age v1.3.1, its tag test plugin and
# age-plugin-hstest, run in the workspace stage with every feature: AGE_CRATE_FEATURES.)
age-crate-test: age-crate-src age tag-plugin test-plugin ssh-keygen
	$(call age-crate-scratch,age-tests,age-tests,age-crate-tests)
	: > $(AGE_CRATE_DIR)/age-tests/lib.rs
	rm -rf $(AGE_CRATE_DIR)/age-tests/tests && cp -r "$$(dirname "$$(cat $(AGE_CRATE_DIR)/age-manifest)")/tests" $(AGE_CRATE_DIR)/age-tests/tests
	$(call AGE_CRATE_TEST_CARGO,$(AGE_CRATE_DIR)/age-tests) test --release
	$(MAKE) age-crate-rage
	bash $(AGE_CRATE_PEER)/rage-interop.sh $(AGE_CRATE_DIR)/rage/bin $(GOBIN) $(CURDIR)/crates/hyperseal/tests/data \
	  $(CURDIR)/crates/hyperseal-cli/tests/pty_run.py

# rage 0.12.1 from crates.io, unchanged, with its `age` dependency patched to this clone's
# hyperseal-age. --force: the installed rage is rebuilt whenever the clone's sources changed
# (cargo install would otherwise keep a rage of the same version); the cached target directory
# makes that a relink. At opt-level 1, as the Makefile's other tools from crates.io, and in the
# target directory of age's tests above.
age-crate-rage:
	$(TOOL_INSTALL) --force rage --version 0.12.1 --root $(AGE_CRATE_DIR)/rage --target-dir $(AGE_CRATE_TARGET) \
	  --config 'patch.crates-io.age.path="$(AGE_SHIM)"'

# The bench's two programs: one source, against age 0.12.1 and, through the age package's
# [patch.crates-io], against hyperseal-age; linked where the bench looks (.tools/age-crate/bin).
age-crate-bench: age-crate-src
	$(call age-crate-scratch,copy-bench,copy-hyperseal,age-copy-hyperseal)
	cp $(AGE_CRATE_PEER)/copy-bench/main.rs $(AGE_CRATE_DIR)/copy-hyperseal/
	printf '\n[patch.crates-io]\nage = { path = "%s" }\n' "$(AGE_SHIM)" >> $(AGE_CRATE_DIR)/copy-hyperseal/Cargo.toml
	$(call AGE_CRATE_CARGO,$(AGE_CRATE_DIR)/copy-real) build --release -q
	$(call AGE_CRATE_CARGO,$(AGE_CRATE_DIR)/copy-hyperseal) build --release -q
	@# The patch took: the program's age is the one in this clone.
	$(call AGE_CRATE_CARGO,$(AGE_CRATE_DIR)/copy-hyperseal) tree -q -e normal -i age | grep -q "$(AGE_SHIM)"
	mkdir -p $(TOOLS)/age-crate/bin
	for v in real hyperseal; do ln -sfn $(AGE_CRATE_TARGET)/release/age-copy-$$v $(TOOLS)/age-crate/bin/age-copy-$$v; done

# The `backup` bench table's peers (crates/hyperseal-bench/src/backup.rs): restic 0.14 and borg
# 1.2.4 from Debian, rustic and bupstash from crates.io into the tools cache; and MinIO with mc, which the
# backup crate's S3 tests use. A peer that fails to install is a note in the table, so each
# install here may fail without stopping `make bench`.
# Included by the Makefile; BENCH_DEPS is appended to there.
.PHONY: backup-bench-peers rustic bupstash
BENCH_DEPS += backup-bench-peers

RUSTIC_VERSION := 0.11.4
RUSTIC_CACHE := $(TOOLS_CACHE)/rustic/$(RUSTIC_VERSION)
BUPSTASH_VERSION := 0.12.0
BUPSTASH_CACHE := $(TOOLS_CACHE)/bupstash/$(BUPSTASH_VERSION)

backup-bench-peers: minio mc
	-@command -v restic >/dev/null && command -v borg >/dev/null || { apt-get update -qq && \
	  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends restic borgbackup; }
	-@$(MAKE) -s rustic
	-@$(MAKE) -s bupstash

# rustic is a large build (about 15 minutes on 2 cores, once per machine), niced; a measured
# peer, so with its own release profile (not the helpers' opt-level 1).
rustic: $(GOBIN)/rustic
$(GOBIN)/rustic:
	@mkdir -p $(GOBIN)
	@[ -x $(RUSTIC_CACHE)/bin/rustic ] || nice -n 19 $(CARGO) install --locked --root $(RUSTIC_CACHE) rustic-rs --version $(RUSTIC_VERSION)
	ln -sfn $(RUSTIC_CACHE)/bin/rustic $@

# bupstash links Debian's libsodium (pkg-config finds it).
bupstash: $(GOBIN)/bupstash
$(GOBIN)/bupstash:
	@mkdir -p $(GOBIN)
	@dpkg -s libsodium-dev pkg-config >/dev/null 2>&1 || { apt-get update -qq && \
	  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends libsodium-dev pkg-config; }
	@[ -x $(BUPSTASH_CACHE)/bin/bupstash ] || nice -n 19 $(CARGO) install --locked --root $(BUPSTASH_CACHE) bupstash --version $(BUPSTASH_VERSION)
	ln -sfn $(BUPSTASH_CACHE)/bin/bupstash $@

# `hyperseal git`: its peers (git-crypt, for the tests and the bench's git table) and its tests.
# Included by the Makefile; TEST_TOOLS and BENCH_DEPS are appended to there.
.PHONY: git-test git-tools
TEST_TOOLS += git-tools

# Debian's git: the scripted repositories of crates/hyperseal-cli/tests/git_*.rs run it (under
# HYPERSEAL_REQUIRE_PEERS a missing git fails them instead of skipping).
git-tools:
	@command -v git >/dev/null || { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends git; }

# The git tests also run in the workspace stage; this stage runs them alone, so a failure of the
# filter shows under its own name in the stage report. `--workspace`, not `-p hyperseal-cli`: the
# same feature set as the workspace stage, so nothing is rebuilt (a few seconds).
git-test: git-tools age
	HYPERSEAL_REQUIRE_PEERS=1 $(CARGO) test --release --workspace --test suite -- git_

# `hyperseal git`: its peers (git-crypt, for the tests and the bench's git table) and its tests.
# Included by the Makefile; TEST_TOOLS and BENCH_DEPS are appended to there.
.PHONY: git-test git-tools
TEST_TOOLS += git-tools
# The bench's `git` table measures against git-crypt and plain git.
BENCH_DEPS += git-tools

# Debian's git: the scripted repositories of crates/hyperseal-cli/tests/git_*.rs run it (under
# HYPERSEAL_REQUIRE_PEERS a missing git fails them instead of skipping). Debian's git-crypt
# (0.7.0), the peer of the bench's `git` table. Each is installed only when missing.
git-tools:
	@command -v git >/dev/null || { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends git; }
	@command -v git-crypt >/dev/null || { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends git-crypt; }

# The git tests alone (`make test` runs them in its workspace stage, with every other test).
git-test: git-tools age
	HYPERSEAL_REQUIRE_PEERS=1 $(CARGO) test --release -p hyperseal-cli --test suite -- git_

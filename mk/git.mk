# `hyperseal git`: its peers (git-crypt, for the tests and the bench's git table) and its tests.
# Included by the Makefile; TEST_TOOLS and BENCH_DEPS are appended to there.
.PHONY: git-test
git-test:

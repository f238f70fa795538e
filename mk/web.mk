# hyperseal web (the offline page): `make web` builds it into target/web/; its browser tests.
# Included by the Makefile; BENCH_DEPS is appended to there.
.PHONY: web web-test
web:
web-test:

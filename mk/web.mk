# hyperseal web (the offline page): `make web` builds it into target/web/; its browser tests.
# Included by the Makefile; BENCH_DEPS is appended to there.
#
# The page's sources are bindings/wasm/web/ (its own files and build.sh); the build adds the
# browser package's modules and WebAssembly from bindings/wasm (`make wasm`), docs/WEB.md, and
# the service worker's list of files, and writes target/web/SHA256SUMS (docs/WEB.md says how to
# check a copy against it).
.PHONY: web web-test
WEB_OUT := $(CURDIR)/target/web

web: wasm
	bash bindings/wasm/web/build.sh $(WEB_OUT)

# The page in headless Chromium, found by role and name as a screen reader finds it: files it
# writes opened by the real age (.tools/bin/age), age's files opened by it, passkeys on
# Chromium's virtual authenticator against typage, failures leaving nothing, offline reloads
# and no request beyond its own files. WEB_LARGE=1 adds the 4 GiB round trip from disk.
# Each file within a deadline, as the package's tests (bindings/wasm/Makefile); the 4 GiB round
# trip gets two hours.
WEB_DEADLINE_MS = $(if $(WEB_LARGE),7200000,600000)
web-test: web wasm-deps age
	cd bindings/wasm && node --test --test-concurrency=1 --test-timeout=$(WEB_DEADLINE_MS) --test-force-exit web/test/*.test.mjs

# docs/web.png (the README's and docs/WEB.md's picture), taken by the tests' tooling.
.PHONY: web-screenshot
web-screenshot: web wasm-deps age
	cd bindings/wasm && node web/test/screenshot.mjs

# The web app's bench (bindings/wasm/web/bench.mjs): 1 GiB from disk through the app's buttons
# and through a page on typage's own streams, MB/s and the renderers' peak memory
# (WEB_BENCH_ARGS=--quick: 64 MiB). `make bench` runs it as its `webapp` table; there a page that
# does not build leaves the table as a note, as for the `browser` table.
.PHONY: web-bench web-bench-deps
web-bench: web wasm-deps age
	cd bindings/wasm && node web/bench.mjs $(WEB_BENCH_ARGS) --json $(CURDIR)/target/web-bench.json
web-bench-deps:
	-@$(MAKE) web
BENCH_DEPS += web-bench-deps

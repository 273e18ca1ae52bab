# Strata — set-up, build, test and benchmark entry points.
# `make test` and `make bench` install the Debian packages they need first.

SWIFT ?= swift
DEB_PACKAGES := libzstd-dev libjemalloc-dev libsqlite3-dev libpq-dev pkg-config
# pkg-config modules that prove the -dev packages are usable.
PKG_MODULES := libzstd jemalloc sqlite3 libpq
# Elsewhere (macOS): SQLite comes with the system, without a pkg-config file.
OTHER_PKG_MODULES := libzstd jemalloc libpq


.PHONY: test-optimized
.PHONY: all deps build test bench docs lint format perf-gate perf-thresholds clean

all: build

# Installs the system libraries only when one is missing; runs as root
# without prompting (uses sudo when not root and sudo exists).
deps:
	@if ! command -v dpkg-query >/dev/null 2>&1; then \
	    for m in $(OTHER_PKG_MODULES); do \
	        pkg-config --exists $$m || { echo "make deps: install $$m first (macOS: brew install zstd jemalloc libpq pkg-config, and put libpq on PKG_CONFIG_PATH (SQLite comes with macOS))" >&2; exit 1; }; \
	    done; \
	    exit 0; \
	fi; \
	missing=""; \
	for p in $(DEB_PACKAGES); do \
	    dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q "install ok installed" || missing="$$missing $$p"; \
	done; \
	if [ -n "$$missing" ]; then \
	    echo "make deps: installing$$missing"; \
	    if [ "$$(id -u)" -eq 0 ]; then SUDO=""; else SUDO="sudo"; fi; \
	    $$SUDO apt-get update -qq && \
	    DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq --no-install-recommends $$missing; \
	fi; \
	for m in $(PKG_MODULES); do \
	    pkg-config --exists $$m || { echo "make deps: pkg-config cannot find $$m" >&2; exit 1; }; \
	done

build: deps
	$(SWIFT) build

# Every suite runs once. The suites of StrataPostgres run in a debug build
# of their own (STRATA_POSTGRES_ONLY=1: without the core's tests, the
# `strata` command and the bench runner, which the optimized builds compile),
# beside a server: Tests/postgres/with-server.sh installs PostgreSQL when
# missing, starts a throwaway cluster for the run and removes it afterwards,
# also when a test fails. The core's suites (collections, engine, store,
# `strata`) run optimized under AddressSanitizer (`test-optimized`), which
# catches what the debug build would and more; running them in both builds
# doubled CI's time. That debug build carries no debug information
# (DEBUG_FLAGS), and `make docs` builds with the same flags, so that the
# debug objects of Strata and PersistentCollections serve both.
DEBUG_FLAGS := -debug-info-format none
test: deps
	STRATA_POSTGRES_ONLY=1 $(SWIFT) build --build-tests $(DEBUG_FLAGS)
	STRATA_POSTGRES_ONLY=1 ./Tests/postgres/with-server.sh $(SWIFT) test --skip-build $(DEBUG_FLAGS) --filter StrataPostgresTests
	$(MAKE) test-optimized

# Every test again as the code ships: optimized, under AddressSanitizer, with
# the collections' invariants checked inside every mutation
# (STRATA_INTERNAL_CHECKS=1, see Package.swift). The
# collections' unsafe node storage and the decoders that feed it untrusted
# bytes show lifetime bugs (a node freed while a pointer into it is still in
# use) only once the optimizer shortens lifetimes; the store's C calls
# (readdir, zstd, file I/O) overrun only in some runs, which ASan turns into
# a failure every time.
test-optimized: deps
	STRATA_CORE_ONLY=1 STRATA_INTERNAL_CHECKS=1 STRATA_SANITIZED=1 $(SWIFT) build -c release --build-tests --sanitize=address --scratch-path .build-asan
	STRATA_CORE_ONLY=1 STRATA_INTERNAL_CHECKS=1 STRATA_SANITIZED=1 LSAN_OPTIONS=suppressions=$(CURDIR)/Tests/lsan-suppressions.txt $(SWIFT) test -c release --skip-build --sanitize=address --scratch-path .build-asan --filter "PersistentCollectionsTests|StrataTests"

# The `cli` scenario runs the `strata` binary built beside the runner, the
# `cluster` scenario `strata-cluster-bench` beside a throwaway PostgreSQL
# server (installed when missing, removed afterwards).
bench: deps
	$(SWIFT) build -c release --product strata
	$(SWIFT) build -c release --product strata-cluster-bench
	./Tests/postgres/with-server.sh $(SWIFT) run -c release bench $(BENCH_ARGS)

# The DocC catalogs of Strata and PersistentCollections, into .build/docs.
# Their code examples are the package's snippets (Snippets/), which every
# build compiles; a broken link or symbol reference fails the build. Built
# with `make test`'s DEBUG_FLAGS, whose debug objects it reuses.
DOCS_DIR := $(CURDIR)/.build/docs
docs: deps
	@mkdir -p $(DOCS_DIR)
	for target in Strata PersistentCollections; do \
	    $(SWIFT) package $(DEBUG_FLAGS) --allow-writing-to-directory $(DOCS_DIR) generate-documentation \
	        --target $$target --output-path $(DOCS_DIR)/$$target.doccarchive --warnings-as-errors || exit 1; \
	done
	@echo "documentation: $(DOCS_DIR)/Strata.doccarchive, $(DOCS_DIR)/PersistentCollections.doccarchive"

lint:
	$(SWIFT) format lint --strict --recursive Package.swift Sources Tests Snippets Benchmarks

format:
	$(SWIFT) format --in-place --recursive Package.swift Sources Tests Snippets Benchmarks

# Performance gates: malloc-count thresholds (ordo-one/benchmark) and
# same-run ratio floors from the bench runner. No absolute wall-clock limits.
perf-gate: deps
	SWIFT=$(SWIFT) ./perf/gate.sh

clean:
	rm -rf .build .build-asan Benchmarks/.build

# Re-records the malloc-count thresholds after an intended change.
perf-thresholds:
	SWIFT_DETERMINISTIC_HASHING=1 STRATA_MALLOC_GATES=1 $(SWIFT) package --allow-writing-to-package-directory \
	    benchmark thresholds update --path Benchmarks/Thresholds --no-progress

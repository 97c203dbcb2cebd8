# MediaKit: the commands of the README. `make` alone prints this help.
#
# Variables (override on the command line, e.g. `make test SCRATCH_PATH=.build-ci`):
#   SWIFT         the swift driver                        (default: swift on PATH, else /opt/swift)
#   SWIFT_FLAGS   extra flags for `swift build` / `swift test` (default: none)
#   SCRATCH_PATH  SwiftPM build folder                    (default: .build)
#   PYTHON        the python that runs the oracle suite   (default: python3)

SHELL := /bin/bash
.DEFAULT_GOAL := help

SWIFT ?= $(or $(shell command -v swift 2>/dev/null),/opt/swift/usr/bin/swift)
SWIFT_FLAGS ?=
SCRATCH_PATH ?= .build
# Oracle-suite workers (pytest-xdist): one per core by default.
TEST_JOBS ?= auto
PYTHON ?= python3

# Swift lives in /opt/swift on our machines; make it reachable without set-up.
export PATH := $(PATH):/opt/swift/usr/bin

# Release binaries: the samples are benchmarked and used on real files.
# Recursively expanded, so it is only computed when a recipe needs it.
BIN = $(shell $(SWIFT) build -c release --scratch-path $(SCRATCH_PATH) --show-bin-path)

# `make test` builds once, in release with testability (`-enable-testing`, which the unit
# tests' @testable imports need), in its own folder: the unit tests, the oracle suite and the
# Python tests all run that one build. The binaries `make build` ships and benchmarks are
# built without testability (it keeps internal symbols visible and costs some optimization).
TEST_SCRATCH ?= $(SCRATCH_PATH)-test
TEST_BUILD = -c release -Xswiftc -enable-testing --scratch-path $(TEST_SCRATCH) $(SWIFT_FLAGS)
TEST_BIN = $(shell $(SWIFT) build $(TEST_BUILD) --show-bin-path)

PREFIX ?= /usr/local
# The one version: MediaKitVersion.string in Sources/MediaKit/Core/Version.swift (mk_version(), the
# plugins' mk_host.version). The soname, mediakit.pc, the .debs and the wheel take it from there.
VERSION := $(shell sed -n 's/^ *public static let string = "\([0-9][0-9.]*\)".*/\1/p' Sources/MediaKit/Core/Version.swift)
ifeq ($(VERSION),)
$(error cannot read the version from Sources/MediaKit/Core/Version.swift (public static let string = "X.Y.Z"))
endif
MAJOR := $(firstword $(subst ., ,$(VERSION)))

.PHONY: help deps build demo test sanitize fuzz bench install deb wheel abi-check abi-baseline version clean distclean

help:
	@echo 'MediaKit'
	@echo '  make demo    build, then decode Samples/media/sample.mp4 to out/sample.pcm + out/sample.nv12 and probe it'
	@echo '  make test    build (release, with testability, in .build-test), then run `swift test`, the oracle suite (Tests/oracle, pytest), the Python'
	@echo '               bindings'"'"' tests and mypy --strict over the Python package, its tests and samples'
	@echo '  make sanitize  swift test under AddressSanitizer (leaks too), the threaded tests under ThreadSanitizer'
	@echo '  make fuzz SECONDS=N  build the libFuzzer targets of Tests/fuzz (ASan) and run each N seconds'
	@echo '               (default 60; TARGETS="mp4 ogg" for some); prints executions, coverage and findings per target'
	@echo '  make bench   build, then run every scripts/bench*.sh: mk-decode against ffmpeg (H.264/AAC 1080p)'
	@echo '               and against dav1d / ffmpeg libdav1d, libopus, libvorbis (AV1 720p, Opus, Vorbis), 10-bit HEVC -> NV12,'
	@echo '               remux against ffmpeg -c copy and cp, C API and Python (PyAV), Ray (mediakit.ray vs PyAV in Ray); writes BENCHMARKS.md'
	@echo '  make build   install missing Debian packages, then `swift build -c release`'
	@echo '  make deps    install missing Debian packages only (scripts/deps.sh)'
	@echo '  make install PREFIX=DIR  libmediakit.so.$(MAJOR), headers, plugins, the Swift runtime, tools and mediakit.pc under DIR'
	@echo '               (default /usr/local; DESTDIR= stages); FROM=BINDIR installs an existing build instead of building'
	@echo '  make deb     Debian packages in dist/ (libmediakit$(MAJOR), libmediakit-dev, mediakit-tools, mediakit-plugins-*); lintian where installed'
	@echo '  make wheel   dist/mediakit-$(VERSION)-py3-none-<platform>.whl: the Python bindings with the library, plugins, Swift runtime, mk-* tools'
	@echo '  make abi-check  the C ABI (exported symbols, struct layouts) against the newest Include/abi record'
	@echo '  make version  print the version (Sources/MediaKit/Core/Version.swift)'
	@echo '  make clean   remove the build folder, out/ and bench outputs (keeps the cached bench input)'
	@echo '  make distclean  clean, and remove bench-work/ entirely'

deps:
	@bash scripts/deps.sh

build: deps
	$(SWIFT) build -c release --scratch-path $(SCRATCH_PATH) $(SWIFT_FLAGS)

demo: build
	@mkdir -p out
	$(BIN)/mk-decode Samples/media/sample.mp4 --audio-out out/sample.pcm --video-out out/sample.nv12
	$(BIN)/mk-probe Samples/media/sample.mp4

# Every suite runs even if another fails, so one CI run reports everything; the target fails if
# any did. After the build, the unit tests (`swift test --parallel`: as many processes as there
# are cores), the oracle suite and the Python bindings' tests run side by side, each printing its
# report in that order when all are done. Run first, the unit tests' long single cases (the
# corruption suite, the hostile-value muxer test) kept one core idle for part of their ~70 s;
# beside the others they fill gaps. Measured on 2 cores (3 Dec 2026), the noise of a shared
# machine included: in turn 791, 918, 832 and 914 s, side by side 686, 759, 864 and 819 s
# (832, 819 and 914 s were one interleaved series: in turn, side by side, in turn).
# The build before the suites is the library, the plugins and the tools (what the oracle suite and
# the Python bindings run); the unit tests' own target (one whole-module compile on one core, ~70 s,
# after which the build's other core had nothing to do: vmstat, 4 Dec 2026) is built beside the
# suites, then they run. A `swift build --build-tests` after `swift build` with the same flags
# compiles and links only the test bundle: the tools the suites are running stay untouched.
# mypy needs no build: it runs beside the build (a core the build's whole-module steps leave
# idle), and its report is printed in its place at the end.
MYPY_LOG := $(TEST_SCRATCH)/mypy.log
# The Python bindings' tests run in one worker of their own (one worker holds the Ray tests'
# module; their ~90 s of CPU fill the gaps of the oracle suite's two workers).
PY_TEST_LOG := $(TEST_SCRATCH)/python-tests.log
UNIT_TEST_LOG := $(TEST_SCRATCH)/unit-tests.log
# The oracle suite's one test that needs no build of ours: a package that depends on MediaKit
# by version, built from the sources (a debug build of MediaKit, ~105 s of CPU). It runs beside
# the release build, on the core the build's whole-module optimization of MediaKit leaves idle
# for ~100 s (measured with vmstat, 4 Dec 2026), instead of in the oracle suite.
PACKAGE_TEST := Tests/oracle/test_package.py
PACKAGE_TEST_LOG := $(TEST_SCRATCH)/package-test.log
# Each test's time limit (pytest-timeout; the slowest, test_package, takes ~2 min): past it the
# worker prints every thread's stack and exits, the test fails and the run goes on (xdist starts
# a new worker), so a hang costs 10 minutes and names itself instead of taking CI's 90.
TEST_TIMEOUT := --timeout=600 --timeout-method=thread
test: deps
	@mkdir -p $(TEST_SCRATCH); (cd Bindings/python && $(PYTHON) -m mypy > $(abspath $(MYPY_LOG)) 2>&1; echo $$? >> $(abspath $(MYPY_LOG))) & mypy=$$!; \
	($(PYTHON) -m pytest -q -rsx $(TEST_TIMEOUT) -p no:xdist $(PACKAGE_TEST) > $(PACKAGE_TEST_LOG) 2>&1; \
	 echo $$? >> $(PACKAGE_TEST_LOG)) & package=$$!; \
	t=$$(date +%s); $(SWIFT) build $(TEST_BUILD) || { wait; exit 1; }; \
	echo "== build (library, plugins, tools): $$(( $$(date +%s) - t )) s"; wait $$mypy; \
	status=0; t=$$(date +%s); \
	echo '== unit tests (swift test), the oracle suite (Tests/oracle) and the Python bindings, side by side'; \
	({ $(SWIFT) build --build-tests $(TEST_BUILD) && $(SWIFT) test --skip-build --parallel $(TEST_BUILD); } \
	 > $(UNIT_TEST_LOG) 2>&1; echo $$? >> $(UNIT_TEST_LOG)) & unit=$$!; \
	(MK_BIN="$(TEST_BIN)" $(PYTHON) -m pytest -q -rsx $(TEST_TIMEOUT) -n 1 --dist loadfile Bindings/python/tests > $(PY_TEST_LOG) 2>&1; \
	 echo $$? >> $(PY_TEST_LOG)) & py=$$!; \
	echo '== oracle suite (Tests/oracle; $(PACKAGE_TEST) ran beside the build)'; \
	MK_BIN="$(TEST_BIN)" $(PYTHON) -m pytest -q -rsx $(TEST_TIMEOUT) --durations=20 -n $(TEST_JOBS) --dist loadgroup \
	  --ignore=$(PACKAGE_TEST) Tests/oracle || status=1; \
	wait $$unit $$py $$package; elapsed=$$(( $$(date +%s) - t )); \
	echo '== unit tests (their build, then swift test; run beside the oracle suite)'; \
	sed '$$d' $(UNIT_TEST_LOG); [ "$$(tail -n 1 $(UNIT_TEST_LOG))" = 0 ] || status=1; \
	echo '== Python bindings (Bindings/python/tests; run beside the oracle suite)'; \
	sed '$$d' $(PY_TEST_LOG); [ "$$(tail -n 1 $(PY_TEST_LOG))" = 0 ] || status=1; \
	echo '== mypy --strict (the mediakit package, its tests, Samples/python: Bindings/python/pyproject.toml; run beside the build)'; \
	sed '$$d' $(MYPY_LOG); [ "$$(tail -n 1 $(MYPY_LOG))" = 0 ] || status=1; \
	echo '== $(PACKAGE_TEST) (MediaKit as a versioned dependency; run beside the build)'; \
	sed '$$d' $(PACKAGE_TEST_LOG); [ "$$(tail -n 1 $(PACKAGE_TEST_LOG))" = 0 ] || status=1; \
	echo "== unit tests, oracle suite and Python bindings: $$elapsed s"; \
	exit $$status

# The C library as distributions ship one (scripts/package.py): lib/libmediakit.so.$(VERSION) with
# the soname libmediakit.so.$(MAJOR) and its links, the headers under include/mediakit, mediakit.pc,
# the plugins in lib/mediakit/plugins (where libmediakit and the tools look), the Swift runtime in
# lib/mediakit/swift and the mk-* tools in bin; every RUNPATH relative to $$ORIGIN (no /opt/swift,
# no checkout). DESTDIR= stages the install. With FROM=DIR it installs the binaries DIR holds
# instead of building (the oracle suite installs the build it tests this way).
FROM ?=
INSTALL_BIN = $(or $(FROM),$(BIN))
DESTDIR ?=
install: $(if $(FROM),,build)
	$(PYTHON) scripts/package.py install "$(INSTALL_BIN)" "$(PREFIX)" "$(DESTDIR)" $(VERSION)
	@echo "use: PKG_CONFIG_PATH=$(PREFIX)/lib/pkgconfig pkg-config --cflags --libs mediakit"

# Debian packages in dist/: libmediakit$(MAJOR), libmediakit-dev, mediakit-tools and one
# mediakit-plugins-NAME per plugin, Depends read from the system libraries' shlibs; lintian
# runs over them where it is installed (its findings are printed, they do not fail the target).
DIST ?= dist
LINTIAN ?= lintian
deb: $(if $(FROM),,build)
	$(PYTHON) scripts/package.py deb "$(INSTALL_BIN)" "$(DIST)" $(VERSION)
	@if [ -n "$(LINTIAN)" ] && command -v $(LINTIAN) >/dev/null; then echo '== lintian (a few minutes)'; \
	  $(LINTIAN) --tag-display-limit 0 $(DIST)/*_$(VERSION)_*.deb || true; \
	  else echo 'lintian not run (not installed, or LINTIAN= given)'; fi

# The Python wheel in dist/: the bindings with libmediakit, the plugins, the Swift runtime and the
# mk-* tools inside (RUNPATH $$ORIGIN), tagged with the glibc they need.
wheel: $(if $(FROM),,build)
	$(PYTHON) scripts/package.py wheel "$(INSTALL_BIN)" "$(DIST)" $(VERSION)

# The exported symbols and public struct layouts against the newest release's record
# (Include/abi): fails on a removed symbol or a changed layout, passes on additions.
ABI_BASELINE ?= $(shell ls Include/abi/mediakit-*.abi | sort -V | tail -n 1)
abi-check: $(if $(FROM),,build)
	$(PYTHON) scripts/abi.py check "$(INSTALL_BIN)/libmediakit.so" Include "$(ABI_BASELINE)"

# At a release, after bumping Version.swift: record its ABI (commit the file with the tag).
abi-baseline: $(if $(FROM),,build)
	$(PYTHON) scripts/abi.py write "$(INSTALL_BIN)/libmediakit.so" Include Include/abi/mediakit-$(MAJOR).$(word 2,$(subst ., ,$(VERSION))).abi

version:
	@echo $(VERSION)

# Sanitizers (issue 17; CI runs this after `make test`): every Swift test under AddressSanitizer
# (MediaKit, its C API and the plugins' C code instrumented; the real plugins decode in the
# corruption suite; leaks checked, Tests/sanitizers/lsan.supp names each cause outside our
# code), then the tests that decode on several threads under ThreadSanitizer. Each in its own
# build folder ($(SCRATCH_PATH)-asan, $(SCRATCH_PATH)-tsan). Both run the tests in one process per
# core (`--parallel`): one after another, the AddressSanitizer run alone was 26 minutes of one
# core on a slow machine while the other idled.
TSAN_TESTS ?= ConcurrentDecodeTests|Async
sanitize: deps
	LSAN_OPTIONS=suppressions=$(CURDIR)/Tests/sanitizers/lsan.supp:print_suppressions=0 MK_CASE_SECONDS=300 \
	  $(SWIFT) test --parallel --scratch-path $(SCRATCH_PATH)-asan --sanitize=address $(SWIFT_FLAGS)
	TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1 \
	  $(SWIFT) test --parallel --scratch-path $(SCRATCH_PATH)-tsan --sanitize=thread $(SWIFT_FLAGS) --filter '$(TSAN_TESTS)'

# libFuzzer targets (Tests/fuzz, its own package: never part of `make test`, which only replays
# the saved regressions). SECONDS is per target.
SECONDS ?= 60
fuzz:
	@SWIFT="$(SWIFT)" bash Tests/fuzz/run.sh $(SECONDS)

# Every scripts/bench*.sh, each writing its own section of BENCHMARKS.md.
bench: build
	@set -e; for s in $(filter-out scripts/bench_lib.sh,$(wildcard scripts/bench*.sh)); do echo "== $$s"; MK_BIN="$(BIN)" bash $$s; done

clean:
	rm -rf $(SCRATCH_PATH) $(SCRATCH_PATH)-asan $(SCRATCH_PATH)-tsan $(TEST_SCRATCH) out .pytest_cache Tests/oracle/__pycache__ \
	  Bindings/python/.mypy_cache
	rm -rf dist
	rm -f bench-work/*.nv12 bench-work/*.pcm bench-work/*.log

distclean: clean
	rm -rf bench-work

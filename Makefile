# Happy: `make run` and `make test` do all set-up on a fresh Debian machine (as root).
SHELL := /bin/bash
export PATH := /opt/swift/usr/bin:$(PATH)

CONFIG ?= config.json
SWIFT_BUILD_FLAGS ?=

.PHONY: all build release run test conformance fuzz clean help
FUZZ_RUNS ?= 100000

all: build

help:
	@echo "make run    install what is missing, build (release) and start happyserver on $(CONFIG)"
	@echo "make test   install what is missing, build and run every test"
	@echo "make conformance  the full Autobahn|Testsuite run: cases 1-10, and 12-13 with permessage-deflate (~17 min)"
	@echo "make fuzz   fuzz the wire codec and reducer until stopped (make test runs $(FUZZ_RUNS) inputs)"
	@echo "make clean  remove build products"

bootstrap-build:
	@scripts/bootstrap.sh build

bootstrap-test:
	@scripts/bootstrap.sh test

build: bootstrap-build
	swift build $(SWIFT_BUILD_FLAGS)

release: bootstrap-build
	swift build -c release $(SWIFT_BUILD_FLAGS)

run: release
	.build/release/happyserver --config $(CONFIG)

test: bootstrap-test
	swift build --build-tests $(SWIFT_BUILD_FLAGS)
	swift test --skip-build --filter HappyCoreTests
	swift test --skip-build --filter HappySQLiteTests
	swift test --skip-build --filter HappyServerTests
	scripts/fuzz.sh $(FUZZ_RUNS)
	HAPPYSERVER=$$(swift build --show-bin-path $(SWIFT_BUILD_FLAGS))/happyserver scripts/autobahn.sh quick

conformance: bootstrap-test
	swift build --product happyserver $(SWIFT_BUILD_FLAGS)
	HAPPYSERVER=$$(swift build --show-bin-path $(SWIFT_BUILD_FLAGS))/happyserver scripts/autobahn.sh full

fuzz: bootstrap-build
	scripts/fuzz.sh 0

clean:
	rm -rf .build

.PHONY: bootstrap-build bootstrap-test

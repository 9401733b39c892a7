# Happy: `make run` and `make test` do all set-up on a fresh Debian machine (as root).
SHELL := /bin/bash
export PATH := /opt/swift/usr/bin:$(PATH)

CONFIG ?= config.json
SWIFT_BUILD_FLAGS ?=

.PHONY: all build release run test unit-test integration-test bench clean help

all: build

help:
	@echo "make run    install what is missing, build (release) and start happyserver on $(CONFIG)"
	@echo "make test   install what is missing, build and run every test"
	@echo "make bench  frame render+encode times per view and cached /frame requests/s (wrk)"
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
	swift test --skip-build --filter HappyRenderTests
	swift test --skip-build --filter HappyServerTests

bench:
	scripts/bench-frames.sh

clean:
	rm -rf .build

.PHONY: bootstrap-build bootstrap-test

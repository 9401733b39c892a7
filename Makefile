# Happy: `make run` and `make test` do all set-up on a fresh Debian machine (as root).
SHELL := /bin/bash
export PATH := /opt/swift/usr/bin:$(PATH)

CONFIG ?= config.json
SWIFT_BUILD_FLAGS ?=
# What happyserver --version and happyclient --version print, and the package's version: from
# git describe (scripts/version.sh); make VERSION=1.2.3 overrides it. Package.swift reads it.
VERSION ?= $(shell scripts/version.sh)
export HAPPY_VERSION := $(VERSION)

.PHONY: all build release run client version protocol-js install deb deb-check container-check docs test conformance security-check fuzz bench bench-check bench-hold bench-upgrade bench-pointers bench-history bench-crowd bench-crowd-joins bench-frames chaos chaos-rolling chaos-rolling-run chaos-planted shots clean help
# PEER_BENCH=DIR: the peers' fan-out benchmark (C, Node, Python), compared side by side:
#   make bench PEER_BENCH=/path/to/bench     make bench-check PEER_BENCH=/path/to/bench
PEER_BENCH ?=
BENCH_SECONDS ?= 10
# make bench-crowd CROWD_ARGS='--crowd-clients 2000 --crowd-writers 400': happybench's --crowd-* flags.
CROWD_ARGS ?=
# make chaos: seconds of faults, the seed of the schedule (random: a new one, printed), and
# the Redis side: sentinel (a primary, two replicas, three sentinels) or single (one Redis).
CHAOS_SECONDS ?= 120
CHAOS_SEED ?= random
CHAOS_TOPOLOGY ?= sentinel
CHAOS_PLANTED_SECONDS ?= 30
FUZZ_RUNS ?= 100000

all: build

help:
	@echo "make run    install what is missing, build (release) and start happyserver on $(CONFIG)"
	@echo "make client build happyclient (release): .build/release/happyclient --help"
	@echo "make version  the version the build gives the programs (from git describe)"
	@echo "make protocol-js  web/js/protocol.js and the fuzzer's action names, written from HappyCore's action table"
	@echo "make install  happyserver, happyclient (Swift runtime linked in), the page, config, unit and manual pages"
	@echo "            under DESTDIR (PREFIX=$(PREFIX), SYSCONFDIR=$(SYSCONFDIR), SYSTEMDUNITDIR=$(SYSTEMDUNITDIR))"
	@echo "make deb    .build/deb/happy_$(VERSION)_amd64.deb, the same files as a Debian package"
	@echo "make deb-check  the package installed into a clean Debian 12 root and served from there; lintian,"
	@echo "            systemd-analyze verify and security, ldd (root; needs Debian's mirror)"
	@echo "make container-check  the Containerfile built and run with podman, if this machine can run containers"
	@echo "make test   install what is missing, build and run every test (Swift, then the page in headless Chromium)"
	@echo "make docs   the client library's DocC archives in .build/docs; fails on a public symbol without a comment"
	@echo "make conformance  the full Autobahn|Testsuite run: cases 1-10, and 12-13 with permessage-deflate (~17 min)"
	@echo "make security-check  the security review's ten attacks against a release server: each refused or bounded,"
	@echo "            a normal intent acked within 50 ms after each, memory back within 20 % (about 2 min)"
	@echo "make fuzz   fuzz the wire codec and reducer until stopped (make test runs $(FUZZ_RUNS) inputs)"
	@echo "make bench  benchmark workloads (happybench, render timings) and, with PEER_BENCH=DIR, the peers side by side;"
	@echo "            ends with one table of the tracked figures, each with its ratio to the C peer and its target"
	@echo "make bench-check PEER_BENCH=DIR  1-2 minutes: fails when a fan-out ratio to uWebSockets.js (when the peers' bench has it;"
	@echo "            else the C peer; BASELINE=uws|lws) is past its target by more than the noise"
	@echo "make bench-hold  only the held-connections workload: 19000 WebSockets pinged, one event a second for 60 s, then idle"
	@echo "make bench-pointers  only the live-pointer workloads: 200 pointers at 30 Hz, and beside the N=1000 fan-out"
	@echo "make bench-history  only the history workload: a room of 100000 events on SQLite, its past read back, pruning, cost"
	@echo "make bench-crowd  only the crowd rooms: 10000 clients, 2000 writing, ticks/each/votes; crowds joining (PEER_BENCH=DIR: beside the C peer)"
	@echo "make bench-frames  render+encode per view and /frame requests/s in more detail"
	@echo "make bench-upgrade  5 SIGUSR2 upgrades under load (1000 clients, 100 writing): nothing refused, lost or doubled, the write pause"
	@echo "make shots  screenshots of each state of the page, desktop and phone, in HAPPY_SHOTS (/tmp/page-shots)"
	@echo "make chaos  3 nodes and Redis with Sentinel in network namespaces under random faults and failovers, then a checker's verdict"
	@echo "            (root; CHAOS_SECONDS, CHAOS_SEED, CHAOS_TOPOLOGY=sentinel|single)"
	@echo "make chaos-rolling  the 3 nodes restarted, then upgraded, one by one, again and again, under 30 writers: no refusal,"
	@echo "            nothing lost or doubled, readers resumed, the write pause per node (median <= 100 ms, p99 <= 300 ms)"
	@echo "make chaos-planted  the same against a node that acks before Redis records, then one that acks before its"
	@echo "            replicas confirm (WAIT): passes only if the checker catches both"
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

client: bootstrap-build
	swift build -c release --product happyclient $(SWIFT_BUILD_FLAGS)

version:
	@echo $(VERSION)

# The files that come from the action table (Sources/HappyCore/Scene/ActionTable.swift); HappyCoreTests
# fail while they differ from it.
protocol-js:
	swift build --product happyprotocol $(SWIFT_BUILD_FLAGS)
	"$$(swift build --show-bin-path $(SWIFT_BUILD_FLAGS))/happyprotocol" .

# The packaged programs: release, the Swift runtime and Foundation linked in statically, so that
# they need only Debian's libraries. A build directory of their own keeps them apart from make release.
PREFIX ?= /usr/local
DESTDIR ?=
SYSCONFDIR ?= /etc
SYSTEMDUNITDIR ?= $(PREFIX)/lib/systemd/system
PACKAGE_BUILD = swift build -c release --static-swift-stdlib --scratch-path .build/package $(SWIFT_BUILD_FLAGS)

package-build: bootstrap-build
	$(PACKAGE_BUILD) --product happyserver
	$(PACKAGE_BUILD) --product happyclient

install: package-build
	PREFIX=$(PREFIX) DESTDIR=$(DESTDIR) SYSCONFDIR=$(SYSCONFDIR) SYSTEMDUNITDIR=$(SYSTEMDUNITDIR) scripts/install.sh

deb: package-build
	@scripts/bootstrap.sh deb
	VERSION=$(VERSION) scripts/build-deb.sh

deb-check: deb
	scripts/package-check.sh .build/deb/happy_$(VERSION)_amd64.deb

# Builds its own package, in the Containerfile's build stage.
container-check:
	scripts/container-check.sh

TEST_TARGETS = HappyCoreTests HappySQLiteTests HappyRenderTests HappyLWSTests HappyClientKitTests HappyCurlTests HappyClientCLITests HappyServerComponentTests HappyServerTests

docs: bootstrap-build
	scripts/docs.sh

test: bootstrap-test
	swift build --build-tests $(SWIFT_BUILD_FLAGS)
	scripts/docs.sh
	@rm -f .build/test-counts
	@for target in $(TEST_TARGETS); do \
	  HAPPY_TEST_COUNTS=.build/test-counts scripts/swift-test.sh $$target $(SWIFT_BUILD_FLAGS) || exit 1; \
	done
	scripts/chaos/chaos.sh --server $$(swift build --show-bin-path $(SWIFT_BUILD_FLAGS))/happyserver --seconds 60 --min-failovers 1 --slow-links nodes --primary-pause-min 8
	scripts/upgrade-check.sh $(SWIFT_BUILD_FLAGS)
	$(MAKE) --no-print-directory chaos-rolling-run CHAOS_SERVER=$$(swift build -c release --show-bin-path $(SWIFT_BUILD_FLAGS))/happyserver
	scripts/check-gates.sh $(SWIFT_BUILD_FLAGS)
	scripts/browser-tests.sh
	scripts/fuzz.sh $(FUZZ_RUNS)
	HAPPYSERVER=$$(swift build --show-bin-path $(SWIFT_BUILD_FLAGS))/happyserver scripts/autobahn.sh quick
	@awk '{ passed += $$2; failed += $$3 } END { printf "XCTest: %d passed, %d failed\n", passed, failed }' .build/test-counts

security-check: release
	scripts/security-check.py --server .build/release/happyserver

conformance: bootstrap-test
	swift build --product happyserver $(SWIFT_BUILD_FLAGS)
	HAPPYSERVER=$$(swift build --show-bin-path $(SWIFT_BUILD_FLAGS))/happyserver scripts/autobahn.sh full

bench: bootstrap-bench release
	mkdir -p bench/results
	@echo "== render + encode per view (300x300)"
	set -o pipefail; .build/release/happyrender-bench --art web/assets/scene-art.json --size 300 --iterations 200 | tee bench/results/render.txt
	taskset -c 1 .build/release/happybench --seconds $(BENCH_SECONDS) --out bench/results
	@if [ -n "$(PEER_BENCH)" ] && [ -x "$(PEER_BENCH)/compare.sh" ]; then \
	  echo "== the same fan-out against the peers in $(PEER_BENCH) (one run, ratios to the C peer) =="; \
	  printf '%s\n' '{"webRoot": "$(CURDIR)/web", "persistence": {"enabled": false}, "log": {"level": "warn"}, "limits": {"intentsPerSecond": 1000000, "intentBurst": 1000000, "floodLimit": 1000000, "maxQueuedBytes": 67108864, "maxConnectionsPerAddress": 0, "maxClients": 20000}, "crowd": {"mode": "each"}}' > bench/results/peer-config.json; \
	  rm -f bench/results/peers-fanout.jsonl bench/results/peers-paced.jsonl; \
	  HAPPY_CMD='$(CURDIR)/.build/release/happyserver --config $(CURDIR)/bench/results/peer-config.json --port {port}' \
	    $(PEER_BENCH)/compare.sh -n "1000 5000 10000" -d $(BENCH_SECONDS) -o $(CURDIR)/bench/results/peers-fanout.jsonl; \
	  HAPPY_CMD='$(CURDIR)/.build/release/happyserver --config $(CURDIR)/bench/results/peer-config.json --port {port}' \
	    $(PEER_BENCH)/compare.sh -n 1000 -d $(BENCH_SECONDS) -r 20 -o $(CURDIR)/bench/results/peers-paced.jsonl; \
	  echo "== crowds joining, without presence broadcasts (the C peer has none)"; \
	  sed 's/"maxClients": 20000/&, "presenceBroadcastMax": 0/' bench/results/peer-config.json > bench/results/peer-config-nopresence.json; \
	  rm -f bench/results/peers-joins.jsonl; \
	  HAPPY_CMD='$(CURDIR)/.build/release/happyserver --config $(CURDIR)/bench/results/peer-config-nopresence.json --port {port}' \
	    $(PEER_BENCH)/compare.sh -n "5000 10000" -d 3 -p lws -o $(CURDIR)/bench/results/peers-joins.jsonl; \
	  $(MAKE) --no-print-directory bench-crowd-joins; \
	else rm -f bench/results/peers-fanout.jsonl bench/results/peers-joins.jsonl bench/results/peers-crowd-joins.jsonl; \
	  echo "(no PEER_BENCH=DIR with a compare.sh: peer comparison skipped; make bench PEER_BENCH=/path/to/bench)"; fi
	@echo "== tracked figures (Happy, the C peer, ratio, target)"
	@scripts/bench-table.py --peers bench/results/peers-fanout.jsonl --joins bench/results/peers-joins.jsonl \
	  --crowd-joins bench/results/peers-crowd-joins.jsonl --render bench/results/render.txt \
	  --happybench "$$(ls -t bench/results/happybench-*.json 2>/dev/null | head -1)"

# The fan-out ratios to uWebSockets.js at N=100, 1000 and 5000 when the peers' bench can load it,
# else to the C peer at N=1000 and 5000 (BASELINE=uws|lws forces one); fails past target + noise.
bench-check: bootstrap-build
	@[ -n "$(PEER_BENCH)" ] && [ -x "$(PEER_BENCH)/run.sh" ] || { \
	  echo "bench-check: needs the peers' fan-out benchmark: make bench-check PEER_BENCH=/path/to/bench"; exit 2; }
	swift build -c release --product happyserver $(SWIFT_BUILD_FLAGS)
	@scripts/bench-check.sh "$(PEER_BENCH)" .build/release/happyserver

# The held-connections workload alone (`make bench` runs it with the others).
bench-hold: bootstrap-bench release
	mkdir -p bench/results
	taskset -c 1 .build/release/happybench --only held --out bench/results

# The crowd-room workloads alone (`make bench` runs them with the others): 10000 clients in one
# room, 2000 writing, in auto, each and vote mode; crowds of 5000 and 10000 joining; with
# PEER_BENCH=DIR also the same crowds joining the C peer and Happy side by side.
bench-crowd: bootstrap-bench release
	mkdir -p bench/results
	taskset -c 1 .build/release/happybench --only crowd --seconds $(BENCH_SECONDS) $(CROWD_ARGS) --out bench/results
	@if [ -n "$(PEER_BENCH)" ] && [ -x "$(PEER_BENCH)/compare.sh" ]; then $(MAKE) --no-print-directory bench-crowd-joins; \
	else rm -f bench/results/peers-crowd-joins.jsonl; \
	  echo "(no PEER_BENCH=DIR with a compare.sh: the C peer's joins skipped; make bench-crowd PEER_BENCH=/path/to/bench)"; fi
	@scripts/bench-table.py --crowd-only --crowd-joins bench/results/peers-crowd-joins.jsonl \
	  --happybench "$$(ls -t bench/results/happybench-*.json 2>/dev/null | head -1)"

# Crowds of 5000 and 10000 joining at concurrency 200, Happy with the protocol's presence (batched
# past crowd.presenceBatchAbove) beside the C peer and uWebSockets.js (when node loads it), which
# send none: one compare.sh run. Delivery stays per event (crowd.mode each): the peers' load
# generator matches events by seq after the joins.
bench-crowd-joins:
	@[ -n "$(PEER_BENCH)" ] && [ -x "$(PEER_BENCH)/compare.sh" ] || { \
	  echo "bench-crowd-joins: needs the peers' fan-out benchmark: make bench-crowd-joins PEER_BENCH=/path/to/bench"; exit 2; }
	@[ -x .build/release/happyserver ] || { echo "bench-crowd-joins: no release server; run make release first"; exit 2; }
	mkdir -p bench/results
	@echo "== crowds joining with presence on (batched), beside the C peer and uWebSockets.js"
	printf '%s\n' '{"webRoot": "$(CURDIR)/web", "persistence": {"enabled": false}, "log": {"level": "warn"}, "limits": {"intentsPerSecond": 1000000, "intentBurst": 1000000, "floodLimit": 1000000, "maxQueuedBytes": 67108864, "maxConnectionsPerAddress": 0, "maxClients": 20000}, "crowd": {"mode": "each"}}' > bench/results/peer-config-crowd.json
	rm -f bench/results/peers-crowd-joins.jsonl
	HAPPY_CMD='$(CURDIR)/.build/release/happyserver --config $(CURDIR)/bench/results/peer-config-crowd.json --port {port}' \
	  $(PEER_BENCH)/compare.sh -n "5000 10000" -d 1 -p "lws uws" -o $(CURDIR)/bench/results/peers-crowd-joins.jsonl

# The live-pointer workloads alone (`make bench` runs them with the others).
bench-pointers: bootstrap-bench release
	mkdir -p bench/results
	taskset -c 1 .build/release/happybench --only pointers,pointers-fanout --seconds $(BENCH_SECONDS) --out bench/results

# Upgrades under load alone (not in `make bench`; `make test` runs it too): 1000 clients, 100 of them
# writing 5 intents a second, 5 SIGUSR2 upgrades in a row; fails when a promise breaks.
bench-upgrade: bootstrap-bench release
	mkdir -p bench/results
	taskset -c 1 .build/release/happybench --only upgrade --out bench/results

# The history and replay workload alone (`make bench` runs it with the others).
bench-history: bootstrap-bench release
	mkdir -p bench/results
	taskset -c 1 .build/release/happybench --only history --seconds $(BENCH_SECONDS) --out bench/results

# Jepsen-style run: see docs/chaos.md. Needs root (network namespaces).
chaos: bootstrap-test
	swift build -c release --product happyserver $(SWIFT_BUILD_FLAGS)
	scripts/chaos/chaos.sh --server .build/release/happyserver --seconds $(CHAOS_SECONDS) --topology $(CHAOS_TOPOLOGY) \
	  $(if $(filter random,$(CHAOS_SEED)),,--seed $(CHAOS_SEED))

# Rolling restarts and upgrades of the 3 nodes, one after another, with 30 writers and 15 readers:
# nothing refused, lost or doubled, every reader resumed, the write pause per node within bounds.
chaos-rolling: bootstrap-test
	swift build -c release --product happyserver $(SWIFT_BUILD_FLAGS)
	$(MAKE) --no-print-directory chaos-rolling-run CHAOS_SERVER=.build/release/happyserver

chaos-rolling-run:
	scripts/chaos/chaos.sh --server $(CHAOS_SERVER) --seconds 30 --faults rolling-restart,rolling-upgrade \
	  --writers 30 --readers 15 --restart-pause-bounds 100,300 $(if $(filter random,$(CHAOS_SEED)),,--seed $(CHAOS_SEED))

# The checker must catch a node built to ack intents before Redis records them, and one built
# to ack them before the replicas confirm them, run through primary kills and cuts.
chaos-planted: bootstrap-test
	swift build --product happyserver --scratch-path .build/planted -Xswiftc -DHAPPY_PLANTED_EARLY_ACK $(SWIFT_BUILD_FLAGS)
	scripts/chaos/chaos.sh --server .build/planted/debug/happyserver --seconds $(CHAOS_PLANTED_SECONDS) --topology single \
	  --expect-violation lost $(if $(filter random,$(CHAOS_SEED)),,--seed $(CHAOS_SEED))
	swift build --product happyserver --scratch-path .build/planted-wait -Xswiftc -DHAPPY_PLANTED_ACK_BEFORE_WAIT $(SWIFT_BUILD_FLAGS)
	scripts/chaos/chaos.sh --server .build/planted-wait/debug/happyserver --seconds $(CHAOS_PLANTED_SECONDS) \
	  --faults primary-kill,primary-partition,primary-split \
	  --expect-violation lost $(if $(filter random,$(CHAOS_SEED)),,--seed $(CHAOS_SEED))

bootstrap-bench:
	@scripts/bootstrap.sh bench

shots: bootstrap-test
	scripts/browser-tests.sh --tour

fuzz: bootstrap-build
	scripts/fuzz.sh 0

bench-frames:
	scripts/bench-frames.sh

clean:
	rm -rf .build

.PHONY: bootstrap-build bootstrap-test bootstrap-bench package-build

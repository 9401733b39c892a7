#!/usr/bin/env bash
# The upgrade under load, as make test runs it: release happyserver and
# happybench, 1000 clients in 10 rooms, 100 of them writing 5 intents a
# second, and 5 SIGUSR2 upgrades in a row. happybench fails (status 1) when a
# connection attempt is refused, an acked intent is lost or applied twice, a
# client does not come back resumed and gap-free, or the write pause per
# upgrade is past a median of 100 ms or a p99 of 300 ms.
# Usage: scripts/upgrade-check.sh [swift build flags]
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH=/opt/swift/usr/bin:$PATH

echo "upgrade-check: building happyserver and happybench (release)"
swift build -c release --product happyserver "$@"
swift build -c release --product happybench "$@"
bin=$(swift build -c release --show-bin-path "$@")
mkdir -p .build/upgrade-results
# The bench on CPU 1, the servers (old and new) on CPU 0, as make bench runs its workloads.
exec taskset -c 1 "$bin/happybench" --only upgrade --server "$bin/happyserver" --web web --out .build/upgrade-results

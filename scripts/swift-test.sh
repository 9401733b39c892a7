#!/usr/bin/env bash
# Runs one XCTest filter of the already built tests and fails when it fails,
# and also when it matches no test (swift test passes an empty selection).
# Usage: scripts/swift-test.sh FILTER [swift build flags...]
# Appends "FILTER PASSED FAILED" to $HAPPY_TEST_COUNTS when that is set.
set -uo pipefail
cd "$(dirname "$0")/.."
filter=${1:?usage: scripts/swift-test.sh FILTER}
shift
log=$(mktemp /tmp/happy-swift-test.XXXXXX)
trap 'rm -f "$log"' EXIT

swift test --skip-build "$@" --filter "$filter" 2>&1 | tee "$log"
status=${PIPESTATUS[0]}
# XCTest's last summary line covers the whole selection ("with N tests
# skipped and M failures" when some were skipped).
summary=$(grep -E "^[[:space:]]*Executed [0-9]+ tests?, with ([0-9]+ tests? skipped and )?[0-9]+ failures?" "$log" | tail -n 1)
executed=$(sed -E 's/.*Executed ([0-9]+) tests?.*/\1/' <<<"$summary")
failures=$(sed -E 's/.* ([0-9]+) failures?.*/\1/' <<<"$summary")
skipped=0
if grep -qE "skipped and" <<<"$summary"; then skipped=$(sed -E 's/.*with ([0-9]+) tests? skipped.*/\1/' <<<"$summary"); fi
if [ -z "$summary" ] || [ "$executed" -eq 0 ]; then
  echo "swift-test: the filter '$filter' matched no test; check the test target or class name" >&2
  exit 1
fi
[ -n "${HAPPY_TEST_COUNTS:-}" ] && echo "$filter $((executed - skipped - failures)) $failures" >>"$HAPPY_TEST_COUNTS"
exit "$status"

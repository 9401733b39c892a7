#!/usr/bin/env bash
# Checks that the test gates fail when they should: a test filter that
# matches nothing, and a missing Python 2.7 for the Autobahn run.
# (The Autobahn report gate has its own self-test: autobahn_report.py --self-test.)
set -uo pipefail
cd "$(dirname "$0")/.."
failed=0

if scripts/swift-test.sh HappyCoreTests.NoSuchTestCase "$@" >/dev/null 2>&1; then
  echo "check-gates: a filter that matches no test passed" >&2
  failed=1
fi

message=$(AUTOBAHN_PYTHON=/nonexistent/python2.7 scripts/bootstrap.sh test 2>&1 >/dev/null)
status=$?
if [ "$status" -eq 0 ] || [ "$(wc -l <<<"$message")" -ne 1 ] || ! grep -q "Python 2.7" <<<"$message"; then
  echo "check-gates: bootstrap did not stop with one line about the missing Python 2.7 (status $status): $message" >&2
  failed=1
fi

[ "$failed" -eq 0 ] && echo "check-gates: 2 passed, 0 failed"
exit "$failed"

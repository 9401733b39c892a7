#!/usr/bin/env bash
# Fuzzes the wire codec and the reducer with libFuzzer.
# Usage: scripts/fuzz.sh [RUNS]   (default 200000; 0 runs until stopped)
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-200000}
out=.build/fuzz
mkdir -p "$out" "$out/corpus"
cp -n Fuzz/corpus/* "$out/corpus/" 2>/dev/null || true

sources=$(find Sources/HappyCore -name '*.swift' | sort)
if [ ! -x "$out/client-message-fuzzer" ] || [ -n "$(find Sources/HappyCore Fuzz -newer "$out/client-message-fuzzer" -name '*.swift')" ]; then
  echo "fuzz: building client-message-fuzzer (libFuzzer + AddressSanitizer)"
  swiftc -sanitize=fuzzer,address -parse-as-library -O -module-name HappyFuzz \
    Fuzz/ClientMessageFuzzer.swift $sources -o "$out/client-message-fuzzer"
fi
# libFuzzer's -runs=-1 is "until stopped".
fuzzer_runs=$runs
[ "$runs" -eq 0 ] && fuzzer_runs=-1
echo "fuzz: $runs runs over the codec and the reducer (0: until stopped)"
set +e
SWIFT_BACKTRACE=enable=no "$out/client-message-fuzzer" -artifact_prefix="$out/" -runs="$fuzzer_runs" -max_len=4096 \
  -print_final_stats=1 -dict=Fuzz/protocol.dict "$out/corpus" >"$out/last-run.log" 2>&1
status=$?
set -e
grep -E "^#[0-9]+ *(DONE|INITED)|stat::number_of_executed_units|ERROR|SUMMARY" "$out/last-run.log" || true
if [ "$status" -ne 0 ] || grep -q "ERROR: libFuzzer\|==ERROR\|Fatal error\|SUMMARY: AddressSanitizer" "$out/last-run.log"; then
  echo "fuzz: the fuzzer failed (exit status $status); see $out/last-run.log and any crash-* file in $out" >&2
  exit 1
fi
executed=$(grep -o "stat::number_of_executed_units: [0-9]*" "$out/last-run.log" | grep -o "[0-9]*$" || true)
if [ -z "$executed" ] || { [ "$runs" -gt 0 ] && [ "$executed" -lt "$runs" ]; }; then
  echo "fuzz: ${executed:-no} inputs ran, $runs were asked for; see $out/last-run.log" >&2
  exit 1
fi
echo "fuzz: $executed inputs, 0 crashes"

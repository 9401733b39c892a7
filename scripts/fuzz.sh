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
echo "fuzz: $runs runs over the codec and the reducer"
SWIFT_BACKTRACE=enable=no "$out/client-message-fuzzer" -artifact_prefix="$out/" -runs="$runs" -max_len=4096 -print_final_stats=1 \
  -dict=Fuzz/protocol.dict "$out/corpus" 2>&1 | tee "$out/last-run.log" | grep -E "^#[0-9]+ *(DONE|INITED)|stat::number_of_executed_units|ERROR|SUMMARY" || true
if grep -q "ERROR: libFuzzer\|==ERROR\|Fatal error\|SUMMARY: AddressSanitizer" "$out/last-run.log"; then
  echo "fuzz: a crash was found; see $out/last-run.log and the crash-* file" >&2
  exit 1
fi
executed=$(grep -o "stat::number_of_executed_units: [0-9]*" "$out/last-run.log" | grep -o "[0-9]*$")
echo "fuzz: $executed inputs, 0 crashes"

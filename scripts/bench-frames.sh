#!/usr/bin/env bash
# Frame benchmark (make bench):
#  1. render + PNG encode time per view at 300x300 (happyrender-bench, release build);
#  2. GET /frame/scene.png requests/s against a release happyserver with wrk: the
#     cached frame (phase pinned, so every request is a cache hit), then the live
#     wave (no phase: a new frame every 20 ms wave step, so some requests render).
# Environment: SCRATCH (build directory, default .build), DURATION (default 10s),
# CONNECTIONS (default 16), THREADS (wrk threads, default 1), SIZE (default 300).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/bootstrap.sh bench

scratch=${SCRATCH:-.build}
duration=${DURATION:-10s}
connections=${CONNECTIONS:-16}
threads=${THREADS:-1}
size=${SIZE:-300}

swift build -c release --scratch-path "$scratch" --product happyserver >/dev/null
swift build -c release --scratch-path "$scratch" --product happyrender-bench >/dev/null
bin="$scratch/release"

echo "== render + encode per view"
"$bin/happyrender-bench" --art web/assets/scene-art.json --size "$size" --iterations 200

work=$(mktemp -d)
pid=""
cleanup() {
  if [ -n "$pid" ]; then kill "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; fi
  rm -rf "$work"
}
trap cleanup EXIT
cat > "$work/config.json" <<JSON
{ "port": 0, "webRoot": "$PWD/web", "dataDir": "$work/data", "log": { "level": "info" } }
JSON
"$bin/happyserver" --config "$work/config.json" 2> "$work/server.log" &
pid=$!
port=""
for _ in $(seq 200); do
  port=$(grep -o 'port=[0-9]*' "$work/server.log" | head -n 1 | cut -d= -f2 || true)
  [ -n "$port" ] && break
  sleep 0.05
done
[ -n "$port" ] || { echo "happyserver did not start:"; cat "$work/server.log"; exit 1; }
base="http://127.0.0.1:$port"

metric() { curl -s "$base/metrics" | awk -v name="$1" '$1 == name { print $2 }'; }

run() {  # label url
  curl -sf -o /dev/null "$2"
  local before after
  before=$(metric happy_renders_total)
  echo
  echo "== $1: wrk -t$threads -c$connections -d$duration $2"
  wrk -t "$threads" -c "$connections" -d "$duration" --latency "$2" | grep -E "Requests/sec|Transfer/sec|Latency|50%|99%|requests in"
  after=$(metric happy_renders_total)
  echo "renders during the run: $((after - before))"
}

run "cached frame" "$base/frame/scene.png?phase=0"
run "live wave" "$base/frame/scene.png"

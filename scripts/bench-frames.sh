#!/usr/bin/env bash
# Frame benchmark (make bench):
#  1. render + PNG encode time per view at 300x300 (happyrender-bench, release build);
#  2. GET /frame/scene.png requests/s against a release happyserver with wrk: the
#     cached frame (phase pinned, so every request is a cache hit), the live wave
#     (no phase: a new frame every 20 ms wave step, so some requests render), and
#     uncached frames (a different phase and room per request, so every request
#     renders; the same requests as happybench's "frames uncached").
# Environment: SCRATCH (build directory, default .build), DURATION (default 10s),
# CONNECTIONS (default 16), THREADS (wrk threads, default 1), SIZE (default 300),
# SERVER_CPUS (taskset CPU list for the server, e.g. 0; default: not pinned),
# NO_BUILD=1 (use the binaries already in $SCRATCH/release).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/bootstrap.sh bench

scratch=${SCRATCH:-.build}
duration=${DURATION:-10s}
connections=${CONNECTIONS:-16}
threads=${THREADS:-1}
size=${SIZE:-300}

if [ -z "${NO_BUILD:-}" ]; then
  swift build -c release --scratch-path "$scratch" --product happyserver >/dev/null
  swift build -c release --scratch-path "$scratch" --product happyrender-bench >/dev/null
fi
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
pin=()
[ -n "${SERVER_CPUS:-}" ] && pin=(taskset -c "$SERVER_CPUS")
"${pin[@]}" "$bin/happyserver" --config "$work/config.json" 2> "$work/server.log" &
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

run() {  # label url [wrk script]
  curl -sf -o /dev/null "$2"
  local before after script=()
  [ -n "${3:-}" ] && script=(-s "$3")
  before=$(metric happy_renders_total)
  echo
  echo "== $1: wrk -t$threads -c$connections -d$duration ${script[*]} $2"
  wrk -t "$threads" -c "$connections" -d "$duration" --latency "${script[@]}" "$2" \
    | grep -E "Requests/sec|Transfer/sec|Latency|50%|99%|requests in|Non-2xx"
  after=$(metric happy_renders_total)
  echo "renders during the run: $((after - before))"
}

run "cached frame" "$base/frame/scene.png?phase=0"
run "live wave" "$base/frame/scene.png"
# 100 phases times 97 rooms: far more keys than the frame cache holds.
cat > "$work/phases.lua" <<'LUA'
counter = 0
request = function()
  counter = counter + 1
  return wrk.format("GET", "/frame/scene.png?w=300&h=300&phase=" .. (counter % 100) .. "&room=r" .. (counter % 97))
end
LUA
run "uncached frames, a new phase and room per request" "$base/frame/scene.png?w=300&h=300&phase=0" "$work/phases.lua"

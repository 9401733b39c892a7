#!/usr/bin/env bash
# make bench-check: a short guard on the fan-out ratios to a peer server.
#
# usage: scripts/bench-check.sh PEER_BENCH_DIR [HAPPYSERVER]
#
# Runs the peers' fan-out (their run.sh and load generator) against a baseline
# peer and happyserver alternately, twice over, so each ratio is measured twice
# in the same conditions. The ratio is the mean of the two; the noise is their
# spread (at least NOISE_FLOOR of the target, since two runs can agree by
# chance). A figure fails when it is past its target by more than that noise.
#
# The baseline is uWebSockets.js (the peers' uws_broadcast.js, one publish per
# event) when node can load its module from UWS_NODE_PATH (default: the
# peers' vendor/ folder, else $TMPDIR/uws-peer), and the C libwebsockets peer
# otherwise; BASELINE=uws or BASELINE=lws forces one.
#   against uWS:  N=100 (window 41), N=1000 (window 4), N=5000 (window 1):
#                 CPU s/1M <= 0.9x uWS at each;  N=5000 KB/conn <= 1.0x uWS
#   against C:    N=1000 msg/s >= 1.2x C   N=1000 CPU s/1M <= 0.5x C
#                 N=5000 CPU s/1M (window 1) <= 1.0x C
# Environment: CHECK_SECONDS (publish seconds per run, default 4), ROUNDS
# (default 2), NOISE_FLOOR (default 0.03), BENCH_WORK (the peers' binaries and
# results, default /tmp/happy-bench). Exits 0 when every figure holds, 1 when
# one fails, 2 when it could not measure.
set -uo pipefail
cd "$(dirname "$0")/.."

peer_bench=${1:-}
server=${2:-.build/release/happyserver}
seconds=${CHECK_SECONDS:-4}
rounds=${ROUNDS:-2}
noise_floor=${NOISE_FLOOR:-0.03}

if [ -z "$peer_bench" ] || [ ! -x "$peer_bench/run.sh" ]; then
  echo "bench-check: needs the peers' fan-out benchmark (a folder with run.sh, loadgen.c and the C peer):" >&2
  echo "  make bench-check PEER_BENCH=/path/to/bench" >&2
  exit 2
fi
if [ ! -x "$server" ]; then
  echo "bench-check: no release server at $server (swift build -c release --product happyserver)" >&2
  exit 2
fi
peer_bench=$(cd "$peer_bench" && pwd)
server=$(cd "$(dirname "$server")" && pwd)/$(basename "$server")
work=${BENCH_WORK:-${TMPDIR:-/tmp}/happy-bench}
make -s -C "$peer_bench" O="$work" >&2 || { echo "bench-check: could not build the peers' load generator" >&2; exit 2; }

# The baseline: uWebSockets.js when node loads it (as the peers' compare.sh finds it), else the C peer.
uws_path=${TMPDIR:-/tmp}/uws-peer
[ -d "$peer_bench/vendor/uWebSockets.js" ] && uws_path=$peer_bench/vendor
uws_path=${UWS_NODE_PATH:-$uws_path}
uws_loads() { NODE_PATH="$uws_path" node -e "require('uWebSockets.js')" >/dev/null 2>&1; }
baseline=${BASELINE:-auto}
case "$baseline" in
  auto) if uws_loads; then baseline=uws; else baseline=lws; fi ;;
  uws) uws_loads || { echo "bench-check: BASELINE=uws, but node cannot load uWebSockets.js from $uws_path" >&2; exit 2; } ;;
  lws) ;;
  *) echo "bench-check: BASELINE is uws, lws or auto, not $baseline" >&2; exit 2 ;;
esac
# Each N with its window: about 4096 messages in flight, as compare.sh sizes it.
if [ "$baseline" = uws ]; then specs=("100 41" "1000 4" "5000 1"); else specs=("1000 4" "5000 1"); fi
echo "bench-check: baseline $baseline" >&2

out=bench/results/check-$(date +%Y%m%d-%H%M%S)
mkdir -p "$out"
# Limits far above the publish rate, so the run measures fan-out, not the rate limit; each event
# delivered on its own (the room is past crowd.tickAbove, and the load generator matches events by seq).
cat >"$out/config.json" <<JSON
{"webRoot": "$PWD/web", "persistence": {"enabled": false}, "log": {"level": "warn"},
 "limits": {"intentsPerSecond": 1000000, "intentBurst": 1000000, "floodLimit": 1000000,
            "maxQueuedBytes": 67108864, "maxConnectionsPerAddress": 0, "maxClients": 20000},
 "crowd": {"mode": "each"}}
JSON
results=$out/runs.jsonl
port=$((7800 + RANDOM % 1000))

one_run() {  # peer n window
  local peer=$1 n=$2 window=$3 cmd env=
  case "$peer" in
    happy) cmd="$server --config $PWD/$out/config.json --port {port}"; proto=happy ;;
    uws) cmd="node $peer_bench/peers/uws_broadcast.js --port {port} --max-seconds 300"; proto=echo-broadcast
         env="NODE_PATH=$uws_path" ;;
    *) cmd="$work/lws_broadcast --port {port} --max-seconds 300"; proto=echo-broadcast ;;
  esac
  port=$((port + 1))
  # other servers on this machine may hold a port of the range: take the next free one
  while ss -Hltn "sport = :$port" | grep -q .; do port=$((port + 1)); done
  "$peer_bench/run.sh" --name "$peer" --cmd "$cmd" --proto "$proto" --env "$env" --port "$port" \
    --results "$PWD/$results" --tag "round$round" --server-cpu 0 --loadgen-cpu 1 -- \
    -n "$n" -k 2000000 -d "$seconds" -w "$window" -r 0 --conc 200 --evlib uv \
    --connect-timeout 60 --drain 10 --timeout $((seconds + 90)) >/dev/null 2>>"$out/runs.log" || {
    echo "bench-check: the $peer run at N=$n failed (log $out/runs.log)" >&2
    return 1
  }
}

started=$SECONDS
for round in $(seq "$rounds"); do
  for spec in "${specs[@]}"; do
    set -- $spec
    # The baseline first in one round, Happy first in the next: drift over time falls on both.
    if [ $((round % 2)) -eq 1 ]; then order="$baseline happy"; else order="happy $baseline"; fi
    for peer in $order; do
      echo "bench-check: round $round, $peer N=$1 window $2" >&2
      one_run "$peer" "$1" "$2" || exit 2
    done
  done
done

python3 - "$results" "$noise_floor" "$((SECONDS - started))" "$baseline" <<'EOF'
import json, sys

path, floor, elapsed, baseline = sys.argv[1], float(sys.argv[2]), sys.argv[3], sys.argv[4]
label, named = {"uws": ("uWS", "uWS"), "lws": ("C", "the C peer")}[baseline]
runs = {}
for line in open(path):
    try:
        row = json.loads(line)
    except ValueError:
        continue
    runs[(row.get("tag"), row.get("peer"), row.get("n"))] = row

def figure(row, key):
    server = row.get("server", {})
    if key == "cpu":
        return server.get("cpu_s_per_1m_msgs")
    if key == "kb":
        return server.get("rss_bytes_per_conn")
    return row.get("msgs_per_s")

checks = {  # n, figure, name, target, higher is better
    "lws": [
        (1000, "msgs", "N=1000 msg/s", 1.2, True),
        (1000, "cpu", "N=1000 CPU s/1M", 0.5, False),
        (5000, "cpu", "N=5000 window 1 CPU s/1M", 1.0, False),
    ],
    "uws": [
        (100, "cpu", "N=100 CPU s/1M", 0.9, False),
        (1000, "cpu", "N=1000 CPU s/1M", 0.9, False),
        (5000, "cpu", "N=5000 window 1 CPU s/1M", 0.9, False),
        (5000, "kb", "N=5000 KB per connection", 1.0, False),
    ],
}[baseline]
rounds = sorted({tag for tag, _, _ in runs})
failed = unmeasured = 0
print("bench-check: %d rounds in %s s; ratio = Happy / %s, mean of the rounds; noise = their spread" % (
    len(rounds), elapsed, label))
for n, key, name, target, higher in checks:
    ratios = []
    for tag in rounds:
        happy, c = runs.get((tag, "happy", n), {}), runs.get((tag, baseline, n), {})
        h, b = figure(happy, key), figure(c, key)
        bad = happy.get("errors") or happy.get("resyncs")
        if isinstance(h, (int, float)) and isinstance(b, (int, float)) and h > 0 and b > 0 and not bad:
            ratios.append(h / b)
    if len(ratios) < 2:
        print("  %-26s not measured (%d good rounds; see the run log)" % (name, len(ratios)))
        unmeasured += 1
        continue
    ratio = sum(ratios) / len(ratios)
    noise = max(max(ratios) - min(ratios), floor * target)
    past = (target - ratio) if higher else (ratio - target)
    verdict = "FAIL" if past > noise else "ok"
    failed += verdict == "FAIL"
    print("  %-26s %.2fx (rounds %s)  target %s %.2fx  noise %.2f  %s" % (
        name, ratio, " ".join("%.2f" % r for r in ratios), ">=" if higher else "<=", target, noise, verdict))
    if verdict == "FAIL":
        print("bench-check: %s is %.2fx %s, past its target %s %.2fx by %.2f, more than the noise %.2f" % (
            name, ratio, named, ">=" if higher else "<=", target, past, noise), file=sys.stderr)
sys.exit(1 if failed else 2 if unmeasured else 0)
EOF
status=$?
echo "bench-check: runs in $results" >&2
exit $status

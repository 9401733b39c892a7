#!/usr/bin/env bash
# make bench-check: a short guard on the fan-out ratios to the C libwebsockets peer.
#
# usage: scripts/bench-check.sh PEER_BENCH_DIR [HAPPYSERVER]
#
# Runs the peers' fan-out (their run.sh and load generator) at N=1000 (window 4)
# and N=5000 (window 1), the C peer and happyserver alternately, twice over, so
# each ratio is measured twice in the same conditions. The ratio is the mean of
# the two; the noise is their spread (at least NOISE_FLOOR of the target, since
# two runs can agree by chance). A figure fails when it is past its target by
# more than that noise:
#   N=1000 msg/s   >= 1.2x C      N=1000 CPU s/1M  <= 0.5x C
#   N=5000 CPU s/1M (window 1) <= 1.0x C
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
  local peer=$1 n=$2 window=$3 cmd
  if [ "$peer" = happy ]; then
    cmd="$server --config $PWD/$out/config.json --port {port}"
    proto=happy
  else
    cmd="$work/lws_broadcast --port {port} --max-seconds 300"
    proto=echo-broadcast
  fi
  port=$((port + 1))
  # other servers on this machine may hold a port of the range: take the next free one
  while ss -Hltn "sport = :$port" | grep -q .; do port=$((port + 1)); done
  "$peer_bench/run.sh" --name "$peer" --cmd "$cmd" --proto "$proto" --port "$port" \
    --results "$PWD/$results" --tag "round$round" --server-cpu 0 --loadgen-cpu 1 -- \
    -n "$n" -k 2000000 -d "$seconds" -w "$window" -r 0 --conc 200 --evlib uv \
    --connect-timeout 60 --drain 10 --timeout $((seconds + 90)) >/dev/null 2>>"$out/runs.log" || {
    echo "bench-check: the $peer run at N=$n failed (log $out/runs.log)" >&2
    return 1
  }
}

started=$SECONDS
for round in $(seq "$rounds"); do
  for spec in "1000 4" "5000 1"; do
    set -- $spec
    # C first in one round, Happy first in the next: drift over time falls on both.
    if [ $((round % 2)) -eq 1 ]; then order="lws happy"; else order="happy lws"; fi
    for peer in $order; do
      echo "bench-check: round $round, $peer N=$1 window $2" >&2
      one_run "$peer" "$1" "$2" || exit 2
    done
  done
done

python3 - "$results" "$noise_floor" "$((SECONDS - started))" <<'EOF'
import json, sys

path, floor, elapsed = sys.argv[1], float(sys.argv[2]), sys.argv[3]
runs = {}
for line in open(path):
    try:
        row = json.loads(line)
    except ValueError:
        continue
    runs[(row.get("tag"), row.get("peer"), row.get("n"))] = row

def figure(row, key):
    return row.get("server", {}).get("cpu_s_per_1m_msgs") if key == "cpu" else row.get("msgs_per_s")

checks = [  # n, figure, name, target, higher is better
    (1000, "msgs", "N=1000 msg/s", 1.2, True),
    (1000, "cpu", "N=1000 CPU s/1M", 0.5, False),
    (5000, "cpu", "N=5000 window 1 CPU s/1M", 1.0, False),
]
rounds = sorted({tag for tag, _, _ in runs})
failed = unmeasured = 0
print("bench-check: %d rounds in %s s; ratio = Happy / C, mean of the rounds; noise = their spread" % (len(rounds), elapsed))
for n, key, name, target, higher in checks:
    ratios = []
    for tag in rounds:
        happy, c = runs.get((tag, "happy", n), {}), runs.get((tag, "lws", n), {})
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
        print("bench-check: %s is %.2fx the C peer, past its target %s %.2fx by %.2f, more than the noise %.2f" % (
            name, ratio, ">=" if higher else "<=", target, past, noise), file=sys.stderr)
sys.exit(1 if failed else 2 if unmeasured else 0)
EOF
status=$?
echo "bench-check: runs in $results" >&2
exit $status

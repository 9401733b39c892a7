#!/usr/bin/env bash
# Runs the Autobahn|Testsuite fuzzing client against happyserver's /echo
# endpoint and fails when a case fails (see scripts/autobahn-allowed.txt for
# the cases whose own text allows what the server does).
#
# Usage: scripts/autobahn.sh [quick|full]
#   quick  (make test)         cases 1-10 with compression off, then a subset of
#                              12.x/13.x with permessage-deflate on (about 1 min)
#   full   (make conformance)  cases 1-10 off, then all of 12-13 with
#                              permessage-deflate on (about 17 min)
# Reports: .build/autobahn-reports/<run>/index.html (and index.json).
# Environment: HAPPYSERVER  the server binary (default .build/debug/happyserver)
#              AUTOBAHN_PYTHON  a Python 2.7 (default: pyenv's 2.7, or python2.7)
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD

mode=${1:-quick}
case "$mode" in
  quick)
    # Messages of 16 B to 16 KiB, whole and auto-fragmented, of each payload
    # kind (12.1-12.5) and each offer/accept combination (13.1-13.7): every
    # code path of the extension, without the 1000-message 32-128 KiB cases
    # that dominate the full run.
    deflate_cases='["12.1.1","12.1.2","12.1.3","12.1.4","12.1.5","12.1.7","12.1.11","12.2.1","12.2.4","12.3.1",
                    "12.3.4","12.4.1","12.4.4","12.5.1","12.5.4","12.5.7","12.5.11","13.1.1","13.1.4","13.1.11",
                    "13.2.1","13.2.4","13.3.1","13.3.4","13.3.7","13.4.1","13.4.4","13.5.1","13.5.4","13.6.1",
                    "13.6.4","13.7.1","13.7.4","13.7.11"]'
    deflate_count=34
    time_limit=900 ;;
  full)
    deflate_cases='["12.*","13.*"]'
    deflate_count=216
    time_limit=3600 ;;
  *) echo "usage: scripts/autobahn.sh [quick|full]" >&2; exit 2 ;;
esac

version=25.10.1
suite=.build/autobahn
reports=.build/autobahn-reports
binary=${HAPPYSERVER:-.build/debug/happyserver}

python=$(scripts/find-python2.sh) || {
  echo "autobahn: no Python 2.7 found (the suite is Python 2 code): install one with 'pyenv install 2.7.18', or set AUTOBAHN_PYTHON" >&2
  exit 1
}
if [ ! -f "$suite/.installed-$version" ]; then
  echo "autobahn: installing autobahntestsuite $version into $suite"
  rm -rf "$suite"
  "$python" -m pip install --quiet --disable-pip-version-check --no-warn-script-location \
    --target "$suite" "autobahntestsuite==$version" 2>&1 | grep -v "DEPRECATION: Python 2.7" || true
  "$python" -c "import site; site.addsitedir('$suite'); import autobahntestsuite" \
    || { echo "autobahn: the install into $suite failed" >&2; exit 1; }
  touch "$suite/.installed-$version"
fi
if [ ! -x "$binary" ]; then
  echo "autobahn: building happyserver"
  swift build --product happyserver
fi
python3 scripts/autobahn_report.py --self-test

work=$(mktemp -d /tmp/happy-autobahn.XXXXXX)
server_pid=""
cleanup() {
  if [ -n "$server_pid" ]; then kill "$server_pid" 2>/dev/null || true; wait "$server_pid" 2>/dev/null || true; fi
  rm -rf "$work"
}
trap cleanup EXIT

# start_server NAME COMPRESSION: a server with /echo on a free port; sets $port.
start_server() {
  local dir="$work/$1"
  mkdir -p "$dir"
  cat >"$dir/config.json" <<EOF
{ "host": "127.0.0.1", "port": 0, "webRoot": "$root/web", "dataDir": "$dir/data",
  "persistence": { "enabled": false }, "compression": $2, "conformance": { "echo": true },
  "log": { "level": "info" } }
EOF
  "$binary" --config "$dir/config.json" >"$dir/server.log" 2>&1 &
  server_pid=$!
  port=""
  for _ in $(seq 200); do
    port=$(grep -o "listening.*port=[0-9]*" "$dir/server.log" | grep -o "port=[0-9]*$" | cut -d= -f2 || true)
    [ -n "$port" ] && return 0
    kill -0 "$server_pid" 2>/dev/null || break
    sleep 0.1
  done
  echo "autobahn: happyserver did not start:" >&2
  cat "$dir/server.log" >&2
  exit 1
}

stop_server() {
  kill -TERM "$server_pid"
  wait "$server_pid" || true
  server_pid=""
}

# run_cases NAME COMPRESSION CASES_JSON
run_cases() {
  local name=$1 out="$reports/$1"
  rm -rf "$out"
  mkdir -p "$out"
  start_server "$name" "$2"
  cat >"$work/$name/spec.json" <<EOF
{ "outdir": "$root/$out", "servers": [ { "agent": "happyserver", "url": "ws://127.0.0.1:$port/echo" } ],
  "cases": $3, "exclude-cases": [], "exclude-agent-cases": {} }
EOF
  echo "autobahn: $name (compression $2) against ws://127.0.0.1:$port/echo"
  local started=$SECONDS
  if ! (cd "$work/$name" && timeout "$time_limit" "$python" -c \
        "import site; site.addsitedir('$root/$suite'); from autobahntestsuite.wstest import run; run()" \
        -m fuzzingclient -s spec.json >"$work/$name/wstest.log" 2>&1); then
    echo "autobahn: the fuzzing client failed or ran over ${time_limit}s:" >&2
    tail -n 30 "$work/$name/wstest.log" >&2
    exit 1
  fi
  echo "autobahn: $name took $((SECONDS - started)) s"
  if ! kill -0 "$server_pid" 2>/dev/null; then
    echo "autobahn: happyserver died during $name:" >&2
    tail -n 30 "$work/$name/server.log" >&2
    exit 1
  fi
  stop_server
}

run_cases cases-1-10 false '["1.*","2.*","3.*","4.*","5.*","6.*","7.*","8.*","9.*","10.*"]'
run_cases deflate true "$deflate_cases"
# The gate also checks that every case ran: all of 1-10 (301 in this version) and each deflate case.
python3 scripts/autobahn_report.py "$reports/cases-1-10=301" "$reports/deflate=$deflate_count" \
  --allowed scripts/autobahn-allowed.txt

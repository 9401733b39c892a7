#!/usr/bin/env bash
# A chaos run (scripts/chaos/run.py, described in docs/chaos.md) with what it needs: root for
# the network namespaces, redis-server and redis-sentinel (scripts/bootstrap.sh test), and a venv in
# .build/chaos-venv with websockets from PyPI for the clients. The checker's unit tests run first.
# Usage: scripts/chaos/chaos.sh --server PATH [--seconds N] [--seed N] [other run.py options]
set -euo pipefail
cd "$(dirname "$0")/../.."
root=$PWD

if [ "$(id -u)" -ne 0 ]; then
  echo "chaos: must run as root (it creates network namespaces)" >&2
  exit 1
fi
for program in redis-server redis-sentinel; do
  if ! command -v "$program" >/dev/null; then
    echo "chaos: $program is missing: scripts/bootstrap.sh test installs it" >&2
    exit 1
  fi
done

venv=$root/.build/chaos-venv
if ! "$venv/bin/python" -c 'import websockets.asyncio.client' 2>/dev/null; then
  echo "chaos: making $venv (websockets)"
  rm -rf "$venv"
  python3 -m venv "$venv"
  "$venv/bin/pip" install --quiet --disable-pip-version-check 'websockets>=13,<18'
fi

export PYTHONDONTWRITEBYTECODE=1
echo "chaos: the checker's unit tests"
"$venv/bin/python" -m unittest discover -s scripts/chaos
exec "$venv/bin/python" scripts/chaos/run.py --python "$venv/bin/python" "$@"

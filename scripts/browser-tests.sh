#!/usr/bin/env bash
# The page's browser tests (Tests/Browser): headless Chromium driven by Selenium
# against the real debug happyserver, which each test class starts on a free
# port with its own config and data directory (and happyclient, run by some).
# Installs what is missing: Debian chromium and chromium-driver (bootstrap.sh test),
# and a venv in .build/browser-venv with selenium, Pillow and selenium-axe-python
# (for the axe-core script it ships) from PyPI.
# Usage: scripts/browser-tests.sh [test names, e.g. test_page.CanvasMatchesServerFrame]
#        scripts/browser-tests.sh --tour   (screenshots of each state of the page, in HAPPY_SHOTS)
# Environment: SCRATCH_PATH  swift build folder (default .build)
#              HAPPY_SHOTS   where screenshots go (default /tmp/page-shots)
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
export PATH=/opt/swift/usr/bin:$PATH

scripts/bootstrap.sh test

venv=$root/.build/browser-venv
if ! "$venv/bin/python" -c 'import selenium, PIL, selenium_axe_python' 2>/dev/null; then
  echo "browser-tests: making $venv (selenium, Pillow, selenium-axe-python)"
  python3 -m venv "$venv"
  "$venv/bin/pip" install --quiet --disable-pip-version-check 'selenium>=4.20,<5' 'pillow>=10' \
    'selenium-axe-python==2.2.0'
fi

scratch=${SCRATCH_PATH:-.build}
swift build --product happyserver --scratch-path "$scratch"
# happyclient too: the event lines on the page are checked against its output.
swift build --product happyclient --scratch-path "$scratch"
export HAPPY_SERVER HAPPY_CLIENT
HAPPY_SERVER=$(cd "$scratch/debug" && pwd)/happyserver
HAPPY_CLIENT=$(cd "$scratch/debug" && pwd)/happyclient

cd Tests/Browser
# --tour: screenshots of the page's states for a person to look at (make shots).
if [ "${1:-}" = --tour ]; then exec "$venv/bin/python" page_tour.py; fi
exec "$venv/bin/python" run.py "$@"

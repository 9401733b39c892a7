#!/usr/bin/env bash
# Prints the path of a Python 2.7 for the Autobahn|Testsuite (Python 2 code):
# $AUTOBAHN_PYTHON, else pyenv's 2.7, else python2.7 on PATH. Exits 1 when none.
set -euo pipefail
if [ -n "${AUTOBAHN_PYTHON:-}" ]; then
  [ -x "$AUTOBAHN_PYTHON" ] && { echo "$AUTOBAHN_PYTHON"; exit 0; }
  echo "AUTOBAHN_PYTHON=$AUTOBAHN_PYTHON is not an executable" >&2
  exit 1
fi
if command -v pyenv >/dev/null 2>&1; then
  for candidate in "$(pyenv root)"/versions/2.7*/bin/python; do
    [ -x "$candidate" ] && { echo "$candidate"; exit 0; }
  done
fi
if command -v python2.7 >/dev/null 2>&1 && python2.7 -c 'import sys; sys.exit(sys.version_info[:2] != (2, 7))' 2>/dev/null; then
  command -v python2.7
  exit 0
fi
exit 1

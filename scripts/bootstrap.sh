#!/usr/bin/env bash
# Installs the Debian packages Happy needs to build, test and run, if missing.
# Usage: scripts/bootstrap.sh [build|test|bench|deb]   (default: build)
set -euo pipefail

purpose=${1:-build}
packages=(pkg-config libwebsockets-dev libwebsockets-evlib-ev libev-dev libsqlite3-dev libssl-dev libhiredis-dev libcairo2-dev libdeflate-dev libcurl4-openssl-dev)
case "$purpose" in
  build) ;;
  test) packages+=(openssl curl redis-server redis-sentinel tmux chromium chromium-driver python3-venv) ;;
  bench) packages+=(wrk curl redis-server) ;;
  # make deb: after the build's, the tools that strip, package and write manual pages.
  deb) packages=(binutils dpkg-dev gzip) ;;
  *) echo "bootstrap: unknown purpose '$purpose' (build, test, bench or deb)" >&2; exit 2 ;;
esac

missing=()
for package in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$package")
  fi
done

if [ ${#missing[@]} -gt 0 ]; then
  if [ "$(id -u)" -ne 0 ]; then
    echo "bootstrap: missing Debian packages: ${missing[*]}" >&2
    echo "bootstrap: run as root, or install them: sudo apt-get install ${missing[*]}" >&2
    exit 1
  fi
  echo "bootstrap: installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# Beyond Debian's packages, make test runs the Autobahn|Testsuite, which is
# Python 2 code; Debian 12 ships no Python 2.
if [ "$purpose" = test ] && ! "$(dirname "$0")/find-python2.sh" >/dev/null 2>&1; then
  echo "bootstrap: make test needs Python 2.7 for the Autobahn|Testsuite and found none${AUTOBAHN_PYTHON:+ (AUTOBAHN_PYTHON=$AUTOBAHN_PYTHON is not executable)}: install it with 'pyenv install 2.7.18', or set AUTOBAHN_PYTHON=/path/to/python2.7" >&2
  exit 1
fi

if ! command -v swift >/dev/null 2>&1; then
  echo "bootstrap: the Swift toolchain is not on PATH (expected /opt/swift/usr/bin/swift)" >&2
  exit 1
fi

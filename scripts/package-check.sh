#!/usr/bin/env bash
# Checks a built happy_*.deb (make deb-check):
#   - lintian: no errors;
#   - ldd: the programs need only Debian's libraries, nothing of the Swift toolchain;
#   - systemd-analyze security --offline: the unit's exposure is at most 2.0;
#   - a clean Debian 12 root (debootstrap, no Swift toolchain): apt-get installs the package
#     with its Depends from Debian's mirror, systemd-analyze verify passes on the installed unit,
#     check-config passes on the installed configuration, happyserver runs there as the user
#     happy and serves the page, /healthz and a WebSocket (the packaged happyclient and a Python
#     client from outside), keeps a room across a restart, stops cleanly on SIGTERM; then the
#     package is purged.
# Traffic: Debian's mirror (debootstrap, apt-get) and loopback. Bounded in time
# (HAPPY_PACKAGE_CHECK_MINUTES, default 20); leaves nothing mounted or running.
#
# Usage: scripts/package-check.sh .build/deb/happy_VERSION_amd64.deb     (as root)
#   HAPPY_PACKAGE_CACHE  where the debootstrap tarball is kept (/var/tmp/happy-package-check)
#   DEBIAN_MIRROR        (http://deb.debian.org/debian)
set -euo pipefail

deb=${1:?usage: scripts/package-check.sh happy_VERSION_amd64.deb}
root_dir=$(cd "$(dirname "$0")/.." && pwd)
minutes=${HAPPY_PACKAGE_CHECK_MINUTES:-20}
if [ -z "${HAPPY_PACKAGE_CHECK_BOUNDED:-}" ]; then
  HAPPY_PACKAGE_CHECK_BOUNDED=1 exec timeout --kill-after=30 "${minutes}m" "$0" "$@"
fi
[ "$(id -u)" -eq 0 ] || { echo "package-check: run as root (debootstrap, chroot)" >&2; exit 1; }
deb=$(cd "$(dirname "$deb")" && pwd)/$(basename "$deb")
[ -f "$deb" ] || { echo "package-check: no $deb" >&2; exit 1; }

cache=${HAPPY_PACKAGE_CACHE:-/var/tmp/happy-package-check}
mirror=${DEBIAN_MIRROR:-http://deb.debian.org/debian}
work=$root_dir/.build/package-check
chroot_dir=$work/root
failures=()
server_pid=

step() { printf '\n== %s\n' "$*"; }
fail() { echo "FAIL: $*"; failures+=("$*"); }

cleanup() {
  set +e
  if [ -n "$server_pid" ] && kill -0 "$server_pid" 2>/dev/null; then kill -KILL "$server_pid"; fi
  # Everything mounted under the root, deepest first; nothing is removed while one remains.
  if [ -d "$chroot_dir" ]; then
    awk -v root="$chroot_dir" '$2 == root || index($2, root "/") == 1 { print $2 }' /proc/mounts | sort -r |
      while read -r mount; do umount "$mount" || umount -l "$mount"; done
    if awk -v root="$chroot_dir" 'index($2, root) == 1 { found = 1 } END { exit !found }' /proc/mounts; then
      echo "package-check: $chroot_dir still has mounts; not removing it" >&2
    else
      rm -rf "$work"
    fi
  fi
}
trap cleanup EXIT
trap 'exit 124' TERM INT

# --- tools on this machine
missing=()
for tool in debootstrap:debootstrap lintian:lintian systemd-analyze:systemd python3:python3 dpkg-deb:dpkg; do
  command -v "${tool%%:*}" >/dev/null || missing+=("${tool##*:}")
done
if [ ${#missing[@]} -gt 0 ]; then
  step "installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

rm -rf "$work"
mkdir -p "$work/unpacked" "$cache"
dpkg-deb -x "$deb" "$work/unpacked"

step "package: $(basename "$deb") ($(du -h "$deb" | cut -f1), installed $(dpkg-deb -f "$deb" Installed-Size) KiB)"
dpkg-deb -f "$deb" Depends

step "lintian"
# lintian warns about running as root; the package's own findings follow it.
lintian_out=$(lintian "$deb" 2>&1 | grep -v 'running with root privileges' || true)
echo "${lintian_out:-(nothing to report)}"
if grep -q '^E:' <<<"$lintian_out"; then fail "lintian reports errors"; fi

step "ldd (libraries the programs load)"
for program in happyserver happyclient; do
  libraries=$(ldd "$work/unpacked/usr/bin/$program")
  echo "$program: $(awk '/=>/ { print $1 }' <<<"$libraries" | tr '\n' ' ')"
  if grep -q 'not found' <<<"$libraries"; then fail "$program: a library is missing: $(grep 'not found' <<<"$libraries")"; fi
  if grep -Eq '/opt/swift|libswift|libFoundation|libdispatch|libBlocksRuntime|lib_FoundationICU' <<<"$libraries"; then
    fail "$program loads a library of the Swift toolchain: $(grep -E 'swift|Foundation|dispatch|Blocks' <<<"$libraries")"
  fi
  outside=$(awk '/=>/ && $3 !~ "^/(usr/)?lib/" { print $1 " " $3 }' <<<"$libraries")
  [ -z "$outside" ] || fail "$program loads libraries from outside /lib and /usr/lib: $outside"
done

step "systemd-analyze security --offline=true happy.service"
unit=$work/unpacked/lib/systemd/system/happy.service
security=$(systemd-analyze security --offline=true --no-pager "$unit" 2>&1 || true)
grep -E '✗|Overall' <<<"$security" || echo "$security"
exposure=$(sed -n 's/.*Overall exposure level for happy.service: \([0-9.]*\).*/\1/p' <<<"$security")
if [ -z "$exposure" ] || ! awk -v e="$exposure" 'BEGIN { exit !(e <= 2.0) }'; then
  fail "exposure ${exposure:-unknown}, more than 2.0"
fi

# --- a clean Debian 12 root
tarball=$cache/debian-bookworm-minbase.tar.gz
if [ ! -s "$tarball" ]; then
  step "debootstrap bookworm (once; kept in $tarball)"
  rm -rf "$cache/rootfs.new"
  debootstrap --variant=minbase bookworm "$cache/rootfs.new" "$mirror" >"$cache/debootstrap.log" 2>&1 ||
    { tail -20 "$cache/debootstrap.log"; exit 1; }
  tar -C "$cache/rootfs.new" -czf "$tarball.tmp" . && mv "$tarball.tmp" "$tarball"
  rm -rf "$cache/rootfs.new"
fi
step "a clean Debian 12 root from $tarball"
mkdir -p "$chroot_dir"
tar -C "$chroot_dir" -xzf "$tarball"
mount -t proc proc "$chroot_dir/proc"
cp /etc/resolv.conf "$chroot_dir/etc/resolv.conf"
echo "deb $mirror bookworm main" >"$chroot_dir/etc/apt/sources.list"
in_root() { chroot "$chroot_dir" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LANG=C.UTF-8 "$@"; }
if in_root sh -c 'command -v swift || ls -d /opt/swift /usr/lib/swift 2>/dev/null'; then
  fail "the root has a Swift toolchain"
else
  echo "no Swift toolchain in the root (no swift, /opt/swift or /usr/lib/swift)"
fi

step "apt-get install ./$(basename "$deb")"
cp "$deb" "$chroot_dir/tmp/"
in_root apt-get -o Acquire::http::Timeout=30 update -qq
if ! in_root sh -c "cd /tmp && DEBIAN_FRONTEND=noninteractive apt-get -o Acquire::http::Timeout=30 install -y -q --no-install-recommends ./$(basename "$deb")" \
    >"$work/apt.log" 2>&1; then
  tail -30 "$work/apt.log"
  fail "apt-get install failed"
  exit 1
fi
grep -E '^(Setting up|The following NEW)' "$work/apt.log" | tail -n 3
echo "installed: $(in_root dpkg-query -W -f='${Package} ${Version} ${Status}' happy)"
in_root ls -ld /etc/happy/config.json /var/lib/happy | awk '{ print $1, $3, $4, $NF }'
echo "user: $(in_root getent passwd happy)"
for program in happyserver happyclient; do
  in_root "$program" --version
  if in_root ldd "/usr/bin/$program" | grep -q 'not found'; then fail "$program misses a library in the clean root"; fi
done

step "happyserver check-config /etc/happy/config.json (as the user happy)"
if in_root setpriv --reuid=happy --regid=happy --init-groups happyserver check-config /etc/happy/config.json >"$work/check.txt"; then
  grep -E '^(#|webRoot|dataDir|host|port) ' "$work/check.txt"
else
  fail "check-config refused the installed configuration"
fi

port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
starts=0
start_server() {
  starts=$((starts + 1))
  log=$work/server-$starts.log
  # One simple command, so that $! is happyserver itself (chroot, env and setpriv exec it).
  chroot "$chroot_dir" /usr/bin/env -i PATH=/usr/bin:/bin LANG=C.UTF-8 setpriv --reuid=happy --regid=happy --init-groups \
    happyserver --config /etc/happy/config.json --port "$port" >"$log" 2>&1 &
  server_pid=$!
  for _ in $(seq 1 100); do
    if grep -q 'listening' "$log" 2>/dev/null; then
      grep 'listening' "$log"
      [ "$(cat "/proc/$server_pid/comm" 2>/dev/null)" = happyserver ] || { fail "pid $server_pid is not happyserver"; exit 1; }
      return 0
    fi
    kill -0 "$server_pid" 2>/dev/null || break
    sleep 0.1
  done
  cat "$log"; fail "happyserver did not start"; exit 1
}
stop_server() {
  kill -TERM "$server_pid"
  local status=0
  wait "$server_pid" || status=$?
  server_pid=
  echo "stopped on SIGTERM with status $status"
  [ "$status" -eq 0 ] || fail "happyserver exited with $status on SIGTERM"
}

step "happyserver in the root, as the user happy, on 127.0.0.1:$port"
start_server
base=http://127.0.0.1:$port
page=$(python3 -c 'import sys, urllib.request; print(urllib.request.urlopen(sys.argv[1], timeout=10).read().decode())' "$base/")
if grep -q '<title>' <<<"$page"; then echo "GET /: $(grep -o '<title>[^<]*</title>' <<<"$page")"; else fail "GET / did not serve the page"; fi
health=$(python3 -c 'import sys, urllib.request; print(urllib.request.urlopen(sys.argv[1], timeout=10).read().decode())' "$base/healthz")
echo "GET /healthz: $health"
[ "$(head -1 <<<"$health")" = ok ] || fail "/healthz did not answer ok"
step "a WebSocket from outside the root (scripts/ws-probe.py)"
"$root_dir/scripts/ws-probe.py" "ws://127.0.0.1:$port/ws" package-check || fail "the WebSocket round trip failed"
step "the packaged happyclient"
in_root happyclient --url "ws://127.0.0.1:$port" --room package-check --name installer happiness 80 || fail "happyclient happiness 80"
stop_server

step "restarted: the room is kept in /var/lib/happy"
start_server
state=$(in_root happyclient --url "ws://127.0.0.1:$port" --room package-check state) || fail "happyclient state"
sed -n 1,4p <<<"$state"
grep -q 'happiness *80' <<<"$state" || fail "the room lost its happiness across the restart"
stop_server
in_root ls -l /var/lib/happy | tail -n +2

step "systemd-analyze verify happy.service, in the root with systemd and man-db added"
# The package needs no systemd (containers, this root), but its unit's targets come with it.
if in_root sh -c 'DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends systemd man-db' \
    >"$work/systemd.log" 2>&1; then
  if verify=$(in_root systemd-analyze verify /lib/systemd/system/happy.service 2>&1); then
    echo "${verify:-clean (ExecStart, ExecReload and the Documentation= man page found)}"
  else
    echo "$verify"; fail "systemd-analyze verify"
  fi
else
  tail -20 "$work/systemd.log"; fail "could not add systemd to the root"
fi

step "apt-get purge happy"
if in_root sh -c 'DEBIAN_FRONTEND=noninteractive apt-get purge -y -q happy' >"$work/purge.log" 2>&1; then
  grep -E '^(Removing|Purging)' "$work/purge.log"
  for gone in /usr/bin/happyserver /etc/happy /var/lib/happy /lib/systemd/system/happy.service; do
    if in_root test -e "$gone"; then fail "$gone is left after purge"; fi
  done
else
  tail -20 "$work/purge.log"; fail "apt-get purge failed"
fi

step "result"
if [ ${#failures[@]} -gt 0 ]; then
  printf 'package-check: %d failed:\n' "${#failures[@]}"; printf '  %s\n' "${failures[@]}"
  exit 1
fi
echo "package-check: $(basename "$deb"): all checks passed"

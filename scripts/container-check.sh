#!/usr/bin/env bash
# Builds the Containerfile with podman and runs the image (make container-check): the build
# stage makes the package on Debian 12, the runtime image installs it; the container must run
# as a non-root user, serve the page, /healthz and a WebSocket on a published loopback port,
# pass its health check, stop cleanly, and keep its rooms in its volume across a new container.
#
# Where podman's defaults cannot run a container here, it says which and why, and tries the
# settings that get past it, in a containers.conf of its own (CONTAINERS_CONF; nothing of the
# machine's configuration is changed): a lower default_ulimits (podman asks for nofile
# 1048576, more than a process without CAP_SYS_RESOURCE may raise its limit to), and runc for
# crun (crun refuses cgroup v1 beside a cgroup v2 that has controllers: "hybrid mode").
#
# Without access to a registry, the base images are made from the debootstrap tarball that
# scripts/package-check.sh keeps; without access to swift.org, the build gets this machine's
# /opt/swift as a read-only volume. Bounded in time (HAPPY_CONTAINER_CHECK_MINUTES, default 40);
# removes its container, volume and image.
#
# Last, the image with systemd added runs happy.service as systemd does: sandboxed, as the user
# happy, its reload refusing a bad configuration, stopped cleanly.
#
# Usage: scripts/container-check.sh      (as root)
#   HAPPY_DEBIAN_IMAGE, HAPPY_RUNTIME_IMAGE   base images (default: Debian's from docker.io, else the tarball's)
#   HAPPY_CONTAINER_KEEP_CACHE=1              keep the images the build made (its cache) and the image
set -euo pipefail

root_dir=$(cd "$(dirname "$0")/.." && pwd)
minutes=${HAPPY_CONTAINER_CHECK_MINUTES:-40}
if [ -z "${HAPPY_CONTAINER_CHECK_BOUNDED:-}" ]; then
  HAPPY_CONTAINER_CHECK_BOUNDED=1 exec timeout --kill-after=30 "${minutes}m" "$0" "$@"
fi
[ "$(id -u)" -eq 0 ] || { echo "container-check: run as root (rootful podman)" >&2; exit 1; }

cache=${HAPPY_PACKAGE_CACHE:-/var/tmp/happy-package-check}
tarball=$cache/debian-bookworm-minbase.tar.gz
work=$(mktemp -d /tmp/happy-container-check.XXXXXX)
tag=happy-check-$$
image=localhost/happy:$tag
failures=()

step() { printf '\n== %s\n' "$*"; }
fail() { echo "FAIL: $*"; failures+=("$*"); }

cleanup() {
  set +e
  podman rm -f -v -t 5 "$tag" >/dev/null 2>&1
  podman volume rm -f "$tag" >/dev/null 2>&1
  [ -n "${HAPPY_CONTAINER_KEEP_CACHE:-}" ] || podman rmi -f "$image" >/dev/null 2>&1
  # Every image this run made (the build stage's, the layers' cache), unless asked to keep them;
  # the base images stay for the next run.
  if [ -z "${HAPPY_CONTAINER_KEEP_CACHE:-}" ] && [ -f "$work/images.before" ]; then
    podman images -aq --no-trunc | sort | comm -13 "$work/images.before" - | xargs -r podman rmi -f >/dev/null 2>&1
  fi
  rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 124' TERM INT

missing=()
for tool in podman:podman runc:runc python3:python3; do
  command -v "${tool%%:*}" >/dev/null || missing+=("${tool##*:}")
done
if [ ${#missing[@]} -gt 0 ]; then
  step "installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
echo "podman $(podman version --format '{{.Client.Version}}'), $(podman info --format '{{.Host.OCIRuntime.Name}} {{.Host.OCIRuntime.Version}}' | head -1 | cut -c1-60), cgroup $(podman info --format '{{.Host.CgroupsVersion}}')"

# --- base images
debian=${HAPPY_DEBIAN_IMAGE:-}
runtime=${HAPPY_RUNTIME_IMAGE:-}
if [ -z "$debian" ]; then
  step "base images"
  if podman pull -q docker.io/library/debian:12 >/dev/null 2>"$work/pull.err" &&
     podman pull -q docker.io/library/debian:12-slim >/dev/null 2>>"$work/pull.err"; then
    debian=docker.io/library/debian:12
    runtime=docker.io/library/debian:12-slim
  else
    echo "no registry: $(tail -1 "$work/pull.err")"
    if [ ! -s "$tarball" ]; then
      echo "making $tarball with debootstrap"
      command -v debootstrap >/dev/null || apt-get install -y -qq --no-install-recommends debootstrap >/dev/null
      mkdir -p "$cache"
      debootstrap --variant=minbase bookworm "$work/rootfs" "${DEBIAN_MIRROR:-http://deb.debian.org/debian}" >"$work/debootstrap.log" 2>&1 ||
        { tail -20 "$work/debootstrap.log"; exit 1; }
      tar -C "$work/rootfs" -czf "$tarball" . && rm -rf "$work/rootfs"
    fi
    podman import -q "$tarball" localhost/happy-debian:12 >/dev/null
    echo "localhost/happy-debian:12 from $tarball (a debootstrap minbase of bookworm)"
    debian=localhost/happy-debian:12
  fi
fi
runtime=${runtime:-$debian}

# --- what it takes to run a container on this machine
step "running a container"
export CONTAINERS_CONF=$work/containers.conf
: >"$CONTAINERS_CONF"
attempt() {
  echo "-- $1"
  printf '%s\n' "${@:2}" >"$CONTAINERS_CONF"
  if out=$(podman run --rm "$debian" true 2>&1); then echo "runs"; return 0; fi
  echo "$out" | tail -1
  return 1
}
hard_nofile=$(ulimit -Hn)
ulimits="default_ulimits = [\"nofile=$hard_nofile:$hard_nofile\", \"nproc=4096:4096\"]"
if attempt "podman's defaults"; then
  :
elif attempt "containers.conf: $ulimits" "[containers]" "$ulimits"; then
  :
elif attempt "containers.conf: $ulimits, runtime = \"runc\"" "[containers]" "$ulimits" "[engine]" 'runtime = "runc"'; then
  :
else
  fail "podman cannot run a container here with any of these settings; scripts/package-check.sh covers the same steps in a chroot"
  exit 1
fi
echo "settings used:"; sed 's/^/  /' "$CONTAINERS_CONF"

# --- build
step "podman build (the package built in a Debian 12 stage, installed into the runtime image)"
volume_args=()
if [ -x /opt/swift/usr/bin/swift ]; then
  volume_args=(-v /opt/swift:/opt/swift:ro)
  echo "the Swift toolchain from this machine: /opt/swift ($(/opt/swift/usr/bin/swift --version 2>/dev/null | head -1))"
fi
version=$("$root_dir/scripts/version.sh")
podman images -aq --no-trunc | sort >"$work/images.before"
started=$(date +%s)
if ! podman build --format docker "${volume_args[@]}" --label "happy.check=$tag" \
    --build-arg "DEBIAN_IMAGE=$debian" --build-arg "RUNTIME_IMAGE=$runtime" --build-arg "HAPPY_VERSION=$version" \
    -t "$image" -f "$root_dir/Containerfile" "$root_dir" >"$work/build.log" 2>&1; then
  tail -40 "$work/build.log"
  fail "podman build failed"
  exit 1
fi
echo "built $image in $(( $(date +%s) - started )) s: $(podman image inspect --format '{{.Size}}' "$image" | awk '{ printf "%.0f MB", $1 / 1e6 }')"
echo "user $(podman image inspect --format '{{.Config.User}}' "$image"), volumes $(podman image inspect --format '{{json .Config.Volumes}}' "$image"), health check $(podman image inspect --format '{{json .Config.Healthcheck.Test}}' "$image")"
if podman run --rm --entrypoint sh "$image" -c 'command -v swift || test -e /opt/swift/usr/bin/swift' >/dev/null 2>&1; then
  fail "the runtime image has a Swift toolchain"
else
  echo "no Swift toolchain in the runtime image"
fi

# --- run
port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
# podman schedules health checks with systemd timers; without systemd it says so at each start
# and stop, and can only run them on demand (podman healthcheck run, below).
if [ ! -d /run/systemd/system ]; then
  echo "no systemd here: podman cannot schedule the periodic health checks (\"unable to get systemd connection\"); they are run on demand"
fi
quiet() { "$@" 2> >(grep -v 'unable to get systemd connection' >&2); }
run_container() {
  quiet podman run -d --name "$tag" -p "127.0.0.1:$port:8080" -v "$tag:/var/lib/happy" "$image" >/dev/null
  for _ in $(seq 1 100); do
    podman logs "$tag" 2>&1 | grep -q listening && { podman logs "$tag" 2>&1 | grep listening; return 0; }
    [ "$(podman inspect --format '{{.State.Running}}' "$tag")" = true ] || break
    sleep 0.1
  done
  podman logs "$tag"; fail "the container did not start listening"; exit 1
}
stop_container() {
  quiet podman stop -t 10 "$tag" >/dev/null
  local status
  status=$(podman inspect --format '{{.State.ExitCode}}' "$tag")
  echo "podman stop: exit code $status"
  [ "$status" = 0 ] || fail "happyserver exited with $status on podman stop"
  quiet podman rm -v "$tag" >/dev/null
}

step "podman run -p 127.0.0.1:$port:8080 -v $tag:/var/lib/happy"
run_container
user=$(podman exec "$tag" id)
echo "runs as: $user"
grep -q 'uid=0(' <<<"$user" && fail "the container runs as root"
base=http://127.0.0.1:$port
fetch() { python3 -c 'import sys, urllib.request; print(urllib.request.urlopen(sys.argv[1], timeout=10).read().decode())' "$1"; }
page=$(fetch "$base/") || true
if grep -q '<title>' <<<"$page"; then echo "GET /: $(grep -o '<title>[^<]*</title>' <<<"$page")"; else fail "GET / did not serve the page"; fi
health=$(fetch "$base/healthz") || true
echo "GET /healthz: $health"
[ "$(sed -n 1p <<<"$health")" = ok ] || fail "/healthz did not answer ok"
"$root_dir/scripts/ws-probe.py" "ws://127.0.0.1:$port/ws" container-check || fail "the WebSocket round trip failed"
if podman healthcheck run "$tag"; then echo "podman healthcheck run: healthy"; else fail "the health check failed"; fi
podman exec "$tag" happyclient --room container-check --name checker happiness 80 || fail "happyclient in the container"
stop_container

step "a new container on the same volume"
run_container
state=$(podman exec "$tag" happyclient --room container-check state) || fail "happyclient state"
sed -n 1,2p <<<"$state"
grep -q 'happiness *80' <<<"$state" || fail "the room was not kept in the volume"
stop_container

# --- the unit, run by systemd: a container of the image with systemd as its first process
step "happy.service under systemd (the image with systemd added, run with --systemd=always)"
mkdir -p "$work/systemd"
printf 'FROM %s\nUSER root\nRUN apt-get update && apt-get install -y --no-install-recommends systemd systemd-sysv && apt-get clean && rm -rf /var/lib/apt/lists/*\nCMD ["/lib/systemd/systemd"]\n' \
  "$image" >"$work/systemd/Containerfile"
if ! podman build --label "happy.check=$tag" -t "$image-systemd" "$work/systemd" >"$work/systemd.log" 2>&1; then
  tail -20 "$work/systemd.log"; fail "could not add systemd to the image"
elif ! quiet podman run -d --name "$tag" --systemd=always --stop-signal SIGRTMIN+3 "$image-systemd" >/dev/null; then
  fail "systemd did not start in a container"
else
  in_systemd() { podman exec "$tag" sh -c "$1"; }
  # The unit's main process once it differs from $1 and $1 is gone (up to 10 s; else $1's).
  new_main_pid() {
    local pid=$1
    for _ in $(seq 1 100); do
      pid=$(in_systemd 'systemctl show -p MainPID --value happy')
      [ "$pid" != "$1" ] && ! in_systemd "kill -0 $1" 2>/dev/null && break
      sleep 0.1
    done
    echo "$pid"
  }
  for _ in $(seq 1 50); do
    case $(in_systemd 'systemctl is-system-running' 2>/dev/null) in running|degraded) break ;; esac
    sleep 0.2
  done
  echo "systemd: $(in_systemd 'systemctl is-system-running'), happy.service enabled: $(in_systemd 'systemctl is-enabled happy')"
  for _ in $(seq 1 50); do [ "$(in_systemd 'systemctl is-active happy')" = activating ] || break; sleep 0.2; done
  state=$(in_systemd 'systemctl is-active happy' || true)
  echo "happy.service: $state (Type=notify: active once the server sent READY=1)"
  [ "$state" = active ] || { in_systemd 'journalctl -u happy -o cat --no-pager | tail -20'; fail "happy.service is not active"; }
  in_systemd 'pid=$(systemctl show -p MainPID --value happy); ps -o user=,args= -p $pid; grep -E "^(CapEff|NoNewPrivs|Seccomp):" /proc/$pid/status | tr "\n\t" "  "; echo; grep "open files" /proc/$pid/limits'
  in_systemd 'happyclient --room systemd-check happiness 70' || fail "happyclient against the service"
  # A reload checks the file first: a bad key fails the reload and leaves the server running.
  in_systemd 'cp /etc/happy/config.json /root/config.json && sed -i "s/\"port\"/\"prot\"/" /etc/happy/config.json'
  if in_systemd 'systemctl reload happy' >/dev/null 2>&1; then fail "systemctl reload accepted a bad configuration"; fi
  echo "systemctl reload with a bad key: refused; the journal: $(in_systemd 'journalctl -u happy -o cat --no-pager | grep -m1 "unknown key"' | cut -c1-100)…"
  in_systemd 'cp /root/config.json /etc/happy/config.json'
  [ "$(in_systemd 'systemctl is-active happy' || true)" = active ] || fail "the server stopped after a refused reload"
  in_systemd 'systemctl reload happy' || fail "systemctl reload refused a good configuration"
  # An upgrade in place: the new process tells systemd it is the main one (MAINPID=), the old one leaves.
  before=$(in_systemd 'systemctl show -p MainPID --value happy')
  in_systemd 'systemctl kill --signal=SIGUSR2 --kill-whom=main happy'
  after=$(new_main_pid "$before")
  echo "upgrade (SIGUSR2): main process $before -> $after, $(in_systemd 'systemctl is-active happy')"
  [ "$after" != "$before" ] || fail "systemd did not follow the upgraded process (MainPID stayed $before)"
  in_systemd 'happyclient --room systemd-check state' | grep -q 'happiness *70' || fail "the room after the upgrade"
  # The package's own upgrade path: its postinst, as dpkg runs it after unpacking a new version.
  before=$after
  in_systemd 'sh /var/lib/dpkg/info/happy.postinst configure 0.0~older' || fail "the package's postinst failed"
  after=$(new_main_pid "$before")
  echo "package upgrade (postinst configure 0.0~older): main process $before -> $after, $(in_systemd 'systemctl is-active happy'), restarts: $(in_systemd 'systemctl show -p NRestarts --value happy')"
  [ "$after" != "$before" ] || fail "the package upgrade did not upgrade the running server in place"
  in_systemd 'journalctl -u happy -o cat --no-pager | grep -c "upgrade: the new process serves"' | grep -q '^2$' \
    || fail "the package upgrade did not go through SIGUSR2"
  in_systemd 'happyclient --room systemd-check state' | grep -q 'happiness *70' || fail "the room after the package upgrade"
  in_systemd 'systemctl stop happy'
  result=$(in_systemd 'systemctl show -p Result --value happy; systemctl show -p ExecMainStatus --value happy' | tr '\n' ' ')
  echo "systemctl stop: result and status $result"
  [ "$result" = "success 0 " ] || fail "happy.service did not stop cleanly: $result"
  echo "$(in_systemd 'systemd-analyze security happy.service | tail -1')"
  quiet podman rm -f -v -t 5 "$tag" >/dev/null
fi
podman rmi -f "$image-systemd" >/dev/null 2>&1 || true

step "result"
if [ ${#failures[@]} -gt 0 ]; then
  printf 'container-check: %d failed:\n' "${#failures[@]}"; printf '  %s\n' "${failures[@]}"
  exit 1
fi
echo "container-check: the image builds and runs: all checks passed"

#!/usr/bin/env bash
# Builds happy_VERSION_amd64.deb with dpkg-deb from what scripts/install.sh installs (PREFIX
# /usr, the unit in /lib/systemd/system as Debian 12 has it), the maintainer scripts and control
# file of packaging/debian, and Depends computed by dpkg-shlibdeps from the two programs.
# Usage: scripts/build-deb.sh [OUTDIR]   (default .build/deb; prints the package's path last)
# VERSION (default: scripts/version.sh) must be what the built programs print; MAINTAINER
# names the package's maintainer.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
out=${1:-$root/.build/deb}
VERSION=${VERSION:-$("$root/scripts/version.sh")}
MAINTAINER=${MAINTAINER:-Happy developers <dev@happy.invalid>}
BINDIR=${BINDIR:-$root/.build/package/release}
export BINDIR

dpkg --validate-version "$VERSION" || { echo "build-deb: \"$VERSION\" is no Debian version" >&2; exit 1; }
built=$("$BINDIR/happyserver" --version | awk '{ print $2 }')
if [ "$built" != "$VERSION" ]; then
  echo "build-deb: $BINDIR/happyserver says $built, not $VERSION: build it with HAPPY_VERSION=$VERSION (make deb does)" >&2
  exit 1
fi

stage=$out/stage
tree=$stage/tree
rm -rf "$stage"
mkdir -p "$tree/DEBIAN" "$stage/shlibs/debian"
PREFIX=/usr SYSCONFDIR=/etc SYSTEMDUNITDIR=/lib/systemd/system SYSUSERSDIR=/usr/lib/sysusers.d DESTDIR=$tree \
  "$root/scripts/install.sh" >/dev/null

doc=$tree/usr/share/doc/happy
first=$({ git -C "$root" log --reverse --format=%cd --date=format:%Y 2>/dev/null || true; } | sed -n 1p)
last=$(git -C "$root" log -1 --format=%cd --date=format:%Y 2>/dev/null || date +%Y)
years=${first:-$last}; [ "$years" = "$last" ] || years="$years-$last"
sed "s/@YEARS@/$years/" "$root/packaging/copyright" >"$doc/copyright"
chmod 0644 "$doc/copyright"
commit=$(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo unknown)
date=$(git -C "$root" log -1 --format=%cD 2>/dev/null || date -R)
printf 'happy (%s) unstable; urgency=medium\n\n  * Built from commit %s.\n\n -- %s  %s\n' \
  "$VERSION" "$commit" "$MAINTAINER" "$date" | gzip -9n >"$doc/changelog.gz"
chmod 0644 "$doc/changelog.gz"

# The Debian libraries the programs link to, as Depends (libc6, libwebsockets17, libcairo2...).
# control.in adds what no linker sees: libwebsockets' libev plugin, which lws loads at run time
# (happyserver cannot create its context without it), and procps for the unit's /bin/kill.
printf 'Source: happy\n\nPackage: happy\nArchitecture: amd64\n' >"$stage/shlibs/debian/control"
depends=$(cd "$stage/shlibs" && dpkg-shlibdeps -O "-e$tree/usr/bin/happyserver" "-e$tree/usr/bin/happyclient" 2>/dev/null \
  | sed -n 's/^shlibs:Depends=//p')
[ -n "$depends" ] || { echo "build-deb: dpkg-shlibdeps found no libraries" >&2; exit 1; }

size=$(du -sk --exclude=DEBIAN "$tree" | cut -f1)
sed -e "s|@VERSION@|$VERSION|" -e "s|@MAINTAINER@|$MAINTAINER|" -e "s|@INSTALLED_SIZE@|$size|" \
  -e "s|@DEPENDS@|$depends|" "$root/packaging/debian/control.in" >"$tree/DEBIAN/control"
echo /etc/happy/config.json >"$tree/DEBIAN/conffiles"
for script in postinst prerm postrm; do
  install -m 0755 "$root/packaging/debian/$script" "$tree/DEBIAN/$script"
done
(cd "$tree" && find . \( -path ./DEBIAN -o -path ./etc \) -prune -o -type f -print | sed 's|^\./||' | LC_ALL=C sort \
  | xargs md5sum >DEBIAN/md5sums)
chmod 0644 "$tree/DEBIAN/control" "$tree/DEBIAN/conffiles" "$tree/DEBIAN/md5sums"

deb=$out/happy_${VERSION}_amd64.deb
rm -f "$out"/happy_*_amd64.deb
dpkg-deb --root-owner-group -Zxz --build "$tree" "$deb" >/dev/null
rm -rf "$stage"
echo "$deb"

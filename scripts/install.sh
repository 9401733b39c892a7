#!/usr/bin/env bash
# Installs happyserver, happyclient, the page, the configuration, the systemd unit, the
# manual pages and the documentation under DESTDIR: what `make install` and `make deb` do.
#
#   PREFIX=/usr/local       programs in PREFIX/bin, the page in PREFIX/share/happy/web,
#                           manual pages in PREFIX/share/man/man1, documents in PREFIX/share/doc/happy
#   DESTDIR=                a staging root to install into (a package's)
#   SYSCONFDIR=/etc         the configuration in SYSCONFDIR/happy/config.json, never overwritten
#   SYSTEMDUNITDIR=PREFIX/lib/systemd/system    the unit happy.service
#   SYSUSERSDIR=PREFIX/lib/sysusers.d           happy.conf, the service's user for systemd-sysusers
#   BINDIR=.build/package/release               where the built programs are
#
# The service keeps its data in /var/lib/happy (systemd's StateDirectory=happy).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
PREFIX=${PREFIX:-/usr/local}
DESTDIR=${DESTDIR:-}
SYSCONFDIR=${SYSCONFDIR:-/etc}
SYSTEMDUNITDIR=${SYSTEMDUNITDIR:-$PREFIX/lib/systemd/system}
SYSUSERSDIR=${SYSUSERSDIR:-$PREFIX/lib/sysusers.d}
BINDIR=${BINDIR:-$root/.build/package/release}

for program in happyserver happyclient; do
  [ -x "$BINDIR/$program" ] || { echo "install: no $BINDIR/$program; build it first (make install builds it)" >&2; exit 1; }
done

share=$DESTDIR$PREFIX/share
install -d "$DESTDIR$PREFIX/bin" "$share/happy" "$share/man/man1" "$share/doc/happy" \
  "$DESTDIR$SYSCONFDIR/happy" "$DESTDIR$SYSTEMDUNITDIR" "$DESTDIR$SYSUSERSDIR"

# The programs, without their symbol tables (Swift's reflection metadata, which check-config
# walks, is not in them).
for program in happyserver happyclient; do
  install -m 0755 "$BINDIR/$program" "$DESTDIR$PREFIX/bin/$program"
  strip --strip-unneeded --remove-section=.comment --remove-section=.note "$DESTDIR$PREFIX/bin/$program"
done

# The page, as it is in web/.
rm -rf "$share/happy/web"
cp -r --no-preserve=ownership "$root/web" "$share/happy/web"
find "$share/happy/web" -type d -exec chmod 0755 {} + -o -type f -exec chmod 0644 {} +

# The configuration: the packaged one with this PREFIX's page; an existing one is kept.
config=$DESTDIR$SYSCONFDIR/happy/config.json
if [ -e "$config" ]; then
  echo "install: kept the existing $config"
else
  sed "s|/usr/share/happy/web|$PREFIX/share/happy/web|" "$root/packaging/config.json" >"$config"
  chmod 0644 "$config"
fi

# The unit, pointing at this PREFIX's server and this SYSCONFDIR's configuration.
sed -e "s|/usr/bin/happyserver|$PREFIX/bin/happyserver|g" -e "s|/etc/happy/|$SYSCONFDIR/happy/|g" \
  "$root/packaging/happy.service" >"$DESTDIR$SYSTEMDUNITDIR/happy.service"
chmod 0644 "$DESTDIR$SYSTEMDUNITDIR/happy.service"
install -m 0644 "$root/packaging/sysusers.conf" "$DESTDIR$SYSUSERSDIR/happy.conf"

# Manual pages, from the programs' --help texts.
for program in happyserver happyclient; do
  "$root/scripts/manpage.sh" "$program" "$DESTDIR$PREFIX/bin/$program" | gzip -9n >"$share/man/man1/$program.1.gz"
  chmod 0644 "$share/man/man1/$program.1.gz"
done

for doc in README.md docs/configuration.md docs/operations.md; do
  install -m 0644 "$root/$doc" "$share/doc/happy/$(basename "$doc")"
done
echo "install: happy $("$DESTDIR$PREFIX/bin/happyserver" --version | awk '{ print $2 }') in ${DESTDIR:-/}"

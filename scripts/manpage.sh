#!/usr/bin/env bash
# Writes the manual page of happyserver or happyclient to standard output, from the built
# program's own --help texts (so the page says what the program does, word for word), with
# packaging/man/PROGRAM.sections (NAME, FILES, SEE ALSO...) around them.
# Usage: scripts/manpage.sh happyserver|happyclient BINARY
set -euo pipefail
program=${1:?usage: scripts/manpage.sh happyserver|happyclient BINARY}
binary=${2:?usage: scripts/manpage.sh happyserver|happyclient BINARY}
root=$(cd "$(dirname "$0")/.." && pwd)
sections=$root/packaging/man/$program.sections
[ -f "$sections" ] || { echo "manpage: no $sections" >&2; exit 2; }

version=$("$binary" --version | awk '{ print $2 }')
date=$(git -C "$root" log -1 --format=%cd --date=format:%Y-%m-%d 2>/dev/null || date -u +%Y-%m-%d)

# Text shown as it is: no filling, backslashes and leading dots or quotes escaped.
verbatim() {
  echo ".nf"
  sed -e 's/\\/\\e/g' -e "s/^\\([.']\\)/\\\\\\&\\1/" -e 's/-/\\-/g'
  echo ".fi"
}

# The part of the sections file between "@NAME" and the next "@...".
part() {
  awk -v want="@$1" '/^@/ { on = ($0 == want); next } on' "$sections"
}

echo ".TH $(tr a-z A-Z <<<"$program") 1 \"$date\" \"happy $version\" \"User Commands\""
part head
echo ".SH DESCRIPTION"
"$binary" --help | verbatim
case "$program" in
  happyserver)
    for command in check-config token; do
      echo ".SS \"happyserver $command\""
      "$binary" "$command" --help | verbatim
    done
    ;;
  happyclient)
    commands=$("$binary" --help | awk '/^(operator )?commands/ { on = 1; next } /^[^ ]/ { on = 0 } on && /^  [a-z]/ { print $1 }')
    for command in $commands; do
      [ "$command" = help ] && continue
      echo ".SS \"happyclient $command\""
      "$binary" "$command" --help | verbatim
    done
    ;;
esac
part tail

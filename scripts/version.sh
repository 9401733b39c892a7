#!/bin/sh
# Prints this tree's version in a form Debian accepts, from `git describe --tags --always --dirty`:
#   tag v1.2.3 (or 1.2.3) on HEAD       1.2.3
#   5 commits past that tag             1.2.3+git5.abc1234
#   no tag yet                          0.0~git20250106.412.abc1234  (commit date UTC, commit count, hash)
#   uncommitted changes                 any of these with +dirty
# The count keeps two untagged builds of one day in commit order. HAPPY_VERSION, when set, wins
# (a tree without git, such as a container build's context, is given its version that way).
set -eu
if [ -n "${HAPPY_VERSION:-}" ]; then echo "$HAPPY_VERSION"; exit 0; fi
cd "$(dirname "$0")/.."
if ! described=$(git describe --tags --always --dirty 2>/dev/null); then
  echo "0.0~unknown"
  exit 0
fi
dirty=
case "$described" in *-dirty) dirty=+dirty; described=${described%-dirty} ;; esac
hash=$(git rev-parse --short=7 HEAD)
if tag=$(git describe --tags --abbrev=0 2>/dev/null); then
  base=$(echo "${tag#v}" | tr -c 'A-Za-z0-9.+~\n' '.')
  case "$base" in [0-9]*) ;; *) base="0.0~$base" ;; esac
  if [ "$described" = "$tag" ]; then
    version=$base
  else
    version="$base+git$(git rev-list --count "$tag..HEAD").$hash"
  fi
else
  date=$(TZ=UTC git log -1 --format=%cd --date=format-local:%Y%m%d)
  version="0.0~git$date.$(git rev-list --count HEAD).$hash"
fi
if [ -n "$dirty" ]; then
  case "$version" in *+*) version="$version.dirty" ;; *) version="$version$dirty" ;; esac
fi
echo "$version"

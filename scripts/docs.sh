#!/usr/bin/env bash
# Builds the DocC archives of the client library (HappyClientKit and the
# modules it re-exports: HappyClientTransport, HappyClientLWS on Linux,
# HappyCore) and fails when a public symbol written in this repository has
# no documentation comment.
# Usage: scripts/docs.sh   -> .build/docs/HappyClientKit.doccarchive (and the others')
# Open an archive with `docc preview` or serve it as static files.
set -euo pipefail
cd "$(dirname "$0")/.."
out=.build/docs
graphs=$out/symbol-graphs
# Kept between runs: a module is only compiled again, and its graph written, when it changed.
mkdir -p "$graphs"
modules="HappyClientKit HappyClientTransport HappyClientLWS HappyCore"
for module in $modules; do
  [ -f "$graphs/$module.symbols.json" ] || rm -rf .build/docs-build
done
# Its own build directory: the symbol-graph flags would otherwise rebuild the main one.
swift build --scratch-path .build/docs-build --target HappyClientKit \
  -Xswiftc -emit-symbol-graph -Xswiftc -emit-symbol-graph-dir -Xswiftc "$PWD/$graphs" \
  -Xswiftc -symbol-graph-minimum-access-level -Xswiftc public
for module in $modules; do
  one=$out/graphs-$module
  rm -rf "$one" "$out/$module.doccarchive" && mkdir -p "$one"
  cp "$graphs/$module.symbols.json" "$one/"
  catalog=Sources/$module/$module.docc
  [ -d "$catalog" ] || catalog=
  docc convert $catalog --additional-symbol-graph-dir "$one" \
    --fallback-display-name "$module" --fallback-bundle-identifier "org.happy.$module" \
    --experimental-documentation-coverage --coverage-summary-level brief \
    --output-dir "$out/$module.doccarchive" >/dev/null
done
python3 - "$out" $modules <<'PY'
import json, sys
# Members every type gets from the standard library (==, hashValue, rawValue,
# localizedDescription…) carry the standard library's documentation, not ours.
inherited = {"!=(_:_:)", "==(_:_:)", "<(_:_:)", ">(_:_:)", "<=(_:_:)", ">=(_:_:)", "..<(_:_:)", "...(_:_:)",
             "...(_:)", "..<(_:)", "hashValue", "hash(into:)", "init(rawValue:)", "rawValue",
             "localizedDescription", "init(integerLiteral:)", "init(stringLiteral:)", "description"}
missing = []
for module in sys.argv[2:]:
    entries = json.load(open(f"{sys.argv[1]}/{module}.doccarchive/documentation-coverage.json"))
    total = 0
    for entry in entries:
        title = entry.get("title", "")
        if title in inherited or title.endswith("Implementations") or title == module:
            continue
        total += 1
        if not entry.get("hasAbstract"):
            missing.append(f"{module}: {title} ({entry.get('referencePath', '')})")
    print(f"docs: {module}: {total} public symbols written here")
if missing:
    print(f"docs: {len(missing)} public symbols have no documentation comment:", file=sys.stderr)
    for line in missing:
        print("  " + line, file=sys.stderr)
    sys.exit(1)
print("docs: every one has a documentation comment; archives in " + sys.argv[1])
PY

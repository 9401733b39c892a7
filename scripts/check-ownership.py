#!/usr/bin/env python3
"""Checks that each part of a room's state is written only by the component
that owns it (docs/architecture.md, "Who owns what"). A connection's parts
need no check: only their owner holds the key that changes them.

`RoomRuntime` keeps its changing state in values (structs whose fields are
`private(set)`), each owned by one component. The compiler stops anyone from
setting those fields; this check stops anyone but the owner from calling the
values' mutating methods or replacing them whole. It also fails when the
class gains a settable stored property that is neither `private(set)` nor
listed here.

Usage: scripts/check-ownership.py   (exit 1 and one line per finding)
"""
import pathlib
import re
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
SERVER = ROOT / "Sources" / "HappyServer"
CORE = ROOT / "Sources" / "HappyCore"

# class file -> {property: (file declaring its type, the struct, owner files)}
OWNED = {
    "Rooms/RoomRuntime.swift": {
        "log": (CORE / "Delivery/BroadcastLog.swift", "BroadcastLog", ["Delivery/Broadcaster.swift"]),
        "commits": ("Commits/IntentTally.swift", "RoomCommitState", ["Commits/CommitCoordinator.swift"]),
        "streams": ("Frames/RoomStreams.swift", "RoomStreams", ["Frames/FrameStreams.swift"]),
        "pointers": ("Pointers/RoomPointers.swift", "RoomPointers", ["Pointers/PointerService.swift"]),
        "crowd": ("Delivery/RoomCrowd.swift", "RoomCrowd", ["Delivery/CrowdDelivery.swift"]),
        "votes": ("Crowd/VoteCounter.swift", "RoomVotes", ["Crowd/VoteCounter.swift"]),
    },
}


def struct_body(text, name):
    """The source of `struct name { ... }` (braces balanced)."""
    match = re.search(r"\bstruct\s+%s\b[^{]*\{" % re.escape(name), text)
    if not match:
        return None
    depth, index = 1, match.end()
    while depth and index < len(text):
        depth += {"{": 1, "}": -1}.get(text[index], 0)
        index += 1
    return text[match.start():index]


def mutating_methods(path, struct):
    body = struct_body(path.read_text(), struct)
    if body is None:
        raise SystemExit(f"check-ownership: no struct {struct} in {path}")
    return sorted(set(re.findall(r"\bmutating\s+func\s+(\w+)", body)))


def class_stored_vars(path):
    """Settable stored properties declared at the class body's top level."""
    found = []
    for line in path.read_text().splitlines():
        match = re.match(r"^    (?:(private|fileprivate)(?:\(set\))? )?var (\w+)\b(.*)$", line)
        if not match:
            continue
        access, name, rest = match.groups()
        if access or re.match(r"\s*:\s*[^=]*\{", rest):  # private, or a computed property
            continue
        found.append(name)
    return found


def main():
    sources = sorted(SERVER.rglob("*.swift"))
    problems = []
    checked = 0
    for class_file, properties in OWNED.items():
        for name in class_stored_vars(SERVER / class_file):
            if name not in properties:
                problems.append(f"{class_file}: `var {name}` is settable by anyone; make it private(set) "
                                "or a value owned by one component (and list it in scripts/check-ownership.py)")
        for prop, (type_file, struct, owners) in properties.items():
            type_path = type_file if isinstance(type_file, pathlib.Path) else SERVER / type_file
            methods = mutating_methods(type_path, struct)
            allowed = {SERVER / owner for owner in owners} | {SERVER / class_file}
            calls = re.compile(r"\.%s\.(%s)\(" % (prop, "|".join(methods))) if methods else None
            replaced = re.compile(r"(?<!\bself)\.%s\s*=[^=]" % prop)  # not a component setting its own field
            for source in sources:
                if source in allowed:
                    continue
                for number, line in enumerate(source.read_text().splitlines(), 1):
                    if (calls and calls.search(line)) or replaced.search(line):
                        relative = source.relative_to(ROOT)
                        problems.append(f"{relative}:{number}: writes `{prop}` ({struct}), which only "
                                        f"{', '.join(owners)} may change: ask its owner instead\n    {line.strip()}")
            checked += 1
    for problem in problems:
        print(problem)
    if problems:
        print(f"check-ownership: {len(problems)} write(s) outside their owner", file=sys.stderr)
        return 1
    print(f"check-ownership: {checked} owned parts of RoomRuntime, each written only by its owner")
    return 0


if __name__ == "__main__":
    sys.exit(main())

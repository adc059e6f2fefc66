#!/usr/bin/env python3
"""The include graph between cronwheel's rooms, checked against its floors (docs/architecture.md,
"Libraries and folders").

A room is a library folder (base, ringwheel, common, xxljob, executor, cli) or one of the admin's areas
(admin/model, admin/schedule, ...). Every quoted #include of a production file (tests, benchmarks and
tools aside) is resolved the way the compiler would (the including file's folder, then each library's
include/ and src/ folders) to the file it names, and so to the room that file lives in. The check fails
when a room includes a room on a higher floor (an arrow back up), or when two rooms of one floor include
each other (a cycle). Rooms on one floor may otherwise include each other (for instance the admin's
catalog and dispatch, which share a floor, do not).

  tests/tools/include_layers.py [--root DIR] [--graph]

--graph prints every arrow with its count and one example. Exit 0 when the graph keeps to the floors,
1 with one line per arrow that does not. Run by ctest (include_layers, label unit).
"""

import argparse
import collections
import os
import re
import sys

# Lower floors first. A room may include its own floor (no cycle) and the floors below it.
FLOORS = [
    ["base"],
    ["ringwheel"],
    ["common"],
    ["xxljob"],
    ["executor", "cli", "admin/embedded", "admin/model"],
    ["admin/schedule"],
    ["admin/dispatch", "admin/catalog"],
    # The results of fires ask executors (the lost-result monitor, the output puller: dispatch's client);
    # single sign-on sends its requests through results' guarded libcurl.
    ["admin/results"],
    ["admin/auth"],
    ["admin/store"],
    ["admin/api"],
    ["admin/app"],
]
LIBRARIES = ["base", "ringwheel", "common", "xxljob", "executor", "cli", "admin"]
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def room_of(rel):
    """The room of a repository-relative path, or None outside the production tree."""
    parts = rel.split("/")
    if parts[0] not in LIBRARIES:
        return None
    if parts[0] != "admin":
        return parts[0]
    # admin/include/admin/<area>/x.hpp, admin/src/<area>/x.cpp; the console's files and the migrations
    # compiled in (admin/src/embedded.hpp) are data; the rest of admin/src is the app's (main.cpp).
    if rel == "admin/src/embedded.hpp":
        return "admin/embedded"
    if parts[1] == "include" and len(parts) > 4:
        return "admin/" + parts[3]
    if parts[1] == "src" and len(parts) > 3:
        return "admin/" + parts[2]
    return "admin/app"


def production_files(root):
    for lib in LIBRARIES:
        for top in ("include", "src"):
            base = os.path.join(root, lib, top)
            for dirpath, _, names in os.walk(base):
                for name in names:
                    if name.endswith((".cpp", ".hpp", ".h")):
                        yield os.path.join(dirpath, name)


def include_dirs(root):
    dirs = []
    for lib in LIBRARIES:
        for top in ("include", "src"):
            d = os.path.join(root, lib, top)
            if os.path.isdir(d):
                dirs.append(d)
    return dirs


def arrows(root):
    dirs = include_dirs(root)
    out = collections.defaultdict(list)  # (from, to) -> [example]
    for path in production_files(root):
        rel = os.path.relpath(path, root)
        src = room_of(rel)
        with open(path, encoding="utf-8") as f:
            text = f.read()
        for name in INCLUDE.findall(text):
            for d in [os.path.dirname(path)] + dirs:
                target = os.path.normpath(os.path.join(d, name))
                if os.path.isfile(target):
                    dst = room_of(os.path.relpath(target, root))
                    if dst is not None and dst != src:
                        out[(src, dst)].append(f"{rel} -> {name}")
                    break
    return out


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--root", default=os.path.join(os.path.dirname(__file__), "..", ".."))
    parser.add_argument("--graph", action="store_true")
    args = parser.parse_args()
    root = os.path.abspath(args.root)
    floor = {room: i for i, rooms in enumerate(FLOORS) for room in rooms}
    graph = arrows(root)
    if not graph:
        print(f"no production sources under {root}: give the repository's root (--root)")
        return 1
    bad = []
    for (src, dst), examples in sorted(graph.items()):
        if args.graph:
            print(f"{src} -> {dst}  ({len(examples)}; e.g. {examples[0]})")
        for room in (src, dst):
            if room not in floor:
                bad.append(f"room {room} has no floor in tests/tools/include_layers.py (FLOORS)")
        if src not in floor or dst not in floor:
            continue
        if floor[dst] > floor[src]:
            bad.append(f"{src} (floor {floor[src]}) includes {dst} (floor {floor[dst]}), a floor above: "
                       f"{len(examples)} include(s), e.g. {examples[0]}")
        elif floor[dst] == floor[src] and (dst, src) in graph:
            bad.append(f"{src} and {dst} include each other (a cycle on floor {floor[src]}): "
                       f"e.g. {examples[0]} and {graph[(dst, src)][0]}")
    for line in sorted(set(bad)):
        print(line)
    rooms = {r for edge in graph for r in edge}
    print(f"{len(rooms)} rooms, {len(FLOORS)} floors, {len(graph)} arrows, {len(set(bad))} against the floors")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""The rooms depend one way: no source file includes a header of a room
above its own (README, "Layout"). Rooms are listed bottom first; a file's
room is the longest listed folder its path starts with. Exits 1 and names
every include that points up. Usage: tests/scripts/room_order.py [SOURCE_ROOT]"""
import pathlib
import re
import sys

ROOMS = [
    "ordering",
    "schema",
    "firehose",            # decoding and ingest logic
    "firehose/client",     # the HTTP/XRPC and websocket client
    "firehose/identity",
    "firehose/consumer",
    "appview/http",
    "appview",             # configuration and logging (the folder's own files)
    "appview/outline",
    "appview/signin",
    "appview/write",
    "appview/imports",
    "appview/xrpc",
    "appview/cli",
    "appview/main.cpp",
]


def room_of(path):
    best = None
    for index, room in enumerate(ROOMS):
        if path == room or path.startswith(room + "/"):
            if best is None or len(room) > len(ROOMS[best]):
                best = index
    return best


def main():
    root = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else ".")
    include = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)
    problems = []
    checked = 0
    for top in ("ordering", "schema", "firehose", "appview"):
        for file in sorted((root / top).rglob("*")):
            if file.suffix not in (".cpp", ".hpp"):
                continue
            rel = file.relative_to(root).as_posix()
            own = room_of(rel)
            checked += 1
            for target in include.findall(file.read_text()):
                other = room_of(target)
                if other is not None and other > own:
                    problems.append(f"{rel} ({ROOMS[own]}) includes {target} ({ROOMS[other]})")
    for problem in problems:
        print(problem)
    print(f"{checked} files checked, {len(problems)} includes pointing up")
    return 1 if problems or checked == 0 else 0


if __name__ == "__main__":
    sys.exit(main())

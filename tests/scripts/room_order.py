#!/usr/bin/env python3
"""The rooms depend one way: no source file includes a header of a room
above its own (README, "Layout"). Rooms are listed bottom first; a file's
room is the longest listed folder its path starts with. Inside the rooms
that grow most (schema/, and the decoding room of firehose/) the files too
have a written order, bottom first: a file includes only files of its own
rank or below, and a file of the room missing from the order is a
problem (place it). The connection behind a Store is for tests and
benchmarks: schema/store_internals.hpp is included nowhere else. Exits 1
and names every include that points up.
Usage: tests/scripts/room_order.py [SOURCE_ROOT]"""
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
    "appview/live",        # change streams
    "appview/xrpc",
    "appview/cli",
    "appview/main.cpp",
]


# Inside a room: ranks bottom first, files named by their stem (a .hpp and
# its .cpp share one); a file includes only stems of its own rank or below.
FILE_ORDER = {
    "schema": [
        ["error", "enum_names"],
        ["syntax"],
        ["datetime", "base64", "json_text", "import_state"],
        ["node_record", "record_text"],
        ["note_record", "outline_record"],
        ["search_query"],
        ["search_match"],
        ["rows"],
        ["sqlite"],
        ["search_index"],
        ["search_run", "search_walks", "search_prefixes"],
        ["positions"],
        ["position_blocks"],
        ["positions_read", "positions_upkeep", "positions_check"],
        ["group_upkeep"],
        ["migrations"],
        ["checkpointer"],
        ["reader", "reader_state", "reader_changes", "reader_siblings",
         "reader_ancestors", "reader_search", "reader_outline"],
        ["side_tables"],
        ["store_records"],
        ["store", "store_files", "store_repos"],
        ["store_check", "store_internals"],
    ],
    "firehose": [
        ["cid"],
        ["cbor_reader"],
        ["dag_cbor"],
        ["car"],
        ["crypto"],
        ["mst"],
        ["mst_tree"],
        ["frame"],
        ["verify"],
        ["records"],
        ["bounded_queue", "metrics"],
        ["repo_sync"],
        ["ingestor"],
    ],
}

TEST_ONLY = {"schema/store_internals.hpp": ("tests/", "bench/")}

# cpprestsdk (and its task library) only in the network client: the rest of
# the house never sees a cpprest type.
CPPREST_ROOMS = ("firehose/client/",)
CPPREST = re.compile(r'^\s*#\s*include\s+<(cpprest|pplx)/', re.M)


def file_rank(room, path):
    """(rank, known) of a file directly inside `room`, else None."""
    if room not in FILE_ORDER:
        return None
    rel = path[len(room) + 1:]
    if "/" in rel:
        return None
    stem = rel.rsplit(".", 1)[0]
    for rank, stems in enumerate(FILE_ORDER[room]):
        if stem in stems:
            return rank
    return -1


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
    for top in ("ordering", "schema", "firehose", "appview", "tests", "bench"):
        for file in sorted((root / top).rglob("*")):
            if file.suffix not in (".cpp", ".hpp"):
                continue
            rel = file.relative_to(root).as_posix()
            text = file.read_text()
            targets = include.findall(text)
            if top not in ("tests", "bench") and CPPREST.search(text) and not rel.startswith(CPPREST_ROOMS):
                problems.append(f"{rel} includes cpprestsdk, which stays in {' and '.join(CPPREST_ROOMS)}")
            for target, allowed in TEST_ONLY.items():
                if target in targets and not rel.startswith(allowed):
                    problems.append(f"{rel} includes {target}, which only tests and benchmarks may")
            if top in ("tests", "bench"):
                continue
            own = room_of(rel)
            checked += 1
            own_room = ROOMS[own] if own is not None else None
            own_rank = file_rank(own_room, rel) if own_room else None
            if own_rank == -1:
                problems.append(f"{rel} is not in {own_room}/'s file order (tests/scripts/room_order.py)")
            for target in targets:
                other = room_of(target)
                if other is not None and other > own:
                    problems.append(f"{rel} ({ROOMS[own]}) includes {target} ({ROOMS[other]})")
                elif other == own and own_rank is not None and own_rank >= 0:
                    target_rank = file_rank(own_room, target)
                    if target_rank is not None and target_rank > own_rank:
                        problems.append(f"{rel} includes {target}, above it in {own_room}/'s file order")
    for problem in problems:
        print(problem)
    print(f"{checked} files checked, {len(problems)} includes pointing up")
    return 1 if problems or checked == 0 else 0


if __name__ == "__main__":
    sys.exit(main())

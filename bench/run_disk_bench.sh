#!/usr/bin/env bash
# What an imported outline costs on disk: imports a generated WorkFlowy-style
# OPML outline (bench/make_opml.py) into a fresh local database, then prints
# the file's size, its free pages, the bytes each table and index holds
# (SQLite's dbstat), the bytes a bullet costs, and the size of a compacted
# copy (`backup --compact`). The plan of the finished import is dropped with
# it (import_plan holds nothing).
# Usage: bench/run_disk_bench.sh [NODES]   (default 190000)
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
./scripts/build.sh --target bulleted-appview >/dev/null
binary="$root/${BUILD_DIR:-build}/bulleted-appview"
nodes="${1:-190000}"
scratch="$(mktemp -d "${TMPDIR:-/tmp}/bulleted-disk-bench-XXXXXX")"
trap 'rm -rf "$scratch"' EXIT
python3 bench/make_opml.py "$nodes" > "$scratch/outline.opml"
echo "outline: $nodes nodes, $(stat -c %s "$scratch/outline.opml") bytes of OPML"
"$binary" import "$scratch/outline.opml" --repo did:plc:bench --db "$scratch/bench.db" >/dev/null
# Everything in the main file (the WAL folded in first).
sqlite3 "$scratch/bench.db" "PRAGMA wal_checkpoint(TRUNCATE);" >/dev/null
bullets=$(sqlite3 "$scratch/bench.db" "SELECT nodes FROM index_totals")
size=$(stat -c %s "$scratch/bench.db")
free=$(sqlite3 "$scratch/bench.db" "PRAGMA freelist_count")
page=$(sqlite3 "$scratch/bench.db" "PRAGMA page_size")
echo "bullets: $bullets; file: $size bytes; free pages: $free of $page bytes"
echo "by table and index (bytes):"
sqlite3 "$scratch/bench.db" \
  "SELECT '  ' || name || ' ' || SUM(pgsize) FROM dbstat GROUP BY name ORDER BY SUM(pgsize) DESC"
echo "bytes a bullet: $(( (size - free * page) / bullets )) (live pages / bullets)"
"$binary" backup "$scratch/compact.db" --compact --db "$scratch/bench.db" >/dev/null
echo "compacted copy: $(stat -c %s "$scratch/compact.db") bytes"

#!/usr/bin/env bash
# What keeping child counts (schema 6) and position blocks (schema 7) costs
# the writers: the same verified ingest (firehose_bench: decode + verify +
# apply of COMMITS signed frames) and the same import (`bulleted-appview
# import` of a generated NODES-node WorkFlowy outline) on an index with the
# triggers that keep them and on one without (dropped from the scratch index
# before the run), in ROUNDS alternating rounds (default 3). Prints every
# run and the median of the per-round ratios.
# Usage: [ROUNDS=N] bench/run_upkeep_bench.sh [COMMITS] [NODES]   (default 5000, 100000)
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
./scripts/build.sh >/dev/null
bin="${BUILD_DIR:-build}"
work="$(mktemp -d "${TMPDIR:-/tmp}/bulleted-upkeep-bench-XXXXXX")"
trap 'rm -rf "$work"' EXIT
"$bin/bench/make_frames" "$work/frames" "${1:-5000}" >/dev/null
python3 bench/make_opml.py "${2:-100000}" > "$work/outline.opml"
python3 - "$root/$bin" "$work" "${ROUNDS:-3}" <<'PY'
import json, os, sqlite3, statistics, subprocess, sys, time
build, work, rounds = sys.argv[1], sys.argv[2], int(sys.argv[3])
drop = ("DROP TRIGGER nodes_count_insert; DROP TRIGGER nodes_count_delete;"
        " DROP TRIGGER nodes_count_move; DROP TRIGGER nodes_blocks_insert;"
        " DROP TRIGGER nodes_blocks_delete; DROP TRIGGER nodes_blocks_move;"
        " DROP TRIGGER group_counts_empty;")

def ingest(upkeep):
    env = dict(os.environ, BULLETED_BENCH_NO_UPKEEP="0" if upkeep else "1")
    out = subprocess.run([f"{build}/bench/firehose_bench", f"{work}/frames", f"{work}/ingest.db"],
                         env=env, capture_output=True, text=True, check=True).stdout
    for line in out.splitlines():
        row = json.loads(line)
        if row["benchmark"] == "decodeAndApply":
            return row["opsPerSecond"]
    sys.exit("no decodeAndApply line")

def imported(upkeep):
    db = f"{work}/import.db"
    for suffix in ("", "-wal", "-shm"):
        if os.path.exists(db + suffix):
            os.remove(db + suffix)
    subprocess.run([f"{build}/bulleted-appview", "check", "--db", db], capture_output=True, check=True)
    if not upkeep:
        connection = sqlite3.connect(db)
        connection.executescript(drop)
        connection.close()
    start = time.monotonic()
    subprocess.run([f"{build}/bulleted-appview", "import", f"{work}/outline.opml", "--repo",
                    "did:plc:bench", "--db", db], capture_output=True, check=True)
    return time.monotonic() - start

ingest_ratios, import_ratios = [], []
for round in range(1, rounds + 1):
    with_ops, without_ops = ingest(True), ingest(False)
    with_s, without_s = imported(True), imported(False)
    ingest_ratios.append(without_ops / with_ops)
    import_ratios.append(with_s / without_s)
    print(f"round {round}: ingest {with_ops:,.0f} ops/s with, {without_ops:,.0f} without "
          f"({ingest_ratios[-1]:.3f}x the time); import {with_s:.2f} s with, {without_s:.2f} s "
          f"without ({import_ratios[-1]:.3f}x)")
print(f"median cost of keeping them: ingest {100 * (statistics.median(ingest_ratios) - 1):+.1f}%, "
      f"import {100 * (statistics.median(import_ratios) - 1):+.1f}%")
PY

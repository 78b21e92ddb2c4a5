#!/usr/bin/env bash
# What keeping child counts (schema 6) and position blocks (schema 7) costs
# the writers: the same verified ingest (firehose_bench: decode + verify +
# apply of COMMITS signed frames) and the same import (`bulleted-appview
# import` of a generated NODES-node WorkFlowy outline) with this checkout's
# build and with a build of BASELINE, the last commit before either was kept
# (default f508942), in ROUNDS rounds (default 4) that alternate which runs
# first. Prints every run, the medians of the per-round ratios (of the
# ingest's wall-clock time, and of the CPU time of the thread that verifies
# and applies: the ingest's bottleneck, the decoder runs beside it), and
# each build's best run against the other's. The
# baseline is checked out as a git worktree with this checkout's
# bench/firehose_bench.cpp (the bench's own code, so that both report the
# same figures) and built (Release, its app view and firehose_bench only)
# into .scratch/upkeep-baseline.
# With INSTRUCTIONS=1 it then also counts, under valgrind's callgrind, the
# instructions of that thread on the same stream (everything under
# Ingestor::add, which verifies each commit and applies the full batches,
# and the last batch's Ingestor::flush), and of the apply alone (every
# Ingestor::flush): figures the host's noise does not move, though they
# leave out the time the kernel spends writing; and of the whole import of
# an outline of IMPORT_NODES nodes (default 20,000). Takes a few minutes a
# build.
# Usage: [ROUNDS=N] [BASELINE=COMMIT] [INSTRUCTIONS=1] bench/run_upkeep_bench.sh [COMMITS] [NODES]
#        (default 5000, 100000)
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
./scripts/build.sh >/dev/null
. bench/baseline_checkout.sh f508942
cp bench/firehose_bench.cpp "$base_dir/bench/firehose_bench.cpp"
cmake --build "$base_dir/build" --target bulleted-appview firehose_bench --parallel "$(nproc)" >/dev/null
bin="${BUILD_DIR:-build}"
work="$(mktemp -d "${TMPDIR:-/tmp}/bulleted-upkeep-bench-XXXXXX")"
trap 'rm -rf "$work"' EXIT
"$bin/bench/make_frames" "$work/frames" "${1:-5000}" >/dev/null
python3 bench/make_opml.py "${2:-100000}" > "$work/outline.opml"
python3 - "$root/$bin" "$base_dir/build" "$work" "${ROUNDS:-4}" <<'PY'
import json, os, statistics, subprocess, sys, time
build, base, work, rounds = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])

def ingest(build_dir):
    out = subprocess.run([f"{build_dir}/bench/firehose_bench", f"{work}/frames", f"{work}/ingest.db"],
                         capture_output=True, text=True, check=True).stdout
    for line in out.splitlines():
        row = json.loads(line)
        if row["benchmark"] == "decodeAndApply":
            return row["opsPerSecond"], row["verifyAndApplyCpuSeconds"]
    sys.exit("no decodeAndApply line")

def imported(build_dir):
    db = f"{work}/import.db"
    for suffix in ("", "-wal", "-shm"):
        if os.path.exists(db + suffix):
            os.remove(db + suffix)
    start = time.monotonic()
    subprocess.run([f"{build_dir}/bulleted-appview", "import", f"{work}/outline.opml", "--repo",
                    "did:plc:bench", "--db", db], capture_output=True, check=True)
    return time.monotonic() - start

ingest_ratios, cpu_ratios, import_ratios = [], [], []
best_ops, best_seconds = {build: 0, base: 0}, {build: float("inf"), base: float("inf")}
for round in range(1, rounds + 1):
    # Odd rounds run this build first, even rounds the baseline first
    # (whichever runs second meets a warmer page cache).
    order = [build, base] if round % 2 == 1 else [base, build]
    runs = {b: ingest(b) for b in order}
    ops = {b: runs[b][0] for b in order}
    cpu = {b: runs[b][1] for b in order}
    seconds = {b: imported(b) for b in order}
    for b in order:
        best_ops[b] = max(best_ops[b], ops[b])
        best_seconds[b] = min(best_seconds[b], seconds[b])
    ingest_ratios.append(ops[base] / ops[build])
    cpu_ratios.append(cpu[build] / cpu[base])
    import_ratios.append(seconds[build] / seconds[base])
    print(f"round {round}: ingest {ops[build]:,.0f} ops/s, baseline {ops[base]:,.0f} "
          f"({ingest_ratios[-1]:.3f}x the time; verify+apply thread {cpu[build]:.3f} s CPU, "
          f"baseline {cpu[base]:.3f} s, {cpu_ratios[-1]:.3f}x); import {seconds[build]:.2f} s, "
          f"baseline {seconds[base]:.2f} s ({import_ratios[-1]:.3f}x)")
print(f"median cost against the baseline: ingest {100 * (statistics.median(ingest_ratios) - 1):+.1f}% "
      f"(verify+apply thread's CPU {100 * (statistics.median(cpu_ratios) - 1):+.1f}%), "
      f"import {100 * (statistics.median(import_ratios) - 1):+.1f}%")
# The host's noise only ever adds time: each build's best run is its
# closest to the work it does.
print(f"best of each: ingest {best_ops[build]:,.0f} ops/s against {best_ops[base]:,.0f} "
      f"({100 * (best_ops[base] / best_ops[build] - 1):+.1f}%), import {best_seconds[build]:.2f} s "
      f"against {best_seconds[base]:.2f} s ({100 * (best_seconds[build] / best_seconds[base] - 1):+.1f}%)")
PY
if [ "${INSTRUCTIONS:-0}" = 1 ]; then
  if ! command -v valgrind >/dev/null; then
    echo "INSTRUCTIONS=1 needs valgrind (apt-get install valgrind)" >&2
    exit 1
  fi
  counted() {  # prints the thread's instructions, then the apply's
    valgrind --tool=callgrind --callgrind-out-file="$work/callgrind.out" \
      "$1/bench/firehose_bench" "$work/frames" "$work/callgrind.db" >/dev/null 2>&1
    rm -f "$work"/callgrind.db*
    callgrind_annotate --threshold=100 --inclusive=yes --tree=caller "$work/callgrind.out" |
      python3 -c '
import sys
# Each function: its callers ("<" lines), then itself ("*"), inclusive counts.
count = lambda line: int(line.split()[0].replace(",", ""))
add = flush = flush_from_main = None
for block in sys.stdin.read().split("\n\n"):
    lines = block.splitlines()
    this = next((l for l in lines if "*  " in l), "")
    if "Ingestor::add(" in this:
        add = count(this)
    elif "Ingestor::flush()" in this:
        flush = count(this)
        flush_from_main = sum(count(l) for l in lines if l.lstrip()[:1].isdigit() and "< " in l and ":main " in l)
if add is None or flush is None:
    sys.exit("no Ingestor::add or Ingestor::flush in the profile")
print(add + flush_from_main, flush)'
  }
  # The whole import process, under callgrind: every instruction it runs.
  python3 bench/make_opml.py "${IMPORT_NODES:-20000}" > "$work/counted.opml"
  imported_instructions() {
    rm -f "$work"/counted.db*
    valgrind --tool=callgrind --callgrind-out-file="$work/import.callgrind" \
      "$1/bulleted-appview" import "$work/counted.opml" --repo did:plc:bench \
      --db "$work/counted.db" >/dev/null 2>&1
    callgrind_annotate "$work/import.callgrind" | awk '/PROGRAM TOTALS/ { gsub(",", "", $1); print $1 }'
  }
  import_mine="$(imported_instructions "$root/$bin")"
  import_theirs="$(imported_instructions "$base_dir/build")"
  python3 -c "import sys; a, b = map(int, sys.argv[1:3]); \
print(f'instructions of the import of {sys.argv[3]} nodes: {a:,} against the baseline\'s {b:,} ({100 * (a / b - 1):+.1f}%)')" \
    "$import_mine" "$import_theirs" "${IMPORT_NODES:-20000}"
  read -r mine mine_apply < <(counted "$root/$bin")
  read -r theirs theirs_apply < <(counted "$base_dir/build")
  python3 -c "import sys; a, b, c, d = map(int, sys.argv[1:5]); \
print(f'instructions of the verify+apply thread on {sys.argv[5]} commits: {a:,} against the baseline\'s {b:,} ({100 * (a / b - 1):+.1f}%); of the apply alone: {c:,} against {d:,} ({100 * (c / d - 1):+.1f}%)')" \
    "$mine" "$theirs" "$mine_apply" "$theirs_apply" "${1:-5000}"
fi

#!/usr/bin/env bash
# The HTTP rows of run_http_bench.sh (getChildren, getNode, getPosition,
# getSubtree, createNode) against this checkout's build and a build of
# BASELINE (default adc1966), alternately RUNS times each (default 5; odd
# runs this build first). Prints every run's requests a second, then each
# row's median for both builds and the baseline's own min-max: a change is
# within the host's noise when its median lies inside that range. The
# baseline is built (Release: the app view and the two ceilings) into
# .scratch/upkeep-baseline, as run_upkeep_bench.sh does, and measured with
# its own bench/run_http_bench.sh.
# Usage: [RUNS=N] [BASELINE=COMMIT] [DURATION=S] bench/run_http_against_baseline.sh
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
./scripts/build.sh >/dev/null
. bench/baseline_checkout.sh adc1966
cmake --build "$base_dir/build" --target bulleted-appview http_ceiling beast_ceiling \
  --parallel "$(nproc)" >/dev/null
work="$(mktemp -d "${TMPDIR:-/tmp}/bulleted-http-baseline-XXXXXX")"
trap 'rm -rf "$work"' EXIT
rows='getChildren|getNode|getPosition|getSubtree, 2,000 nodes$|createNode'
runs="${RUNS:-5}"
for run in $(seq "$runs"); do
  if [ $((run % 2)) = 1 ]; then order="build base"; else order="base build"; fi
  for which in $order; do
    # Each build runs its own checkout's script (the same at both commits
    # measured so far), which builds and serves from that checkout's build/.
    dir="$root"; [ "$which" = base ] && dir="$base_dir"
    ONLY="$rows" "$dir/bench/run_http_bench.sh" "${DURATION:-5}" 16 |
      grep 'req/s' > "$work/$which.$run"
    sed "s/^/run $run $which: /" "$work/$which.$run"
  done
done
python3 - "$work" "$runs" <<'PY'
import re, statistics, sys
work, runs = sys.argv[1], int(sys.argv[2])
rows = {}
for which in ("build", "base"):
    for run in range(1, runs + 1):
        for line in open(f"{work}/{which}.{run}"):
            m = re.match(r"(.+?)\s{2,}([\d.]+) req/s", line)
            if m:
                rows.setdefault(m.group(1).strip(), {}).setdefault(which, []).append(float(m.group(2)))
print(f"{'row':34s} {'this build (median)':>20s} {'baseline (median)':>18s} {'baseline min-max':>20s}  within")
for name, by in rows.items():
    mine, base = statistics.median(by["build"]), statistics.median(by["base"])
    low, high = min(by["base"]), max(by["base"])
    print(f"{name:34s} {mine:20,.0f} {base:18,.0f} {low:9,.0f}-{high:<9,.0f}  {'yes' if low <= mine <= high else 'NO'}")
PY

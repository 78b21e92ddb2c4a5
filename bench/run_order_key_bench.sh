#!/usr/bin/env bash
# Runs the order-key workloads on this project's C++ library and on npm's
# fractional-indexing@4.0.0 (installed into .scratch/bench-js) in one run, and
# prints both side by side with the C++/JS ratio.
# Usage: [ROUNDS=N] bench/run_order_key_bench.sh   (builds Release into build/
# first; N alternating rounds of both sides, default 3)
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
./scripts/build.sh >/dev/null
scratch="$root/.scratch/bench-js"
mkdir -p "$scratch"
if [ ! -d "$scratch/node_modules/fractional-indexing" ]; then
  (cd "$scratch" && npm init -y >/dev/null && \
   npm install --no-audit --no-fund --loglevel=error fractional-indexing@4.0.0 >/dev/null)
fi
cp bench/js/order_key_workloads.mjs "$scratch/"
# The host's load moves both sides by 20-50% within a minute, so the two run
# alternately ROUNDS times (default 3), and each workload reports the median
# of its per-round ratios; the first round's full report follows.
rounds="${ROUNDS:-3}"
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
for round in $(seq "$rounds"); do
  "${BUILD_DIR:-build}/bench/order_key_workloads" > "$out/cpp.$round"
  node "$scratch/order_key_workloads.mjs" > "$out/js.$round"
done
python3 - "$out" "$rounds" <<'PY'
import json, statistics, sys
out, rounds = sys.argv[1], int(sys.argv[2])
load = lambda path: {r["workload"]: r for r in map(json.loads, open(path))}
cpps = [load(f"{out}/cpp.{i}") for i in range(1, rounds + 1)]
jss = [load(f"{out}/js.{i}") for i in range(1, rounds + 1)]
cpp, js = cpps[0], jss[0]
print(f"{rounds} alternating rounds; median of each side's ops/s and of the per-round C++/JS ratio:")
print(f"{'workload':8} {'C++ ops/s':>14} {'JS ops/s':>14} {'C++/JS':>8}  per-round ratios")
for w in ["a", "b", "c1", "c2", "d", "e", "e2"]:
    ratios = [c[w]["opsPerSecond"] / j[w]["opsPerSecond"] for c, j in zip(cpps, jss)]
    print(f"{w:8} {statistics.median(c[w]['opsPerSecond'] for c in cpps):14,.0f}"
          f" {statistics.median(j[w]['opsPerSecond'] for j in jss):14,.0f}"
          f" {statistics.median(ratios):8.1f}  {' '.join(f'{r:.1f}' for r in ratios)}")
ratios = [c["d"]["opsPerSecondTimerCorrected"] / j["d"]["opsPerSecondTimerCorrected"] for c, j in zip(cpps, jss)]
print(f"d with per-call timer reads subtracted: C++/JS median {statistics.median(ratios):.1f}"
      f" ({' '.join(f'{r:.1f}' for r in ratios)})")
print()
print("Round 1 in full:")
print(f"{'workload':8} {'C++ ops/s':>14} {'JS ops/s':>14} {'C++/JS':>8}  {'C++ max/mean len':>17}  {'JS max/mean len':>16}  C++ histogram / checks")
for w in ["a", "b", "c1", "c2", "d", "e", "e2"]:
    c, j = cpp[w], js[w]
    checks = "ok" if c["strictlyIncreasing"] and c["designInvalid"] == 0 and c["duplicates"] == 0 else "FAILED"
    hist = c["histogram"] if len(c["histogram"]) <= 6 else f"{len(c['histogram'])} lengths"
    extra = ""
    if "maxLengthOverSeeds" in c:
        m = c["maxLengthOverSeeds"]
        extra = f" per-seed max min/median/max {m['min']:.0f}/{m['median']:.0f}/{m['max']:.0f}"
    print(f"{w:8} {c['opsPerSecond']:14,.0f} {j['opsPerSecond']:14,.0f} {c['opsPerSecond']/j['opsPerSecond']:8.1f}"
          f"  {c['maxLength']:>8}/{c['meanLength']:<8.2f}  {j['maxLength']:>7}/{j['meanLength']:<8.2f}  {hist} {checks}{extra} fnv {c['fnv1a32']}")
c, j = cpp["d"], js["d"]
print(f"d, per-call timer reads subtracted (C++ {c['timer']} {c['timerOverheadNs']:.0f} ns, JS hrtime {j['timerOverheadNs']:.0f} ns a call): "
      f"C++ {c['opsPerSecondTimerCorrected']:,.0f} ops/s, JS {j['opsPerSecondTimerCorrected']:,.0f} ops/s, "
      f"C++/JS {c['opsPerSecondTimerCorrected']/j['opsPerSecondTimerCorrected']:.1f}")
PY

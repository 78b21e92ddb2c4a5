#!/usr/bin/env bash
# Runs the order-key workloads on this project's C++ library and on npm's
# fractional-indexing@4.0.0 (installed into .scratch/bench-js) in one run, and
# prints both side by side with the C++/JS ratio.
# Usage: bench/run_order_key_bench.sh   (builds Release into build/ first)
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
cpp_out=$(mktemp); js_out=$(mktemp)
trap 'rm -f "$cpp_out" "$js_out"' EXIT
"${BUILD_DIR:-build}/bench/order_key_workloads" > "$cpp_out"
node "$scratch/order_key_workloads.mjs" > "$js_out"
python3 - "$cpp_out" "$js_out" <<'PY'
import json, sys
cpp = {r["workload"]: r for r in map(json.loads, open(sys.argv[1]))}
js = {r["workload"]: r for r in map(json.loads, open(sys.argv[2]))}
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

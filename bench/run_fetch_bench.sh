#!/usr/bin/env bash
# The outbound XRPC client (docs/BENCHMARKS.md, "Outbound fetches"):
# fetch_bench with this checkout's client and with BASELINE's (default
# 5c1e785, the last commit whose client was cpprestsdk's), in ROUNDS rounds
# (default 3) that alternate which runs first. The baseline is checked out
# as a git worktree with this checkout's bench/fetch_bench.cpp and its
# loopback helper, and built (Release) into .scratch/upkeep-baseline.
# Usage: [ROUNDS=N] [BASELINE=COMMIT] bench/run_fetch_bench.sh [LARGE_MIB] [LARGE_CALLS] [SMALL_CALLS]
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
./scripts/build.sh --target fetch_bench >/dev/null
. bench/baseline_checkout.sh 5c1e785
cp bench/fetch_bench.cpp "$base_dir/bench/fetch_bench.cpp"
cp tests/support/loopback_port.hpp "$base_dir/tests/support/loopback_port.hpp"
if ! grep -q fetch_bench "$base_dir/bench/CMakeLists.txt"; then
  grep -A3 '^add_executable(fetch_bench' bench/CMakeLists.txt >> "$base_dir/bench/CMakeLists.txt"
fi
cmake --build "$base_dir/build" --target fetch_bench --parallel "$(nproc)" >/dev/null
bin="${BUILD_DIR:-build}"
for round in $(seq "${ROUNDS:-3}"); do
  order=("$root/$bin" "$base_dir/build")
  [ $((round % 2)) -eq 0 ] && order=("$base_dir/build" "$root/$bin")
  for build in "${order[@]}"; do
    name=this; [ "$build" = "$base_dir/build" ] && name=baseline
    "$build/bench/fetch_bench" "$@" | sed "s/^{/{\"build\":\"$name\",\"round\":$round,/"
  done
done

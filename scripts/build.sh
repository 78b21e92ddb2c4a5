#!/usr/bin/env bash
# Configures and builds the project into build/ (BUILD_DIR to change it;
# Release unless BUILD_TYPE is set; link-time optimisation unless LTO=OFF).
# Usage: scripts/build.sh [--target NAME] [--] [extra cmake -D options]
#   --target NAME builds that target alone (serve.sh: the service only).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
build_dir=${BUILD_DIR:-build}
target=()
if [ "${1:-}" = "--target" ]; then
  target=(--target "$2")
  shift 2
fi
if [ "${1:-}" = "--" ]; then shift; fi
generator=()
command -v ninja >/dev/null 2>&1 && generator=(-G Ninja)
if [ ! -f "$build_dir/CMakeCache.txt" ]; then
  cmake -S . -B "$build_dir" "${generator[@]}" -DCMAKE_BUILD_TYPE="${BUILD_TYPE:-Release}" \
    -DBULLETED_LTO="${LTO:-ON}" "$@"
else
  cmake -S . -B "$build_dir" -DCMAKE_BUILD_TYPE="${BUILD_TYPE:-Release}" -DBULLETED_LTO="${LTO:-ON}" \
    "$@" >/dev/null
fi
cmake --build "$build_dir" --parallel "${JOBS:-$(nproc)}" "${target[@]}"

#!/usr/bin/env bash
# Configures and builds the project into build/ (Release unless BUILD_TYPE is
# set). Usage: scripts/build.sh [extra cmake -D options]
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
build_dir=${BUILD_DIR:-build}
generator=()
command -v ninja >/dev/null 2>&1 && generator=(-G Ninja)
if [ ! -f "$build_dir/CMakeCache.txt" ]; then
  cmake -S . -B "$build_dir" "${generator[@]}" -DCMAKE_BUILD_TYPE="${BUILD_TYPE:-Release}" "$@"
else
  cmake -S . -B "$build_dir" -DCMAKE_BUILD_TYPE="${BUILD_TYPE:-Release}" "$@" >/dev/null
fi
cmake --build "$build_dir" --parallel "${JOBS:-$(nproc)}"

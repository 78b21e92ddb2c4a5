#!/usr/bin/env bash
# Builds the libFuzzer targets of tests/fuzz with clang-16 (ASan + UBSan) into
# build-fuzz/ and runs each for SECONDS (default 60), seeded from the test
# fixtures. Corpora grow in build-fuzz/corpus/<target>; a crash leaves its
# input in build-fuzz/artifacts/ and fails the script.
# Usage: scripts/fuzz.sh [SECONDS] [TARGET...]
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
seconds="${1:-60}"
shift || true
./scripts/install-deps.sh
build=build-fuzz
if [ ! -f "$build/CMakeCache.txt" ]; then
  CXX=clang++-16 cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DBULLETED_FUZZ=ON >/dev/null
fi
cmake --build "$build" --parallel "$(nproc)"

seed_outline() {  # the import fixtures, each prefixed with the byte that picks its parser
  local dir="$build/seed/outline_fuzz"
  mkdir -p "$dir"
  { printf '\x00'; cat tests/fixtures/import/workflowy.opml; } > "$dir/opml"
  { printf '\x01'; cat tests/fixtures/import/workflowy.txt; } > "$dir/text"
  printf '\x02Messy <b>bold <i>both</b> italic</i> </u>Q&A &amp; <a href="x">l</a>' > "$dir/html"
  find "$dir" -type f
}

seed() {  # seed TARGET: fixture files that make a good starting corpus
  case "$1" in
    frame_fuzz) find tests/fixtures/firehose -name '*.bin' ;;
    outline_fuzz) seed_outline ;;
  esac
}

targets=("$@")
if [ "${#targets[@]}" -eq 0 ]; then
  mapfile -t targets < <(find "$build/tests/fuzz" -maxdepth 1 -type f -perm -u+x -name '*_fuzz' -printf '%f\n' | sort)
fi
mkdir -p "$build/artifacts"
status=0
for target in "${targets[@]}"; do
  corpus="$build/corpus/$target"
  mkdir -p "$corpus"
  while IFS= read -r file; do cp -n "$file" "$corpus/" 2>/dev/null || true; done < <(seed "$target")
  echo "fuzz: $target for ${seconds}s ($(ls "$corpus" | wc -l) inputs in the corpus)"
  if ! "$build/tests/fuzz/$target" "$corpus" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 \
      -artifact_prefix="$build/artifacts/$target-" -print_final_stats=1 2>"$build/$target.log"; then
    echo "fuzz: $target FAILED; see $build/$target.log and $build/artifacts/"
    tail -n 30 "$build/$target.log"
    status=1
  else
    grep -E "stat::number_of_executed_units|stat::peak_rss_mb" "$build/$target.log" | sed "s/^/fuzz: $target /"
  fi
done
exit "$status"
